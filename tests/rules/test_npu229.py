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


def test_npu229_names_the_called_workflows_device_input() -> None:
    got = file_findings("NPU229/bad_reusable_call", "NPU229")
    assert "its `soc_version` input keeps its default in every entry" in got[("release_npu.yml", 11)][2]


def test_npu229_says_an_image_build_pushes_one_image_under_each_tag() -> None:
    got = file_findings("NPU229/bad_docker_build_push", "NPU229")
    assert "pushes it under a different device's tag" in got[("image_npu.yml", 19)][2]
    assert "with the script's default SOC" not in got[("image_npu.yml", 34)][2]


def test_npu229_reads_a_job_indented_under_another_as_a_job() -> None:
    got = file_findings("NPU229/bad_job_indented_under_another", "NPU229")
    assert list(got) == [("build_and_release.yml", 26)]
