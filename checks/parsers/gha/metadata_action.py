"""docker/metadata-action's `tags:` input as data: one TagRule per line, read the way the action reads it.

The action splits the input on newlines, reads each line as one CSV record, and each field as `key=value`
(a field without `=` is the `value`); `type` defaults to `raw`. GitHub substitutes `${{ }}` before the action
sees the text, so here an expression is an opaque piece of text: a field whose key or whole value is an
expression is unknown, never wrong. Facts below follow the action's `src/tag.ts` and `src/meta.ts` (v2 on).
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass

from npu_review.checks.parsers.gha.workflow import Step

ACTION = "docker/metadata-action"

TYPES = ("schedule", "semver", "pep440", "match", "edge", "ref", "raw", "sha")
REF_EVENTS = ("branch", "tag", "pr")
SHA_FORMATS = ("short", "long")
# Attributes every type reads, and those each type reads besides: any other key is stored and never read.
COMMON_ATTRS = frozenset({"type", "enable", "priority", "prefix", "suffix"})
TYPE_ATTRS: dict[str, frozenset[str]] = {
    "schedule": frozenset({"pattern"}),
    "semver": frozenset({"pattern", "value", "match"}),
    "pep440": frozenset({"pattern", "value", "match"}),
    "match": frozenset({"pattern", "group", "value"}),
    "edge": frozenset({"branch"}),
    "ref": frozenset({"event"}),
    "raw": frozenset({"value"}),
    "sha": frozenset({"format"}),
}
# Types whose `pattern` the action drops for a pre-release unless it is exactly `{{raw}}` (meta.ts procSemver,
# procPep440: `isRawStatement`), so that literal text written into the pattern vanishes from such tags.
PRERELEASE_PATTERN_TYPES = ("semver", "pep440")

_EXPR = re.compile(r"\$\{\{.*?\}\}", re.S)
_MASK = "\x00{}\x00"
_MASKED = re.compile(r"\x00(\d+)\x00")
_HANDLEBARS = re.compile(r"\{\{.*?\}\}")


@dataclass(frozen=True)
class TagRule:
    """One line of `tags:`: its physical line, its text, and its attributes (keys lower-cased, values trimmed,
    `${{ }}` kept as written). `keys` lists the keys in order, repeated ones included."""

    line: int
    text: str
    attrs: dict[str, str]
    keys: tuple[str, ...]

    @property
    def type(self) -> str:
        return self.attrs.get("type", "raw")

    def has(self, key: str) -> bool:
        return key in self.attrs

    def is_expression(self, key: str) -> bool:
        """The attribute's value holds a `${{ }}` (unknown until the run)."""
        return "${{" in self.attrs.get(key, "")


def is_metadata_action(step: Step) -> bool:
    """A docker/metadata-action step of v2 or later (v1 had no `type=` rules; a pinned sha counts as current)."""
    if step.uses is None:
        return False
    name, _, ref = step.uses.partition("@")
    if name.strip().lower() != ACTION:
        return False
    return re.fullmatch(r"v?1(\.\d+)*", ref.strip()) is None


def parse_line(text: str, line: int) -> TagRule | None:
    """The rule one line of `tags:` holds; None for blank and `#` lines and for a line that is one expression."""
    stripped = text.strip()
    if not stripped or stripped.startswith("#"):
        return None
    exprs: list[str] = []

    def mask(m: re.Match[str]) -> str:
        exprs.append(m.group(0))
        return _MASK.format(len(exprs) - 1)

    masked = _EXPR.sub(mask, stripped)
    if _MASKED.fullmatch(masked):
        return None  # the whole line comes from an expression: unknown
    try:
        rows = list(csv.reader([masked], skipinitialspace=True))
    except csv.Error:
        return None
    fields = rows[0] if rows else []
    attrs: dict[str, str] = {}
    keys: list[str] = []
    for raw_field in fields:
        field = _MASKED.sub(lambda m: exprs[int(m.group(1))], raw_field)
        key, eq, value = field.partition("=")
        if not eq:
            key, value = "value", field
        key = key.strip().lower()
        if not key:
            continue
        keys.append(key)
        attrs[key] = value.strip()
    return TagRule(line, stripped, attrs, tuple(keys))


def tag_rules(step: Step) -> list[TagRule]:
    """Every rule of a metadata-action step's `tags:` (none when the input is absent or not a string)."""
    node = step.with_.get("tags")
    if node is None or not node.is_scalar:
        return []
    out = []
    for line, text in node.text_lines():
        rule = parse_line(text, line)
        if rule is not None:
            out.append(rule)
    return out


def literal_outside_templates(pattern: str) -> tuple[str, str]:
    """The literal text before the first and after the last `{{ }}` of a pattern ('' when none)."""
    spans = [(m.start(), m.end()) for m in _HANDLEBARS.finditer(pattern)]
    if not spans:
        return "", ""
    return pattern[: spans[0][0]], pattern[spans[-1][1] :]
