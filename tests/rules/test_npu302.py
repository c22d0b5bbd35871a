"""NPU302 global-build-parallelism-env: its fixture cases (tests/fixtures/NPU302/), and what they cannot say."""

from __future__ import annotations

from tests.rules.support import (
    fixture_tests,
    rule_findings,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU302")


def test_npu302_one_finding_per_env_block_with_arg_only_for_one_variable_lines() -> None:
    got = rule_findings("NPU302/bad_env")
    assert got == {
        ("NPU302", 9): ("warning", 'ARG MAX_JOBS=1\nARG MAKEFLAGS="-j1"\nARG CMAKE_BUILD_PARALLEL_LEVEL=1'),
        ("NPU302", 16): ("warning", None),  # the ENV also sets another variable: no exact ARG form
    }
    # The block's own comment says why: one notice for the four variables, not four warnings.
    assert rule_findings("NPU302/trap_commented_env_block") == {("NPU302", 9): ("notice", None)}
