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


def test_an_image_labelled_for_its_own_device_in_a_guide_for_another_is_a_listed_choice() -> None:
    """xLLM-AI/xllm-docs' guides "with xLLM on Ascend A3 devices" list `# A2 x86`, `# A2 arm` and `# A3 arm` over
    the three images' pulls: the A2 ones are labelled for A2 (rs-r74, judged false four times). An A2 image without
    a label in the A3 guide is still the wrong image."""
    from tests.fixture_support import audit

    guide = (
        "# Inference with xLLM on Ascend A3 Devices\n\n## 1. Pull the Docker Image\n\n```bash\n"
        "# A2 x86\ndocker pull quay.io/jd_xllm/xllm-ai:xllm-dev-a2-x86-cann9-20260605\n"
        "# A3 arm\ndocker pull quay.io/jd_xllm/xllm-ai:xllm-dev-a3-arm-cann9-20260605\n```\n\n"
        "```bash\nsudo docker run -it -v /usr/local/Ascend/driver:/usr/local/Ascend/driver \\\n"
        " -v /usr/local/sbin/npu-smi:/usr/local/sbin/npu-smi \\\n"
        " quay.io/jd_xllm/xllm-ai:xllm-dev-a3-arm-cann9-20260605\n```\n"
    )
    assert [f for f in audit({"docs/deepseek_v4.md": guide}).findings if f.rule == "NPU229"] == []
    unlabelled = guide.replace("# A2 x86\n", "")
    found = [f.line for f in audit({"docs/deepseek_v4.md": unlabelled}).findings if f.rule == "NPU229"]
    assert found == [6]
