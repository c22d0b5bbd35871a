"""From diffs to FileChanges: unified diffs (unidiff) and in-memory tree pairs (difflib)."""

from __future__ import annotations

import difflib
import io
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from unidiff import PatchedFile, PatchSet
from unidiff.errors import UnidiffParseError

from npu_review.checks.model import ChangeStatus, FileChange, MemoryTree


class DiffError(ValueError):
    """The diff text cannot be parsed."""


def _strip_prefix(path: str | None) -> str | None:
    if path is None or path == "/dev/null":
        return None
    for prefix in ("a/", "b/"):
        if path.startswith(prefix):
            return path[len(prefix) :]
    return path


@dataclass(frozen=True)
class DiffFile:
    """One file of a parsed diff: its FileChange, and every head line of its hunks (added or context, the lines
    a review comment may target) with the index of the hunk it is in."""

    change: FileChange
    right_lines: Mapping[int, int] = field(default_factory=dict)


def _right_lines(pf: PatchedFile) -> dict[int, int]:
    return {
        line.target_line_no: i
        for i, hunk in enumerate(pf)
        for line in hunk
        if line.target_line_no and not line.is_removed
    }


def _lines(text: str) -> Iterator[str]:
    """The text's lines, ends kept, one at a time: a whole-diff `io.StringIO` or `splitlines` list costs several
    times the text again (182 MiB for a 91 MiB diff)."""
    start, n = 0, len(text)
    while start < n:
        end = text.find("\n", start)
        if end < 0:
            yield text[start:]
            return
        yield text[start : end + 1]
        start = end + 1


def _patch(text: str, metadata_only: bool = False) -> PatchSet:
    try:
        return PatchSet(_lines(text), metadata_only=metadata_only)
    except UnidiffParseError as exc:
        raise DiffError(f"cannot parse the diff: {exc}") from None


def _status(pf: PatchedFile) -> tuple[ChangeStatus, str, str | None]:
    """(status, head path, old path of a rename) of one file of a diff."""
    source = _strip_prefix(pf.source_file)
    target = _strip_prefix(pf.target_file)
    if pf.is_removed_file:
        return ChangeStatus.DELETED, source or pf.path, None
    if pf.is_added_file:
        return ChangeStatus.ADDED, target or pf.path, None
    if pf.is_rename or (source and target and source != target):
        return ChangeStatus.RENAMED, target or pf.path, source
    return ChangeStatus.MODIFIED, target or pf.path, None


def parse_diff(text: str) -> dict[str, DiffFile]:
    """Map head path -> DiffFile for every file in a `git diff`-style unified diff: one parse for the engine's
    FileChanges and for the App's map of commentable lines."""
    out: dict[str, DiffFile] = {}
    for pf in _patch(text):
        status, path, old = _status(pf)
        added = frozenset(line.target_line_no for hunk in pf for line in hunk if line.is_added and line.target_line_no)
        out[path] = DiffFile(FileChange(path, status, old, added, binary=bool(pf.is_binary_file)), _right_lines(pf))
    return out


def parse_unified_diff(text: str) -> dict[str, FileChange]:
    """Map head path -> FileChange for every file in a `git diff`-style unified diff. A diff without context lines
    (what `git diff -U0` writes, as the CLI asks git for) gives its added lines by its hunk headers alone, so its
    lines are not made into objects (a 45,678-file change's diff took 556 MiB so, and 1.0 GB in a replay); a diff
    with context is parsed line by line."""
    out: dict[str, FileChange] = {}
    for pf in _patch(text, metadata_only=True):
        status, path, old = _status(pf)
        added: set[int] = set()
        for hunk in pf:
            if hunk.added != hunk.target_length:  # a context line: the added lines are not the header's range
                return {path: f.change for path, f in parse_diff(text).items()}
            added.update(range(hunk.target_start, hunk.target_start + hunk.target_length))
        out[path] = FileChange(path, status, old, frozenset(added), binary=bool(pf.is_binary_file))
    return out


def parse_patch(patch: str) -> tuple[frozenset[int], dict[int, int]]:
    """The `patch` field GitHub gives for one file (hunks only, no file header), parsed once: its added head
    lines, and its head lines with their hunk index (as DiffFile.right_lines). Unparseable: nothing."""
    header = "--- a/x\n+++ b/x\n"
    try:
        files = PatchSet(io.StringIO(header + patch + ("" if patch.endswith("\n") else "\n")))
    except (UnidiffParseError, ValueError):
        return frozenset(), {}
    added = frozenset(
        line.target_line_no for pf in files for hunk in pf for line in hunk if line.is_added and line.target_line_no
    )
    right: dict[int, int] = {}
    for pf in files:
        right.update(_right_lines(pf))
    return added, right


def added_lines_from_patch(patch: str) -> frozenset[int]:
    """Added head lines of the `patch` field GitHub gives for one file (hunks only, no file header)."""
    return parse_patch(patch)[0]


# Above this many line pairs left after trimming the common head and tail, SequenceMatcher (quadratic on
# repetitive text) gives way to a multiset comparison: still every differing line, without the alignment.
MAX_ALIGNED_PAIRS = 4_000_000


def differing_lines(a: list[str], b: list[str]) -> tuple[list[int], list[int]]:
    """0-based indexes of the lines of `a` and of `b` that have no counterpart in the other sequence."""
    n, m = len(a), len(b)
    head = 0
    while head < n and head < m and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < n - head and tail < m - head and a[n - 1 - tail] == b[m - 1 - tail]:
        tail += 1
    mid_a, mid_b = a[head : n - tail], b[head : m - tail]
    if not mid_a or not mid_b or len(mid_a) * len(mid_b) > MAX_ALIGNED_PAIRS:
        left = Counter(mid_b)
        only_a = []
        for i, line in enumerate(mid_a):
            if left[line] > 0:
                left[line] -= 1
            else:
                only_a.append(head + i)
        right = Counter(mid_a)
        only_b = []
        for j, line in enumerate(mid_b):
            if right[line] > 0:
                right[line] -= 1
            else:
                only_b.append(head + j)
        return only_a, only_b
    only_a, only_b = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, mid_a, mid_b, autojunk=False).get_opcodes():
        if tag != "equal":
            only_a.extend(range(head + i1, head + i2))
            only_b.extend(range(head + j1, head + j2))
    return only_a, only_b


def added_lines_between(old: str, new: str) -> frozenset[int]:
    """Lines of `new` that are added or modified relative to `old` (difflib, as `git diff` would mark them)."""
    _, only_new = differing_lines(old.splitlines(), new.splitlines())
    return frozenset(j + 1 for j in only_new)


def changes_between(base: Mapping[str, str | None], head: Mapping[str, str | None]) -> dict[str, FileChange]:
    """FileChanges between two in-memory trees (no rename detection)."""
    out: dict[str, FileChange] = {}
    for path in sorted(set(base) | set(head)):
        if path not in head:
            out[path] = FileChange(path, ChangeStatus.DELETED)
        elif path not in base:
            text = head[path]
            n = len(text.splitlines()) if text is not None else 0
            out[path] = FileChange(path, ChangeStatus.ADDED, None, frozenset(range(1, n + 1)), text is None)
        elif base[path] != head[path]:
            old, new = base[path], head[path]
            if old is None or new is None:
                out[path] = FileChange(path, ChangeStatus.MODIFIED, binary=True)
            else:
                out[path] = FileChange(path, ChangeStatus.MODIFIED, None, added_lines_between(old, new))
    return out


def trees_changeset_parts(
    base: Mapping[str, str | None], head: Mapping[str, str | None]
) -> tuple[MemoryTree, MemoryTree, dict[str, FileChange]]:
    return MemoryTree(base), MemoryTree(head), changes_between(base, head)
