"""NPU503 version-table-inconsistent: its fixture cases (tests/fixtures/NPU503/), and what they cannot say."""

from __future__ import annotations

from npu_review.checks.parsers.markdown import parse
from tests.fixture_support import audit
from tests.rules.support import (
    fixture_tests,
    locations,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU503")


def test_npu503_note_parsing_takes_the_new_version() -> None:
    from npu_review.checks.rules.npu503_version_table_inconsistent import _pairs

    text = (
        "-  2026/08/03：将 vLLM / vLLM-Ascend 从 ``0.18.0`` 更新为 ``0.23.0``\\ ，vLLM\n"
        "   对应基础环境版本同步调整为 torch ``2.10.0``\\ 、torch_npu ``2.10.0.post2``\\ 。\n"
    )
    doc = parse(text, "rst")
    pairs = _pairs(doc, (1, 2), ["vLLM-Ascend", "torch_npu", "torch", "vLLM"])
    assert pairs == {
        "vllm": ("0.23.0", 1),
        "vllm-ascend": ("0.23.0", 1),
        "torch": ("2.10.0", 2),
        "torch_npu": ("2.10.0.post2", 2),
    }


def test_npu503_release_ref_row_checks_device_but_not_cann() -> None:
    tags = (
        "| Device | CANN Base Image | Dockerfile |\n|---|---|---|\n"
        "| A3 | 7.0.0 | [D](https://github.com/verl-project/verl/blob/release/v0.6.1/"
        "docker/ascend/Dockerfile.ascend_8.2.rc1_a3) |\n"
    )
    assert locations(audit({"docker/ascend/supported_tags.md": tags}), "NPU503") == []
