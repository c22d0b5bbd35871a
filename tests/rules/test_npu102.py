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


def test_npu102_dead_settings_the_project_lives_with_are_a_notice() -> None:
    from tests.fixture_support import audit
    from tests.rules.support import change

    script = (
        "#!/bin/bash\n"
        "vllm serve Qwen/Qwen3-8B --enforce-eager \\\n"
        "  --compilation-config '{\"cudagraph_capture_sizes\": [1, 2, 4]}'\n"
    )
    files = {"tests/e2e/run_npu.sh": script}
    assert [(f.rule, f.line, f.severity) for f in audit(files).findings] == [("NPU102", 3, Severity.NOTICE)]
    written = change({}, files).findings
    assert [(f.rule, f.line, f.severity) for f in written] == [("NPU102", 3, Severity.WARNING)]
