"""Which lines of a PR can carry an inline comment: the RIGHT-side lines of each hunk (added and context).

Built from the same parse as the engine's FileChanges (checks.diffing.parse_diff / parse_patch): a PR's diff is
parsed once per review."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from npu_review.checks.diffing import DiffFile, parse_patch
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


def from_diff(files: Mapping[str, DiffFile]) -> DiffMap:
    """From a parsed unified diff (checks.diffing.parse_diff)."""
    return DiffMap({path: dict(f.right_lines) for path, f in files.items() if f.right_lines})


def from_file_patches(patches: Mapping[str, str]) -> DiffMap:
    """From `patch` fields alone (path -> hunks without file headers)."""
    return DiffMap({path: right for path, text in patches.items() if (right := parse_patch(text)[1])})


def from_files(files: list[dict[str, Any]]) -> tuple[dict[str, FileChange], DiffMap]:
    """FileChanges and the DiffMap from GET /pulls/{n}/files entries (`patch` is missing for binary and very large
    files), each patch parsed once."""
    changes: dict[str, FileChange] = {}
    dm = DiffMap()
    for f in files:
        path = str(f["filename"])
        status = _FILES_API_STATUS.get(str(f.get("status")), ChangeStatus.MODIFIED)
        patch = f.get("patch")
        added, right = parse_patch(patch) if isinstance(patch, str) else (frozenset[int](), {})
        if right:
            dm.lines[path] = right
        old = f.get("previous_filename")
        changes[path] = FileChange(
            path,
            status,
            str(old) if status == ChangeStatus.RENAMED and old else None,
            added,
            binary=False,  # decided from the content itself (a NUL byte) when it is read
        )
    return changes, dm
