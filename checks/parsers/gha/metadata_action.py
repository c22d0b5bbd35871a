"""docker/metadata-action's `tags:` input as data: one TagRule per line, read the way the action reads it.

The action splits the input on newlines, reads each line as one CSV record, and each field as `key=value`
(a field without `=` is the `value`); `type` defaults to `raw`. GitHub substitutes `${{ }}` before the action
sees the text, so here an expression is an opaque piece of text: a field whose key or whole value is an
expression is unknown, never wrong. Facts below follow the action's `src/tag.ts` and `src/meta.ts` (v2 on).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from npu_review.checks import lazyre

if TYPE_CHECKING:
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

_EXPR = lazyre.compile(r"\$\{\{.*?\}\}", re.S)
_MASK = "\x00{}\x00"
_MASKED = lazyre.compile(r"\x00(\d+)\x00")
_HANDLEBARS = lazyre.compile(r"\{\{.*?\}\}")


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


# -- what the tags of a step can be -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Events:
    """The events a workflow runs on, with the `push` branch and tag filters (globs; () when unfiltered)."""

    triggers: frozenset[str]
    branches: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Produced:
    """One tag a metadata-action rule can give one image: `pattern` matches every tag it can be, `shown` is it
    for a reader (`<pep440 version>-a3`), `exact` the tag when it is one known text."""

    image: str
    pattern: re.Pattern[str]
    shown: str
    line: int  # the rule's line
    exact: str | None


# What `{{raw}}` of a pep440 rule can be: a release version as projects tag it (`v0.9.1`, `v0.9.1rc1`, `0.9.1.post1`,
# `v1.0.0.dev2`); PEP 440 also reads `-dev`-spelled versions, but a release tag is not written that way.
# semver: https://semver.org (pre-release and build metadata after `-` / `+`).
_VERSION = {
    "pep440": r"v?\d+(?:\.\d+)*(?:[-.]?(?:a|b|rc|c|alpha|beta|pre|preview)\.?\d*)?(?:[-.]?post\.?\d*)?(?:\.dev\d*)?",
    "semver": r"v?\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?",
}
_SANITIZE = lazyre.compile(r"[^a-zA-Z0-9._-]+")  # what the action does to a ref before using it as a tag


def _glob_regex(glob: str) -> str:
    """A push filter (`releases/v*`, `main`) as a regex of the tag its ref becomes (`/` read as `-`)."""
    out = []
    i = 0
    while i < len(glob):
        c = glob[i]
        if c == "*":
            out.append(".*")
            i += 2 if glob[i : i + 2] == "**" else 1
            continue
        out.append("." if c == "?" else re.escape(_SANITIZE.sub("-", c)))
        i += 1
    return "".join(out)


def _refs(filters: tuple[str, ...]) -> str:
    positive = [f for f in filters if not f.startswith("!")]
    return "(?:" + "|".join(_glob_regex(f) for f in positive) + ")" if positive else ".+"


def produced_tags(step: Step, resolve: Callable[[str, int], str | None], events: Events) -> list[Produced] | None:
    """Every tag the step's rules can give each of its images, for one leg (`resolve` puts in its `${{ }}`
    values; None for what stays unknown). None when the images themselves are not known."""
    images = _images(step, resolve)
    if images is None:
        return None
    flavor = _flavor(step, resolve)
    out: list[Produced] = []
    latest = flavor.get("latest", "auto")
    for rule in tag_rules(step):
        got = _rule_pattern(rule, resolve, events, flavor)
        if got is None:
            continue
        for regex, shown, exact in got:
            for image in images:
                out.append(Produced(image, re.compile(regex), shown, rule.line, exact))
        if rule.type in ("semver", "pep440", "match") and latest in ("auto", "true") and "push" in events.triggers:
            for image in images:
                out.append(Produced(image, re.compile("latest"), "latest", rule.line, "latest"))
    if latest == "true":
        for image in images:
            out.append(Produced(image, re.compile("latest"), "latest", 0, "latest"))
    return out


def _images(step: Step, resolve: Callable[[str, int], str | None]) -> list[str] | None:
    node = step.with_.get("images")
    if node is None or not node.is_scalar:
        return None
    out: list[str] = []
    for line, text in node.text_lines():
        for part in text.split("\n"):
            item = part.strip()
            if not item or item.startswith("#"):
                continue
            fields = [f.strip() for f in item.split(",")]
            name = fields[0]
            for f in fields:
                key, eq, value = f.partition("=")
                if eq and key.strip() == "name":
                    name = value.strip()
                elif eq and key.strip() == "enable":
                    decided = resolve(value.strip(), line)
                    if decided is not None and decided.strip().lower() == "false":
                        name = ""
            if not name:
                continue
            resolved = resolve(name, line)
            if resolved is None:
                return None
            out.append(resolved.strip().lower())
    return out


def _flavor(step: Step, resolve: Callable[[str, int], str | None]) -> dict[str, str]:
    node = step.with_.get("flavor")
    out: dict[str, str] = {}
    if node is None or not node.is_scalar:
        return out
    for line, text in node.text_lines():
        for part in text.split(","):
            key, eq, value = part.partition("=")
            if eq:
                resolved = resolve(value.strip(), line)
                out[key.strip().lower()] = "\x00" if resolved is None else resolved
    return out


def _rule_pattern(
    rule: TagRule, resolve: Callable[[str, int], str | None], events: Events, flavor: dict[str, str]
) -> list[tuple[str, str, str | None]] | None:
    """(regex, shown, exact) of the tags one rule gives; None when the rule gives none for these events."""
    attrs = {}
    for key, value in rule.attrs.items():
        resolved = resolve(value, rule.line) if "${{" in value else value
        attrs[key] = "\x00" if resolved is None else resolved
    enable = attrs.get("enable", "true").strip().lower()
    if enable == "false":
        return None
    prefix = attrs.get("prefix", flavor.get("prefix", ""))
    suffix = attrs.get("suffix", flavor.get("suffix", ""))
    kind = attrs.get("type", "raw")
    trig = events.triggers
    if kind == "ref":
        event = attrs.get("event", "")
        if event == "branch":
            on_branch = trig & {"push", "workflow_dispatch", "schedule", "workflow_run", "repository_dispatch"}
            if not on_branch:
                return None
            body, shown = (_refs(events.branches) if on_branch == {"push"} else ".+"), "<branch>"
        elif event == "tag":
            if "push" not in trig and "release" not in trig and "workflow_dispatch" not in trig:
                return None
            on_tag = trig & {"push", "release", "workflow_dispatch"}
            body, shown = (_refs(events.tags) if on_tag == {"push"} else ".+"), "<git tag>"
        elif event == "pr":
            if not trig & {"pull_request", "pull_request_target"}:
                return None
            body, shown = r"pr-\d+", "pr-<number>"
        else:
            return None
    elif kind in ("semver", "pep440"):
        if "value" not in attrs and not trig & {"push", "release", "workflow_dispatch"}:
            return None
        pattern = attrs.get("pattern", "{{version}}")
        version = _VERSION[kind]
        if "\x00" in attrs.get("value", ""):
            version = ".+"
        body = re.escape(pattern)
        for name, regex in (
            ("raw", version),
            ("version", version.replace("v?", "", 1)),
            ("major", r"\d+"),
            ("minor", r"\d+"),
            ("patch", r"\d+"),
        ):
            body = body.replace(re.escape("{{" + name + "}}"), regex).replace(re.escape("{{ " + name + " }}"), regex)
        body = re.sub(r"\\\{\\\{.*?\\\}\\\}", ".+", body)
        shown = re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: f"<{kind} {m.group(1)}>", pattern)
    elif kind == "match":
        body, shown = ".+", "<match>"
    elif kind == "schedule":
        if "schedule" not in trig:
            return None
        pattern = attrs.get("pattern", "nightly")
        body = re.sub(r"\\\{\\\{.*?\\\}\\\}", ".+", re.escape(pattern))
        shown = pattern
    elif kind == "sha":
        short = attrs.get("format", "short") != "long"
        if "prefix" not in attrs and "prefix" not in flavor:
            prefix = "sha-"
        body, shown = (r"[0-9a-f]{7}" if short else r"[0-9a-f]{40}"), "<sha>"
    elif kind == "edge":
        body, shown = "edge", "edge"
    elif kind == "raw":
        value = attrs.get("value", "")
        if not value:
            return None
        body, shown = (
            "\x00".join(re.escape(p) for p in value.split("\x00")).replace("\x00", ".+"),
            value.replace("\x00", "<?>"),
        )
    else:
        return None
    exact = None
    regex_prefix = ".*" if "\x00" in prefix else re.escape(prefix)
    regex_suffix = ".*" if "\x00" in suffix else re.escape(suffix)
    if kind in ("raw", "edge", "schedule") and "\x00" not in prefix + suffix + shown and re.escape(shown) == body:
        exact = prefix + shown + suffix
    shown_all = prefix.replace("\x00", "<?>") + shown + suffix.replace("\x00", "<?>")
    return [(regex_prefix + body + regex_suffix, shown_all, exact)]
