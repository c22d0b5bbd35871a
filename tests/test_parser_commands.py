"""The pip and git command models, PEP 440 versions and requirement lines the Dockerfile rules share."""

from __future__ import annotations

from npu_review.checks.parsers.dockerfile import parse, steps
from npu_review.checks.parsers.gitcli import clone_of, git_call
from npu_review.checks.parsers.pep440 import spec_allows, version_key
from npu_review.checks.parsers.pipcli import pip_call
from npu_review.checks.parsers.requirements import parse_requirement


def test_pip_call_reads_operands_and_options() -> None:
    df = parse(
        "RUN pip install -v -e. --no-build-isolation && \\\n"
        "    python3 -m pip install -r requirements-npu.txt torch==2.10.0+cpu 'nvidia-modelopt[torch]>=0.37.0' \\\n"
        "        --index-url https://download.pytorch.org/whl/cpu/ ${WHEEL}_${ARCH}.whl && \\\n"
        "    pip uninstall -y triton timm && uv pip install --no-deps -e python[all_npu]\n"
    )
    calls = [pip_call(s.cmd) for s in steps(df)]
    assert all(c is not None for c in calls)
    first, second, third, fourth = calls  # type: ignore[misc]
    assert [w.unquoted for w in first.editables] == ["."] and not first.no_deps
    assert [w.unquoted for w in second.files] == ["requirements-npu.txt"]
    assert [(r.name, r.pinned) for r, _ in second.packages] == [("torch", "2.10.0+cpu"), ("nvidia-modelopt", None)]
    assert second.option_values("--index-url") == ["https://download.pytorch.org/whl/cpu/"]
    assert [w.unquoted for w in second.others] == ["${WHEEL}_${ARCH}.whl"]
    assert third.verb == "uninstall" and [r.name for r, _ in third.packages] == ["triton", "timm"]
    assert fourth.no_deps and [w.unquoted for w in fourth.editables] == ["python[all_npu]"]


def test_steps_follow_workdir_and_cd_and_clones_resolve() -> None:
    df = parse(
        "WORKDIR /workspace\n"
        "RUN git clone --depth=1 -b v0.11.0 https://github.com/vllm-project/vllm-ascend.git && cd vllm-ascend && \\\n"
        "    git -C ../Megatron-LM checkout core_r0.16.0 && cd $HOME && pwd\n"
        "RUN git clone https://gitcode.com/Ascend/MindSpeed.git ms\n"
    )
    st = steps(df)
    assert [s.cwd for s in st] == [
        "/workspace",
        "/workspace",
        "/workspace/vllm-ascend",
        "/workspace/vllm-ascend",
        None,
        "/workspace",
    ]
    clone = clone_of(git_call(st[0].cmd), st[0].cwd)  # type: ignore[arg-type]
    assert clone is not None and (clone.repo, clone.path, clone.depth, clone.branch) == (
        "vllm-ascend",
        "/workspace/vllm-ascend",
        "1",
        "v0.11.0",
    )
    other = clone_of(git_call(st[5].cmd), st[5].cwd)  # type: ignore[arg-type]
    assert other is not None and (other.repo, other.path) == ("mindspeed", "/workspace/ms")
    checkout = git_call(st[2].cmd)
    assert checkout is not None and (checkout.sub, checkout.directory) == ("checkout", "../Megatron-LM")


def test_versions_and_specifiers() -> None:
    assert version_key("2.7.1") < version_key("2.7.1.post2") < version_key("2.8.0")  # type: ignore[operator]
    assert version_key("0.11.0rc1") < version_key("0.11.0")  # type: ignore[operator]
    assert version_key("2.10.0+cpu") == version_key("2.10.0")
    assert version_key("core_r0.16.0") is None
    assert spec_allows((("==", "2.10.0"),), "2.10.0+cpu") is True
    assert spec_allows((("==", "2.5.1.post1"),), "2.5.1") is False
    assert spec_allows((("<", "0.21.0"),), "0.20.1") is True
    assert spec_allows((("~=", "2.7"),), "2.9.0") is True
    assert spec_allows((("==", "2.7.*"),), "2.7.1.post2") is True
    assert spec_allows((("==", "2.7.*"), ("!=", "2.7.3")), "2.7.3") is False
    assert spec_allows((("<", "oops"),), "1.0") is None
    assert spec_allows((("<", "2"),), "latest") is None
    req = parse_requirement("TransferQueue @ git+https://github.com/Ascend/TransferQueue.git@main")
    assert req is not None and (req.name, req.url) == (
        "transferqueue",
        "git+https://github.com/Ascend/TransferQueue.git@main",
    )
    assert parse_requirement("python[all_npu]/x") is None
    assert parse_requirement("./vllm-ascend") is None


def test_exclusive_comparisons_follow_pep_440() -> None:
    """`<V` excludes the pre-releases of V, `>V` its post-releases (PEP 440, "Exclusive ordered comparison"):
    the hand-written parser this replaced let `2.2.0rc1` meet `<2.2` and `1.0.post1` meet `>1.0`."""
    assert spec_allows((("<", "2.2"),), "2.2.0rc1") is False
    assert spec_allows((("<", "2.2"),), "2.1.9") is True
    assert spec_allows((("<", "2.2rc2"),), "2.2rc1") is True  # V itself a pre-release: its earlier ones count
    assert spec_allows((("<=", "2.2"),), "2.2.0rc1") is True
    assert spec_allows(((">", "1.0"),), "1.0.post1") is False
    assert spec_allows(((">", "1.0"),), "1.0.1") is True
    assert spec_allows(((">", "1.0.post1"),), "1.0.post2") is True  # V itself a post-release
    assert spec_allows(((">=", "1.0"),), "1.0.post1") is True
    # An installed pre-release is judged like any version (as pip judges what is installed).
    assert spec_allows(((">=", "2.1"),), "2.2.0rc1") is True
