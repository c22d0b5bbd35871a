"""NPU402: a change removes an NPU workaround (an `npu_*patch*` module, its call, or a "remove when
vllm-ascend#N is fixed" block); ask for proof that the upstream issue is fixed."""

from __future__ import annotations

import ast
import difflib
import io
import re
import tokenize
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from npu_review.checks import globs, lazyre
from npu_review.checks.context import Context
from npu_review.checks.facts.schema import NpuWorkarounds
from npu_review.checks.kinds import PYTHON
from npu_review.checks.model import ChangeStatus, FileChange, Severity
from npu_review.checks.parsers import pyast
from npu_review.checks.rule import Hit, Rule

_ISSUE = lazyre.compile(
    r"(?i)(?:github\.com/vllm-project/vllm-ascend/(?:issues|pull)/(\d+)|vllm[-_]ascend\s*#\s*(\d+))"
)


@dataclass
class Removal:
    what: str
    path: str  # head path of the file it was in (base path when the file is gone)
    base_line: int
    refs: tuple[str, ...] = ()
    anchor: tuple[str, int] | None = None


@dataclass
class _Side:
    """What one side (base or head) of a changed Python file holds."""

    text: str = ""
    defs: dict[str, int] = field(default_factory=dict)  # top-level function/class name -> line
    bodies: dict[str, str] = field(default_factory=dict)  # top-level name -> its body, dumped (renames)
    calls: dict[str, list[int]] = field(default_factory=dict)  # workaround call name -> lines
    imports: dict[str, int] = field(default_factory=dict)  # name imported from a patch module -> line
    modules: set[str] = field(default_factory=set)  # dotted patch modules any import of this file names
    comments: dict[str, int] = field(default_factory=dict)  # marker comment text -> line
    all_comments: list[tuple[int, str]] = field(default_factory=list)


class NpuWorkaroundRemoved(Rule):
    """The change removes an NPU workaround: ask for proof that the upstream issue is fixed.

    Why: verl carries workarounds for vllm-ascend and torch_npu bugs in `npu_*patch*` modules
    (`verl/utils/vllm/npu_vllm_patch.py`, `verl/models/transformers/npu_patch.py`), applied by calls such
    as `apply_npu_vllm_patches()`, often under a comment like `# Remove this when
    https://github.com/vllm-project/vllm-ascend/issues/5915 is fixed.` Removing one is right only when the
    vllm-ascend version the Ascend images pin contains the fix; #7042 removed the vllm-ascend patch and #7076
    had to restore it. This rule cannot know whether the fix landed, so it asks (notice).

    Reported: a deleted patch module; a function or class removed from one; a removed call of a workaround
    (`apply_npu_*`, `*npu*patch*`, or any name imported from a patch module); a removed import from a patch
    module; a removed "remove when vllm-ascend ..." comment. Code that only moves (the name is still defined,
    imported or called elsewhere in the change) is not reported.

    Where: on the line that replaced the removed code, or an added line within a few lines of where it stood.
    A pure deletion with no added line nearby is reported on the first added line of the same file, else on
    an anchor of another removal in the change; a change that adds no line at all cannot be annotated.

    Bad:
        # verl/utils/vllm/__init__.py
         from .utils import TensorLoRARequest
        -# Remove this when https://github.com/vllm-project/vllm-ascend/issues/5915 is fixed.
        -apply_npu_vllm_patches()
        +# vllm-ascend 0.23 loads FusedMoE weights in the NPU layout itself.

    Good (the workaround moves and is still applied):
        # verl/utils/vllm/__init__.py
         from .utils import TensorLoRARequest
        -# Remove this when https://github.com/vllm-project/vllm-ascend/issues/5915 is fixed.
        -apply_npu_vllm_patches()
        +
        +
        +def init_npu():
        +    # Remove this when https://github.com/vllm-project/vllm-ascend/issues/5915 is fixed.
        +    apply_npu_vllm_patches()

    Fix: link the upstream fix and the vllm-ascend version that carries it ("vllm-ascend 0.23.0, in
    docker/ascend/Dockerfile.ascend_9.1.0_a2, contains the fix for vllm-project/vllm-ascend#5915"), and check
    that every Ascend image (`docker/ascend/Dockerfile.*`, `requirements-npu.txt`) pins that version or later;
    otherwise keep the workaround.
    """

    id = "NPU402"
    name = "npu-workaround-removed"
    severity = Severity.NOTICE
    title = "NPU workaround removed; show the upstream fix is in the pinned versions"
    kinds = frozenset({PYTHON})
    context_kinds = frozenset({PYTHON})  # a workaround may still be called or defined elsewhere (_elsewhere)

    def check_project(self, ctx: Context) -> Iterable[Hit]:
        if ctx.audit:
            return []
        kb = ctx.facts.npu_workarounds
        if not (kb.patch_modules or kb.patch_calls or kb.markers):
            # Nothing names a workaround here (the generic profile knows no patch module, call or marker): no side
            # can hold one, so both sides of every changed Python file are not read (a 1,300-file change spent 23 s
            # parsing them for nothing and ran into the rule's time budget).
            return []
        changes = [
            c
            for c in ctx.changeset.changes.values()
            if not c.binary and (ctx.kindmap.has(c.path, PYTHON) or ctx.kindmap.has(c.old_path or "", PYTHON))
        ]
        if not changes:
            return []
        sides = {c.path: (_side(ctx, c, "base", kb), _side(ctx, c, "head", kb)) for c in changes}
        removals = list(_removals(ctx, changes, sides, kb))
        if not removals:
            return []
        nearby = kb.nearby_lines
        for r in removals:
            r.anchor = _anchor(ctx, r, sides, nearby)
        return _hits(ctx, removals, changes, sides, kb)


# -- reading both sides ---------------------------------------------------------------------------------------------


def _is_patch_module(path: str, kb: NpuWorkarounds) -> bool:
    base = path.rsplit("/", 1)[-1]
    return any(globs.match(base, p) for p in kb.patch_modules)


def _side(ctx: Context, change: FileChange, rev: str, kb: NpuWorkarounds) -> _Side | None:
    if rev == "base":
        if change.status == ChangeStatus.ADDED:
            return _Side()
        path = change.old_path or change.path
    else:
        if change.status == ChangeStatus.DELETED:
            return _Side()
        path = change.path
    src = ctx.source(path, rev)
    if src is None:
        return None
    tree = ctx.python_ast(src, rev=rev)
    if tree is None:
        return None
    side = _Side(text=src.text)
    call_globs = list(kb.patch_calls)
    module_globs = [p.removesuffix(".py") for p in kb.patch_modules]
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            side.defs[stmt.name] = stmt.lineno
            side.bodies[stmt.name] = ast.dump(ast.Module(body=stmt.body, type_ignores=[]))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            last = node.module.rsplit(".", 1)[-1]
            if any(globs.match(last, g) for g in module_globs):
                side.modules.add(node.module.lstrip("."))
                for alias in node.names:
                    side.imports[alias.asname or alias.name] = node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                last = alias.name.rsplit(".", 1)[-1]
                if any(globs.match(last, g) for g in module_globs):
                    side.modules.add(alias.name)
                    side.imports["module:" + alias.name] = node.lineno
    imported = set(side.imports)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = pyast.callee_name(node)
        owner = pyast.dotted(node.func.value) if isinstance(node.func, ast.Attribute) else ""
        if name and (name in imported or owner in imported or any(globs.match(name, g) for g in call_globs)):
            side.calls.setdefault(name, []).append(node.lineno)
    markers = [re.compile(m, re.IGNORECASE) for m in kb.markers]
    for line, text in _comments(src.text):
        side.all_comments.append((line, text))
        if any(m.search(text) for m in markers):
            side.comments.setdefault(_norm(text), line)
    return side


def _comments(text: str) -> list[tuple[int, str]]:
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                out.append((tok.start[0], tok.string))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return out
    return out


def _norm(comment: str) -> str:
    return re.sub(r"\s+", " ", comment.lstrip("#")).strip()


def _refs_near(side: _Side, start: int, end: int) -> tuple[str, ...]:
    """Upstream issue references in the comments of lines start..end (the removed code and just above it)."""
    out = []
    for line, text in side.all_comments:
        if start <= line <= end:
            for m in _ISSUE.finditer(text):
                out.append(f"vllm-project/vllm-ascend#{m.group(1) or m.group(2)}")
    return tuple(dict.fromkeys(out))


def _elsewhere(ctx: Context, changes: list[FileChange]) -> list[str]:
    """Texts of the Python files at head that the change does not touch (a workaround may live on there)."""
    touched = {c.path for c in changes} | {c.old_path for c in changes if c.old_path}
    out = []
    for path in ctx.paths_of_kind(PYTHON):
        if path in touched:
            continue
        src = ctx.source(path)
        if src is not None:
            out.append(src.text)
    return out


def _still_called(texts: list[str], name: str) -> bool:
    return any(t.count(f"{name}(") > t.count(f"def {name}(") for t in texts if name in t)


def _still_defined(texts: list[str], name: str) -> bool:
    spellings = (f"def {name}(", f"class {name}(", f"class {name}:")
    return any(sp in t for t in texts if name in t for sp in spellings)


def _renamed(body: str, new_bodies: list[str]) -> bool:
    return any(
        difflib.SequenceMatcher(None, body, other, autojunk=False).quick_ratio() >= 0.9
        and difflib.SequenceMatcher(None, body, other, autojunk=False).ratio() >= 0.9
        for other in new_bodies
    )


def _removals(
    ctx: Context, changes: list[FileChange], sides: dict[str, tuple[_Side | None, _Side | None]], kb: NpuWorkarounds
) -> Iterator[Removal]:
    ok = {p: (b, h) for p, (b, h) in sides.items() if b is not None and h is not None}
    head_defs: set[str] = set()
    head_imports: set[str] = set()
    head_comments: set[str] = set()
    head_modules: set[str] = set()
    base_calls: Counter[str] = Counter()
    head_calls: Counter[str] = Counter()
    for base, head in ok.values():
        assert base is not None and head is not None
        head_defs.update(head.defs)
        head_imports.update(head.imports)
        head_comments.update(head.comments)
        head_modules.update(head.modules)
        base_calls.update({k: len(v) for k, v in base.calls.items()})
        head_calls.update({k: len(v) for k, v in head.calls.items()})
    gone_calls = {name for name in base_calls if head_calls[name] < base_calls[name]}
    base_defs = {n for b, _h in ok.values() if b is not None for n in b.defs}
    new_bodies = [body for _b, h in ok.values() if h is not None for n, body in h.bodies.items() if n not in base_defs]
    others: list[str] | None = None

    def elsewhere() -> list[str]:
        nonlocal others
        if others is None:
            others = _elsewhere(ctx, changes)
        return others

    gone_calls = {name for name in gone_calls if not _still_called(elsewhere(), name)}
    by_path = {c.path: c for c in changes}
    for path, (base, head) in ok.items():
        assert base is not None and head is not None
        change = by_path[path]
        old = change.old_path or path
        deleted = change.status == ChangeStatus.DELETED
        if _is_patch_module(old, kb):
            removed = sorted(
                (
                    n
                    for n in base.defs
                    if n not in head.defs
                    and n not in head_defs
                    and not _renamed(base.bodies[n], new_bodies)
                    and not _still_defined(elsewhere(), n)
                ),
                key=lambda n: base.defs[n],
            )
            if deleted and removed:
                names = ", ".join(f"`{n}`" for n in removed[:6]) + (" ..." if len(removed) > 6 else "")
                yield Removal(f"deletes the NPU patch module `{old}` ({names})", path, 0, _refs_near(base, 1, 10**9))
            elif deleted and not base.defs:
                yield Removal(f"deletes the NPU patch module `{old}`", path, 0)
            else:
                for n in removed:
                    line = base.defs[n]
                    yield Removal(f"removes `{n}`", path, line, _refs_near(base, line - 3, line + 40))
        for name in sorted(gone_calls):
            lost = len(base.calls.get(name, [])) - len(head.calls.get(name, []))
            if lost <= 0:
                continue
            head_lines = {ln.strip() for ln in head.text.splitlines()}
            base_lines = base.text.splitlines()
            candidates = [n for n in base.calls[name] if base_lines[n - 1].strip() not in head_lines] or base.calls[
                name
            ][-lost:]
            for line in candidates[:lost]:
                yield Removal(f"removes the call `{name}()`", path, line, _refs_near(base, line - 3, line))
        for name, line in sorted(base.imports.items(), key=lambda kv: kv[1]):
            if name in head.imports or name in head_imports or name in gone_calls:
                continue
            if name.startswith("module:"):
                module = name.removeprefix("module:")
                if any(m == module or m.endswith("." + module) or module.endswith("." + m) for m in head_modules):
                    continue  # the module is still imported (now `from module import apply_...`)
                yield Removal(f"removes `import {module}` (importing it applied the patches)", path, line)
                continue
            yield Removal(f"removes the import of `{name}` from an NPU patch module", path, line)
        for text, line in sorted(base.comments.items(), key=lambda kv: kv[1]):
            if text in head.comments or text in head_comments:
                continue
            yield Removal(f"removes the comment “{text[:120]}”", path, line, _refs_near(base, line, line))


# -- where to report --------------------------------------------------------------------------------------------------


def _anchor(
    ctx: Context, r: Removal, sides: dict[str, tuple[_Side | None, _Side | None]], nearby: int
) -> tuple[str, int] | None:
    change = ctx.changeset.changed(r.path)
    if change is None or change.status == ChangeStatus.DELETED:
        return None
    added = ctx.added_lines(r.path)
    if not added:
        return None
    base, head = sides[r.path]
    assert base is not None and head is not None
    pos = _map_line(base.text, head.text, r.base_line)
    if pos in added:
        return r.path, pos
    close = [n for n in added if abs(n - pos) <= nearby]
    if close:
        return r.path, min(close, key=lambda n: (abs(n - pos), n))
    return r.path, min(added)


def _map_line(old: str, new: str, line: int) -> int:
    """Where base line `line` stands at head: the first line that replaced it, or the line after a deletion."""
    a, b = old.splitlines(), new.splitlines()
    i = line - 1
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if i1 <= i < i2 or (i1 == i2 == i):
            if tag == "equal":
                return j1 + (i - i1) + 1
            if tag == "replace":
                return j1 + min(i - i1, j2 - j1 - 1) + 1
            return j1 + 1  # delete: the line that now follows the gap
    return max(len(b), 1)


def _hits(
    ctx: Context,
    removals: list[Removal],
    changes: list[FileChange],
    sides: dict[str, tuple[_Side | None, _Side | None]],
    kb: NpuWorkarounds,
) -> Iterator[Hit]:
    anchored = [r for r in removals if r.anchor is not None]
    fallback = anchored[0].anchor if anchored else _any_added_line(ctx, changes, removals)
    # One finding per annotated file, on its first anchor: the list of what went, grouped by where it was.
    groups: dict[str, list[Removal]] = {}
    lines: dict[str, int] = {}
    for r in removals:
        where = r.anchor or fallback
        if where is None:
            continue  # nothing in the change to annotate (pure deletions only)
        groups.setdefault(where[0], []).append(r)
        lines[where[0]] = min(lines.get(where[0], where[1]), where[1])
    pins = ", ".join(kb.pin_files)
    for path, items in groups.items():
        by_file: dict[str, list[str]] = {}
        for r in items:
            by_file.setdefault(r.path, []).append(r.what + (f" (base line {r.base_line})" if r.base_line > 0 else ""))
        parts = [f"in `{f}` it " + "; ".join(whats) for f, whats in by_file.items()]
        refs = tuple(dict.fromkeys(x for r in items for x in r.refs))
        tied = f" It was tied to {', '.join(refs)}." if refs else ""
        yield Hit(
            path,
            lines[path],
            "This change removes an NPU workaround: "
            + " / ".join(parts)
            + "."
            + tied
            + " Please show that the upstream issue is fixed in the versions the project pins"
            + (f" ({pins})" if pins else "")
            + ", or keep the workaround.",
        )


def _any_added_line(ctx: Context, changes: list[FileChange], removals: list[Removal]) -> tuple[str, int] | None:
    """For removals with no anchor of their own: the first added line of a changed file that used the module."""
    stems = {r.path.rsplit("/", 1)[-1].removesuffix(".py") for r in removals}
    for c in sorted(changes, key=lambda c: c.path):
        if c.status == ChangeStatus.DELETED or not c.added_lines:
            continue
        base = ctx.source(c.old_path or c.path, "base")
        if base is not None and any(s in base.text for s in stems):
            return c.path, min(c.added_lines)
    return None
