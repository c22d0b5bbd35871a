"""Which keys vLLM-Ascend reads from `--additional-config`, and where: at the top level, or only inside one of its
sub-configs (`ascend_compilation_config`, `xlite_graph_config`, ...). Read from a `vllm_ascend/ascend_config.py`
with `ast`, nothing run:

    keys = read_keys(text)        # None when the text is not Python
    keys.top                      # {"multistream_overlap_shared_expert", "ascend_compilation_config", ...}
    keys.nested                   # {"ascend_compilation_config": {"fuse_muls_add", "enable_npugraph_ex", ...}}
    keys.nested_only()            # {"fuse_muls_add": "ascend_compilation_config", ...}: never read at the top
    keys.defaults                 # {"fuse_muls_add": True, ...}: a nested key's literal default, where one is
                                  # written (`.get("K", True)`, `def __init__(self, K: bool = True)`) and only one

A top-level read is `<x>.additional_config.get("K", ...)`, `additional_config["K"]` or `"K" in additional_config`
(any name that ends with `additional_config`). A sub-config's keys are the keys read from what such a read
returns: a chained `.get("K")`, a name it is assigned to (`.get("K")` on it), or a class of the same file it is
given to: `Cls(**sub)` binds the parameters of `Cls.__init__` and the `kwargs.get("K")` it reads, `Cls(sub, ...)`
the keys `__init__` reads from that parameter. What cannot be told this way is simply not a nested key: the list
errs on the side of fewer keys.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

__all__ = ["ConfigKeys", "read_keys", "same_value"]


_CONFLICT = object()


@dataclass
class ConfigKeys:
    top: set[str] = field(default_factory=set)
    nested: dict[str, set[str]] = field(default_factory=dict)
    defaults: dict[str, object] = field(default_factory=dict)

    def nested_only(self) -> dict[str, str]:
        """Key -> the sub-config it is read in, for the keys never read at the top level (a key read in two
        sub-configs is named with the first, in name order)."""
        out: dict[str, str] = {}
        for sub in sorted(self.nested):
            if sub not in self.top:
                continue
            for key in sorted(self.nested[sub] - self.top):
                out.setdefault(key, sub)
        return out


def _is_additional(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id.endswith("additional_config")
    if isinstance(node, ast.Attribute):
        return node.attr == "additional_config"
    if isinstance(node, ast.BoolOp):  # `vllm_config.additional_config or {}`
        return any(_is_additional(v) for v in node.values)
    return False


def _key_read(node: ast.AST) -> tuple[ast.AST, str] | None:
    """(receiver, key) of `recv.get("K", ...)` or `recv["K"]`."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return node.func.value, node.args[0].value
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        return node.value, node.slice.value
    return None


def _reads_from(scope: ast.AST, name: str) -> set[str]:
    """Keys read from the variable `name` anywhere in `scope`."""
    out: set[str] = set()
    for node in ast.walk(scope):
        read = _key_read(node)
        if read is not None and isinstance(read[0], ast.Name) and read[0].id == name:
            out.add(read[1])
    return out


def _class_keys(cls: ast.ClassDef, position: int | None) -> set[str]:
    """The keys a class reads from the dict it is given: `Cls(**d)` (position None) binds `__init__`'s parameters
    and what it reads from its `**kwargs`; `Cls(d, ...)` what `__init__` reads from that parameter."""
    init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    if init is None:
        return set()
    params = [a.arg for a in (*init.args.posonlyargs, *init.args.args)][1:]  # without self
    if position is None:
        out = {*params, *(a.arg for a in init.args.kwonlyargs)}
        if init.args.kwarg is not None:
            out |= _reads_from(init, init.args.kwarg.arg)
        return out
    if position >= len(params):
        return set()
    return _reads_from(init, params[position])


def read_keys(text: str) -> ConfigKeys | None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    classes = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    keys = ConfigKeys()
    subs: dict[str, str] = {}  # variable -> the sub-config it holds
    for node in ast.walk(tree):
        if (  # "K" in additional_config
            isinstance(node, ast.Compare)
            and len(node.ops) == 1
            and isinstance(node.ops[0], ast.In | ast.NotIn)
            and _is_additional(node.comparators[0])
            and isinstance(node.left, ast.Constant)
            and isinstance(node.left.value, str)
        ):
            keys.top.add(node.left.value)
            continue
        read = _key_read(node)
        if read is None:
            continue
        recv, key = read
        if _is_additional(recv):
            keys.top.add(key)
            continue
        inner = _key_read(recv)  # additional_config.get("SUB", {}).get("K")
        if inner is not None and _is_additional(inner[0]):
            keys.nested.setdefault(inner[1], set()).add(key)
    for node in ast.walk(tree):  # sub = additional_config.get("SUB", {})
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            read = _key_read(node.value)
            if read is not None and _is_additional(read[0]):
                subs[node.targets[0].id] = read[1]
    for var, sub in subs.items():
        nested = keys.nested.setdefault(sub, set())
        nested |= _reads_from(tree, var)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.func.id not in classes:
                continue
            cls = classes[node.func.id]
            for kw in node.keywords:
                if kw.arg is None and isinstance(kw.value, ast.Name) and kw.value.id == var:
                    nested |= _class_keys(cls, None)
            for i, arg in enumerate(node.args):
                if isinstance(arg, ast.Name) and arg.id == var:
                    nested |= _class_keys(cls, i)
    for node in ast.walk(tree):  # Cls(**additional_config.get("SUB", {})), Cls(additional_config.get("SUB"))
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.func.id not in classes:
            continue
        given: list[tuple[ast.expr, int | None]] = [(kw.value, None) for kw in node.keywords if kw.arg is None]
        given += [(arg, i) for i, arg in enumerate(node.args)]
        for value, position in given:
            read = _key_read(value)
            if read is not None and _is_additional(read[0]):
                keys.nested.setdefault(read[1], set()).update(_class_keys(classes[node.func.id], position))
    keys.nested = {k: v for k, v in keys.nested.items() if v}
    keys.defaults = _defaults(tree, set().union(*keys.nested.values()) if keys.nested else set())
    return keys


def _defaults(tree: ast.Module, names: set[str]) -> dict[str, object]:
    """The literal default of each of `names` where the file writes one: `.get("K", <literal>)` or a parameter
    `K=<literal>`; a name given two different defaults has none."""
    found: dict[str, object] = {}

    def note(name: str, value: ast.expr | None) -> None:
        if name not in names or value is None:
            return
        try:
            literal = ast.literal_eval(value)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            literal = _CONFLICT
        old = found.get(name, literal)
        found[name] = literal if same_value(old, literal) else _CONFLICT

    for node in ast.walk(tree):
        read = _key_read(node)
        if read is not None and isinstance(node, ast.Call) and len(node.args) >= 2:
            note(read[1], node.args[1])
        elif isinstance(node, ast.FunctionDef):
            args = node.args
            positional = [*args.posonlyargs, *args.args]
            for arg, default in zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True):
                note(arg.arg, default)
            for arg, kw_default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
                note(arg.arg, kw_default)
    return {k: v for k, v in found.items() if v is not _CONFLICT}


def same_value(a: object, b: object) -> bool:
    """Equal as config values: `True` is not `1`."""
    return type(a) is type(b) and a == b
