"""NPU102 graph-config-dead-under-eager: its fixture cases (tests/fixtures/NPU102/), and what they cannot say."""

from __future__ import annotations

from npu_review.checks.model import Severity
from tests.rules.support import (
    fixture_tests,
    line_findings,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU102")


def test_npu102_names_the_eager_line() -> None:
    found = line_findings("NPU102/bad_last_override_is_eager", "NPU102")
    # One enforce_eager=True, one finding for both dead graph settings.
    assert [(ln, sev) for ln, sev, _m, _s in found] == [(21, Severity.WARNING)]
    assert "(line 21) and `cudagraph_mode=FULL_DECODE_ONLY` (line 22) have no effect" in found[0][2]
    assert "`enforce_eager=True` on line 24" in found[0][2]
