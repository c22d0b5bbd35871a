"""NPU326: its fixture cases (tests/fixtures/NPU326/)."""

from __future__ import annotations

from tests.rules.support import file_findings, fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU326")


def test_the_suggestion_adds_yes_after_uninstall() -> None:
    found = file_findings("NPU326/bad_dockerfile_run", "NPU326")
    assert found[("Dockerfile.ascend_8.5.0_a2", 3)][1] == "    pip uninstall -y triton && \\"
    assert found[("Dockerfile.ascend_8.5.0_a2", 5)][1] == "RUN pip3 uninstall -y -q torchvision torchaudio"
    step = file_findings("NPU326/bad_ci_step", "NPU326")
    assert step[("npu_unit_test.yml", 12)][1] == "          python3 -m pip uninstall -y deepep"
