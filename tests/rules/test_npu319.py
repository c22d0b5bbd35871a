"""NPU319 installs-from-moving-branch: its fixture cases (tests/fixtures/NPU319/) and messages."""

from __future__ import annotations

from npu_review.checks.model import Severity
from tests.rules.support import fixture_tests, line_findings

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU319")


def test_web_page_url_is_an_error_with_the_repository_url() -> None:
    [(line, sev, message, suggestion)] = line_findings("NPU319/bad_dockerfile_clone_of_a_web_page", "NPU319")
    assert (line, sev) == (2, Severity.ERROR)
    assert "Use `https://gitcode.com/Ascend/msit.git`" in message
    assert suggestion == ("RUN git clone -b br_release_8.1 https://gitcode.com/Ascend/msit.git && \\")


def test_fork_in_a_build_script_is_reported_where_the_function_is_called() -> None:
    [(line, sev, message, _s)] = line_findings("NPU319/bad_script_builds_a_fork", "NPU319")
    assert (line, sev) == (7, Severity.WARNING)
    assert message.startswith("This build script builds `NpuTransport/npu-engine`, a fork of this repository (acme-ai)")


def test_branch_against_the_stated_commit() -> None:
    [(line, _sev, message, _s)] = line_findings("NPU319/bad_guide_branch_with_stated_commit", "NPU319")
    assert line == 9
    assert "this file names commit `0f812dcc58514` for it (line 5)" in message
