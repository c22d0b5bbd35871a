"""Which lines of a PR can carry an inline comment: the RIGHT-side lines of each hunk (added and context)."""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from unidiff import PatchedFile, PatchSet
from unidiff.errors import UnidiffParseError

from npu_review.checks.diffing import _strip_prefix, added_lines_from_patch
from npu_review.checks.model import ChangeStatus, FileChange

_FILES_API_STATUS = {
    "added": ChangeStatus.ADDED,
    "removed": ChangeStatus.DELETED,
    "modified": ChangeStatus.MODIFIED,
    "renamed": ChangeStatus.RENAMED,
    "copied": ChangeStatus.ADDED,
    "changed": ChangeStatus.MODIFIED,
    "unchanged": ChangeStatus.MODIFIED,
}


@dataclass
class DiffMap:
    """path -> {head line: hunk index}. A multi-line comment must start and end in the same hunk."""

    lines: dict[str, dict[int, int]] = field(default_factory=dict)

    def commentable(self, path: str, line: int, start_line: int | None = None) -> bool:
        hunks = self.lines.get(path, {})
        if line not in hunks:
            return False
        return start_line is None or hunks.get(start_line) == hunks[line]

    def _add(self, path: str, pf: PatchedFile) -> None:
        target = self.lines.setdefault(path, {})
        for i, hunk in enumerate(pf):
            for ln in hunk:
                if ln.target_line_no and not ln.is_removed:
                    target[ln.target_line_no] = i


def _parse(text: str) -> PatchSet | None:
    try:
        return PatchSet(io.StringIO(text))
    except (UnidiffParseError, ValueError):
        return None


def from_unified_diff(text: str) -> DiffMap:
    dm = DiffMap()
    for pf in _parse(text) or ():
        dm._add(_strip_prefix(pf.target_file) or _strip_prefix(pf.source_file) or pf.path, pf)
    return dm


def from_file_patches(patches: Mapping[str, str]) -> DiffMap:
    """From the `patch` fields of GET /pulls/{n}/files (hunks without file headers)."""
    dm = DiffMap()
    for path, patch in patches.items():
        for pf in _parse("--- a/x\n+++ b/x\n" + patch + ("" if patch.endswith("\n") else "\n")) or ():
            dm._add(path, pf)
    return dm


def changes_from_files(files: list[dict[str, Any]]) -> dict[str, FileChange]:
    """FileChanges from GET /pulls/{n}/files entries (`patch` is missing for binary and very large files)."""
    out: dict[str, FileChange] = {}
    for f in files:
        path = str(f["filename"])
        status = _FILES_API_STATUS.get(str(f.get("status")), ChangeStatus.MODIFIED)
        patch = f.get("patch")
        added = added_lines_from_patch(patch) if isinstance(patch, str) else frozenset()
        old = f.get("previous_filename")
        out[path] = FileChange(
            path,
            status,
            str(old) if status == ChangeStatus.RENAMED and old else None,
            added,
            binary=False,  # decided from the content itself (a NUL byte) when it is read
        )
    return out
