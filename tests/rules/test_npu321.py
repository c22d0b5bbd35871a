"""NPU321 requirements-file-invalid: its fixture cases (tests/fixtures/NPU321/), and what they cannot say."""

from __future__ import annotations

from npu_review.checks.parsers.requirements import line_error, logical_lines
from tests.rules.support import file_findings, fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU321")


def test_npu321_suggests_the_pin_it_means() -> None:
    got = file_findings("NPU321/bad_torch_npu_repo", "NPU321")
    assert got[("requirements.txt", 6)][:2] == ("error", "torchvision==0.22.0.dev20250409")
    got = file_findings("NPU321/bad_requirements_npu", "NPU321")
    assert got[("requirements-npu.txt", 5)][1] == "torch_npu==2.7.1"
    assert got[("requirements-npu.txt", 4)][1] is None  # where the option goes is the author's call


def test_npu321_reads_lines_as_pip_does() -> None:
    lines = logical_lines("a==1 \\\n  --hash=sha256:00\n# c\n\nb==2 # note\n")
    assert [(x.line, x.text) for x in lines] == [(1, "a==1   --hash=sha256:00"), (5, "b==2")]
    assert line_error("torch-npu-2.7.1") is not None
    assert line_error("python-3parclient") is None
    assert line_error("foo==1.0.*") is None
    assert line_error("--no-deps") is not None
    assert line_error("--prefer-binary") is None


def test_a_trailing_comma_is_read_as_pip_reads_it() -> None:
    """sii-research/siiRL 0e13b25 (rs-r23, judged false): `tensordict>=0.8.0,<=0.9.1,!=0.9.0,`, which current pip
    (26.3) accepts; the rule said pip rejects it, naming an empty version (````). Two commas in a row
    pip rejects ("Expected comma (within version specifier)...")."""
    assert line_error("tensordict>=0.8.0,<=0.9.1,!=0.9.0,") is None
    assert line_error("tensordict (>=0.8.0,)") is None
    err = line_error("tensordict>=0.8.0,,<=0.9.1")
    assert err is not None and (err.kind, err.token) == ("empty-specifier", ">=0.8.0,,<=0.9.1")


def test_a_long_requirement_that_is_no_glued_version_is_read_in_linear_time() -> None:
    """A word like `torch-2.1.0` followed by a long run of letters and a character no version has: the pattern of
    a name glued to its version split the letters in exponentially many ways before failing (a 30-letter run took
    minutes). Run in a child with a deadline the old pattern cannot meet."""
    import subprocess
    import sys

    word = "torch-2.1.0" + "a" * 40 + "!"
    code = f"from npu_review.checks.parsers.requirements import line_error; print(line_error({word!r}))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "None"
