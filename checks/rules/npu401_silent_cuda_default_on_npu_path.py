"""NPU401: a new call takes a `device_name="cuda"` / `backend="nccl"` default, or CUDA literals enter a file
that verl's own device-API check skips."""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from npu_review.checks import globs, lazyre
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.facts import Facts
from npu_review.checks.facts.schema import DeviceApi
from npu_review.checks.kinds import PYTHON
from npu_review.checks.model import Severity
from npu_review.checks.parsers import pyast
from npu_review.checks.rule import Hit, Rule


@dataclass(frozen=True)
class CudaDefault:
    """A parameter whose default picks CUDA, as call sites see it."""

    key: str  # the name a call uses: the function or method name, or the class name for __init__
    param: str
    value: str  # "cuda" or "nccl"
    position: int | None  # index among the call's positional arguments; None: keyword only
    path: str
    line: int
    qualname: str
    method: bool  # reached as `obj.name(...)` only (a method), not as a bare `name(...)`


@dataclass
class Index:
    defaults: dict[str, list[CudaDefault]] = field(default_factory=dict)
    ambiguous: set[str] = field(default_factory=set)
    # Modules the index parsed, kept for check_file (path -> (text, tree)): the index reads them long before the
    # engine reaches them, when the Context has let their parse go. At most KEEP_TREES_CHARS of source.
    trees: dict[str, tuple[str, ast.Module | None]] = field(default_factory=dict)

    def usable(self) -> dict[str, list[CudaDefault]]:
        return {k: v for k, v in self.defaults.items() if k not in self.ambiguous}


class SilentCudaDefaultOnNpuPath(Rule):
    """A call on an NPU path silently takes a CUDA default, or a CUDA literal enters a file CI never checks.

    Severity: notice (calibrated on verl's history: the static analysis cannot tell every CUDA-only module).

    Why: verl picks the device through `verl.utils.device` (`get_device_name()`, `get_nccl_backend()`,
    `get_torch_device()`). A few functions still declare `device_name="cuda"` or `backend="nccl"` defaults
    (`RayResourcePool.get_placement_groups`, `RayWorkerGroup`'s `kwargs.get("device_name", "cuda")`), and a
    caller that leaves the argument out asks for CUDA on an Ascend machine: the NPU run breaks, or a
    CUDA-only branch (nsys profiling, CUDA resources) is taken. verl's own guard,
    `tests/special_sanity/check_device_api_usage.py`, skips its whitelisted files *entirely*, so a new
    `.cuda()`, `"cuda"` or `"nccl"` in `single_controller/ray/base.py`, `workers/rollout/replica.py` and the
    other listed files passes CI unseen.

    The functions are found at head (under `verl/`, knowledge `device_api.index_dirs`); a name defined twice
    there is ambiguous and skipped. Code that cannot run on an NPU is not reported: `platform_cuda.py` and the
    other `device_api.cuda_only_paths`, and code under `if is_cuda_available:`, `torch.cuda.is_available()`,
    `device == "cuda"`, the `else` of `if is_npu_available:`, or after `if not is_cuda_available: return`.
    In whitelisted files, comparisons (`device == "cuda"`), docstrings, registry keys
    (`@Registry.register("nccl")`) and device lists that also name `"npu"` are not reported.

    Bad:
        # verl/trainer/ppo/ray_trainer.py
        pgs = resource_pool.get_placement_groups(strategy="PACK")
        worker_group = RayWorkerGroup(resource_pool=pool, ray_cls_with_init=cls)
        # verl/single_controller/ray/base.py (whitelisted: CI skips the whole file)
        buf = torch.zeros(n, device="cuda")

    Good:
        # verl/trainer/ppo/ray_trainer.py
        pgs = resource_pool.get_placement_groups(strategy="PACK", device_name=get_device_name())
        worker_group = RayWorkerGroup(resource_pool=pool, ray_cls_with_init=cls, device_name=get_device_name())
        # verl/single_controller/ray/base.py (whitelisted: CI skips the whole file)
        buf = torch.zeros(n, device=get_device_name())

    Fix: pass the device explicitly from `verl.utils.device` (`get_device_name()`, `get_nccl_backend()`), or
    guard CUDA-only code with `is_cuda_available`.
    """

    id = "NPU401"
    name = "silent-cuda-default-on-npu-path"
    # A notice, not the catalog's warning: in the calibration (the docstring's Severity line) 3 of 19 findings at
    # HEAD sat in CUDA-only code the guard analysis cannot see (16% > the 10% a warning may cost).
    severity = Severity.NOTICE
    title = "Call takes a CUDA default on an NPU path, or CUDA literal in a file the device-API check skips"
    kinds = frozenset({PYTHON})
    context_kinds = frozenset()

    @classmethod
    def context_paths(cls, facts: Facts) -> tuple[str, ...]:
        # The index reads every Python file under index_dirs (see _build_index), so the App fetches them all.
        section = facts.device_api
        dirs = tuple(d.rstrip("/") + "/**/*.py" for d in section.index_dirs)
        return (*dirs, section.check_script)

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        kb = ctx.facts.device_api
        if _skipped(ctx, src.path):
            return
        added = None if ctx.audit else ctx.added_lines(src.path)
        if added is not None and not added:
            return
        index, call_needles = _usable(ctx)
        # Candidate lines first (a keyword on the line, and added by the change): the AST walk visits only them.
        call_lines = _lines_with(src, call_needles, added)
        whitelisted = _whitelist_entry(ctx, src.path)
        literal_lines = _lines_with(src, _LITERAL_NEEDLES, added) if whitelisted is not None else set()
        if not call_lines and not literal_lines:
            return
        kept = _index(ctx).trees.pop(src.path, None)
        tree = kept[1] if kept is not None and kept[0] == src.text else ctx.python_ast(src)
        if tree is None or _cuda_only_module(tree, kb.cuda_only_imports):
            return
        if call_lines:
            yield from _call_sites(src, tree, index, kb, call_lines)
        if whitelisted is not None and literal_lines:
            yield from _literals(src, tree, whitelisted, kb, literal_lines)


class _Needles:
    """Plain substrings to find in a text: whether any is there, and where (one regex for all of them)."""

    # Up to this many words, one `in` per word is faster than the regex's search (which tries every position
    # whose character starts a word); beyond, the regex is (one pass, and it shares the words' common prefix).
    FEW = 8

    def __init__(self, words: Iterable[str]) -> None:
        self.words = tuple(sorted(set(words)))
        self.pattern = re.compile("|".join(map(re.escape, self.words)))

    def found_in(self, text: str) -> bool:
        if len(self.words) <= self.FEW:
            return any(w in text for w in self.words)
        return self.pattern.search(text) is not None


def _needles(words: Iterable[str]) -> _Needles | None:
    """The needles of `words`, None when there are none."""
    needles = _Needles(words)
    return needles if needles.words else None


_LITERAL_NEEDLES = _needles((".cuda", '"cuda"', "'cuda'", '"nccl"', "'nccl'"))


def _usable(ctx: Context) -> tuple[dict[str, list[CudaDefault]], _Needles | None]:
    """The usable index and the needles of its call sites (`name(`), built once per run."""

    def build() -> tuple[dict[str, list[CudaDefault]], _Needles | None]:
        full = _index(ctx)
        index = full.usable()
        needles = _needles(k + "(" for k in index)
        # Keep only the trees check_file may need: a call line holds a needle, a literal line a literal needle.
        full.trees = {
            path: (text, tree)
            for path, (text, tree) in full.trees.items()
            if (needles is not None and needles.found_in(text))
            or (_LITERAL_NEEDLES is not None and _LITERAL_NEEDLES.found_in(text))
        }
        return index, needles

    return ctx.memo(("npu401-usable", "head", ""), build)


def _skipped(ctx: Context, path: str) -> bool:
    """A path under `not_npu_paths` or `vendored_paths`: not reviewed (one regex for all the globs, built once)."""
    kb = ctx.facts.device_api
    pattern = ctx.memo(
        ("npu401-skipped", "head", ""), lambda: globs.compile_any([*kb.not_npu_paths, *kb.vendored_paths])
    )
    return pattern is not None and pattern.match(path) is not None


# Line breaks of `str.splitlines` besides "\n" (and the "\r" of "\r\n"): a text without any is numbered by its "\n".
_OTHER_BREAKS = ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def _lines_with(src: SourceFile, needles: _Needles | None, added: frozenset[int] | None) -> set[int]:
    """Lines (not comments; added ones when `added` is given) that contain one of the needles.

    One `finditer` over the text, each match numbered by the "\n" before it: a needle (a name and `(`, a quoted
    literal, `.cuda`) holds no line break, so a match lies within one line, and a line that holds a needle holds
    the first match finditer meets in it (an earlier match overlapping it would lie in the same line)."""
    text = src.text
    if needles is None or not needles.found_in(text):
        return set()
    out: set[int] = set()
    if any(b in text for b in _OTHER_BREAKS):
        for n, line in enumerate(src.lines, start=1):  # numbered as splitlines numbers them
            if added is not None and n not in added:
                continue
            if needles.pattern.search(line) and not line.lstrip().startswith("#"):
                out.add(n)
        return out
    n, counted, end = 1, 0, -1  # line number of offset `counted`; end of the line last looked at
    for hit in needles.pattern.finditer(text):
        pos = hit.start()
        if pos <= end:
            continue  # another match on a line already looked at
        n += text.count("\n", counted, pos)
        counted = pos
        start = text.rfind("\n", 0, pos) + 1
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        if (added is None or n in added) and not text[start:end].lstrip().startswith("#"):
            out.add(n)
    return out


# -- the index of CUDA defaults ---------------------------------------------------------------------------------


# Source characters whose parse the index keeps for check_file (an AST takes ~30 times its source in memory).
KEEP_TREES_CHARS = 400_000


def _index(ctx: Context) -> Index:
    return ctx.memo(("npu401-index", "head", ""), lambda: _build_index(ctx))


def _quoted(value: str) -> tuple[str, str]:
    return f'"{value}"', f"'{value}'"


def _build_index(ctx: Context) -> Index:
    kb = ctx.facts.device_api
    dirs = tuple(d.rstrip("/") + "/" for d in kb.index_dirs)
    params: dict[str, set[str]] = {v: set(ps) for v, ps in kb.defaults.items()}
    cuda_only = kb.not_npu_paths
    values = tuple(params)
    needles = [q for v in params for q in _quoted(v)]
    definitions: Counter[str] = Counter()  # `def name(`, `class name(` and `class name:` as written, in all files
    index = Index()
    budget = KEEP_TREES_CHARS
    for path in ctx.head_paths():  # ctx.paths_of_kind(PYTHON) under `dirs`, the cheap test first
        if not path.startswith(dirs) or not ctx.has_kind(path, PYTHON):
            continue
        src = ctx.source(path)
        if src is None:
            continue
        text = src.text
        definitions.update(_DEF.findall(text))
        definitions.update(_CLASS.findall(text))
        # A quoted value holds the value: the bare search (fewer hits) rules most files out first.
        if not (any(v in text for v in values) and any(n in text for n in needles)):
            continue
        if globs.match_any(path, cuda_only):
            continue
        tree = ctx.python_ast(src)
        if len(text) <= budget:
            index.trees[path] = (text, tree)
            budget -= len(text)
        if tree is None:
            continue
        for d in _defaults_in(tree, path, params):
            index.defaults.setdefault(d.key, []).append(d)
    # A name defined more often than we indexed it (another class or function of that name) is ambiguous.
    for key, found in index.defaults.items():
        sites = {(d.path, d.qualname) for d in found}
        spellings = set()
        if any(d.qualname.endswith(".__init__") for d in found):
            spellings |= {f"class {key}(", f"class {key}:"}
        if any(not d.qualname.endswith(".__init__") for d in found):
            spellings.add(f"def {key}(")
        count = sum(definitions[s] for s in spellings)
        if count > len(sites):
            index.ambiguous.add(key)
    return index


# What `text.count("def name(")` (or `class name(`, `class name:`) counts, found for every name in one pass each: a
# name (an identifier) holds no space, `(` or `:`, so a match stops right after it; and no two matches can share a
# character (the only space of a match is the one after `def`/`class`), so findall meets every occurrence. Two
# patterns with a literal start (`def `, `class `) scan several times faster than one alternation.
_DEF = lazyre.compile(r"def [^\s(:]*[(:]")
_CLASS = lazyre.compile(r"class [^\s(:]*[(:]")


def _defaults_in(tree: ast.Module, path: str, params: dict[str, set[str]]) -> Iterator[CudaDefault]:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield from _function_defaults(node, None, path, params)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    yield from _function_defaults(item, node.name, path, params)


def _wanted(params: dict[str, set[str]], name: str, value: ast.AST | None) -> str | None:
    if isinstance(value, ast.Constant) and isinstance(value.value, str) and name in params.get(value.value, ()):
        return value.value
    return None


def _function_defaults(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, cls: str | None, path: str, params: dict[str, set[str]]
) -> Iterator[CudaDefault]:
    if cls is not None and fn.name.startswith("__") and fn.name != "__init__":
        return  # __call__ and friends: their call sites cannot be found by name
    if cls is None and fn.name.startswith("_"):
        return
    decorators = {pyast.dotted(d) for d in fn.decorator_list}
    shift = 0
    if cls is not None and "staticmethod" not in decorators:
        shift = 1  # self / cls is bound at the call site
    key = cls if cls is not None and fn.name == "__init__" else fn.name
    if not key:
        return
    qual = f"{cls}.{fn.name}" if cls else fn.name
    method = cls is not None and fn.name != "__init__"
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    first_default = len(positional) - len(a.defaults)
    for i, (arg, default) in enumerate(zip(positional[first_default:], a.defaults, strict=True)):
        value = _wanted(params, arg.arg, default)
        if value is not None:
            pos = first_default + i - shift
            yield CudaDefault(key, arg.arg, value, pos if pos >= 0 else None, path, default.lineno, qual, method)
    for arg, kw_default in zip(a.kwonlyargs, a.kw_defaults, strict=True):
        value = _wanted(params, arg.arg, kw_default)
        if value is not None and kw_default is not None:
            yield CudaDefault(key, arg.arg, value, None, path, kw_default.lineno, qual, method)
    if a.kwarg is not None:
        kwargs = a.kwarg.arg
        for node in ast.walk(fn):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr not in ("get", "pop") or pyast.dotted(node.func.value) != kwargs or len(node.args) != 2:
                continue
            name, default = node.args
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                value = _wanted(params, name.value, default)
                if value is not None:
                    yield CudaDefault(key, name.value, value, None, path, default.lineno, qual, method)


def _cuda_only_module(tree: ast.Module, imports: Iterable[str]) -> bool:
    """A module that never runs on an NPU: it imports a CUDA-only package at its top level (cupy, pynvml), or
    registers its classes for CUDA alone (`@EngineRegistry.register(..., device=["cuda"])`)."""
    wanted = set(imports)
    todo: list[ast.stmt] = list(tree.body)
    registered: list[bool] = []
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] in wanted for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] in wanted:
            return True
        if isinstance(node, ast.With | ast.If):
            todo.extend(node.body)
        if isinstance(node, ast.ClassDef):
            for d in node.decorator_list:
                devices = _registered_devices(d)
                if devices is not None:
                    registered.append(devices == {"cuda"})
    return bool(registered) and all(registered)


def _registered_devices(decorator: ast.expr) -> set[str] | None:
    """The devices a `@X.register(..., device=...)` decorator names, None when it names none (or not literally)."""
    if not isinstance(decorator, ast.Call):
        return None
    for kw in decorator.keywords:
        if kw.arg != "device":
            continue
        value = kw.value
        items = value.elts if isinstance(value, ast.List | ast.Tuple | ast.Set) else [value]
        names = {e.value for e in items if isinstance(e, ast.Constant) and isinstance(e.value, str)}
        return names if len(names) == len(items) else None
    return None


# -- call sites ---------------------------------------------------------------------------------------------------


def _call_sites(
    src: SourceFile, tree: ast.Module, index: dict[str, list[CudaDefault]], kb: DeviceApi, lines: set[int]
) -> Iterator[Hit]:
    fixes = kb.fixes
    # Only the names written as `name(` somewhere in the file count (asked once per name met).
    written: dict[str, bool] = {}
    for v in pyast.walk_npu(tree, lines):
        node = v.node
        if not v.reach or not isinstance(node, ast.Call) or node.lineno not in lines:
            continue
        # A call used as a decorator declares what the decorated code supports (`@Registry.register(...)`);
        # leaving the device out there is a declaration, not a call that runs on the wrong device.
        parent = v.parents[-1] if v.parents else None
        if isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node in parent.decorator_list:
            continue
        name = pyast.callee_name(node)
        defs = index.get(name, [])
        if defs:
            if name not in written:
                written[name] = name + "(" in src.text
            if not written[name]:
                continue
        for d in defs:
            if d.method and not isinstance(node.func, ast.Attribute):
                continue
            if not _omits(node, d):
                continue
            also = (
                f" and {len(defs) - 1} other definition{'s' if len(defs) > 2 else ''} of that name"
                if len(defs) > 1
                else ""
            )
            fix = fixes.get(d.value, "")
            shown = ast.unparse(node.func)
            shown = shown if len(shown) <= 60 else name
            yield Hit(
                src.path,
                node.lineno,
                f'`{shown}(...)` leaves out `{d.param}`, so it takes the default `{d.param}="{d.value}"` '
                f"declared in {d.qualname} ({d.path}:{d.line}{also}): on Ascend this asks for "
                f"{'CUDA' if d.value == 'cuda' else 'NCCL'}."
                + (f" Pass `{d.param}={fix}` ({kb.fix_module})." if fix else ""),
            )
            break


def _omits(call: ast.Call, d: CudaDefault) -> bool:
    if any(kw.arg is None for kw in call.keywords):
        return False  # `**kwargs` may carry it: unknown
    if any(kw.arg == d.param for kw in call.keywords):
        return False
    if d.position is not None:
        if any(isinstance(a, ast.Starred) for a in call.args):
            return False
        if len(call.args) > d.position:
            return False
    return True


# -- literals in files the device-API check skips -----------------------------------------------------------------


def _whitelist(ctx: Context) -> tuple[str, ...]:
    def load() -> tuple[str, ...]:
        src = ctx.source(ctx.facts.device_api.check_script)
        if src is None:
            return ()
        tree = ctx.python_ast(src)
        if tree is None:
            return ()
        out: list[str] = []
        for node in tree.body:
            if not isinstance(node, ast.Assign | ast.AnnAssign):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            if not any(n.endswith("WHITELIST") for n in names) or not isinstance(node.value, ast.List):
                continue
            out.extend(
                e.value for e in node.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str) and e.value
            )
        return tuple(dict.fromkeys(out))

    return ctx.memo(("npu401-whitelist", "head", ""), load)


def _whitelist_entry(ctx: Context, path: str) -> str | None:
    """The whitelist entry that makes check_device_api_usage.py skip `path` (it matches by substring)."""
    for entry in _whitelist(ctx):
        if entry in path:
            return entry
    return None


_LOG_CALLS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "print", "log"})


def _literals(src: SourceFile, tree: ast.Module, entry: str, kb: DeviceApi, lines: set[int]) -> Iterator[Hit]:
    why = (
        f"{src.path} is whitelisted in {kb.check_script} (entry {entry!r}), which skips the whole file, so CI does "
        "not catch it"
    )
    for v in pyast.walk_npu(tree, lines):
        node = v.node
        if not v.reach or getattr(node, "lineno", None) not in lines:
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = pyast.dotted(node.func)
            if node.func.attr == "cuda" and not name.startswith("torch."):
                yield Hit(
                    src.path,
                    node.lineno,
                    f"`.cuda()` moves to a CUDA device, which does not exist on Ascend; {why}. "
                    f"Use `.to({kb.fixes['cuda']})` ({kb.fix_module}).",
                )
            elif name.startswith("torch.cuda.") and name != "torch.cuda.is_available":
                yield Hit(
                    src.path,
                    node.lineno,
                    f"`{name}()` is the CUDA API, a no-op or an error on Ascend; {why}. "
                    f"Use `{kb.torch_device_fix}` ({kb.fix_module}).",
                )
        elif isinstance(node, ast.Constant) and node.value in ("cuda", "nccl") and not _exempt(node, v.parents):
            fix = kb.fixes[node.value]
            yield Hit(
                src.path,
                node.lineno,
                f'`"{node.value}"` hard-codes {"CUDA" if node.value == "cuda" else "NCCL"} on a path that also '
                f"runs on Ascend; {why}. Use `{fix}` ({kb.fix_module}).",
            )


def _exempt(const: ast.Constant, parents: tuple[ast.AST, ...]) -> bool:
    """Constants that name a device without choosing it: comparisons, docstrings, registry keys, log text,
    and enumerations (supported devices, languages, profiler contents)."""
    if not parents:
        return False
    parent = parents[-1]
    if isinstance(parent, ast.Expr):
        return True  # a docstring or a bare string
    if isinstance(parent, ast.List | ast.Tuple | ast.Set) and len(parent.elts) > 1:
        return True  # one value chooses, several enumerate
    if isinstance(parent, ast.Dict):
        return any(k is const for k in parent.keys)  # a key names a device in a mapping; a value chooses
    for p in reversed(parents):
        if isinstance(p, ast.Compare | ast.JoinedStr):
            return True
        if isinstance(p, ast.Call):
            return pyast.callee_name(p) in ({"register"} | _LOG_CALLS)
        if isinstance(p, ast.stmt):
            break
    return False
