"""NPU306 missing-and-in-continued-run: its fixture cases (tests/fixtures/NPU306/), and what they cannot say."""

from __future__ import annotations

from tests.rules.support import (
    fixture_tests,
    rule_findings,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU306")


def test_npu306_suggests_the_missing_and() -> None:
    got = rule_findings("NPU306/bad_missing_and")
    assert got[("NPU306", 6)] == (
        "error",
        "RUN git clone --depth 1 --branch v0.23.0 https://github.com/vllm-project/vllm.git && \\",
    )
    assert got[("NPU306", 8)] == ("error", "    pip install mbridge && \\")
    # On a change that added only the joined command, the finding sits on the added line, without a suggestion.
    assert rule_findings("NPU306/change_added_command") == {("NPU306", 10): ("error", None)}
