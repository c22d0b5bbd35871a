"""NPU216 concurrency-group-collision: its fixture cases, and what they do not say."""

from __future__ import annotations

from tests.fixture_support import audit
from tests.rules.support import change, fixture_tests, got

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU216")

_REUSABLE = """\
name: reusable
on:
  workflow_call:
    inputs:
      suite:
        type: string
      branch:
        type: string
        default: main
concurrency:
  group: e2e-${{ github.workflow }}-${{ inputs.suite }}
  cancel-in-progress: true
jobs:
  t:
    runs-on: ubuntu-latest
    steps:
      - run: pytest ${{ inputs.suite }}
"""

_DYNAMIC = """\
name: nightly
on: [schedule]
jobs:
  plan:
    runs-on: ubuntu-latest
    steps:
      - run: echo
  e2e:
    needs: plan
    strategy:
      matrix:
        branch: ${{ fromJSON(needs.plan.outputs.branches) }}
        suite: [models, ops]
    uses: ./.github/workflows/reusable.yml
    with:
      suite: ${{ matrix.suite }}
      branch: ${{ matrix.branch }}
"""


_STATIC = _DYNAMIC.replace("${{ fromJSON(needs.plan.outputs.branches) }}", "[main, releases/v1]")


def test_legs_a_static_matrix_tells_apart_collide_and_a_dynamic_one_is_left_alone() -> None:
    report = audit({".github/workflows/reusable.yml": _REUSABLE, ".github/workflows/nightly.yml": _STATIC})
    assert got(report, "NPU216") == [
        (
            ".github/workflows/reusable.yml",
            11,
            "warning",
            "This concurrency group cancels in progress but leaves out `branch`, which tells apart calls that run "
            "side by side: the matrix legs of `.github/workflows/nightly.yml` job `e2e` differ in `branch` only. They "
            "get the same group and cancel each other: add it to the group.",
        )
    ]
    # `fromJSON(...)` may give a single branch: unknown, not reported
    dynamic = audit({".github/workflows/reusable.yml": _REUSABLE, ".github/workflows/nightly.yml": _DYNAMIC})
    assert got(dynamic, "NPU216") == []


def test_two_call_jobs_of_one_caller_collide_unless_ordered() -> None:
    caller = """\
name: ci
on: [push]
jobs:
  main:
    uses: ./.github/workflows/reusable.yml
    with:
      suite: models
  release:
    uses: ./.github/workflows/reusable.yml
    with:
      suite: models
      branch: releases/v1
"""
    files = {".github/workflows/reusable.yml": _REUSABLE, ".github/workflows/ci.yml": caller}
    assert [(p, n, s) for p, n, s, _ in got(audit(files), "NPU216")] == [
        (".github/workflows/reusable.yml", 11, "warning")
    ]
    ordered = caller.replace("  release:\n", "  release:\n    needs: main\n")
    assert got(audit(dict(files, **{".github/workflows/ci.yml": ordered})), "NPU216") == []


def test_a_change_reports_a_new_caller_on_the_group_it_did_not_touch() -> None:
    base = {".github/workflows/reusable.yml": _REUSABLE}
    head = dict(base, **{".github/workflows/nightly.yml": _STATIC})
    assert [(p, n) for p, n, _, _ in got(change(base, head), "NPU216")] == [(".github/workflows/reusable.yml", 11)]
    # the same collision, already there before the change, is not reported again
    assert got(change(head, dict(head, **{"README.md": "x\n"})), "NPU216") == []


def test_a_group_that_reads_a_job_output_is_left_alone() -> None:
    """huggingface/text-generation-inference: a job of the reusable build cancels in progress under
    `${{ needs.build-and-push.outputs.label_extension }}`, which the build job sets from the `hardware` input. The
    group leaves `hardware` out in name only: each leg of the caller's matrix gets its own group."""
    reusable = _REUSABLE.replace("      branch:\n", "      hardware:\n        type: string\n      branch:\n").replace(
        "concurrency:\n  group: e2e-${{ github.workflow }}-${{ inputs.suite }}\n  cancel-in-progress: true\n", ""
    ) + (
        "  precompile:\n    needs: t\n    runs-on: linux-aarch64-a2-1\n"
        "    concurrency:\n      group: precompile-${{ github.workflow }}-${{ needs.t.outputs.label_extension }}\n"
        "      cancel-in-progress: true\n    steps:\n      - run: make precompile\n"
    )
    caller = _STATIC.replace("branch: [main, releases/v1]", "hardware: [npu, cuda]").replace(
        "branch: ${{ matrix.branch }}", "hardware: ${{ matrix.hardware }}"
    )
    report = audit({".github/workflows/reusable.yml": reusable, ".github/workflows/nightly.yml": caller})
    assert got(report, "NPU216") == []
    # The same group without the job's output: the legs differ in `hardware` only, and collide.
    static = reusable.replace("${{ needs.t.outputs.label_extension }}", "x")
    report = audit({".github/workflows/reusable.yml": static, ".github/workflows/nightly.yml": caller})
    assert [(f[0], f[1]) for f in got(report, "NPU216")] == [(".github/workflows/reusable.yml", 21)]
