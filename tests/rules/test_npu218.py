"""NPU218 reusable-workflow-input-not-forwarded: its fixture cases, and what they do not say."""

from __future__ import annotations

from tests.fixture_support import audit
from tests.rules.support import change, fixture_tests, got

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU218")

_REUSABLE = """\
name: reusable
on:
  workflow_call:
    inputs:
      model:
        type: string
        required: true
    secrets:
      TOKEN:
        required: true
      UPLOAD:
        required: false
jobs:
  run:
    runs-on: ubuntu-latest
    steps:
      - run: ./run.sh "${{ inputs.model }}"
"""


def _caller(secrets: str) -> str:
    return (
        "name: caller\non: [push]\njobs:\n  a:\n    uses: ./.github/workflows/reusable.yml\n"
        f"    with:\n      model: m\n{secrets}"
    )


def test_a_required_secret_left_out_is_an_error() -> None:
    report = audit({".github/workflows/reusable.yml": _REUSABLE, ".github/workflows/caller.yml": _caller("")})
    assert got(report, "NPU218") == [
        (
            ".github/workflows/caller.yml",
            5,
            "error",
            "This call of `.github/workflows/reusable.yml` does not pass the required secret `TOKEN`: the run fails "
            "before the called workflow starts.",
        )
    ]


def test_inherit_passes_every_secret_and_names_are_case_insensitive() -> None:
    files = {
        ".github/workflows/reusable.yml": _REUSABLE,
        ".github/workflows/caller.yml": _caller("    secrets: inherit\n"),
        ".github/workflows/other.yml": _caller("    secrets:\n      token: ${{ secrets.TOKEN }}\n").replace(
            "model: m", "MODEL: m"
        ),
    }
    assert got(audit(files), "NPU218") == []


def test_a_change_reports_the_gap_it_makes_on_the_call_it_did_not_touch() -> None:
    base = {".github/workflows/reusable.yml": _REUSABLE.replace("      UPLOAD:\n        required: false\n", "")}
    base[".github/workflows/caller.yml"] = _caller("    secrets:\n      TOKEN: ${{ secrets.TOKEN }}\n")
    # the change makes UPLOAD required: the untouched caller now fails
    head = dict(
        base,
        **{
            ".github/workflows/reusable.yml": _REUSABLE.replace(
                "      UPLOAD:\n        required: false\n", "      UPLOAD:\n        required: true\n"
            )
        },
    )
    assert got(change(base, head), "NPU218") == [
        (
            ".github/workflows/caller.yml",
            5,
            "error",
            "This call of `.github/workflows/reusable.yml` does not pass the required secret `UPLOAD`: the run fails "
            "before the called workflow starts.",
        )
    ]
    # a gap that was there before the change is not the change's
    assert got(change(head, dict(head, **{"README.md": "x\n"})), "NPU218") == []


def test_an_input_read_by_bracket_or_by_the_called_workflows_event_is_read() -> None:
    dispatch = """\
name: dispatch
on:
  workflow_dispatch:
    inputs:
      run-slow:
        type: boolean
      branch:
        type: string
jobs:
  a:
    if: ${{ inputs['run-slow'] }}
    uses: ./.github/workflows/called.yml
"""
    called = "name: called\non:\n  workflow_call:\njobs:\n  b:\n    runs-on: x\n    steps:\n"
    called += "      - run: git checkout ${{ github.event.inputs.branch }}\n"
    files = {".github/workflows/dispatch.yml": dispatch, ".github/workflows/called.yml": called}
    assert got(audit(files), "NPU218") == []


def test_npu218_an_input_nothing_reads_is_a_notice_in_an_audit() -> None:
    from npu_review.checks.model import Severity

    wf = (
        "name: nightly\n"
        "on:\n"
        "  workflow_dispatch:\n"
        "    inputs:\n"
        "      vllm_ascend_branch:\n"
        "        type: string\n"
        "jobs:\n"
        "  test:\n"
        "    runs-on: linux-aarch64-a2-1\n"
        "    steps:\n"
        "      - run: pytest tests/e2e\n"
    )
    files = {".github/workflows/nightly.yml": wf}
    audited = [(f.rule, f.line, f.severity) for f in audit(files).findings]
    assert audited == [("NPU218", 5, Severity.NOTICE)]
    written = [(f.rule, f.line, f.severity) for f in change({}, files).findings]
    assert written == [("NPU218", 5, Severity.WARNING)]
