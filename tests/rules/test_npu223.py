"""NPU223 checkout-not-the-change: its fixture cases (tests/fixtures/NPU223/) and the ref it suggests."""

from __future__ import annotations

from tests.rules.support import file_findings, fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU223")


def test_the_ref_the_workflow_names_is_suggested() -> None:
    found = file_findings("NPU223/bad_workflow_run_checks_out_the_default_branch", "NPU223")
    message = found[("ci_ascend.yml", 28)][2]
    assert "`ref: ${{ github.event.workflow_run.head_sha }}`" in message
    assert "line 35 runs `bash scripts/ascend/dependencies_ascend_installation.sh`" in message
    found = file_findings("NPU223/bad_dispatch_command_tests_main", "NPU223")
    assert "`ref: ${{ github.event.client_payload.pull_request.head.sha }}`" in found[("pr_e2e_command.yml", 12)][2]
