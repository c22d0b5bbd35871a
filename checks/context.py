"""What a rule sees: the change, the config, the knowledge base and memoised parses of each file."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from checks.config import Config
from checks.kinds import KindMap
from checks.knowledge import Knowledge
from checks.model import ChangeSet

T = TypeVar("T")


@dataclass
class SourceFile:
    """One text file at head. `lines[0]` is line 1."""

    path: str
    text: str
    kinds: frozenset[str]
    lines: list[str] = field(init=False)

    def __post_init__(self) -> None:
        self.lines = self.text.splitlines()

    def line(self, n: int) -> str:
        return self.lines[n - 1] if 1 <= n <= len(self.lines) else ""


class Context:
    def __init__(self, changeset: ChangeSet, config: Config, kinds: KindMap, knowledge: Knowledge) -> None:
        self.changeset = changeset
        self.config = config
        self.kindmap = kinds
        self.knowledge = knowledge
        self._memo: dict[tuple[str, str, str], Any] = {}
        self._head_paths: list[str] | None = None

    # -- files -------------------------------------------------------------------------------------------
    @property
    def audit(self) -> bool:
        return self.changeset.audit

    def head_paths(self) -> list[str]:
        if self._head_paths is None:
            self._head_paths = sorted(self.changeset.head.paths())
        return self._head_paths

    def paths_of_kind(self, kind: str) -> Iterator[str]:
        """Every path at head of the given kind (unchanged files included: cross-file context)."""
        for p in self.head_paths():
            if self.kindmap.has(p, kind):
                yield p

    def source(self, path: str, rev: str = "head") -> SourceFile | None:
        """The file as a SourceFile at head (or base), None when absent or not text."""
        tree = self.changeset.head if rev == "head" else self.changeset.base
        return self.memo(("source", rev, path), lambda: self._load(tree.read(path), path))

    def _load(self, text: str | None, path: str) -> SourceFile | None:
        return None if text is None else SourceFile(path, text, self.kindmap.kinds(path))

    def memo(self, key: tuple[str, str, str], factory: Callable[[], T]) -> T:
        """Parse once, share: `ctx.memo(("shell", "head", path), lambda: parse(...))`."""
        if key not in self._memo:
            self._memo[key] = factory()
        return self._memo[key]  # type: ignore[no-any-return,unused-ignore]

    def parsed(self, parser: str, src: SourceFile, fn: Callable[[str], T], rev: str = "head") -> T:
        return self.memo((parser, rev, src.path), lambda: fn(src.text))

    # -- change scope ------------------------------------------------------------------------------------
    def is_added_line(self, path: str, line: int) -> bool:
        return self.changeset.is_added_line(path, line)

    def touched(self, path: str) -> bool:
        return self.changeset.touched(path)

    def added_lines(self, path: str) -> frozenset[int]:
        change = self.changeset.changed(path)
        return frozenset() if change is None else change.added_lines
