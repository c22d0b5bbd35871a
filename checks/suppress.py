"""Inline suppression: `# npu-review: ignore[NPU301] reason` on the line or the line above, or
`# npu-review: ignore-file[NPU301]` anywhere in the file. Handled here once, for every rule."""

from __future__ import annotations

from dataclasses import dataclass, field

from npu_review.checks import lazyre

_DIRECTIVE = lazyre.compile(r"npu-review:\s*(ignore-file|ignore)\[([^\]]*)\]")
_ID = lazyre.compile(r"NPU\d{3}\Z")


@dataclass
class Suppressions:
    by_line: dict[int, set[str]] = field(default_factory=dict)  # the line a directive stands on
    file_wide: set[str] = field(default_factory=set)
    # (line, id) of directives that name an id that is no rule at all
    unknown: list[tuple[int, str]] = field(default_factory=list)

    def covers(self, rule: str, line: int, end_line: int) -> bool:
        if rule in self.file_wide:
            return True
        # A directive on any line of the finding, or on the line just above its first line.
        return any(rule in self.by_line.get(n, ()) for n in range(line - 1, end_line + 1))


def scan(text: str, known: frozenset[str]) -> Suppressions:
    out = Suppressions()
    if "npu-review:" not in text:
        return out
    for lineno, line in enumerate(text.splitlines(), start=1):
        for m in _DIRECTIVE.finditer(line):
            ids = {part.strip().upper() for part in m.group(2).split(",") if part.strip()}
            for rid in sorted(ids):
                if not _ID.match(rid) or rid not in known:
                    out.unknown.append((lineno, rid))
            ids &= known
            if m.group(1) == "ignore-file":
                out.file_wide |= ids
            else:
                out.by_line.setdefault(lineno, set()).update(ids)
    return out
