"""A faster `__init__` for the frozen dataclasses the parsers make by the hundred thousand (shell words, logical
lines, statements, commands, Markdown blocks).

The `__init__` a frozen dataclass gets sets each field through `object.__setattr__(self, name, value)` (its own
`__setattr__` refuses): a whole-tree audit of verl makes ~180,000 such objects, and their `__init__` was ~6 % of
its CPU. `fast_init` gives the class an `__init__` with the same parameters and defaults that writes each field
where `object.__setattr__` would have put it: the instance's `__dict__`, or for a class with `__slots__` the
slot's descriptor. Nothing else changes: the class stays frozen (assigning a field raises), and its equality,
hash, repr, `dataclasses.replace` and pickling are the dataclass's own.

    @fast_init
    @dataclass(frozen=True, slots=True)
    class Word:
        ...

Why not a library: attrs' frozen classes set their fields the same way (`object.__setattr__`, cached), and
msgspec's or pydantic's would change what these classes are (their equality, `dataclasses.replace`, pickling) for
every rule that reads them; this keeps the dataclasses and changes only how their fields are first written.

Only for what such an `__init__` does alone: every field in `__init__`, positional (no `kw_only`), with a plain
default or none (no `default_factory`), and no `__post_init__`; a class with more raises TypeError at import.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")


def fast_init(cls: type[T]) -> type[T]:
    """`cls` (a frozen dataclass) with an `__init__` that sets its fields directly (see the module)."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen:
        raise TypeError(f"fast_init: {cls.__name__} is not a frozen dataclass")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"fast_init: {cls.__name__} has a __post_init__")
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    slots = "__slots__" in cls.__dict__
    names: dict[str, Any] = {}
    args: list[str] = []
    body: list[str] = []
    for f in fields:
        if not f.init or f.kw_only or f.default_factory is not dataclasses.MISSING:
            raise TypeError(f"fast_init: {cls.__name__}.{f.name} is not a plain positional field")
        if f.default is dataclasses.MISSING:
            args.append(f.name)
        else:
            names[f"_default_{f.name}"] = f.default
            args.append(f"{f.name}=_default_{f.name}")
        if slots:
            names[f"_set_{f.name}"] = cls.__dict__[f.name].__set__
            body.append(f"    _set_{f.name}(self, {f.name})")
        else:
            body.append(f"    d[{f.name!r}] = {f.name}")
    if not slots and body:
        body.insert(0, "    d = self.__dict__")
    source = f"def __init__(self, {', '.join(args)}):\n" + ("\n".join(body) or "    pass") + "\n"
    # (the code named after the class: a profile would otherwise show each such `__init__` as `<string>`'s)
    exec(compile(source, f"<fast_init {cls.__module__}.{cls.__qualname__}>", "exec"), names)
    init = names["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    setattr(cls, "__init__", init)  # noqa: B010 - (mypy refuses an assignment to a method)
    return cls
