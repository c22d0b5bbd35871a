"""The engine's data: severities, findings, file trees and the change under review."""

from __future__ import annotations

import enum
import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol


class Severity(enum.IntEnum):
    """Ordered so that `a >= b` means "a is at least as severe as b"."""

    NOTICE = 1
    WARNING = 2
    ERROR = 3

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        """Accept `error|warning|notice` (and `info` as the catalog's spelling of notice)."""
        key = text.strip().lower()
        if key == "info":
            key = "notice"
        try:
            return cls[key.upper()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r} (use error, warning or notice)") from None


class Tree(Protocol):
    """Read-only view of the files of one revision."""

    def paths(self) -> Iterable[str]:
        """Every file path of the revision (repository-relative, `/`-separated)."""
        ...

    def read(self, path: str) -> str | None:
        """The file's text, or None when it is absent, binary or not decodable."""
        ...

    def exists(self, path: str) -> bool: ...


class MemoryTree:
    """A tree held in memory: used by the App (contents fetched from GitHub) and by tests."""

    def __init__(
        self,
        files: Mapping[str, str | None],
        extra_paths: Iterable[str] = (),
        blob_ids: Mapping[str, str] | None = None,
    ) -> None:
        self._files = dict(files)
        # Paths that exist in the revision but whose text was not loaded (binary, not needed).
        self._extra = set(extra_paths) - set(self._files)
        # The git object id of each path where known (the App has them from the tree listing): what lets a review
        # keep a value derived from a file for the next one (Context.kept).
        self._blob_ids = blob_ids

    def paths(self) -> Iterable[str]:
        yield from sorted(set(self._files) | self._extra)

    def read(self, path: str) -> str | None:
        return self._files.get(path)

    def exists(self, path: str) -> bool:
        return path in self._files or path in self._extra

    def blob_id(self, path: str) -> str | None:
        """The file's git object id when the tree was given them, None otherwise or when it is absent."""
        if self._blob_ids is None or not self.exists(path):
            return None
        return self._blob_ids.get(path)


EMPTY_TREE = MemoryTree({})


class ChangeStatus(enum.StrEnum):
    ADDED = "added"
    MODIFIED = "modified"
    DELETED = "deleted"
    RENAMED = "renamed"


@dataclass(frozen=True)
class FileChange:
    """One file touched by the change. `added_lines` are 1-based lines of the file at head."""

    path: str
    status: ChangeStatus
    old_path: str | None = None
    added_lines: frozenset[int] = frozenset()
    binary: bool = False


@dataclass(frozen=True)
class ChangeSet:
    """What is reviewed: a change (base..head) or, with `audit=True`, every file at head.

    `head` and `base` are full trees so that cross-file rules can see unchanged context.
    """

    head: Tree
    base: Tree = EMPTY_TREE
    changes: Mapping[str, FileChange] = field(default_factory=dict)
    audit: bool = False
    title: str = ""  # PR title (or commit subject) when known; some rules read the scope from it
    # "owner/name" of the repository under review when known: the App's payload, or the git remote's GitHub
    # address for the CLI; "" when unknown (a bare mirror, a local repository without a GitHub remote).
    repository: str = ""
    # The day the change is reviewed as of (YYYY-MM-DD): its head commit's date when it has one (a replay of an
    # old commit is judged against the facts of its day: a variable dropped later was still read), "" = today.
    when: str = ""
    # Changed paths whose content this repository does not hold (a partial clone, a mirror leaving large files
    # out): git cannot read or diff them, so they are not reviewed, and the report says so.
    unreadable: tuple[str, ...] = ()

    def changed(self, path: str) -> FileChange | None:
        return self.changes.get(path)

    def is_added_line(self, path: str, line: int) -> bool:
        if self.audit:
            return True
        change = self.changes.get(path)
        return change is not None and line in change.added_lines

    def touched(self, path: str) -> bool:
        """True when the change touches the file (any status), or in audit mode."""
        return self.audit or path in self.changes or path in self._old_paths

    @functools.cached_property
    def touched_paths(self) -> frozenset[str]:
        """Every path the change touches: the changed files' paths and the paths renamed files had."""
        return frozenset(p for c in self.changes.values() for p in (c.path, c.old_path) if p)

    @functools.cached_property
    def _old_paths(self) -> frozenset[str]:
        """The paths renamed files had (asked for every path of the tree by some rules: a set, not a scan)."""
        return frozenset(c.old_path for c in self.changes.values() if c.old_path is not None)


@dataclass(frozen=True)
class Related:
    """Another place a cross-file finding refers to."""

    path: str
    line: int
    note: str = ""


@dataclass(frozen=True)
class Finding:
    rule: str
    name: str
    severity: Severity
    path: str
    line: int
    end_line: int
    message: str
    suggestion: str | None = None
    fingerprint: str = ""
    related: tuple[Related, ...] = ()
    # Every rule id in this finding when same-cause findings of several rules were merged into it (`rule` is
    # the first of them, the most severe); empty for a finding of one rule.
    rules: tuple[str, ...] = ()
    # The cause id (checks.engine.cause_id): findings with the same one are one cause, said once inline.
    cause: str = ""

    @property
    def rule_ids(self) -> tuple[str, ...]:
        return self.rules or (self.rule,)

    def sort_key(self) -> tuple[str, int, str, str]:
        return (self.path, self.line, self.rule, self.message)

    def to_json(self) -> dict[str, object]:
        return {
            "rule": self.rule,
            "name": self.name,
            "severity": self.severity.label,
            "path": self.path,
            "line": self.line,
            "end_line": self.end_line,
            "message": self.message,
            "suggestion": self.suggestion,
            "fingerprint": self.fingerprint,
            "rules": list(self.rule_ids),
            "cause": self.cause,
        }
