"""NPU309 shallow-clone-checkout: its fixture cases (tests/fixtures/NPU309/), and what they cannot say."""

from __future__ import annotations

from npu_review.checks.model import Related
from tests.rules.support import (
    case_findings,
    file_findings,
    fixture_tests,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU309")


def test_npu309_suggests_the_fetch_before_the_checkout() -> None:
    got = file_findings("NPU309/bad_shallow_mindspeed_sha", "NPU309")
    assert got[("Dockerfile.ascend_8.3.rc1_a2", 10)][:2] == (
        "error",
        "    cd MindSpeed && git fetch --depth 1 origin f2b0977e && git checkout f2b0977e && cd .. && \\",
    )
    got = file_findings("NPU309/bad_branch_tag_and_later_run", "NPU309")
    name = "Dockerfile.ascend.sglang_8.3.rc1_a2"
    assert got[(name, 7)][1] == (
        "    git -C sgl-kernel-npu fetch --depth 1 origin 46b73de && git -C sgl-kernel-npu checkout 46b73de"
    )
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
