"""Markdown and reStructuredText as verl's docs write them: links, tables, headings and code blocks, with lines.

One parser for both flavours, because the rules ask the same questions of both: where are the link targets
(with their exact columns, so a fix can be suggested), which lines are code (links there are not links), which
heading a line sits under ("History" tables), and what the table cells say. It never raises: what it cannot
read is left out. Columns of RST simple and grid tables are measured in display cells (CJK characters take two),
as docutils does, so the Chinese headers of the Ascend docs split where their authors aligned them.

    doc = parse(text, "rst")                  # or flavor_of(path)
    doc.links                                 # Link(target, line, start, end, syntax)
    doc.tables                                # Table(header, rows=[Row(line, cells=[Cell(text, spans)])])
    doc.section(line)                         # the heading titles above a line, outermost first
    resolve(doc_path, target, repos, refs)    # what a link points at: a repo path (and ref), an anchor, external
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

from npu_review.checks import lazyre
from npu_review.checks.fastinit import fast_init

Flavor = Literal["md", "rst"]


@dataclass(frozen=True)
class Link:
    target: str  # as written between its delimiters: no `<>` wrapper, no title
    line: int  # 1-based
    start: int  # column (code points) of the target's first character in its line
    end: int  # column just after its last character
    syntax: str  # inline | reference | autolink | html | bare | rst | rst-target | directive | doc | toctree


@dataclass(frozen=True)
class Heading:
    line: int
    level: int
    title: str


@fast_init
@dataclass(frozen=True)
class Cell:
    text: str
    spans: tuple[tuple[int, int, int], ...] = ()  # (line, start column, end column) of the cell's text


@dataclass(frozen=True)
class Row:
    line: int
    end_line: int
    cells: tuple[Cell, ...]

    def cell(self, i: int) -> Cell | None:
        return self.cells[i] if 0 <= i < len(self.cells) else None


@dataclass(frozen=True)
class Table:
    line: int
    header: tuple[str, ...]
    rows: tuple[Row, ...]
    kind: str  # pipe | simple | grid | list


@dataclass
class Document:
    flavor: Flavor
    lines: list[str]
    links: list[Link] = field(default_factory=list)
    headings: list[Heading] = field(default_factory=list)
    code: frozenset[int] = frozenset()  # lines inside code blocks (fenced, literal, code directives)
    # False once the parse stopped at a parser bug: what it reads after that point (tables, list items) stays
    # unknown, what it read before stays.
    complete: bool = True

    # The tables and the list items are read after the rest, on first use: one rule asks for them, of a few docs.
    @cached_property
    def tables(self) -> list[Table]:
        out: list[Table] = []
        if not self.complete:
            return out
        try:
            if self.flavor == "md":
                _md_tables(self, out)
            else:
                _rst_simple_tables(self, out)
                _rst_grid_tables(self, out)
                _rst_list_tables(self, out)
                out.sort(key=lambda t: t.line)
        except Exception:  # as in `parse`: the tables read so far stay, the list items are unknown
            self.complete = False
        return out

    @cached_property
    def bullets(self) -> list[tuple[int, int]]:
        """List items: (first line, last line)."""
        _ = self.tables  # read first, as the parse reads them: a parser bug there leaves the list items unknown
        if not self.complete:
            return []
        try:
            return _bullets(self, _MD_BULLET if self.flavor == "md" else _RST_BULLET)
        except Exception:
            return []

    def section(self, line: int) -> tuple[str, ...]:
        """Titles of the headings that enclose `line`, outermost first."""
        stack: list[Heading] = []
        for h in self.headings:
            if h.line > line:
                break
            while stack and stack[-1].level >= h.level:
                stack.pop()
            stack.append(h)
        return tuple(h.title for h in stack)

    def links_in(self, cell: Cell) -> list[Link]:
        out: list[Link] = []
        for line, start, end in cell.spans:
            out.extend(k for k in self.links if k.line == line and start <= k.start < end)
        return out

    def text(self, line: int) -> str:
        return self.lines[line - 1] if 1 <= line <= len(self.lines) else ""


def flavor_of(path: str) -> Flavor | None:
    low = path.lower()
    if low.endswith((".md", ".markdown")):
        return "md"
    if low.endswith(".rst"):
        return "rst"
    return None


def parse(text: str, flavor: Flavor) -> Document:
    doc = Document(flavor, text.splitlines())
    try:
        if flavor == "md":
            _parse_md(doc, text)
        else:
            _parse_rst(doc)
    except Exception:  # a parser bug must not sink a rule: what was read so far stays, the rest is unknown
        doc.complete = False
    doc.links.sort(key=lambda k: (k.line, k.start))
    return doc


# -- shared helpers -----------------------------------------------------------------------------------------------

_URL = lazyre.compile(r"(?i)\b(?:https?|ftp)://[^\s<>\"'`\[\]]+")
# Characters that end a bare URL in prose: CJK punctuation and full-width brackets.
_URL_STOP = "，。、；：！？）（【】《》「」『』“”‘’"
_URL_TRAIL = ".,;:!?*_~'\"\\"


def _width(ch: str) -> int:
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def _display_columns(line: str) -> list[int]:
    """Display column at which each character of the line starts (plus one entry for the end)."""
    cols, c = [], 0
    for ch in line:
        cols.append(c)
        c += _width(ch)
    cols.append(c)
    return cols


def _mask(line: str, pattern: re.Pattern[str]) -> str:
    """The line with every match of `pattern` blanked out (same length, so columns stay)."""
    return pattern.sub(lambda m: " " * len(m.group(0)), line)


def _bare_urls(doc: Document, n: int, line: str, taken: list[tuple[int, int]]) -> None:
    for m in _URL.finditer(line):
        start, end = m.start(), m.end()
        if any(a <= start < b for a, b in taken):
            continue
        text = line[start:end]
        for i, ch in enumerate(text):
            if ch in _URL_STOP:
                text = text[:i]
                break
        # Trailing punctuation, invisible separators and unbalanced closing parens are the prose's, not the URL's.
        while text:
            last = text[-1]
            unbalanced = last in ")]" and text.count(last) > text.count("(" if last == ")" else "[")
            if not (last in _URL_TRAIL or not _visible(last) or unbalanced):
                break
            text = text[:-1]
        if text:
            doc.links.append(Link(text, n, start, start + len(text), "bare"))


def _visible(ch: str) -> bool:
    return unicodedata.category(ch) not in ("Cf", "Zs", "Zl", "Zp", "Cc")


# -- Markdown -----------------------------------------------------------------------------------------------------

_ATX = lazyre.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")
_SETEXT = lazyre.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_CODE_SPAN = lazyre.compile(r"(`+)(?:(?!\1).)+?\1")
_REF_DEF = lazyre.compile(r"^ {0,3}\[(?!\^)[^\]]+\]:[ \t]*(<[^>]*>|\S+)")  # `[^1]: note` is a footnote, not a link
_AUTOLINK = lazyre.compile(r"<([A-Za-z][A-Za-z0-9+.-]*:[^<>\s]+)>")
# `src=` and `href=` themselves, not an attribute ending in them (`data-canonical-src=`, which browsers ignore).
_HTML_ATTR = lazyre.compile(r"""(?i)(?<![\w-])(?:href|src)\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_DELIM_ROW = lazyre.compile(r"^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$")


def _parse_md(doc: Document, text: str) -> None:
    from npu_review.checks.parsers import mdblocks

    lines = doc.lines
    # Code lines as CommonMark reads them (the one Markdown scanner): fences with their fence lines, indented blocks.
    code: set[int] = set()
    for block in mdblocks.blocks(text):
        if block.kind != "paragraph":
            code.update(range(block.start, block.end + 1))
    doc.code = frozenset(code)

    # Each pattern below is tried only on lines holding the characters any match of it holds (a heading its `#`,
    # `=` or `-`): the same matches, read faster.
    prev = ""
    for n, line in enumerate(lines, start=1):
        if n in doc.code:
            prev = ""
            continue
        m = _ATX.match(line) if "#" in line else None
        if m:
            doc.headings.append(Heading(n, len(m.group(1)), _clean(m.group(2))))
        elif (
            ("=" in line or "-" in line)
            and _SETEXT.match(line)
            and prev.strip()
            and "|" not in prev
            and not prev.lstrip().startswith(("-", "*", ">"))
            and (line.strip()[0] == "=" or len(line.strip()) >= 2)
        ):
            doc.headings.append(Heading(n - 1, 1 if line.strip()[0] == "=" else 2, _clean(prev)))
        prev = line
    doc.headings.sort(key=lambda h: h.line)

    shown = _without_html_comments(lines) if any("<!--" in line or "{/*" in line for line in lines) else lines
    for n, line in enumerate(shown, start=1):
        if n not in doc.code:
            _md_links(doc, n, line)


# An HTML comment, or an MDX one (`{/* … */}`, which MDX sites write where HTML comments are not allowed).
_HTML_COMMENT = lazyre.compile(r"<!--.*?(?:-->|\Z)|\{/\*.*?(?:\*/\}|\Z)", re.DOTALL)


def _without_html_comments(lines: list[str]) -> list[str]:
    """The lines with what HTML and MDX comments (`<!-- … -->`, `{/* … */}`, over lines too) hold blanked, the
    columns kept: what a comment holds is not rendered, so its `<img src=…>` and links are none."""
    text = _HTML_COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), "\n".join(lines))
    return text.split("\n")


_MD_BULLET = lazyre.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_RST_BULLET = lazyre.compile(r"^\s*(?:[-*+]|\d+[.)]|#\.)\s+")


_SHORTCODE = lazyre.compile(r"\{\{[<%].*?[>%]\}\}")
_LINK_HINT = lazyre.compile(r"\]\(|://|<|\]:|=")  # a line without any of these holds no link


def _md_links(doc: Document, n: int, line: str) -> None:
    if not _LINK_HINT.search(line):
        return
    # As below, a pattern is tried only where the characters every match of it holds are: a code span its "`", a
    # reference definition its "]:", an autolink its "<", an HTML attribute its "=", a bare URL its "://".
    masked = _mask(line, _CODE_SPAN) if "`" in line else line
    if "{{" in masked:
        # A Hugo shortcode (`{{<figure library="1" src="x.png">}}`, `{{% include "x.md" %}}`): the theme's template
        # decides where its `src` is read from (a site's `static/img/`, by its option), not the page's folder
        # (volcano-sh/website, rs-r50: six judged false).
        masked = _mask(masked, _SHORTCODE)
    taken: list[tuple[int, int]] = []
    first = len(doc.links)  # the links of this line are appended from here on

    def add(start: int, end: int, syntax: str) -> None:
        if end > start:
            doc.links.append(Link(line[start:end], n, start, end, syntax))
            taken.append((start, end))

    i = masked.find("](")
    while i != -1:
        start, end = _md_target(masked, i + 2)
        if start is not None and end is not None:
            add(start, end, "inline")
        i = masked.find("](", i + 2)
    m = _REF_DEF.match(masked) if "]:" in masked else None
    if m:
        s, e = m.span(1)
        if masked[s] == "<":
            s, e = s + 1, e - 1
        add(s, e, "reference")
    for m in _AUTOLINK.finditer(masked) if "<" in masked else ():
        if not any(a <= m.start(1) < b for a, b in taken):
            add(m.start(1), m.end(1), "autolink")
    for m in _HTML_ATTR.finditer(masked) if "=" in masked else ():
        g = 1 if m.group(1) is not None else 2
        add(m.start(g), m.end(g), "html")
    if "://" in masked:
        _bare_urls(doc, n, masked, taken)
    # _bare_urls read the masked line: take the real text back for the links it added
    for k in range(first, len(doc.links)):
        link = doc.links[k]
        if link.line == n and link.syntax == "bare":
            doc.links[k] = Link(line[link.start : link.end], n, link.start, link.end, "bare")


def _md_target(s: str, i: int) -> tuple[int | None, int | None]:
    """Start and end of the destination of an inline link whose `(` is just before `i`."""
    n = len(s)
    while i < n and s[i] in " \t":
        i += 1
    if i < n and s[i] == "<":
        j = s.find(">", i + 1)
        return (i + 1, j) if j != -1 else (None, None)
    start, depth = i, 0
    while i < n:
        ch = s[i]
        if ch == "\\" and i + 1 < n:
            i += 2
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                break
            depth -= 1
        elif ch in " \t":
            break
        i += 1
    if i >= n:
        return None, None  # no `)` closes it on this line: no link (`[W8A8](w8a8.md。` at a line's end)
    return start, i


def _split_pipe_row(line: str) -> list[tuple[int, int]]:
    """Cell spans (start, end columns) of a pipe-table row: `|` outside code spans and not escaped."""
    masked = _mask(line, _CODE_SPAN)
    bounds = [i for i, ch in enumerate(masked) if ch == "|" and (i == 0 or masked[i - 1] != "\\")]
    stripped = masked.strip()
    edges = [-1, *bounds, len(line)]
    spans = [(edges[k] + 1, edges[k + 1]) for k in range(len(edges) - 1)]
    if stripped.startswith("|"):
        spans = spans[1:]
    if stripped.endswith("|") and spans:
        spans = spans[:-1]
    return spans


def _cell(line: str, n: int, start: int, end: int) -> Cell:
    raw = line[start:end]
    lead = len(raw) - len(raw.lstrip())
    text = raw.strip()
    return Cell(text, ((n, start + lead, start + lead + len(text)),))


def _md_tables(doc: Document, out: list[Table]) -> None:
    lines = doc.lines
    n = 1
    while n < len(lines):
        head, delim = lines[n - 1], lines[n]
        if n in doc.code or "|" not in head or not _DELIM_ROW.match(delim) or "-" not in delim or "|" not in delim:
            n += 1
            continue
        header = tuple(_cell(head, n, s, e).text for s, e in _split_pipe_row(head))
        rows = []
        k = n + 2
        while k <= len(lines) and "|" in lines[k - 1] and lines[k - 1].strip() and k not in doc.code:
            line = lines[k - 1]
            rows.append(Row(k, k, tuple(_cell(line, k, s, e) for s, e in _split_pipe_row(line))))
            k += 1
        out.append(Table(n, header, tuple(rows), "pipe"))
        n = k


# -- reStructuredText ---------------------------------------------------------------------------------------------

_ADORN_CHARS = "=-~^\"'`*+#:.<>_!$%&(),/;?@[\\]{|}"
_DIRECTIVE = lazyre.compile(r"^(\s*)\.\.\s+([A-Za-z][\w:-]*)::(.*)$")
_CODE_DIRECTIVES = frozenset(
    {"code", "code-block", "sourcecode", "literalinclude-raw", "math", "raw", "parsed-literal"}
)
_INLINE_LITERAL = lazyre.compile(r"``.+?``")
_RST_EMBEDDED = lazyre.compile(r"<([^<>`\s][^<>`]*)>`(__?)")
_RST_TARGET = lazyre.compile(r"^\s*\.\.\s+_[^:]*:\s*(\S+)\s*$")
_RST_DOC_ROLE = lazyre.compile(r":doc:`([^`]+)`")
_PATH_DIRECTIVES = frozenset({"image", "figure", "include", "literalinclude"})
_SIMPLE_BORDER = lazyre.compile(r"^\s*=+(?:[ \t]+=+)*[ \t]*$")
_GRID_BORDER = lazyre.compile(r"^\s*\+(?:[-=]+\+)+\s*$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _is_adornment(line: str) -> bool:
    s = line.rstrip()
    return len(s) >= 2 and s[0] in _ADORN_CHARS and s == s[0] * len(s)


def _block_end(lines: list[str], start: int, base_indent: int) -> int:
    """Index (0-based, exclusive) where an indented block that starts after line index `start` ends."""
    i = start + 1
    last = start
    while i < len(lines):
        line = lines[i]
        if line.strip():
            if _indent(line) <= base_indent:
                break
            last = i
        i += 1
    return last + 1


def _parse_rst(doc: Document) -> None:
    lines = doc.lines
    code: set[int] = set()
    toctree: list[tuple[int, str]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _DIRECTIVE.match(line) if ".." in line else None  # a directive's `..` (as in `_rst_links`)
        if m:
            name = m.group(2).lower()
            end = _block_end(lines, i, len(m.group(1)))
            if name in _CODE_DIRECTIVES:
                code.update(range(i + 2, end + 1))
            elif name == "toctree":
                toctree.extend((k + 1, lines[k]) for k in range(i + 1, end))
            i += 1
            continue
        s = line.rstrip()
        if s.endswith("::") and not s.lstrip().startswith(".."):
            end = _block_end(lines, i, _indent(line))
            code.update(range(i + 2, end + 1))
            i = max(end, i + 1)
            continue
        i += 1
    doc.code = frozenset(code)

    styles: list[tuple[str, bool]] = []
    for k in range(1, len(lines)):
        under, title = lines[k], lines[k - 1]
        if k + 1 in doc.code or not _is_adornment(under) or not title.strip() or _is_adornment(title):
            continue
        if _SIMPLE_BORDER.match(title) or _GRID_BORDER.match(title):
            continue
        over = k >= 2 and _is_adornment(lines[k - 2]) and lines[k - 2].strip()[0] == under.strip()[0]
        style = (under.strip()[0], over)
        if style not in styles:
            styles.append(style)
        doc.headings.append(Heading(k, styles.index(style) + 1, _clean(title)))

    for n, line in enumerate(lines, start=1):
        if n not in doc.code:
            _rst_links(doc, n, line)
    for n, line in toctree:
        _toctree_entry(doc, n, line)


def _rst_links(doc: Document, n: int, line: str) -> None:
    if not ("<" in line or "://" in line or ".." in line or ":doc:" in line):
        return
    # A pattern is tried only where the characters every match of it holds are: an inline literal its "``", an
    # embedded target its ">`", a target or a directive its "..", a `:doc:` role its name, a bare URL its "://".
    masked = _mask(line, _INLINE_LITERAL) if "``" in line else line
    taken: list[tuple[int, int]] = []

    def add(start: int, end: int, syntax: str) -> None:
        if end > start:
            doc.links.append(Link(line[start:end], n, start, end, syntax))
            taken.append((start, end))

    for m in _RST_EMBEDDED.finditer(masked) if ">`" in masked else ():
        target = m.group(1)
        if target.endswith("_") and not target.endswith("\\_"):
            continue  # `text <name_>`_ refers to another target by name
        add(m.start(1), m.end(1), "rst")
    dots = ".." in masked
    t = _RST_TARGET.match(masked) if dots else None
    if t:
        add(t.start(1), t.end(1), "rst-target")
    d = _DIRECTIVE.match(masked) if dots else None
    if d and d.group(2).lower() in _PATH_DIRECTIVES:
        arg = d.group(3).strip()
        if arg:
            start = masked.index(arg, d.start(3))
            add(start, start + len(arg), "directive")
    for m in _RST_DOC_ROLE.finditer(masked) if ":doc:" in masked else ():
        inner, base = m.group(1), m.start(1)
        e = re.search(r"<([^<>]+)>\s*$", inner)
        if e:
            add(base + e.start(1), base + e.end(1), "doc")
        else:
            add(base, base + len(inner), "doc")
    if "://" in masked:
        _bare_urls(doc, n, masked, taken)


def _toctree_entry(doc: Document, n: int, line: str) -> None:
    s = line.strip()
    if not s or s.startswith(":") or s.startswith(".."):
        return
    m = re.search(r"<([^<>]+)>\s*$", s)
    target = m.group(1) if m else s
    if target == "self" or any(ch in target for ch in "*?[") or "://" in target:
        return
    start = line.index(target) if target in line else line.index(s)
    doc.links.append(Link(target, n, start, start + len(target), "toctree"))


def _columns_from_border(border: str, ch: str) -> list[tuple[int, int]]:
    cols = _display_columns(border)
    out = []
    for m in re.finditer(re.escape(ch) + "+", border):
        out.append((cols[m.start()], cols[m.end()]))
    return out


def _assign_tokens(line: str, n: int, columns: list[tuple[int, int]]) -> list[Cell]:
    """Cells of a simple-table row: each word goes to the column its first character falls in."""
    cols = _display_columns(line)
    parts: list[list[tuple[int, int]]] = [[] for _ in columns]
    for m in re.finditer(r"\S+", line):
        dc = cols[m.start()]
        k = 0
        for idx, (start, _end) in enumerate(columns):
            if dc >= start:
                k = idx
        parts[k].append((m.start(), m.end()))
    cells = []
    for words in parts:
        if not words:
            cells.append(Cell("", ()))
            continue
        s, e = words[0][0], words[-1][1]
        cells.append(Cell(line[s:e], ((n, s, e),)))
    return cells


def _rst_simple_tables(doc: Document, out: list[Table]) -> None:
    lines = doc.lines
    i = 0
    while i < len(lines):
        if (i + 1) in doc.code or not _SIMPLE_BORDER.match(lines[i]) or len(lines[i].split()) < 2:
            i += 1
            continue
        # Only a border that follows a blank line (or the start) opens a table.
        if i > 0 and lines[i - 1].strip():
            i += 1
            continue
        columns = _columns_from_border(lines[i], "=")
        borders = [i]
        k = i + 1
        while k < len(lines) and len(borders) < 3:
            if _SIMPLE_BORDER.match(lines[k]):
                borders.append(k)
                if k + 1 >= len(lines) or not lines[k + 1].strip():
                    break
            elif not lines[k].strip() and len(borders) >= 2:
                break
            k += 1
        if len(borders) < 2:
            i += 1
            continue
        if len(borders) == 3:
            head_lines = range(borders[0] + 1, borders[1])
            body_lines = range(borders[1] + 1, borders[2])
        else:
            head_lines = range(0)
            body_lines = range(borders[0] + 1, borders[1])
        header: tuple[str, ...] = ()
        for h in head_lines:
            cells = _assign_tokens(lines[h], h + 1, columns)
            header = header or tuple(c.text for c in cells)
        rows: list[Row] = []
        for b in body_lines:
            line = lines[b]
            if not line.strip():
                continue
            cells = _assign_tokens(line, b + 1, columns)
            if rows and not cells[0].text:
                prev = rows[-1]
                merged = tuple(
                    Cell((p.text + " " + c.text).strip(), p.spans + c.spans)
                    for p, c in zip(prev.cells, cells, strict=False)
                )
                rows[-1] = Row(prev.line, b + 1, merged)
            else:
                rows.append(Row(b + 1, b + 1, tuple(cells)))
        out.append(Table(i + 1, header, tuple(rows), "simple"))
        i = borders[-1] + 1


def _rst_grid_tables(doc: Document, out: list[Table]) -> None:
    lines = doc.lines
    i = 0
    while i < len(lines):
        if (i + 1) in doc.code or not _GRID_BORDER.match(lines[i]):
            i += 1
            continue
        border = lines[i]
        bcols = _display_columns(border)
        plus = [bcols[p] for p, ch in enumerate(border) if ch == "+"]  # display columns of the column edges
        k = i
        groups: list[tuple[list[int], bool]] = []  # (line indexes of a row, ends with a header separator)
        current: list[int] = []
        while k + 1 < len(lines):
            k += 1
            line = lines[k]
            if _GRID_BORDER.match(line):
                groups.append((current, "=" in line))
                current = []
                continue
            if not line.strip().startswith("|"):
                break
            current.append(k)
        if not groups:
            i += 1
            continue
        header: tuple[str, ...] = ()
        rows: list[Row] = []
        has_header = any(sep for _g, sep in groups)
        for idx, (group, sep) in enumerate(groups):
            if not group:
                continue
            texts: list[list[str]] = [[] for _ in range(len(plus) - 1)]
            spans: list[list[tuple[int, int, int]]] = [[] for _ in range(len(plus) - 1)]
            for g in group:
                line = lines[g]
                where = {dc: ci for ci, dc in enumerate(_display_columns(line))}
                for c in range(len(plus) - 1):
                    if plus[c] not in where:
                        continue
                    s = where[plus[c]] + 1
                    e = where.get(plus[c + 1], len(line))
                    seg = line[s:e] if s < len(line) else ""
                    if seg.strip():
                        lead = len(seg) - len(seg.lstrip())
                        texts[c].append(seg.strip())
                        spans[c].append((g + 1, s + lead, s + lead + len(seg.strip())))
            cells = tuple(Cell(" ".join(t), tuple(sp)) for t, sp in zip(texts, spans, strict=True))
            if has_header and sep and not header and idx == 0:
                header = tuple(c.text for c in cells)
            else:
                rows.append(Row(group[0] + 1, group[-1] + 1, cells))
        out.append(Table(i + 1, header, tuple(rows), "grid"))
        i = k + 1 if k > i else i + 1


def _rst_list_tables(doc: Document, out: list[Table]) -> None:
    lines = doc.lines
    for i, line in enumerate(lines):
        m = _DIRECTIVE.match(line)
        if not m or m.group(2).lower() != "list-table":
            continue
        end = _block_end(lines, i, len(m.group(1)))
        header_rows = 0
        rows: list[list[tuple[int, list[tuple[int, int, int]], list[str]]]] = []
        for k in range(i + 1, end):
            text = lines[k]
            s = text.strip()
            hm = re.match(r":header-rows:\s*(\d+)", s)
            if hm:
                header_rows = int(hm.group(1))
                continue
            rm = re.match(r"^(\s*)\*\s+-\s+(.*)$", text)
            cm = re.match(r"^(\s*)-\s+(.*)$", text)
            if rm:
                start = len(text) - len(rm.group(2))
                rows.append([(k + 1, [(k + 1, start, len(text.rstrip()))], [rm.group(2).strip()])])
            elif cm and rows:
                start = len(text) - len(cm.group(2))
                rows[-1].append((k + 1, [(k + 1, start, len(text.rstrip()))], [cm.group(2).strip()]))
            elif s and rows and rows[-1]:
                rows[-1][-1][1].append((k + 1, _indent(text), len(text.rstrip())))
                rows[-1][-1][2].append(s)
        built = [
            Row(r[0][0], r[-1][1][-1][0], tuple(Cell(" ".join(t), tuple(sp)) for _l, sp, t in r)) for r in rows if r
        ]
        header = tuple(c.text for c in built[0].cells) if header_rows and built else ()
        out.append(Table(i + 1, header, tuple(built[1:] if header else built), "list"))


def _bullets(doc: Document, marker: re.Pattern[str]) -> list[tuple[int, int]]:
    """List items outside code: (first line, last line), continuation lines indented past the marker."""
    out: list[tuple[int, int]] = []
    lines = doc.lines
    k = 0
    while k < len(lines):
        m = marker.match(lines[k])
        if not m or (k + 1) in doc.code:
            k += 1
            continue
        width = m.end()
        last = k
        j = k + 1
        while j < len(lines):
            text = lines[j]
            if not text.strip():
                # a blank line ends the item unless the next line is still indented under it
                if j + 1 < len(lines) and lines[j + 1].strip() and _indent(lines[j + 1]) >= width:
                    j += 1
                    continue
                break
            if marker.match(text) and _indent(text) <= _indent(lines[k]):
                break
            if _indent(text) < width and not text.startswith(" " * min(width, 2)):
                break
            last = j
            j += 1
        out.append((k + 1, last + 1))
        k = last + 1
    return out


def _clean(text: str) -> str:
    return text.strip().strip("#").strip()


# -- link targets ---------------------------------------------------------------------------------------------------

_SCHEME = lazyre.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_ESCAPED = lazyre.compile(r"\\([!-/:-@\[-`{-~])")


@dataclass(frozen=True)
class Target:
    kind: str  # repo | external | anchor | other-repo | unknown
    path: str = ""  # repository path (no leading "/"), for kind "repo"
    ref: str | None = None  # branch or tag of an absolute GitHub URL; None for a relative link
    exact: bool = True  # False when a doc name may carry an implied suffix (Sphinx toctree/:doc:)


def _github_parts(url: str, repos: Iterable[str]) -> tuple[str, str, str] | None:
    """(owner/name, ref + "/" + path, kind) for a github.com blob/tree/raw URL or raw.githubusercontent URL."""
    parsed = urllib.parse.urlsplit(url)
    host = parsed.netloc.lower()
    parts = [p for p in parsed.path.split("/")]
    wanted = {r.lower() for r in repos}
    if host in ("github.com", "www.github.com"):
        if len(parts) < 5:
            return None
        repo = f"{parts[1]}/{parts[2]}"
        if repo.lower() not in wanted or parts[3] not in ("blob", "tree", "raw", "edit"):
            return None
        return repo, "/".join(parts[4:]), parts[3]
    if host == "raw.githubusercontent.com":
        if len(parts) < 4:
            return None
        repo = f"{parts[1]}/{parts[2]}"
        if repo.lower() not in wanted:
            return None
        rest = parts[3:]
        if rest[:2] == ["refs", "heads"]:
            rest = rest[2:]
        return repo, "/".join(rest), "raw"
    return None


def resolve(doc_path: str, target: str, repos: Iterable[str], refs: Iterable[str]) -> Target:
    """What a link target points at.

    `repos` are the owner/name spellings of the repository under review (absolute GitHub URLs into it are
    checked); `refs` the branch names that mean "the head of this change" (`main`). A URL into another
    repository, or at another ref, is not this tree's business (`other-repo` / `unknown`).
    """
    t = _ESCAPED.sub(r"\1", target.strip())  # `ascend\_tutorial` in Markdown is `ascend_tutorial`
    if not t:
        return Target("unknown")
    if t.startswith("#"):
        return Target("anchor")
    if _SCHEME.match(t) or t.startswith("//"):
        if not t.lower().startswith(("http://", "https://")):
            return Target("external")
        parts = _github_parts(t, repos)
        if parts is None:
            return Target("external")
        _repo, rest, _kind = parts
        rest = urllib.parse.unquote(rest)
        for ref in refs:
            if rest == ref or rest.startswith(ref + "/"):
                path = rest[len(ref) :].strip("/")
                return Target("repo", path, ref)
        return Target("unknown", "", rest.split("/", 1)[0])
    if any(ch in t for ch in "{}$") or t.startswith("~"):
        return Target("unknown")  # a template (`{verl-root-path}/...`) or a shell expansion
    t = t.split("#", 1)[0].split("?", 1)[0]
    if not t:
        return Target("anchor")
    t = urllib.parse.unquote(t)
    if t.startswith("/"):
        path = posixpath.normpath(t.lstrip("/"))
    else:
        path = posixpath.normpath(posixpath.join(posixpath.dirname(doc_path), t))
    if path == "." or path.startswith("../") or path == "..":
        return Target("unknown")
    return Target("repo", path, None)


# -- HTML tables inside Markdown ----------------------------------------------------------------------------------

_HTML_TABLE = lazyre.compile(r"<table\b.*?(?:</table\s*>|\Z)", re.IGNORECASE | re.DOTALL)
_HTML_ROW = lazyre.compile(r"<tr\b[^>]*>", re.IGNORECASE)
_HTML_CELL = lazyre.compile(
    r"<(t[dh])\b([^>]*)>(.*?)(?=</t[dh]\s*>|<t[dh]\b|<tr\b|</tr\s*>|</table\s*>|\Z)", re.I | re.S
)
_HTML_SPAN = lazyre.compile(r"""\b(rowspan|colspan)\s*=\s*["']?(\d+)""", re.IGNORECASE)
_HTML_TAG = lazyre.compile(r"<[^>]*>")
_MAX_SPAN = 50


def html_tables(doc: Document) -> list[Table]:
    """The `<table>` blocks of a Markdown document, outside code, as Tables of kind "html": `rowspan` and
    `colspan` cells are repeated into every row and column they cover (the same Cell, so its line is where it
    is written), tags are dropped from cell text and entities decoded; a first row of `<th>` cells is the
    header. Tolerates the missing `</tr>` and `</td>` that hand-written tables have. Never raises."""
    if doc.flavor != "md" or "<t" not in "".join(doc.lines).lower():
        return []
    try:
        return _html_tables(doc)
    except Exception:  # pragma: no cover - defensive: odd input degrades to nothing
        return []


def _html_tables(doc: Document) -> list[Table]:
    import html

    text = "\n".join(doc.lines)
    starts = [0]
    for line in doc.lines:
        starts.append(starts[-1] + len(line) + 1)

    def line_of(offset: int) -> int:
        lo, hi = 0, len(starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    out: list[Table] = []
    for tm in _HTML_TABLE.finditer(text):
        first = line_of(tm.start())
        if first in doc.code:
            continue
        body = tm.group(0)
        row_starts = [m.start() for m in _HTML_ROW.finditer(body)] + [len(body)]
        grid: list[tuple[int, list[Cell | None], bool]] = []  # (line, cells, all <th>)
        pending: dict[int, tuple[Cell, int]] = {}  # column -> (cell, rows still to cover)
        for k in range(len(row_starts) - 1):
            chunk = body[row_starts[k] : row_starts[k + 1]]
            base = tm.start() + row_starts[k]
            cells: list[Cell | None] = []
            heads = []
            col = 0
            for cm in _HTML_CELL.finditer(chunk):
                col = _take_pending(pending, cells, col)
                attrs = dict((a.lower(), min(int(v), _MAX_SPAN)) for a, v in _HTML_SPAN.findall(cm.group(2)))
                raw = html.unescape(_HTML_TAG.sub(" ", cm.group(3)))
                cell_text = " ".join(raw.split())
                n = line_of(base + cm.start(3) + (len(cm.group(3)) - len(cm.group(3).lstrip())))
                cell = Cell(cell_text, ((n, 0, 0),))
                heads.append(cm.group(1).lower() == "th")
                for _ in range(max(1, attrs.get("colspan", 1))):
                    cells.append(cell)
                    if attrs.get("rowspan", 1) > 1:
                        pending[col] = (cell, attrs["rowspan"] - 1)
                    col += 1
            col = _take_pending(pending, cells, col)
            if heads or cells:
                grid.append((line_of(base), cells, bool(heads) and all(heads)))
        if not grid:
            continue
        header: tuple[str, ...] = ()
        if grid[0][2]:
            header = tuple(c.text if c is not None else "" for c in grid[0][1])
            grid = grid[1:]
        rows = tuple(
            Row(line, line, tuple(c if c is not None else Cell("") for c in cells)) for line, cells, _ in grid if cells
        )
        out.append(Table(first, header, rows, "html"))
    return out


def _take_pending(pending: dict[int, tuple[Cell, int]], cells: list[Cell | None], col: int) -> int:
    """Fill the columns from `col` on that a cell of an earlier row spans into; returns the next free column."""
    while col in pending:
        cell, left = pending[col]
        cells.append(cell)
        if left <= 1:
            del pending[col]
        else:
            pending[col] = (cell, left - 1)
        col += 1
    return col
