"""NPU202 image-tag-not-produced: its fixture cases (tests/fixtures/NPU202/)."""

from __future__ import annotations

from tests.fixture_support import FIXTURES
from tests.rules.support import (
    fixture_tests,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU202")


def test_one_retagging_of_twin_builds_is_one_comment() -> None:
    """The A2 and the A3 build move to one new tag scheme (`latest-vllm-{device}-ubuntu`) while jobs still pull the
    old tags: one decision, one inline comment on the first build that lists the other (verl #7201)."""
    from npu_review.checks.causes import by_cause
    from tests.fixture_support import load_case, run_case

    report = run_case(load_case(FIXTURES / "NPU202/bad_producer_rename"))
    found = [f for f in report.findings if f.rule == "NPU202"]
    assert [(f.path, f.line, f.severity.label) for f in found] == [
        (".github/workflows/docker-build-ascend-a2.yml", 25, "warning"),
        (".github/workflows/docker-build-ascend-a3.yml", 25, "warning"),
    ]
    comments = by_cause(found)
    assert [(c.lead.path, c.lead.line, [(o.path, o.line) for o in c.also]) for c in comments] == [
        (".github/workflows/docker-build-ascend-a2.yml", 25, [(".github/workflows/docker-build-ascend-a3.yml", 25)])
    ]


def test_a_job_moved_off_a_pushed_tag_onto_a_frozen_one_stays_an_error() -> None:
    """The trap's job pulled a frozen 910b tag before and moves to its frozen a3 twin: a notice. The same head after
    a base that pulled the tag the 910b build pushes takes the job off a built image: the error stays."""
    import dataclasses

    from tests.fixture_support import FIXTURES, load_case, run_case

    case = load_case(FIXTURES / "NPU202/trap_job_moves_between_frozen_tags")
    wf = ".github/workflows/e2e_ascend.yml"
    assert case.base is not None
    built = {**case.base, wf: case.base[wf].replace("verl-sglang-8.3.rc1-910b-", "verl-sglang-8.5.0-910b-")}
    found = [(f.rule, f.line, f.severity.label) for f in run_case(dataclasses.replace(case, base=built)).findings]
    assert found == [("NPU202", 11, "error")]
