"""Install guides' stacks: the versions a guide (or a README) states for each component in its tables, and the
ones the commands of its code blocks install, each with its line.

    guide = guide_stack(ctx, src)              # None: not a doc about Ascend
    guide.tables                                # Said of the current rows and the dependency tables
    guide.commands                              # Said of `pip install x==v`, wheels, git refs, CANN installers
    guide.rows                                  # every table row, its cells by component (and its table's line)
    guide.cells                                 # every cell of a component's column, as written (Cell)
    guide.cann_links                            # a line's CANN against the CANN of the hiascend page it links
    reference(guide.commands, component)        # the one value the commands install, None when not one
    agree(ctx, component, a, b)                 # two values of one component name the same release

A table is a dependency table (a component per row: `| torch | 2.7.1 |`, HTML tables with `rowspan` cells
included) or a release table (a release per row, a component per column: `| master | Core 0.12.0 | 2.7.1 |`),
whose current row is the one labelled master/main/latest, or its only row. Components are named by the facts'
`guide_components`, or by their pip name. Commands are read from the shell and console blocks; a commented-out
`# pip install x==v` counts (guides give reference commands so), marked `commented`.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import cached_property

from npu_review.checks import lazyre
from npu_review.checks.analysis.vllm_launches import DOC_LANGUAGES
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.parsers.codeblocks import Block, console_commands, shell_blocks
from npu_review.checks.parsers.gitcli import clone_of, git_call
from npu_review.checks.parsers.markdown import Cell as TableCell
from npu_review.checks.parsers.markdown import Document, Table, flavor_of, html_tables, resolve
from npu_review.checks.parsers.requirements import normalize_name
from npu_review.checks.parsers.sh import Source, commands

_INSTALL_WORDS = ("pip", "git ", "cann")
MAIN = "main"  # the value of a component installed from (or said to be) the default branch
_PIP_NAME = lazyre.compile(r"[a-z0-9][a-z0-9._-]*\Z")
_PARENS = lazyre.compile(r"[（(][^）)]*[）)]")
_MARKUP = lazyre.compile(r"[`*\\]")
_SHA = lazyre.compile(r"[0-9a-f]{7,40}\Z")
# A version in a table cell or a git ref: `2.7.1`, `8.2.RC1`, `Core 0.12.0`, `core_v0.12.1`, `releases/v0.11.0`,
# `v0.9.1-dev`, `Python3.10`, `2.1.0.post17`, `8.5.0.B100`.
_VERSION = lazyre.compile(
    r"(?<![\w.])(?:core_?[rv]?|releases?/v|v|python|cann)?\s*"
    r"(?P<v>\d+\.\d+(?:\.\d+)*(?:\.?(?:rc|alpha|beta|b)\d+)?(?:\.post\d+)?(?:\.?dev\d*)?)(?![\w.]*\d)",
    re.IGNORECASE,
)
_WHEEL = lazyre.compile(r"(?:^|/)([A-Za-z][A-Za-z0-9_]*?)-(\d+(?:\.\d+)+(?:\.post\d+)?)(?:[-.*]|$)")
_CANN_RUN = lazyre.compile(
    r"(?i)(?:^|/)[\w-]*cann-(?:toolkit|kernels|nnal|ops)[\w-]*?_(\d+\.\d+\.(?:\d+|rc\d+)(?:\.\w+)?)_linux"
)
_CANN_SAID = lazyre.compile(r"(?i)\bCANN\s*(?:==|=|:)?\s*v?(\d+\.\d+\.(?:\d+|rc\d+))(?![\w.]*\d)")
_URL = lazyre.compile(r"https?://[^\s)\]>\"'`]+")
# A column of lower bounds in a dependency table.
_BOUND_HEADER = lazyre.compile(r"\bmin(?:imum|imal)?\b|\bat least\b|最低|最小|至少")
# The column of a bounds table that names one stack to install (`| Requirement | Minimum | Recommend |`).
_RECOMMEND_HEADER = lazyre.compile(r"\brecommend(?:ed|ation)?\b|推荐|建议")


@dataclass(frozen=True)
class Said:
    """One component's version as one place of a guide states it."""

    component: str  # torch, torch-npu, cann, python, vllm, megatron, ..., or a pip name
    value: str  # normalised: `2.7.1`, `8.2.rc1`, `main`; `sha:<hex>` for a commit
    shown: str  # as written (for messages)
    line: int
    how: str  # for messages: "the version table's master row", "`git checkout core_v0.12.1`"
    commented: bool = False
    ref: str = ""  # a command's git ref or pin as written (what the change-aware check compares)
    # The headings above it: a command's own; for a table, those of the part of the guide it speaks for (its
    # own section's parent: a "Dependencies" table covers its sibling "Install" sections).
    scope: tuple[str, ...] = ()

    def covers(self, other: Said) -> bool:
        """The statement (a table) speaks for the part of the guide `other` (a command) is in."""
        return other.scope[: len(self.scope)] == self.scope


@dataclass(frozen=True)
class Cell:
    """A table cell that states a component's version, as written (whether or not it reads as one)."""

    component: str
    text: str  # markup cut, stripped
    line: int


@dataclass
class Guide:
    path: str
    tables: list[Said] = field(default_factory=list)
    rows: list[tuple[int, dict[str, Said]]] = field(default_factory=list)  # (the table's line, cells)
    cann_links: list[tuple[int, str, str, str]] = field(default_factory=list)  # line, said, linked, as linked
    links: list[str] = field(default_factory=list)  # repository paths of the documents it links
    cells: list[Cell] = field(default_factory=list)  # the cells of the components' columns (and rows)
    # The commands are read on first use: most docs have code blocks, few have a table to compare them with.
    _read_commands: Callable[[], list[Said]] | None = field(default=None, repr=False)

    @cached_property
    def commands(self) -> list[Said]:
        return self._read_commands() if self._read_commands is not None else []


# -- versions ------------------------------------------------------------------------------------------------------


def cell_version(text: str) -> str | None:
    """The one version a table cell states (normalised), `main` for main/master; None for none, several, or a
    range."""
    t = _PARENS.sub(" ", _MARKUP.sub("", text)).strip()
    if not t:
        return None
    if t.lower() in ("main", "master", "main branch"):
        return MAIN
    if any(ch in t for ch in "<>=~^,|") or re.search(r"\s-\s|\bto\b|至", t):
        return None
    found = list(_VERSION.finditer(t))
    if len(found) != 1:
        return None
    return _norm(found[0].group("v"))


def ref_version(ref: str) -> str | None:
    """What a git ref or a pin says: `core_v0.12.1` -> 0.12.1, `releases/v0.11.0` -> 0.11.0, `v0.11.0-dev` ->
    0.11.0, `main` -> main, a hex commit -> `sha:<hex>`; None for anything else (`2.3.0_core_r0.12.1`)."""
    r = ref.strip().strip("\"'")
    low = r.lower()
    if low in ("main", "master", "origin/main", "origin/master"):
        return MAIN
    if _SHA.fullmatch(low) and not low.isdigit():
        return f"sha:{low}"
    m = re.fullmatch(r"(?:core_?[rv]?|releases?/v?|v)?(\d+\.\d+(?:\.\d+)*(?:\.?rc\d+)?(?:\.post\d+)?)(?:-dev)?", low)
    return _norm(m.group(1)) if m else None


def _norm(v: str) -> str:
    return re.sub(r"(\d)(rc|alpha|beta|b)(\d)", r"\1.\2\3", v.lower())


def _release(v: str) -> tuple[tuple[int, ...], str]:
    """(numeric release, the rest) of a normalised version: `2.7.1.post2` -> ((2, 7, 1), 'post2')."""
    parts = v.split(".")
    nums: list[int] = []
    for p in parts:
        if not p.isdigit():
            break
        nums.append(int(p))
    return tuple(nums), ".".join(parts[len(nums) :])


# torch_npu's own versions follow torch's (1.x, 2.x); Ascend's TorchNPU product releases that ship them are
# numbered 5.0 to 7.x and, since 2026, by year (26.0.0): a guide may name either for the same install.
_PRODUCT_NUMBERS = 5


def agree(ctx: Context, component: str, a: str, b: str) -> bool | None:
    """Whether two values of `component` name the same release; None when that cannot be told (a commit)."""
    if a.startswith("sha:") or b.startswith("sha:"):
        return None
    if a == b:
        return True
    if MAIN in (a, b):
        return False
    (ra, resta), (rb, restb) = _release(a), _release(b)
    if not ra or not rb:
        return None
    if component == "torch-npu" and (ra[0] >= _PRODUCT_NUMBERS) != (rb[0] >= _PRODUCT_NUMBERS):
        return None  # a TorchNPU product release (`26.0.0`, `7.3.0`) against a torch_npu version (`2.7.1.post4`)
    exact = component in ctx.facts.guide_components.exact
    n = min(len(ra), len(rb)) if exact else min(len(ra), len(rb), 2)
    if ra[:n] != rb[:n]:
        return False
    # 8.3.rc1 is not 8.3.rc2
    return not (exact and component == "cann" and resta and restb and resta.split(".")[0] != restb.split(".")[0])


def reference(said: list[Said], component: str, ctx: Context) -> Said | None:
    """The value the statements of `component` agree on (the first of them), None when there is none or they
    disagree (a guide that installs two versions on two paths). Commented commands count only without others."""
    mine = [s for s in said if s.component == component and not s.value.startswith("sha:")]
    live = [s for s in mine if not s.commented]
    mine = live or mine
    if not mine:
        return None
    first = mine[0]
    for other in mine[1:]:
        if agree(ctx, component, first.value, other.value) is not True:
            return None
    return first


# -- components ----------------------------------------------------------------------------------------------------


def component_of(ctx: Context, name: str, pip_names: bool = False) -> str | None:
    """The component a table names (a header or a row's first cell); with `pip_names`, any pip-like name."""
    known: dict[tuple[str, bool], str | None] = ctx.memo(("guide-component-names", "", ""), dict)
    key = (name, pip_names)
    if key not in known:
        known[key] = _component_of(ctx, name, pip_names)
    return known[key]


def _component_of(ctx: Context, name: str, pip_names: bool) -> str | None:
    facts = ctx.facts.guide_components
    low = _PARENS.sub(" ", _MARKUP.sub("", name)).lower()
    for word in facts.drop_words:
        low = low.replace(word.lower(), " ")
    low = " ".join(low.replace("：", " ").replace(":", " ").split())
    if not low:
        return None
    for comp, names in facts.names.items():
        if low in names:
            return comp
    if pip_names and _PIP_NAME.match(low):
        return normalize_name(low)
    return None


def _repo_component(ctx: Context, url: str) -> str | None:
    name = url.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1].removesuffix(".git").lower()
    name = name.split("@", 1)[0]
    for comp, repos in ctx.facts.guide_components.repos.items():
        if name in repos:
            return comp
    return None


def _is_branch(ctx: Context, name: str) -> bool:
    low = name.lower()
    return any(b in low for b in ctx.facts.guide_components.branch_names)


# -- the guide -----------------------------------------------------------------------------------------------------


def guide_stack(ctx: Context, src: SourceFile, rev: str = "head") -> Guide | None:
    """The stack a Markdown or reST document states (memoised per file and revision); None when it states
    none, or is not about Ascend."""
    return ctx.parsed("guide-stack", src, lambda _text: _guide(ctx, src, rev), rev=rev)


def _guide(ctx: Context, src: SourceFile, rev: str) -> Guide | None:
    flavor = flavor_of(src.path)
    if flavor is None:
        return None
    text = src.text
    low = text.lower()
    if not (_npu_words(low) or "ascend" in low or ctx.ascend_only()):
        return None  # a guide about Ascend names it, CANN or torch_npu somewhere
    # The quick no, before any parse: a doc with no version table and no CANN documentation link states no
    # stack this analysis reads (its commands only matter next to a table).
    tabular = _may_have_version_table(src.lines)
    html = flavor == "md" and "<td" in low and _VERSION_HINT.search(text) is not None
    guide = Guide(src.path)
    if not (tabular or html or "hiascend" in low):
        # No table to compare, but an install guide a README links is compared by its commands.
        guide._read_commands = lambda: _commands_of(ctx, src, rev)
        return guide
    doc = ctx.document(src, rev=rev)
    if doc is None:
        return None
    tables = (list(doc.tables) if tabular else []) + (html_tables(doc) if html else [])
    for table in tables:
        _read_table(ctx, doc, table, guide)

    guide._read_commands = lambda: _commands_of(ctx, src, rev)
    if "hiascend" in low:
        _cann_links(ctx, doc, guide)
    if posixpath.basename(src.path).lower().startswith("readme") and guide.tables:
        _links(ctx, doc, guide)  # a README's dependency table is compared with the install guide it links
    guide.tables = [replace(t, scope=doc.section(t.line)[:-1]) for t in guide.tables]
    return guide


def _commands_of(ctx: Context, src: SourceFile, rev: str) -> list[Said]:
    flavor = flavor_of(src.path)
    if flavor is None:
        return []
    blocks = [
        b if b.language != "console" and b.language != "shell-session" else console_commands(b)
        for b in shell_blocks(src.text, flavor, DOC_LANGUAGES)
    ]
    # Only blocks that install something (pip, git, a CANN installer): launch scripts are the most text.
    wanted = [b for b in blocks if any(k in t for _n, t in b.lines for k in _INSTALL_WORDS)]
    found = [said for block in wanted for said in _block_commands(ctx, block)]
    doc = ctx.document(src, rev=rev) if found else None
    return [replace(c, scope=doc.section(c.line)) for c in found] if doc is not None else found


def _npu_words(low: str) -> bool:
    return "torch_npu" in low or "torch-npu" in low or "cann" in low


_VERSION_HINT = lazyre.compile(r"\d\.\d")
# Words a version table's header or first column has (what tells it from the doc's other tables).
_TABLE_WORDS = ("cann", "torch", "版本", "megatron", "toolkit", "mindspeed", "依赖")


_TABLE_WORD_RE = lazyre.compile("|".join(re.escape(w) for w in _TABLE_WORDS), re.IGNORECASE)


def _may_have_version_table(lines: list[str]) -> bool:
    """The quick no before the tables are parsed: a table's header (a pipe row, or a line after an RST border)
    with a word a version table's header or first column has, and a table row with a dotted version."""
    named = versioned = False
    border = -100
    for k, line in enumerate(lines):
        if "|" not in line:
            head = line.lstrip()[:3]
            if head in ("===", "+--", "+==") or "list-table" in line:
                border = k
            elif k - border > 12:
                continue
        if not versioned and _VERSION_HINT.search(line):
            versioned = True
        if not named and _TABLE_WORD_RE.search(line):
            named = True
        if named and versioned:
            return True
    return False


def _read_table(ctx: Context, doc: Document, table: Table, guide: Guide) -> None:
    # The quick no: a table without a dotted number in its cells states no version.
    if not _VERSION_HINT.search(" ".join(c.text for row in table.rows for c in row.cells)):
        return
    history = [w.lower() for w in ctx.facts.version_tables.history_sections]
    old = any(w in t.lower() for t in doc.section(table.line) for w in history)
    columns = {i: component_of(ctx, h) for i, h in enumerate(table.header)}
    branch_cols = [i for i, h in enumerate(table.header) if _is_branch(ctx, h)]
    comp_cols: dict[int, str] = {i: c for i, c in columns.items() if c is not None and i > 0}
    rows = list(table.rows)
    # Column 0 holds a component when its cells are versions (`| TorchNPU 版本 | GitCode 分支 | PyTorch 版本 |`),
    # else it labels the release (`| MindSpeed RL版本 | ...`: master, 2.2.0（商分）).
    first = columns.get(0)
    labelled = True
    current_words = [w.lower() for w in ctx.facts.guide_components.current_rows]
    if first is not None:
        labels = [c.text.lower() for r in rows if (c := r.cell(0)) is not None]
        versions = [cell_version(t) for t in labels]
        named = any(w in t for t in labels for w in current_words)
        if versions and not named and sum(1 for v in versions if v not in (None, MAIN)) * 2 >= len(versions):
            comp_cols[0] = first
            labelled = False
    if len(comp_cols) >= 2:
        # A release table: a release per row, components across.
        for row in rows:
            said: dict[str, Said] = {}
            head = row.cell(0)
            label = head.text if head is not None else ""
            for i, comp in comp_cols.items():
                cell = row.cell(i)
                if cell is not None:
                    _keep_cell(guide, comp, cell, row.line)
                value = cell_version(cell.text) if cell is not None else None
                if cell is not None and value is not None:
                    said[comp] = Said(comp, value, cell.text.strip(), _cell_line(cell, row.line), "")
            for i in branch_cols:
                cell = row.cell(i)
                if cell is not None and cell.text.strip():
                    text = cell.text.strip()
                    said["branch"] = Said("branch", text, text, _cell_line(cell, row.line), "")
            if said:
                guide.rows.append((table.line, said))
            current = any(w in label.lower() for w in current_words) or len(rows) == 1
            if current and not old and labelled:
                name = _MARKUP.sub("", label).strip() or "current"
                for comp, st in said.items():
                    if comp != "branch":
                        how = f"the version table's `{name}` row (line {st.line})"
                        guide.tables.append(Said(comp, st.value, st.shown, st.line, how))
        return
    # A dependency table: a component in the first column, its version in the next cell that holds one.
    for row in rows:
        head = row.cell(0)
        part = component_of(ctx, head.text) if head is not None else None
        nxt = next((c for c in row.cells[1:] if c is not head and c.text.strip()), None) if part else None
        if part is not None and nxt is not None:
            _keep_cell(guide, part, nxt, row.line)
    if old:
        return
    found: list[Said] = []
    for row in rows:
        head = row.cell(0)
        if head is None:
            continue
        part = component_of(ctx, head.text, pip_names=True)
        if part is None:
            continue
        for cell in row.cells[1:]:
            if cell is head:
                continue
            value = cell_version(cell.text)
            if value is not None:
                line = _cell_line(cell, row.line)
                found.append(Said(part, value, cell.text.strip(), line, f"the dependency table (line {line})"))
                break
    # A table of lower bounds (`| Requirement | Minimum | Recommend |`) states ranges, not one stack: a command
    # that installs another version inside the range does not contradict it, nor do its minima pair. Its
    # recommended column is one stack, though: the versions it recommends must go together (a row of their own).
    if len(found) >= 2 and not any(_BOUND_HEADER.search(h.lower()) for h in table.header):
        guide.tables.extend(found)
        guide.rows.append((table.line, {s.component: s for s in found}))
        return
    column = next((i for i, h in enumerate(table.header) if i > 0 and _RECOMMEND_HEADER.search(h.lower())), None)
    if column is None:
        return
    recommended: dict[str, Said] = {}
    for row in rows:
        head, cell = row.cell(0), row.cell(column)
        part = component_of(ctx, head.text, pip_names=True) if head is not None else None
        value = cell_version(cell.text) if cell is not None and part is not None else None
        if cell is not None and part is not None and value is not None:
            line = _cell_line(cell, row.line)
            how = f"the dependency table's recommended versions (line {line})"
            recommended[part] = Said(part, value, cell.text.strip(), line, how)
    if len(recommended) >= 2:
        guide.rows.append((table.line, recommended))


def _keep_cell(guide: Guide, component: str, cell: TableCell, default: int) -> None:
    text = _MARKUP.sub("", cell.text).strip()
    if text and _VERSION_HINT.search(text):
        guide.cells.append(Cell(component, text, _cell_line(cell, default)))


def _cell_line(cell: object, default: int) -> int:
    spans = getattr(cell, "spans", ())
    return spans[0][0] if spans else default


def _block_commands(ctx: Context, block: Block) -> Iterator[Said]:
    from npu_review.checks.parsers.pipcli import pip_call

    lines: list[tuple[int, str]] = []
    commented: set[int] = set()
    for n, t in block.lines:
        m = re.match(r"\s*#+\s*((?:pip3?|python3? -m pip) install\s.*)$", t)
        if m:
            lines.append((n, m.group(1)))
            commented.add(n)
        else:
            lines.append((n, t))
    try:
        cmds = commands(Source.lines(lines))
    except (RecursionError, ValueError):  # pragma: no cover - defensive
        return
    dirs: dict[str, str] = {}  # directory -> component cloned there
    branch: dict[str, Said] = {}  # component -> its `git clone -b` statement
    here: str | None = None
    for cmd in cmds:
        argv = cmd.argv
        if not argv:
            continue
        if argv[0] == "cd":
            target = argv[1].rstrip("/").rsplit("/", 1)[-1] if len(argv) > 1 else ""
            here = dirs.get(target)
            continue
        git = git_call(cmd)
        if git is not None:
            if git.sub == "clone":
                clone = clone_of(git, "/")
                comp = _repo_component(ctx, clone.url) if clone is not None else None
                if clone is None or comp is None:
                    continue
                dirs[(clone.path or clone.repo).rstrip("/").rsplit("/", 1)[-1]] = comp
                if clone.branch is not None:
                    value = ref_version(clone.branch)
                    if value is not None:
                        how = f"`git clone -b {clone.branch}`"
                        said = Said(comp, value, clone.branch, clone.line, how, ref=clone.branch)
                        branch[comp] = said
                        yield said
                else:
                    branch.pop(comp, None)
            elif git.sub == "checkout" and git.args:
                comp = dirs.get(git.directory.rstrip("/").rsplit("/", 1)[-1]) if git.directory else here
                ref = git.args[-1].unquoted
                value = ref_version(ref)
                if comp is None or value is None or ref.startswith("-"):
                    continue
                if value.startswith("sha:") and comp in branch:
                    # A commit of the branch it cloned: the branch still says which release it is.
                    yield Said(comp, branch[comp].value, ref, git.args[-1].line, f"`git checkout {ref}`", ref=ref)
                    continue
                yield Said(comp, value, ref, git.args[-1].line, f"`git checkout {ref}`", ref=ref)
            continue
        call = pip_call(cmd)
        if call is None or call.verb != "install":
            continue
        note = cmd.line in commented
        for req, word in call.packages:
            if req.pinned:
                shown = f"pip install {word.unquoted}"
                yield Said(req.name, _norm(req.pinned), req.pinned, word.line, f"`{shown}`", note, req.pinned)
            elif req.url and "@" in req.url:
                yield from _vcs(ctx, req.url, word.line, note)
        for word in call.others:
            text = word.unquoted
            if "://" in text and "@" in text.rsplit("/", 1)[-1]:
                yield from _vcs(ctx, text, word.line, note)
                continue
            base = text.rsplit("/", 1)[-1]
            if base.endswith(".whl") or base.endswith(".whl*"):
                m = _WHEEL.search(base)
                if m:
                    name = normalize_name(m.group(1))
                    version = m.group(2)
                    yield Said(name, _norm(version), version, word.line, f"`pip install {base}`", note, version)
    for cmd in cmds:
        for word in cmd.words:
            m = _CANN_RUN.search(word.unquoted)
            if m and "*" not in m.group(1):
                name = word.unquoted.rsplit("/", 1)[-1]
                yield Said("cann", _norm(m.group(1)), m.group(1), word.line, f"the installer `{name}`", ref=m.group(1))
                break


def _vcs(ctx: Context, url: str, line: int, note: bool) -> Iterator[Said]:
    base, _, ref = url.partition("#")[0].rpartition("@")
    comp = _repo_component(ctx, base.removeprefix("git+"))
    value = ref_version(ref) if ref else None
    if comp is not None and value is not None:
        yield Said(comp, value, ref, line, f"`pip install ...@{ref}`", note, ref)


def _cann_links(ctx: Context, doc: Document, guide: Guide) -> None:
    pattern = ctx.memo(
        ("guide-doc-version", "", ""), lambda: re.compile(ctx.facts.guide_components.doc_version_pattern)
    )
    for n, line in enumerate(doc.lines, 1):
        if n in doc.code or "hiascend" not in line.lower():
            continue
        m = pattern.search(line)
        if not m:
            continue
        text = _URL.sub(" ", line)
        said = _CANN_SAID.search(text)
        if not said:
            continue
        if _AT_LEAST.match(text, said.end()) or _AT_LEAST_BEFORE.search(text, 0, said.start()):
            continue  # `CANN 8.2.RC1 and later` with a later release's page: a minimum, not the one release
        stated = _norm(said.group(1))
        linked = [_doc_version(v.group("v")) for v in pattern.finditer(line)]
        if len(set(linked)) > 1 and any(cann_line(stated) == cann_line(v) for v in linked):
            # Pages of several releases on one line, the stated one among them: the line names its releases link
            # by link (a general guide of 8.5.0, then "for the 950DT, CANN 9.1.0-beta.3's" page; rs-r75, false).
            continue
        guide.cann_links.append((n, stated, _doc_version(m.group("v")), m.group("v")))


# A version stated as a minimum: after it (`8.2.RC1+`, `and later`, `及以上`, `或更高版本`) or before it (`>=`, `至少`).
_AT_LEAST = lazyre.compile(
    r"[ \t*`,]*(?:\+|及以上|以上|及更高|或更高|及其以后|及之后|以后|(?:and|or) (?:later|above|newer|higher|up))", re.I
)
_AT_LEAST_BEFORE = lazyre.compile(r"(?:>=|≥|至少|不低于|at least|or later than)[ \t]*(?:CANN)?[ \t]*$", re.I)


def cann_line(version: str) -> tuple[str, ...]:
    """A CANN release line: major.minor and its RC (`8.3.rc2` -> 8, 3, rc2; `9.0.1` -> 9, 0)."""
    parts = version.split(".")
    return tuple(parts[:2]) + tuple(p for p in parts[2:] if p.startswith("rc"))


def _doc_version(raw: str) -> str:
    """A CANN documentation URL's version segment as a version: `83RC2` -> 8.3.rc2, `850` -> 8.5.0,
    `800alpha003` -> 8.0.0.alpha003."""
    m = re.fullmatch(r"(\d)(\d)(\d)?((?:RC|alpha|beta)\d+)?", raw, re.IGNORECASE)
    if not m:
        return raw
    major, minor, patch, pre = m.groups()
    if patch is None:
        return f"{major}.{minor}.{pre.lower()}" if pre else f"{major}.{minor}"
    return f"{major}.{minor}.{patch}" + (f".{pre.lower()}" if pre else "")


def _links(ctx: Context, doc: Document, guide: Guide) -> None:
    repos, refs = list(ctx.facts.repo_links.repos), list(ctx.facts.repo_links.head_refs)
    for link in doc.links:
        target = resolve(guide.path, link.target, repos, refs)
        path = target.path if target.kind == "repo" else None
        if path and flavor_of(path) is not None and path != guide.path and path not in guide.links:
            guide.links.append(path)
