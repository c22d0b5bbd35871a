"""NPU309 shallow-clone-checkout: its fixture cases (tests/fixtures/NPU309/), and what they cannot say."""

from __future__ import annotations

from npu_review.checks.model import Related
from tests.rules.support import (
    case_findings,
    file_findings,
    fixture_tests,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU309")


def test_npu309_suggests_the_fetch_before_the_checkout_of_a_full_commit_id_only() -> None:
    # A server gives a commit by its full id only: `git fetch origin f2b0977e` fails ("couldn't find remote ref"),
    # so a short id gets the advice to fetch by the full id or to clone without --depth, and no suggested line.
    got = file_findings("NPU309/bad_shallow_mindspeed_sha", "NPU309")
    assert got[("Dockerfile.ascend_8.3.rc1_a2", 10)][:2] == ("error", None)
    assert (
        "by its full 40-character id (`git fetch` cannot fetch `f2b0977e` by a short id)"
        in (got[("Dockerfile.ascend_8.3.rc1_a2", 10)][2])
    )
    got = file_findings("NPU309/bad_branch_tag_and_later_run", "NPU309")
    name = "Dockerfile.ascend.sglang_8.3.rc1_a2"
    assert got[(name, 7)][1] is None
    assert got[(name, 12)][1] is None and "--branch v0.5.8" in got[(name, 12)][2]
    assert got[(name, 16)][1] == (
        "RUN cd /workspace/transformers && git fetch --depth 1 origin cc7ab9be508ce6ed3637bba9e50367b29b742dc6"
        " && git checkout cc7ab9be508ce6ed3637bba9e50367b29b742dc6 && pip install -e ."
    )


def test_npu309_names_the_shallow_clone_as_the_related_place() -> None:
    (found,) = [f for f in case_findings("NPU309/bad_shallow_mindspeed_sha") if f.rule == "NPU309"]
    assert (found.line, found.related) == (
        10,
        (Related("docker/ascend/Dockerfile.ascend_8.3.rc1_a2", 9, "the shallow clone"),),
    )
