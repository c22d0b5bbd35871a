"""Python sources through `ast`: a parse that never raises, and which code can run on an Ascend NPU.

`parse(text)` gives the module or None (syntax errors are not this tool's business). `walk_npu(tree)` yields
every node with a flag saying whether the code around it is reachable on NPU, judged from the guards verl
writes: `if is_cuda_available:` / `torch.cuda.is_available()` / `device_name == "cuda"` bodies are CUDA-only;
the `else` of `if is_npu_available:` (or of `== "npu"`) is not NPU either; `if not is_cuda_available: return`
makes the rest of the block CUDA-only. Anything else counts as reachable: the unknown case is the common one.
"""

from __future__ import annotations

import ast
import warnings
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

# Names (variables, attributes or functions) whose truth means "this is CUDA" or "this is an NPU".
CUDA_MARKERS = frozenset({"is_cuda_available"})
NPU_MARKERS = frozenset({"is_npu_available", "is_torch_npu_available"})
_DEVICES_NOT_NPU = frozenset({"cuda", "nccl", "rocm", "hip", "xpu", "mps"})
_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def parse(text: str) -> ast.Module | None:
    """The module, or None when the text is not valid Python (or too deep for the parser)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def dotted(node: ast.AST) -> str:
    """`a.b.c` for a Name/Attribute chain, "" for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def callee_name(call: ast.Call) -> str:
    """The last name of what a call calls: `f` for `f()`, `m` for `x.y.m()`."""
    f = call.func
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        return f.attr
    return ""


def _device_const(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.strip().lower().split(":", 1)[0]
    return None


def _marker(node: ast.AST) -> str | None:
    """ "cuda" / "npu" for a bare guard expression (`is_cuda_available`, `torch.cuda.is_available()`)."""
    if isinstance(node, ast.Call):
        name = dotted(node.func)
        if name.endswith("cuda.is_available"):
            return "cuda"
        node = node.func
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    if name in CUDA_MARKERS:
        return "cuda"
    if name in NPU_MARKERS:
        return "npu"
    return None


def blocked(test: ast.AST) -> tuple[bool, bool]:
    """(body is not reachable on NPU, else-branch is not reachable on NPU) for an `if`/ternary test."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        body, other = blocked(test.operand)
        return other, body
    if isinstance(test, ast.BoolOp):
        parts = [blocked(v) for v in test.values]
        if isinstance(test.op, ast.And):
            return any(b for b, _ in parts), all(o for _, o in parts)
        return all(b for b, _ in parts), any(o for _, o in parts)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        op, left, right = test.ops[0], test.left, test.comparators[0]
        devices: set[str] = set()
        for side in (left, right):
            d = _device_const(side)
            if d is not None:
                devices.add(d)
            elif isinstance(side, ast.Tuple | ast.List | ast.Set):
                devices.update(x for x in (_device_const(e) for e in side.elts) if x is not None)
        if not devices:
            return False, False
        positive = isinstance(op, ast.Eq | ast.Is | ast.In)
        negative = isinstance(op, ast.NotEq | ast.IsNot | ast.NotIn)
        if not (positive or negative):
            return False, False
        if "npu" in devices:
            # `== "npu"`: the body is NPU, the else is not; a set that also names other devices: unknown
            if len(devices) > 1:
                return False, False
            return (False, True) if positive else (True, False)
        if devices <= _DEVICES_NOT_NPU:
            return (True, False) if positive else (False, True)
        return False, False
    m = _marker(test)
    if m == "cuda":
        return True, False
    if m == "npu":
        return False, True
    return False, False


def _ends_with_exit(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], _EXITS)


def walk_npu(tree: ast.AST, lines: Iterable[int] | None = None) -> Iterator[Visit]:
    """Every node below `tree` with whether NPU may run it (False: a guard makes it CUDA-only).

    With `lines`, only the nodes whose line span holds one of those lines are visited (and their ancestors):
    a rule that knows where its candidates are (added lines, lines with a keyword) skips the rest of the file.
    """
    wanted = sorted(set(lines)) if lines is not None else None
    if wanted is not None and not wanted:
        return iter(())
    return _walk(tree, True, (), wanted)


@dataclass(frozen=True)
class Visit:
    node: ast.AST
    reach: bool  # NPU may run this code
    parents: tuple[ast.AST, ...]  # ancestors, outermost first


def _spans(node: ast.AST, wanted: list[int] | None) -> bool:
    if wanted is None:
        return True
    start = getattr(node, "lineno", None)
    if start is None:
        return True
    end = getattr(node, "end_lineno", None) or start
    i = bisect_left(wanted, start)
    return i < len(wanted) and wanted[i] <= end


def _walk(node: ast.AST, reach: bool, parents: tuple[ast.AST, ...], wanted: list[int] | None) -> Iterator[Visit]:
    yield Visit(node, reach, parents)
    inner = (*parents, node)
    if isinstance(node, ast.If | ast.IfExp):
        body_blocked, else_blocked = blocked(node.test)
        if _spans(node.test, wanted):
            yield from _walk(node.test, reach, inner, wanted)
        if isinstance(node, ast.If):
            yield from _block(node.body, reach and not body_blocked, inner, wanted)
            yield from _block(node.orelse, reach and not else_blocked, inner, wanted)
        else:
            if _spans(node.body, wanted):
                yield from _walk(node.body, reach and not body_blocked, inner, wanted)
            if _spans(node.orelse, wanted):
                yield from _walk(node.orelse, reach and not else_blocked, inner, wanted)
        return
    for _name, value in ast.iter_fields(node):
        if isinstance(value, list):
            if value and isinstance(value[0], ast.stmt):
                yield from _block(value, reach, inner, wanted)
                continue
            for item in value:
                if isinstance(item, ast.AST) and _spans(item, wanted):
                    yield from _walk(item, reach, inner, wanted)
        elif isinstance(value, ast.AST) and _spans(value, wanted):
            yield from _walk(value, reach, inner, wanted)


def _block(
    stmts: list[ast.stmt], reach: bool, parents: tuple[ast.AST, ...], wanted: list[int] | None
) -> Iterator[Visit]:
    """A statement list: an early `if <guard>: return` changes what the rest of the list may run on."""
    for stmt in stmts:
        if _spans(stmt, wanted):
            yield from _walk(stmt, reach, parents, wanted)
        if isinstance(stmt, ast.If) and reach:
            body_blocked, else_blocked = blocked(stmt.test)
            body_exits, else_exits = _ends_with_exit(stmt.body), _ends_with_exit(stmt.orelse)
            # `if not is_cuda_available: return` -> what follows runs only where the else-branch ran
            if (body_exits and not else_exits and else_blocked) or (else_exits and not body_exits and body_blocked):
                reach = False
