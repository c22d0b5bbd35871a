"""YAML with line marks: PyYAML's safe composer turned into a small, bounded tree whose nodes know their lines.

Rules walk mappings and sequences and get (value, line) pairs, e.g. `jobs.<id>.container.image` or each line of a
`run: |` block. Loading is safe (SafeLoader, nodes only, nothing constructed), bounded in size, depth and node count
(alias bombs expand into a ParseError, never into memory), and a broken document gives a ParseError with a line.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import yaml

# Limits. GitHub refuses workflow files above 512 KiB; the cap here is only a guard against pathological input.
MAX_BYTES = 2_000_000
# After alias expansion. verl's largest workflow has about 3,000 nodes.
MAX_NODES = 200_000
MAX_DEPTH = 120

MAP = "map"
SEQ = "seq"
SCALAR = "scalar"


@dataclass(frozen=True)
class ParseError:
    """Why a document could not be read, and where (1-based line)."""

    line: int
    message: str


@dataclass(frozen=True)
class DuplicateKey:
    key: str
    line: int  # the repeated key
    first_line: int  # where it was first defined


class Node:
    """One YAML node. `line`/`end_line` are 1-based; for a block scalar `line` is the line of `|` or `>`.

    `Node(kind, line, end_line, value=…, style=…, pairs=…, items=…)` makes a node of the class of its kind: a
    scalar, a mapping or a sequence, each with the slots of its own parts alone (the others read as empty, from the
    class), and a mapping's pairs flat in one tuple (`_kv`: key, value, key, value, ...). A workflow's document
    holds ~160 nodes, a tree's 1,600 workflows ~250,000, all kept for the run: these shapes hold them in 21 MiB
    where one class with every part in a slot, pairs as a list of tuples, took 34 MiB. A plain scalar on one line
    (most keys and values: ~174,000 of the ~197,000 scalars of the 40,000-file tree's workflows) holds its line
    and value alone (48 bytes, not 72): its end is its line, its style none, and its text is its value
    (`source_lines` is empty for it)."""

    __slots__ = ("line",)

    line: int
    # The document's text, shared by its nodes; split into lines only where a folded scalar is looked up in it.
    # Read from the class where the kind has no such part.
    _source: str = ""
    kind: str = ""
    value: str = ""
    style: str | None = None
    items: Sequence[Node] = ()
    _kv: tuple[Node, ...] = ()

    def __new__(
        cls,
        kind: str = "",
        line: int = 0,
        end_line: int = 0,
        value: str = "",
        style: str | None = None,
        pairs: Iterable[tuple[Node, Node]] = (),
        items: Iterable[Node] = (),
        _source: str = "",
    ) -> Node:
        if cls is not Node:  # (a copy or an unpickled node: its slots are set after)
            return object.__new__(cls)
        node: Node
        if kind == SCALAR:
            node = _scalar(line, end_line, value, style, _source)
        elif kind == MAP:
            node = _mapping(line, end_line, tuple(part for pair in pairs for part in pair), _source)
        elif kind == SEQ:
            node = _sequence(line, end_line, tuple(items), _source)
        else:
            raise ValueError(f"no YAML node kind {kind!r}")
        return node

    @property
    def end_line(self) -> int:
        """The node's last line (a slot of its own where it may differ from `line`)."""
        return self.line

    def __repr__(self) -> str:
        if self.kind == SCALAR:
            return f"Node({self.kind}, {self.line}-{self.end_line}, value={self.value!r}, style={self.style!r})"
        return f"Node({self.kind}, {self.line}-{self.end_line}, {len(self.items) + len(self._kv) // 2} children)"

    # -- shape ---------------------------------------------------------------------------------------------
    @property
    def is_map(self) -> bool:
        return self.kind == MAP

    @property
    def is_seq(self) -> bool:
        return self.kind == SEQ

    @property
    def is_scalar(self) -> bool:
        return self.kind == SCALAR

    @property
    def pairs(self) -> Sequence[tuple[Node, Node]]:
        """(key, value) of each entry of a mapping, in order; empty for a scalar or a sequence."""
        kv = iter(self._kv)
        return tuple(zip(kv, kv, strict=True))

    # -- lookup --------------------------------------------------------------------------------------------
    def get(self, key: str) -> Node | None:
        """The value of `key` in a mapping (the first one: GitHub refuses duplicates anyway), else None."""
        pairs = iter(self._kv)
        for k in pairs:
            if k.value == key and k.kind == SCALAR:
                return next(pairs)
            next(pairs)
        return None

    def key_node(self, key: str) -> Node | None:
        for k in self._kv[::2]:
            if k.value == key and k.kind == SCALAR:
                return k
        return None

    def at(self, *path: str | int) -> Node | None:
        """Follow mapping keys (str) and sequence indexes (int): `root.at("jobs", "build", "steps", 0)`."""
        node: Node | None = self
        for part in path:
            if node is None:
                return None
            if isinstance(part, int):
                node = node.items[part] if node.kind == SEQ and -len(node.items) <= part < len(node.items) else None
            else:
                node = node.get(part)
        return node

    def scalar(self, *path: str | int) -> str | None:
        """The text of the scalar at `path`, None when absent or not a scalar."""
        node = self.at(*path) if path else self
        return node.value if node is not None and node.kind == SCALAR else None

    def entries(self) -> Iterator[tuple[str, Node, Node]]:
        """(key text, key node, value node) of a mapping, skipping non-scalar keys."""
        pairs = iter(self._kv)
        for k in pairs:
            v = next(pairs)
            if k.kind == SCALAR:
                yield k.value, k, v

    def text_lines(self) -> list[tuple[int, str]]:
        """Each line of a scalar's text with the physical line it sits on.

        Literal blocks (`run: |`) map line by line; folded or multi-line flow scalars are located by searching the
        source between the node's first and last line (good enough to point inside a block).
        """
        if self.kind != SCALAR:
            return []
        parts = self.value.split("\n")
        if self.style in ("|", ">") and parts and parts[-1] == "":
            parts.pop()
        if self.style == "|":
            return [(self.line + 1 + i, text) for i, text in enumerate(parts)]
        if len(parts) <= 1 and self.style != ">":
            return [(self.line, self.value)]
        out: list[tuple[int, str]] = []
        cursor = self.line
        for text in parts:
            needle = text.strip()[:60]
            found = cursor
            if needle:
                for n in range(cursor, max(self.end_line, cursor) + 1):
                    if needle in self._line(n):
                        found = n
                        break
            out.append((found, text))
            cursor = found
        return out

    def source_lines(self) -> list[str]:
        """The lines of the document this node is part of (`[0]` is line 1); empty for a plain scalar on one line,
        whose text is its value."""
        return _lines(self._source)

    def _line(self, n: int) -> str:
        lines = _lines(self._source)
        return lines[n - 1] if 1 <= n <= len(lines) else ""

    # -- traversal -----------------------------------------------------------------------------------------
    def walk(self, path: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], Node]]:
        """Every node below (and including) this one with its path, depth-first, in document order."""
        stack: list[tuple[tuple[str | int, ...], Node]] = [(path, self)]
        while stack:
            p, node = stack.pop()
            yield p, node
            if node.kind == MAP:
                keys, values = node._kv[::2], node._kv[1::2]
                found = [((*p, k.value), v) for k, v in zip(keys, values, strict=True) if k.kind == SCALAR]
                stack.extend(reversed(found))
            elif node.kind == SEQ:
                stack.extend(reversed([((*p, i), v) for i, v in enumerate(node.items)]))


class _Scalar(Node):
    __slots__ = ("_source", "end_line", "style", "value")
    kind = SCALAR
    end_line: int


class _Plain(Node):
    """A plain scalar on one line."""

    __slots__ = ("value",)
    kind = SCALAR


class _Mapping(Node):
    __slots__ = ("_kv", "_source", "end_line")
    kind = MAP
    end_line: int


class _Sequence(Node):
    __slots__ = ("_source", "end_line", "items")
    kind = SEQ
    end_line: int


_new = object.__new__


def _scalar(line: int, end_line: int, value: str, style: str | None, source: str) -> Node:
    node = _new(_Scalar)
    node.line, node.end_line, node.value, node.style, node._source = line, end_line, value, style, source
    return node


def _mapping(line: int, end_line: int, kv: tuple[Node, ...], source: str) -> Node:
    node = _new(_Mapping)
    node.line, node.end_line, node._kv, node._source = line, end_line, kv, source
    return node


def _sequence(line: int, end_line: int, items: tuple[Node, ...], source: str) -> Node:
    node = _new(_Sequence)
    node.line, node.end_line, node.items, node._source = line, end_line, items, source
    return node


@lru_cache(maxsize=8)
def _lines(text: str) -> list[str]:
    """The lines of a document's text (kept for the few documents whose folded scalars are being located)."""
    return text.splitlines()


@dataclass
class YamlDoc:
    """The result of parsing: `root` (None when empty or broken) or `error`, plus duplicate keys."""

    root: Node | None
    error: ParseError | None = None
    duplicates: list[DuplicateKey] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None


class _Budget(Exception):
    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


class _Converter:
    def __init__(self, source: str) -> None:
        self.source = source
        self.count = 0
        self.duplicates: list[DuplicateKey] = []
        self._dup_seen: set[int] = set()
        self._top_line = 0  # the top-level entry being converted: where an expansion blow-up is reported

    def convert(self, node: yaml.Node, depth: int) -> Node:
        self.count += 1
        line = node.start_mark.line + 1
        if self.count > MAX_NODES:
            raise _Budget(
                f"the document expands to more than {MAX_NODES} nodes (aliases nested too deeply?)",
                self._top_line or line,
            )
        if depth > MAX_DEPTH:
            raise _Budget(
                f"the document nests deeper than {MAX_DEPTH} levels (or an alias refers to itself)",
                self._top_line or line,
            )
        end_mark = node.end_mark
        end = end_mark.line + (0 if end_mark.column == 0 else 1)
        if end < line:
            end = line
        if isinstance(node, _SCALAR_NODE):
            # Interned: keys and common values (`runs-on`, `actions/checkout@v4`) recur in every workflow of a tree.
            value = _intern(str(node.value))
            style = node.style or None
            if end == line and style is None:
                plain = _new(_Plain)
                plain.line, plain.value = line, value
                return plain
            return _scalar(line, end, value, style, self.source)
        convert = self.convert
        if isinstance(node, _SEQUENCE_NODE):
            return _sequence(line, end, tuple([convert(child, depth + 1) for child in node.value]), self.source)
        assert isinstance(node, yaml.MappingNode)
        kv: list[Node] = []  # key, value, key, value, ...
        merged: list[Node] = []
        for key, value in node.value:
            if depth == 0:
                self._top_line = key.start_mark.line + 1
            k = convert(key, depth + 1)
            v = convert(value, depth + 1)
            if k.kind == SCALAR and k.value == "<<" and key.tag == _MERGE_TAG:
                sources = [v] if v.kind == MAP else [i for i in v.items if i.kind == MAP]
                for src in sources:
                    merged.extend(src._kv)
                continue
            kv += (k, v)
        if id(node) not in self._dup_seen:  # an aliased mapping is reported once, not at every alias
            self._dup_seen.add(id(node))
            first: dict[str, int] = {}
            for k in kv[::2]:
                if k.kind != SCALAR:
                    continue
                if k.value in first:
                    self.duplicates.append(DuplicateKey(k.value, k.line, first[k.value]))
                else:
                    first[k.value] = k.line
        if merged:
            own = {k.value for k in kv[::2] if k.kind == SCALAR}
            for i in range(0, len(merged), 2):
                k = merged[i]
                if not (k.kind == SCALAR and k.value in own):
                    kv += (k, merged[i + 1])
        return _mapping(line, end, tuple(kv), self.source)


def _error_line(exc: yaml.YAMLError) -> int:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    return mark.line + 1 if mark is not None else 1


def _error_text(exc: yaml.YAMLError) -> str:
    problem = getattr(exc, "problem", None)
    context = getattr(exc, "context", None)
    if problem:
        return f"{problem} ({context})" if context else str(problem)
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


_SCALAR_NODE, _SEQUENCE_NODE = yaml.ScalarNode, yaml.SequenceNode
_intern = sys.intern
_MERGE_TAG = "tag:yaml.org,2002:merge"


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """libyaml's safe loader when PyYAML was built with it (about ten times faster); the same nodes and marks.

    Only the `<<` merge key's tag is read of the tags the loader resolves (`_Converter`), and the safe resolver
    gives it to a plain `<<` alone: the other scalars need not be matched against the resolver's patterns."""

    def resolve(self, kind: type[yaml.Node], value: str | None, implicit: tuple[bool, bool]) -> str:
        if kind is _SCALAR_NODE and implicit[0] and value == "<<":
            return _MERGE_TAG
        return "tag:yaml.org,2002:str" if kind is _SCALAR_NODE else super().resolve(kind, value, implicit)

    # The safe loader has no path resolvers, so these do nothing (PyYAML's own return at once); the composer calls
    # them around every node.
    def descend_resolver(self, current_node: yaml.Node | None, current_index: object) -> None:
        pass

    def ascend_resolver(self) -> None:
        pass


_LOADER = _Loader


def parse(text: str) -> YamlDoc:
    """Compose `text` (one document) with the safe loader. Never raises for bad input: see YamlDoc.error."""
    if len(text) > MAX_BYTES:
        return YamlDoc(None, ParseError(1, f"file too large to check ({len(text)} bytes > {MAX_BYTES})"))
    try:
        raw = yaml.compose(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        return YamlDoc(None, ParseError(_error_line(exc), _error_text(exc)))
    except RecursionError:
        return YamlDoc(None, ParseError(1, "the document nests too deeply to be read"))
    except (ValueError, UnicodeError) as exc:  # e.g. characters the reader refuses
        return YamlDoc(None, ParseError(1, str(exc)))
    if raw is None:
        return YamlDoc(None)
    conv = _Converter(text)
    try:
        root = conv.convert(raw, 0)
    except _Budget as exc:
        return YamlDoc(None, ParseError(exc.line, str(exc)))
    return YamlDoc(root, None, conv.duplicates)
