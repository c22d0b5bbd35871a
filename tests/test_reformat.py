"""A change that only drops the trailing blanks of a line did not write what a rule finds on it: no finding there,
as on an untouched line (checks.context.only_reformats). A line that gains blanks or a CR, that the change moves,
or a CRLF file the change turns into LF (a rewrite of the whole file, as GitHub shows it) is the change's own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npu_review.cli import main
from tests.test_cli import git, write

DOCKERFILE = "docker/ascend/Dockerfile.ascend_9.1.0_a2"
FROM = "FROM quay.io/ascend/cann:9.1.0-910b-ubuntu22.04-py3.12\n"
WGET = "RUN wget --no-check-certificate https://example.com/pkg.tar.gz -O /tmp/pkg.tar.gz"
PIP = "RUN pip install --no-cache-dir torch==2.10.0"


def _findings(tmp_path: Path, base: bytes, head: bytes, capsys: pytest.CaptureFixture[str]) -> list[tuple[str, int]]:
    r = tmp_path / "repo"
    r.mkdir(parents=True)
    git(r, "init", "-q", "-b", "main")
    git(r, "config", "core.autocrlf", "false")
    write(r, DOCKERFILE, base)
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "base")
    write(r, DOCKERFILE, head)
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "change")
    assert main(["check", "--repo", str(r), "--base", "HEAD~1", "--format", "json", "--fail-on", "never"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    return [(f["rule"], f["line"]) for f in json.loads(out)["findings"]]


def _lines(*lines: str, end: str = "\n") -> bytes:
    return "".join(line + end for line in lines).encode()


def test_a_crlf_file_turned_into_lf_is_rewritten_whole(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = _lines(FROM.rstrip("\n"), WGET, end="\r\n")
    head = _lines(FROM.rstrip("\n"), WGET, PIP)
    assert _findings(tmp_path, base, head, capsys) == [("NPU301", 2)]


def test_trailing_blanks_dropped_are_no_new_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = _lines(FROM.rstrip("\n"), WGET + "  \t")
    head = _lines(FROM.rstrip("\n"), WGET)
    assert _findings(tmp_path, base, head, capsys) == []


def test_a_line_written_anew_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = _lines(FROM.rstrip("\n"), PIP)
    head = _lines(FROM.rstrip("\n"), PIP, WGET)
    assert _findings(tmp_path, base, head, capsys) == [("NPU301", 3)]


def test_a_line_that_gains_blanks_or_moves_or_gains_a_cr_is_the_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = _lines(FROM.rstrip("\n"), WGET)
    assert _findings(tmp_path / "blanks", base, _lines(FROM.rstrip("\n"), WGET + " "), capsys) == [("NPU301", 2)]
    pips = [f"{PIP} numpy=={n}.0" for n in range(1, 4)]
    base_moved = _lines(FROM.rstrip("\n"), WGET, *pips)
    moved = _lines(FROM.rstrip("\n"), *pips, WGET)
    assert _findings(tmp_path / "moved", base_moved, moved, capsys) == [("NPU301", 5)]
    crlf = _lines(FROM.rstrip("\n"), WGET, end="\r\n")
    assert _findings(tmp_path / "crlf", base, crlf, capsys) == [("NPU301", 2)]
