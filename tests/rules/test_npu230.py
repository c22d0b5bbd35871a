"""NPU230 event-property-missing: its fixture cases (tests/fixtures/NPU230/) and messages."""

from __future__ import annotations

from npu_review.checks import run
from npu_review.checks.model import ChangeSet, MemoryTree
from tests.rules.support import file_findings, fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU230")


def test_the_property_the_payload_has_under_the_nested_name_is_named() -> None:
    found = file_findings("NPU230/bad_dispatch_type_read_under_the_event_name", "NPU230")
    assert sorted(found) == [("pr_nightly_command.yml", 15)]
    assert found[("pr_nightly_command.yml", 15)][2].endswith(
        "the expression is always empty. The payload has `action` at its top: `github.event.action`?"
    )


def _npu230(workflow: str) -> list[tuple[int, str]]:
    report = run(ChangeSet(head=MemoryTree({".github/workflows/npu_ci.yml": workflow}), audit=True))
    return [(f.line, f.message) for f in report.findings if f.rule == "NPU230"]


def test_every_trigger_counts_and_an_undescribed_one_silences_the_rule() -> None:
    body = (
        "jobs:\n  t:\n    runs-on: linux-aarch64-a2-8\n    steps:\n"
        "      - run: echo ${{ github.event.pull_request.number }}\n"
    )
    assert [n for n, _ in _npu230("on: [push]\n" + body)] == [6]
    assert _npu230("on: [push, pull_request_target]\n" + body) == []  # pull_request_target's payload has it
    assert _npu230("on: [push, schedule]\n" + body) == []  # no schema for schedule: unknown
    assert _npu230("on: [workflow_call]\n" + body) == []  # the caller's payload


def test_a_block_if_and_a_name_of_the_context_itself_are_left_alone() -> None:
    wf = (
        "on: push\njobs:\n  t:\n    if: >-\n      github.event.nothing == 'x'\n    runs-on: linux-aarch64-a2-8\n"
        "    steps:\n      - run: echo ${{ github.event_name }} ${{ github.event['forced'] }}\n"
    )
    assert _npu230(wf) == []


def test_a_job_condition_on_a_payload_the_workflow_never_gets() -> None:
    """vllm-ascend's benchmark workflow kept `if: github.event.workflow_run.conclusion == 'success'` once its
    trigger was `workflow_dispatch` alone: the job was skipped on every run."""
    wf = (
        "on:\n  workflow_dispatch:\njobs:\n  bench:\n    runs-on: linux-aarch64-a2-1\n"
        "    if: ${{ github.event.workflow_run.conclusion == 'success' }}\n    steps:\n      - run: make bench\n"
    )
    [(line, message)] = _npu230(wf)
    assert line == 6
    assert message.endswith(
        "`workflow_run` events have it, and this workflow has no such trigger: add it, or drop the expression."
    )
