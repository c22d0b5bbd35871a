"""NPU229 device-variant-mismatch: its fixture cases (tests/fixtures/NPU229/), and what they cannot say."""

from __future__ import annotations

from tests.rules.support import file_findings, fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU229")


def test_npu229_reports_the_live_line_not_the_commented_one() -> None:
    got = file_findings("NPU229/bad_myst_tab", "NPU229")
    assert list(got) == [("multi-node_dsv3.2.md", 11)]
    assert "its tag's `a3` token" in got[("multi-node_dsv3.2.md", 11)][2]


def test_npu229_names_the_token_the_tag_has() -> None:
    got = file_findings("NPU229/bad_mkdocs_tab", "NPU229")
    assert "its tag's `910b` token" in got[("Qwen3.md", 6)][2]
