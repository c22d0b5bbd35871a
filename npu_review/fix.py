"""`check --fix`: each finding's exact suggestion written into the work tree, or shown as a diff.

A suggestion replaces the lines `line..end_line` of the file as it was reviewed (the head revision). It is applied
to the work tree only where those lines, and the line on each side of them, are still what was reviewed: a file
edited there since, or with suggestions that overlap, is left alone whole, and the summary says why. Line ends
(LF or CRLF), a byte-order mark and a missing newline at the end are kept. Running it again changes nothing.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from pathlib import Path

from npu_review.checks.model import Finding, Tree


@dataclass(frozen=True)
class FileFix:
    path: str
    before: str  # the work tree's text
    after: str
    fixed: tuple[Finding, ...]


@dataclass
class Plan:
    files: list[FileFix] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    # Findings of the reviewed revision whose suggestion the work tree holds already (an earlier --fix).
    already: list[Finding] = field(default_factory=list)

    @property
    def fixed(self) -> list[Finding]:
        return [f for ff in self.files for f in ff.fixed]


def _split(text: str) -> tuple[list[str], list[str]]:
    """The lines of a text as `str.splitlines()` numbers them (as the rules do), and each one's line end."""
    bodies, ends = [], []
    for raw in text.splitlines(keepends=True):
        body = raw.splitlines()[0] if raw.splitlines() else ""
        bodies.append(body)
        ends.append(raw[len(body) :])
    return bodies, ends


def _replacement(f: Finding) -> list[str]:
    # As in SARIF's fixes (checks/output.py): an empty suggestion deletes the lines.
    return f.suggestion.split("\n") if f.suggestion else []


def plan(findings: Iterable[Finding], head: Tree, root: Path) -> Plan:
    """What --fix would write: every finding with a suggestion, file by file, where it applies cleanly."""
    out = Plan()
    with_fix = sorted((f for f in findings if f.suggestion is not None), key=lambda f: (f.path, f.line, f.end_line))
    for path, group in groupby(with_fix, key=lambda f: f.path):
        found = list(group)
        result = _plan_file(path, found, head, root)
        if isinstance(result, str):
            out.skipped.append((path, result))
        elif result is None:
            out.already.extend(found)
        else:
            out.files.append(result)
    return out


def _plan_file(path: str, found: Sequence[Finding], head: Tree, root: Path) -> FileFix | str | None:
    """The file's fix, why it is left alone, or None when the work tree holds every suggestion already."""
    reviewed = head.read(path)
    target = root / path
    if reviewed is None:
        return "not readable at the reviewed revision"
    if target.is_symlink() or not target.is_file():
        return "not a regular file in the work tree"
    try:
        data = target.read_bytes()
        text = data.decode("utf-8")
    except OSError as exc:
        return f"cannot read it: {exc.strerror or exc}"
    except UnicodeDecodeError:
        return "not UTF-8 in the work tree"
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    lines, ends = _split(text[len(bom) :])
    want = reviewed.splitlines()
    # One fix per range: the same suggestion twice (two rules' findings of one cause) counts once.
    edits: list[tuple[int, int, list[str], list[Finding]]] = []
    for f in found:
        if edits and (edits[-1][0], edits[-1][1]) == (f.line, f.end_line) and edits[-1][2] == _replacement(f):
            edits[-1][3].append(f)
            continue
        if edits and f.line <= edits[-1][1]:
            return f"suggestions for lines {edits[-1][0]}-{edits[-1][1]} and {f.line}-{f.end_line} overlap"
        edits.append((f.line, f.end_line, _replacement(f), [f]))
    if lines != want and lines == _applied(want, edits):
        return None  # fixed already (by an earlier --fix): nothing to do
    for first, last, _, _ in edits:
        # The lines to replace and one line of context on each side, as they were reviewed.
        lo, hi = max(first - 1, 1), min(last + 1, len(want))
        if last > len(want) or lines[lo - 1 : hi] != want[lo - 1 : hi]:
            span = f"line {first}" if first == last else f"lines {first}-{last}"
            return f"{span} changed since the reviewed revision"
    fixed: list[Finding] = []
    for first, last, new, group in reversed(edits):
        if lines[first - 1 : last] == new:
            continue  # already as suggested
        eol = next((e for e in ends[first - 1 : last] if e), "\n")
        new_ends = [eol] * len(new)
        if new and not ends[last - 1]:
            new_ends[-1] = ""  # the last line of the file had no newline, and keeps having none
        lines[first - 1 : last] = new
        ends[first - 1 : last] = new_ends
        fixed[:0] = group
    if not fixed:
        return None
    after = bom + "".join(body + end for body, end in zip(lines, ends, strict=True))
    return FileFix(path, text, after, tuple(fixed))


def _applied(lines: list[str], edits: Sequence[tuple[int, int, list[str], list[Finding]]]) -> list[str]:
    out = list(lines)
    for first, last, new, _ in reversed(edits):
        out[first - 1 : last] = new
    return out


def unified_diff(fixes: Sequence[FileFix]) -> str:
    """The fixes as a unified diff that `git apply` takes (a/ and b/ paths from the repository's top)."""
    out: list[str] = []
    for ff in fixes:
        lines = difflib.unified_diff(
            ff.before.splitlines(keepends=True), ff.after.splitlines(keepends=True), f"a/{ff.path}", f"b/{ff.path}"
        )
        # A last line without a newline is marked as diff(1) marks it.
        out.extend(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
    return "".join(out)


def write(fixes: Sequence[FileFix], root: Path) -> None:
    for ff in fixes:
        (root / ff.path).write_bytes(ff.after.encode("utf-8"))


def summary(done: Plan, dry_run: bool) -> list[str]:
    """The lines --fix prints on stderr: what was (or would be) fixed, and every file left alone with why."""
    n, files = len(done.fixed), len(done.files)
    if n:
        head = f"{'would fix' if dry_run else 'fixed'} {_count(n, 'finding')} in {_count(files, 'file')}"
    else:
        head = "nothing fixed" if done.skipped else "nothing to fix"
    if done.already:
        head += f" ({_count(len(done.already), 'finding')} fixed in the work tree already)"
    return [head, *(f"not fixed: {path}: {why}" for path, why in done.skipped)]


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"
