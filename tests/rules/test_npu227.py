"""NPU227 environment-stack-disagrees: its fixture cases (tests/fixtures/NPU227/), and what they cannot say."""

from __future__ import annotations

from npu_review.checks.analysis.stacks import image_stack
from tests.rules.support import file_findings, fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU227")


def test_npu227_image_stack_reads_project_images_tagged_after_cann() -> None:
    assert image_stack("swr.example.com/verl/verl:verl-sglang-8.5.0-a3-ubuntu22.04-py3.11-latest") == {
        "cann": "8.5.0",
        "device": "a3",
        "os": "ubuntu22.04",
        "python": "3.11",
    }
    assert image_stack("quay.io/ascend/vllm-ascend:v0.11.0rc0-a3") == {}


def test_npu227_python_path_suggests_the_home_python() -> None:
    got = file_findings("NPU227/bad_mixed_python_path", "NPU227")
    severity, suggestion, _ = got[("Dockerfile", 5)]
    assert severity == "warning"
    assert suggestion == "    && ln -s /opt/_internal/cpython-3.11.6/bin/pip3.11 pip3.11 \\"


def test_npu227_moved_commit_names_every_stale_place() -> None:
    got = file_findings("NPU227/change_moved_commit", "NPU227")
    _, _, message = got[("pr_test.yaml", 7)]
    assert "Dockerfile:3 (`VLLM_COMMIT`) still pins `d886c26d4d4f`" in message
