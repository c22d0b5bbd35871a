"""NPU206 build-push-output-misconfigured: its fixture cases (tests/fixtures/NPU206/), and what they cannot say."""

from __future__ import annotations

from npu_review.checks.rules.npu206_build_push_output_misconfigured import _outputs, _tag_colon
from tests.rules.support import (
    fixture_tests,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU206")


def test_tag_colon_and_outputs() -> None:
    assert _tag_colon("${{ env.QUAY_REPO }}:temp-main-a2-${{ matrix.tag }}") == len("${{ env.QUAY_REPO }}")
    assert _tag_colon("quay.io/ascend/verl") is None
    assert _tag_colon("localhost:5000/verl") is None
    assert _tag_colon("localhost:5000/verl:tmp") == len("localhost:5000/verl")
    (exp,) = _outputs("type=image,name=${{ env.R }},push-by-digest=true,name-canonical=true,push=true")
    assert exp["name"] == "${{ env.R }}" and exp["push-by-digest"] == "true"
