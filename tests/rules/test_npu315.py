"""NPU315 version-never-published: its fixture cases (tests/fixtures/NPU315/), and the edges of "never"."""

from __future__ import annotations

from npu_review.checks.config import DEFAULT_CONFIG
from npu_review.checks.engine import run
from npu_review.checks.model import ChangeSet, MemoryTree
from tests.fixture_support import audit
from tests.rules.support import fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU315")


def _found(files: dict[str, str]) -> list[tuple[str, int, str, str]]:
    return [(f.path, f.line, f.severity.label, f.message) for f in audit(files).findings if f.rule == "NPU315"]


def test_npu315_names_the_published_releases_of_the_same_release() -> None:
    got = _found({"requirements.txt": "torch_npu==2.4.0.post1\n"})
    assert got == [
        (
            "requirements.txt",
            1,
            "warning",
            "torch-npu 2.4.0.post1 was never published on PyPI, nor as a release of Ascend/pytorch (as of "
            "2026-11-16; the releases around it are 2.4.0rc1, 2.4.0, 2.4.0.post2, 2.4.0.post4): pip finds no such "
            "version. Pin a published one.",
        )
    ]


def test_npu315_an_index_it_cannot_read_keeps_the_file_silent() -> None:
    # `--extra-index-url $INDEX`: which index is unknown, so which versions it holds is too.
    assert _found({"requirements.txt": "--extra-index-url ${INDEX}\ntorch-npu==2.4.0.post1\n"}) == []
    assert _found({"install.sh": "pip install -i https://corp.example/simple torch-npu==2.4.0.post1\n"}) == []
    # A PyPI mirror serves PyPI's versions: still judged.
    mirror = "pip install -i https://pypi.tuna.tsinghua.edu.cn/simple torch-npu==2.4.0.post1\n"
    assert [line for _, line, _, _ in _found({"install.sh": mirror})] == [1]


def test_npu315_a_version_from_an_arg_is_reported_on_the_arg() -> None:
    dockerfile = (
        "FROM quay.io/ascend/cann:8.5.0-910b-ubuntu22.04-py3.11\n"
        "ARG TORCH_NPU=2.8.0.post3\n"  # TorchNPU 7.3.1's build: released by Ascend, not on PyPI
        "ARG VLLM_ASCEND=0.19.0\n"
        "RUN pip install torch-npu==${TORCH_NPU} vllm-ascend==${VLLM_ASCEND}\n"
    )
    assert [(p, line) for p, line, _, _ in _found({"Dockerfile": dockerfile})] == [("Dockerfile", 3)]


def test_npu315_a_nightly_numbered_by_no_date_is_never_published_whatever_the_index() -> None:
    # Even from PyTorch's nightly index, or next to a find-links page: no index holds a nightly of no day.
    text = "--extra-index-url https://download.pytorch.org/whl/nightly/cpu\ntorchvision==0.22.0.dev2025312\n"
    [(_, line, severity, message)] = _found({"test/requirements.txt": text})
    assert (line, severity) == (2, "warning")
    assert message.startswith("torchvision 0.22.0.dev2025312 was never published: torchvision numbers its nightly")
    assert "`2025312` is none" in message
    # A real day, an hour of triton-ascend's, a number that is no date attempt, a package numbered otherwise.
    quiet = "torch==2.7.0.dev20250310\ntriton-ascend==3.2.0.dev2026012011\ntorch==2.1.0.dev1\nvllm==0.9.2.dev2025312\n"
    assert _found({"requirements.txt": quiet}) == []


def test_npu315_a_nightly_after_the_change_was_not_published_then() -> None:
    def review(day: str) -> list[int]:
        cs = ChangeSet(head=MemoryTree({"requirements.txt": "torch==2.7.0.dev20250320\n"}), audit=True, when=day)
        return [f.line for f in run(cs, DEFAULT_CONFIG).findings if f.rule == "NPU315"]

    assert review("2025-03-14") == [1]
    assert review("2025-03-19") == []  # the day before its build: a later time zone's day, not judged
    assert review("2025-03-20") == []


def test_npu315_a_branch_name_in_a_version_cell_names_the_release_of_that_branch() -> None:
    readme = (
        "# torch_npu\n\n| CANN | PyTorch | torch_npu | Branch |\n|---|---|---|---|\n"
        "| CANN 6.0.RC1 | 1.11.0 | 1.11.0-3.0.rc3 | v1.11.0-3.0.rc3 |\n"
        "| CANN 7.0.0 | 2.1.0-2.2.0 | 2.1.0 | v2.1.0-5.0.0 |\n"
    )
    [(_, line, _, message)] = _found({"README.md": readme})
    assert line == 5
    assert message.startswith("`1.11.0-3.0.rc3` is not a version but the name of Ascend/pytorch's branch")
    assert message.endswith("Write the torch_npu release of that branch, 1.11.0rc1.")
