"""NPU226 step-before-checkout: its fixture cases (tests/fixtures/NPU226/) and messages."""

from __future__ import annotations

from tests.rules.support import file_findings, fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU226")


def test_the_message_names_the_command_and_the_checkout() -> None:
    found = file_findings("NPU226/bad_install_before_checkout", "NPU226")
    message = found[("nightly_ascend.yml", 13)][2]
    assert message.startswith(
        "This step runs `uv pip install -r requirements-npu.txt` (line 15) before the job's checkout (line 16)"
    )


def test_a_late_install_names_the_last_test_step() -> None:
    found = file_findings("NPU226/bad_install_after_the_last_test", "NPU226")
    message = found[("_e2e_nightly_single_node.yaml", 19)][2]
    assert "after the job's last step that runs code (line 15)" in message
