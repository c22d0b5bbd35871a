"""NPU315 version-never-published: its fixture cases (tests/fixtures/NPU315/), and the edges of "never"."""

from __future__ import annotations

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
