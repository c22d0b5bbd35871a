"""NPU123 merge-conflict-markers: its fixture cases (tests/fixtures/NPU123/), and what they cannot say."""

from __future__ import annotations

from npu_review.checks.rules.npu123_merge_conflict_markers import _conflicts
from tests.rules.support import case_findings, fixture_tests

_BAD = "NPU123/bad_markers_in_script_image_pins_and_guide"

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU123")


def test_npu123_one_finding_per_block_with_every_marker_line() -> None:
    got = {(f.path, f.line, f.end_line, f.severity.label, f.message) for f in case_findings(_BAD) if f.rule == "NPU123"}
    fix = "Keep the side meant (or merge the two) and delete the marker lines."
    assert got == {
        (
            "docker/Dockerfile.npu",
            2,
            8,
            "error",
            "Merge conflict markers are committed (lines 2, 4, 6, 8): Docker rejects the Dockerfile there "
            f'("unknown instruction: <<<<<<<"), so the image does not build. {fix}',
        ),
        (
            "requirements-npu.txt",
            2,
            6,
            "error",
            "Merge conflict markers are committed (lines 2, 4, 6): pip stops there "
            f'("Invalid requirement"), so the whole install fails. {fix}',
        ),
        (
            "scripts/run_npu.sh",
            4,
            8,
            "error",
            "Merge conflict markers are committed (lines 4, 6, 8): the shell stops there with a syntax error, and "
            f"both sides of the conflict are in the script. {fix}",
        ),
        (
            "docs/install_npu.md",
            5,
            9,
            "warning",
            "Merge conflict markers are committed (lines 5, 7, 9): the guide shows its readers both sides of the "
            f"conflict, git's markers between them. {fix}",
        ),
    }
    # one cause: the App makes them one inline comment that lists the other places
    assert len({f.cause for f in case_findings(_BAD) if f.rule == "NPU123"}) == 1


def test_npu123_blocks_need_every_marker_in_order() -> None:
    lines = [
        "<<<<<<< HEAD",
        "a",
        "=======",
        "b",
        ">>>>>>> main",
        "x",
        ">>>>>>> stray closer",
        "=======",
        "<<<<<<< second",
        "||||||| base",
        "c",
        "=======",
        "d",
        ">>>>>>> other",
        "<<<<<<< never divided",
        ">>>>>>> x",
    ]
    assert list(_conflicts(lines, skip_fences=False)) == [(1, [1, 3, 5]), (9, [9, 10, 12, 14])]


def test_npu123_a_docs_code_block_showing_a_conflict_is_not_one() -> None:
    lines = [
        "```text",
        "<<<<<<< HEAD",
        "a",
        "=======",
        "b",
        ">>>>>>> main",
        "```",
        "<<<<<<< HEAD",
        "=======",
        ">>>>>>> x",
    ]
    assert list(_conflicts(lines, skip_fences=True)) == [(8, [8, 9, 10])]
    assert list(_conflicts(lines, skip_fences=False)) == [(2, [2, 4, 6]), (8, [8, 9, 10])]
