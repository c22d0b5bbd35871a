"""Ascend image references and tags: `registry/repo:tag` parsing, tag classification by tokens, tags in prose.

The tag grammar is data (the facts' `image_tags`): tokens are classified by field (cann, torch_npu, device, ...)
and the field sequence is matched against the schemes (F1/F2/F3 floating, R1/R2 release, M1 model-specific).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from npu_review.checks import lazyre
from npu_review.checks.facts.schema import ImageTags
from npu_review.checks.parsers.gha.values import WILD

# -- references -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ImageRef:
    """`host/path/name:tag@digest` split into its parts (tag and digest optional)."""

    text: str
    repository: str
    tag: str | None
    digest: str | None = None

    @property
    def segments(self) -> list[str]:
        return self.repository.split("/")


_SPACE = lazyre.compile(r"\s")  # the characters str.isspace() accepts (checked for every code point)


def parse_ref(text: str) -> ImageRef | None:
    """None for text that is not an image reference (spaces, empty, a URL)."""
    text = text.strip()
    if not text or _SPACE.search(text) or "://" in text:
        return None
    digest = None
    if "@" in text:
        text_part, _, digest = text.partition("@")
    else:
        text_part = text
    slash = text_part.rfind("/")
    colon = text_part.rfind(":")
    if colon > slash:
        repo, tag = text_part[:colon], text_part[colon + 1 :]
    else:
        repo, tag = text_part, None
    if not repo:
        return None
    return ImageRef(text, repo, tag or None, digest)


# -- the grammar --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Issue:
    """A token that stands in a field's place but is named wrongly (NPU203)."""

    field: str
    token: str
    fix: str | None  # the exact replacement token, when there is one


@dataclass(frozen=True)
class TagInfo:
    tag: str
    scheme: str | None = None
    role: str | None = None  # floating | release | model
    fields: Mapping[str, str] = field(default_factory=dict)  # field -> token as written
    values: Mapping[str, str] = field(default_factory=dict)  # field -> captured value
    issues: tuple[Issue, ...] = ()
    device: str | None = None
    backend: str | None = None
    post: str | None = None  # torch_npu ".postN" suffix as written (".post2" or "post2")

    @property
    def known(self) -> bool:
        return self.scheme is not None

    @property
    def variant(self) -> tuple[str | None, str | None]:
        return self.device, self.backend

    def fixed(self) -> str:
        """The tag with every exactly-fixable naming issue fixed (tokens renamed; `.postN` spelling kept)."""
        tokens = self.tag.split("-")
        for issue in self.issues:
            if issue.fix is None:
                continue
            tokens = [issue.fix if t == issue.token else t for t in tokens]
        return "-".join(tokens)


@dataclass(frozen=True)
class _Scheme:
    name: str
    role: str
    shape: tuple[Any, ...]
    format: str
    default_backend: str | None


def _parse_shape(text: str) -> tuple[Any, ...]:
    items: list[Any] = []
    stack: list[list[Any]] = [items]
    for tok in re.findall(r"\[|\]|[^\s\[\]]+", text):
        if tok == "[":
            group: list[Any] = []
            stack[-1].append(("opt", group))
            stack.append(group)
        elif tok == "]":
            stack.pop()
        elif tok == "*":
            stack[-1].append(("rest",))
        else:
            stack[-1].append(("field", tok))
    return tuple(items)


class Grammar:
    """Tag tokens, schemes, families and mirrors from the facts' `image_tags`."""

    def __init__(self, section: ImageTags) -> None:
        self.devices = list(section.devices)
        self.backends = list(section.backends)
        self.model_markers = sorted(section.model_markers, key=len, reverse=True)
        self.families = [[tuple(s.split("/")) for s in fam] for fam in section.families]
        self.mirrors = dict(section.mirrors)
        self.temporary = [re.compile(p) for p in section.temporary]
        self.producer_markers = list(section.producer_markers)
        self.tokens = [(f, re.compile(p)) for f, p in section.tokens]
        self.schemes = [
            _Scheme(s.name, s.role, _parse_shape(s.shape), s.format, s.default_backend) for s in section.schemes
        ]
        self.lenient_fields: dict[str, dict[str, str]] = {f: dict(spec.fields) for f, spec in section.lenient.items()}
        self.lenient_words: dict[str, dict[str, str | None]] = {
            f: dict(spec.words) for f, spec in section.lenient.items()
        }
        self.post_spelling = section.post_spelling
        self._cache: dict[str, TagInfo] = {}
        # What an explicit family reference holds (`.../verl:`): its repository's last segment ends a family suffix,
        # between a `/` and the tag's `:` (see `documented_tags`).
        self.family_marks = tuple(sorted({f"/{suffix[-1]}:" for fam in self.families for suffix in fam if suffix}))
        self._explicit: dict[str, str | None] = {}  # an explicit reference as written -> its family tag, or None

    # -- families and mirrors -----------------------------------------------------------------------------------
    def family(self, ref: ImageRef) -> str | None:
        """The family (its first repository suffix) when `ref` names an Ascend verl image, else None."""
        segs = tuple(ref.segments)
        for fam in self.families:
            for suffix in fam:
                if len(segs) >= len(suffix) and segs[-len(suffix) :] == suffix:
                    return "/".join(fam[0])
        return None

    def location(self, ref: ImageRef) -> str:
        """Where a family image is pulled from: the repository without its family suffix (e.g. the SWR mirror)."""
        segs = tuple(ref.segments)
        for fam in self.families:
            for suffix in fam:
                if len(segs) >= len(suffix) and segs[-len(suffix) :] == suffix:
                    return "/".join(segs[: -len(suffix)])
        return ref.repository

    def mirror_name(self, location: str) -> str:
        for name, prefix in self.mirrors.items():
            if location == prefix:
                return name
        return location or "(no registry)"

    def is_temporary(self, tag: str) -> bool:
        return any(p.search(tag) for p in self.temporary)

    # -- tags -------------------------------------------------------------------------------------------------
    def split(self, tag: str) -> list[str]:
        """Tokens on "-", with a model marker (which may contain "-") kept as one token."""
        parts = tag.split("-")
        out: list[str] = []
        i = 0
        while i < len(parts):
            for marker in self.model_markers:
                mparts = marker.split("-")
                if parts[i : i + len(mparts)] == mparts:
                    out.append(marker)
                    i += len(mparts)
                    break
            else:
                out.append(parts[i])
                i += 1
        return out

    def token_field(self, token: str) -> tuple[str | None, re.Match[str] | None]:
        if token in self.model_markers:
            return "model", None
        for name, pattern in self.tokens:
            m = pattern.match(token)
            if m:
                return name, m
        return None, None

    def classify(self, tag: str) -> TagInfo:
        hit = self._cache.get(tag)
        if hit is None:
            hit = self._classify(tag)
            self._cache[tag] = hit
        return hit

    def _classify(self, tag: str) -> TagInfo:
        if not tag or WILD in tag:
            return TagInfo(tag)
        tokens = self.split(tag)
        classes = [self.token_field(t) for t in tokens]
        for lenient in (False, True):
            for scheme in self.schemes:
                match = _match(scheme.shape, 0, tokens, classes, self, lenient)
                if match is None:
                    continue
                return self._info(tag, scheme, tokens, classes, match)
        return TagInfo(tag)

    def _info(
        self,
        tag: str,
        scheme: _Scheme,
        tokens: list[str],
        classes: list[tuple[str | None, re.Match[str] | None]],
        match: list[tuple[int, str]],
    ) -> TagInfo:
        fields: dict[str, str] = {}
        values: dict[str, str] = {}
        issues: list[Issue] = []
        post = None
        for index, slot in match:
            token = tokens[index]
            cls, m = classes[index]
            fields[slot] = token
            value = m.group("v") if m is not None and "v" in m.re.groupindex and m.group("v") else token
            if cls != slot:
                fix = self._fix(slot, token, cls)
                issues.append(Issue(slot, token, fix))
                if slot in ("device", "backend"):
                    value = fix or token
            values[slot] = value
            if m is not None and "post" in m.re.groupindex and m.group("post"):
                post = m.group("post")
        backend = values.get("backend") or scheme.default_backend
        return TagInfo(
            tag=tag,
            scheme=scheme.name,
            role=scheme.role,
            fields=fields,
            values=values,
            issues=tuple(issues),
            device=values.get("device"),
            backend=backend,
            post=post,
        )

    def _fix(self, slot: str, token: str, cls: str | None) -> str | None:
        if cls is not None and cls in self.lenient_fields.get(slot, {}):
            fm = next((p for f, p in self.tokens if f == cls), None)
            m = fm.match(token) if fm is not None else None
            prefix_new = self.lenient_fields[slot][cls]
            if m is not None and "v" in m.re.groupindex:
                start = m.start("v")
                return prefix_new + token[start:]
            return None
        return self.lenient_words.get(slot, {}).get(token)

    def accepts(self, slot: str, token: str, cls: str | None, lenient: bool) -> bool:
        if cls == slot:
            return True
        if not lenient:
            return False
        if cls is not None and cls in self.lenient_fields.get(slot, {}):
            return True
        return cls is None and token in self.lenient_words.get(slot, {})

    def scheme_format(self, name: str) -> str:
        return next((s.format for s in self.schemes if s.name == name), name)

    def normalized(self, info: TagInfo) -> str:
        """Identity of a tag for spelling comparisons: naming issues fixed and one `.postN` spelling."""
        text = info.fixed()
        return re.sub(r"(torch(?:_npu)?\d+\.\d+\.\d+)\.?(post\d+)", r"\1.\2", text)


def _match(
    shape: tuple[Any, ...],
    pos: int,
    tokens: list[str],
    classes: list[tuple[str | None, re.Match[str] | None]],
    grammar: Grammar,
    lenient: bool,
) -> list[tuple[int, str]] | None:
    """Backtracking match of a shape against tokens[pos:]; returns (token index, field) pairs."""
    if not shape:
        return [] if pos == len(tokens) else None
    head, rest = shape[0], shape[1:]
    if head[0] == "rest":
        return (
            []
            if not rest
            else next(
                (m for p in range(pos, len(tokens) + 1) if (m := _match(rest, p, tokens, classes, grammar, lenient))),
                None,
            )
        )
    if head[0] == "opt":
        with_group = _match(tuple(head[1]) + rest, pos, tokens, classes, grammar, lenient)
        if with_group is not None:
            return with_group
        return _match(rest, pos, tokens, classes, grammar, lenient)
    name = head[1]
    if pos >= len(tokens) or not grammar.accepts(name, tokens[pos], classes[pos][0], lenient):
        return None
    tail = _match(rest, pos + 1, tokens, classes, grammar, lenient)
    return None if tail is None else [(pos, name), *tail]


def documented_tags(text: str, g: Grammar, bare: bool) -> Iterator[tuple[int, str, int, int]]:
    """(line, tag, start column, end column) of family image tags written in prose or comments.

    Explicit references (`quay.io/ascend/verl:<tag>`) always count; with `bare`, so do stand-alone words that
    classify into a tag scheme (`v0.8.0-cann9.0.0-...` in a table).
    """
    # An explicit reference of the family holds one of `g.family_marks` (its repository ends with a family suffix,
    # and a match of _EXPLICIT has a `/` before its last segment and its tag's `:` after): text without any has none.
    marks = tuple(k for k in g.family_marks if k in text)
    # A bare tag holds three `-` of its own, each followed by a character of its own (_BARE_HINT).
    bare = bare and _BARE_HINT.search(text) is not None
    if not marks and not bare:
        return
    known = g._explicit
    mark = marks[0] if len(marks) == 1 else None  # the usual case: one family
    for n, line in _candidate_lines(text, marks, bare):
        # Cheap guards first: most lines of most files can hold neither kind of tag (profiled on verl).
        explicit = mark in line if mark is not None else bool(marks) and any(k in line for k in marks)
        maybe_bare = bare and line.count("-") >= 3 and _BARE_HINT.search(line) is not None
        if not explicit and not maybe_bare:
            continue
        seen: set[tuple[int, int]] = set()
        for m in _EXPLICIT.finditer(line) if explicit else ():
            written = m.group(0)
            if written in known:
                tag = known[written]
            else:
                ref = parse_ref(written)
                tag = known[written] = None if ref is None or ref.tag is None or g.family(ref) is None else ref.tag
            if tag is None:
                continue
            start = m.end() - len(tag)
            seen.add((start, m.end()))
            yield n, tag, start, m.end()
        if not maybe_bare:
            continue
        for m in _BARE.finditer(line):
            if any(s <= m.start() < e for s, e in seen):
                continue
            info = g.classify(m.group(0))
            if info.known:
                yield n, m.group(0), m.start(), m.end()


# Line breaks other than "\n" (str.splitlines breaks at these too).
_OTHER_BREAKS = lazyre.compile("[\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


def _candidate_lines(text: str, marks: tuple[str, ...], bare: bool) -> Iterable[tuple[int, str]]:
    """(number, text) of the lines (numbered as str.splitlines does) that hold one of `marks` or, with `bare`, a
    match of _BARE_HINT: found by scanning the text, not line by line. Every line, when the text breaks lines
    otherwise than with "\n"."""
    if _OTHER_BREAKS.search(text):
        return enumerate(text.splitlines(), start=1)
    starts: set[int] = set()
    for mark in marks:
        i = text.find(mark)
        while i >= 0:
            starts.add(text.rfind("\n", 0, i) + 1)
            i = text.find(mark, i + 1)
    if bare:  # neither a mark nor a hint spans lines; finditer finds a hint in every line that holds one
        starts.update(text.rfind("\n", 0, m.start()) + 1 for m in _BARE_HINT.finditer(text))
    out: list[tuple[int, str]] = []
    n, prev = 1, 0
    for start in sorted(starts):
        n += text.count("\n", prev, start)
        prev = start
        end = text.find("\n", start)
        out.append((n, text[start:] if end < 0 else text[start:end]))
    return out


# The lookbehind changes no match, it only spares the regex a retry at every letter of a long word: a match that
# would start right after a letter or digit could start at that letter too, and finditer takes the leftmost
# (a previous match cannot end just before one: it ends before a character outside [A-Za-z0-9._-]).
_EXPLICIT = lazyre.compile(
    r"(?<![A-Za-z0-9])[A-Za-z0-9][A-Za-z0-9.-]*(?::\d+)?(?:/[A-Za-z0-9._-]+)+:[A-Za-z0-9_][A-Za-z0-9._-]*"
)
_BARE = lazyre.compile(r"(?<![\w./:-])[a-z0-9][a-z0-9._]*(?:-[a-z0-9._]+){3,}(?![\w/-])")
# What every match of _BARE holds (its last three `-[a-z0-9._]+`), found fast: the search starts at a `-`.
_BARE_HINT = lazyre.compile(r"-[a-z0-9._]+-[a-z0-9._]+-[a-z0-9._]")
