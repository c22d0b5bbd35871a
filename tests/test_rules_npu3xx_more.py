"""NPU305/307-312: what fixture markers cannot say (severity, suggestions, messages), and the pip/git helpers."""

from __future__ import annotations

import pytest

from checks.model import ChangeSet, MemoryTree
from checks.parsers.dockerfile import parse, steps
from checks.parsers.gitcli import clone_of, git_call
from checks.parsers.pep440 import spec_allows, version_key
from checks.parsers.pipcli import pip_call
from checks.parsers.requirements import parse_requirement
from tests.fixture_support import FIXTURES, load_case, run_case


def _findings(case: str, rule: str) -> dict[tuple[str, int], tuple[str, str | None, str]]:
    report = run_case(load_case(FIXTURES / case))
    assert report.errors == []
    return {
        (f.path.rsplit("/", 1)[-1], f.line): (f.severity.label, f.suggestion, f.message)
        for f in report.findings
        if f.rule == rule
    }


# -- NPU305 ---------------------------------------------------------------------------------------------------


def test_npu305_suggests_the_device_token_and_soc_value() -> None:
    got = _findings("NPU305/bad_a3_file_on_910b_base", "NPU305")
    sev, suggestion, message = got[("Dockerfile.ascend_9.0.0_a3", 2)]
    assert sev == "error"
    assert suggestion == "FROM swr.cn-south-1.myhuaweicloud.com/ascendhub/cann:9.0.0-a3-ubuntu22.04-py3.11"
    assert "overwrites the other device's image" in message
    got = _findings("NPU305/bad_soc_and_ops_package", "NPU305")
    assert got[("Dockerfile.ascend_8.5.2_a2_qwen3-5", 4)][1] == 'ARG SOC_VERSION="ascend910b1"'
    assert got[("Dockerfile.ascend_8.5.2_a2_qwen3-5", 7)][1] == (
        "COPY Ascend-cann-toolkit_8.5.2_linux-aarch64.run Ascend-cann-910b-ops_8.5.2_linux-aarch64.run /tmp/"
    )
    assert "A3 CANN ops package (also on line 10)" in got[("Dockerfile.ascend_8.5.2_a2_qwen3-5", 7)][2]
    got = _findings("NPU305/bad_no_suffix_soc_disagrees", "NPU305")
    assert got[("Dockerfile.ascend_dev", 3)][1] == "ENV SOC_VERSION=ascend910_9392"
    assert got[("Dockerfile.ascend_dev", 8)][2].startswith("The base image `9.1.0-a3-")


# -- NPU307 ---------------------------------------------------------------------------------------------------


def test_npu307_error_for_newer_cann_with_the_fitting_version() -> None:
    got = _findings("NPU307/bad_torch_npu_for_newer_cann", "NPU307")
    sev, suggestion, message = got[("Dockerfile.ascend_8.3.rc1_a2", 12)]
    assert sev == "error"
    assert "built for CANN 8.5.0, newer than CANN 8.3.rc1" in message
    assert suggestion == (
        "    pip install torch==2.7.1 torch_npu==2.7.1 torchvision==0.22.1 transformers==4.57.6 && \\"
    )


def test_npu307_warnings_for_older_pairing_and_mismatches() -> None:
    got = _findings("NPU307/bad_older_pairing_and_mismatches", "NPU307")
    name = "Dockerfile.ascend_8.5.0_a2_v0.7.1"
    # An older, once-valid pairing is a notice (issue 13), with the exact fix still attached.
    assert got[(name, 7)][:2] == ("notice", "    pip install torch==2.8.0 torch_npu==2.8.0.post2 && \\")
    assert "(line 1)" in got[(name, 7)][2]  # the first stage's FROM, not the second one's
    assert got[(name, 9)][:2] == ("warning", None)
    assert "whose torchvision is 0.23.0" in got[(name, 9)][2]
    assert got[(name, 14)][:2] == ("warning", None)
    assert "torch_npu 2.9.0 extends torch 2.9.0" in got[(name, 14)][2]


def test_npu307_installer_updates_cann_and_arg_wheel_has_no_fix() -> None:
    got = _findings("NPU307/bad_cann_installer_and_wheel_arg", "NPU307")
    sev, suggestion, message = got[("Dockerfile.ascend.sglang_8.5.2_a2", 5)]
    assert (sev, suggestion) == ("error", None)
    assert "CANN 8.5.2 of the CANN installer (line 10)" in message


# -- NPU308 ---------------------------------------------------------------------------------------------------


def test_npu308_messages_name_the_install_and_the_reason() -> None:
    got = _findings("NPU308/bad_requirements_npu_torchvision", "NPU308")
    assert "installs torchvision 0.20.1, built for torch 2.5.1" in got[("Dockerfile.ascend_8.3.rc1_a2", 9)][2]
    assert got[("Dockerfile.ascend_8.3.rc1_a2", 9)][2].endswith(
        "Pin torchvision with torch, install the pins after that step, or run it with `--no-deps`."
    )
    got = _findings("NPU308/change_dropped_no_deps", "NPU308")
    sev, suggestion, message = got[("Dockerfile.ascend_8.5.0_a2", 8)]
    assert (sev, suggestion) == ("warning", None)
    assert "vllm-ascend v0.11.0 on line 8" in message
    assert "it requires torch-npu==2.7.1, which replaces 2.7.1.post2" in message
    # It needs another torch_npu: never "install the pins after" (that would break the install).
    assert "install the pins after" not in message and "`--no-deps` to keep the pins" in message


@pytest.mark.parametrize(
    "case",
    [
        "NPU308/trap_same_resolution_constrains_torchvision",  # torch==2.7.1 in vllm-ascend's requirements
        "NPU308/trap_re_resolution_lands_on_table_version",  # 2.5.1 -> 2.5.1.post1, CANN 8.2.rc1's torch_npu
        "NPU308/trap_vllm_ascend_at_sha",  # requirements at a sha: not known here
    ],
)
def test_npu308_silent_on_its_traps(case: str) -> None:
    assert _findings(case, "NPU308") == {}


# -- NPU309 ---------------------------------------------------------------------------------------------------


def test_npu309_suggests_the_fetch_before_the_checkout() -> None:
    got = _findings("NPU309/bad_shallow_mindspeed_sha", "NPU309")
    assert got[("Dockerfile.ascend_8.3.rc1_a2", 10)][:2] == (
        "error",
        "    cd MindSpeed && git fetch --depth 1 origin f2b0977e && git checkout f2b0977e && cd .. && \\",
    )
    got = _findings("NPU309/bad_branch_tag_and_later_run", "NPU309")
    name = "Dockerfile.ascend.sglang_8.3.rc1_a2"
    assert got[(name, 7)][1] == (
        "    git -C sgl-kernel-npu fetch --depth 1 origin 46b73de && git -C sgl-kernel-npu checkout 46b73de"
    )
    assert got[(name, 12)][1] is None and "--branch v0.5.8" in got[(name, 12)][2]
    assert got[(name, 16)][1] == (
        "RUN cd /workspace/transformers && git fetch --depth 1 origin cc7ab9be508ce6ed3637bba9e50367b29b742dc6"
        " && git checkout cc7ab9be508ce6ed3637bba9e50367b29b742dc6 && pip install -e ."
    )


# -- NPU310 ---------------------------------------------------------------------------------------------------


def test_npu310_names_the_twin_and_its_history() -> None:
    got = _findings("NPU310/change_one_twin_edited", "NPU310")
    sev, _, message = got[("Dockerfile.ascend.sglang_8.5.0_a3", 15)]
    assert sev == "warning"
    assert "docker/ascend/Dockerfile.ascend.sglang_8.5.0_a2" in message
    assert "identical (up to device tokens) before this change" in message
    report = run_case(load_case(FIXTURES / "NPU310/change_twins_edited_differently"))
    related = {f.path.rsplit("/", 1)[-1]: f.related for f in report.findings if f.rule == "NPU310"}
    assert [(r.path.rsplit("/", 1)[-1], r.line) for r in related["Dockerfile.ascend.sglang_8.5.0_a2"]] == [
        ("Dockerfile.ascend.sglang_8.5.0_a3", 22)
    ]


def test_npu310_audit_reports_each_pair_once() -> None:
    a2 = (
        "FROM r/cann:9.1.0-910b-ubuntu22.04-py3.12\nARG SOC_VERSION=ascend910b1\nRUN pip install a\nRUN pip install b\n"
    )
    a3 = "FROM r/cann:9.1.0-a3-ubuntu22.04-py3.12\nARG SOC_VERSION=ascend910_9392\nRUN pip install c\nRUN pip install d"
    from checks import run

    files = {"docker/ascend/Dockerfile.ascend_x_a2": a2, "docker/ascend/Dockerfile.ascend_x_a3": a3}
    report = run(ChangeSet(head=MemoryTree(files), audit=True))
    found = [(f.path, f.line) for f in report.findings if f.rule == "NPU310"]
    assert found == [("docker/ascend/Dockerfile.ascend_x_a2", 3)]


# -- NPU311 / NPU312 -------------------------------------------------------------------------------------------


def test_npu311_points_at_the_first_install() -> None:
    got = _findings("NPU311/bad_after_vllm_ascend_requirements", "NPU311")
    sev, _, message = got[("Dockerfile.ascend_9.0.0_a2", 20)]
    assert sev == "warning" and "vllm-ascend v0.18.0 installed triton-ascend (line 16)" in message


def test_npu312_deletes_only_packages_that_have_no_place_on_npu() -> None:
    got = _findings("NPU312/bad_requirements_npu", "NPU312")
    assert got[("requirements-npu.txt", 6)][:2] == ("error", "")
    assert got[("requirements-npu.txt", 8)][:2] == ("error", "")
    assert got[("requirements-npu.txt", 9)][:2] == ("error", "")
    assert got[("requirements-npu.txt", 11)][:2] == ("error", None)  # a CUDA torch wants the CPU build
    assert got[("requirements-npu.txt", 2)][:2] == ("error", None)


# -- the helpers these rules share (checks/parsers: dockerfile, pipcli, gitcli, pep440, requirements) --------------


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
    req = parse_requirement("TransferQueue @ git+https://github.com/Ascend/TransferQueue.git@main")
    assert req is not None and (req.name, req.url) == (
        "transferqueue",
        "git+https://github.com/Ascend/TransferQueue.git@main",
    )
    assert parse_requirement("python[all_npu]/x") is None
    assert parse_requirement("./vllm-ascend") is None
