"""Build frozen dataclasses from YAML data, checking every key and type on the way: where facts are validated.

No library does this here without a cost the CLI would feel: pydantic takes ~0.2 s to import and ~30 ms per
class (30 sections), msgspec ignores unknown keys of dataclasses, cattrs turns the string "abc" into a list of
letters. This module knows the few types the facts use and names the exact key in every error.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import types
import typing
from collections.abc import Mapping
from functools import cache
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin

T = TypeVar("T")

# A string that must compile as a regular expression (checked when the facts load, kept as the string).
Regex = Annotated[str, "regex"]


class FactsError(ValueError):
    """The facts cannot be used; the message is one line naming the key, meant for the user."""


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls, include_extras=True)


def build(cls: type[T], data: object, path: str) -> T:
    """`data` (from YAML) as an instance of the frozen dataclass `cls`; FactsError names the first bad key."""
    value = _convert(data, cls, path)
    assert isinstance(value, cls)
    return value


def _got(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{str(value).lower()}"
    if isinstance(value, str):
        return f"the string {value!r}" if len(value) <= 40 else "a string"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _want(tp: Any) -> str:
    origin, args = get_origin(tp), get_args(tp)
    if origin is Annotated:
        return "a regular expression (a string)" if "regex" in args[1:] else _want(args[0])
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    if tp is str:
        return "a string"
    if tp is bool:
        return "true or false"
    if tp is int:
        return "an integer"
    if origin in (Union, types.UnionType):
        return " or ".join(_want(a) for a in args)
    if tp is type(None):
        return "null"
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return f"a list of {_plural(args[0])}"
        return f"a list of {len(args)} items"
    if origin in (Mapping, dict) or dataclasses.is_dataclass(tp):
        return "a mapping"
    return str(tp)


def _plural(tp: Any) -> str:
    origin, args = get_origin(tp), get_args(tp)
    if origin is Annotated:
        return "regular expressions" if "regex" in args[1:] else _plural(args[0])
    if tp is str:
        return "strings"
    if tp is int:
        return "integers"
    if origin is tuple:
        return "lists"
    if origin in (Mapping, dict) or dataclasses.is_dataclass(tp):
        return "mappings"
    return "items"


def _fail(path: str, tp: Any, value: object) -> FactsError:
    return FactsError(f"{path}: expected {_want(tp)}, got {_got(value)}")


def _convert(value: object, tp: Any, path: str) -> Any:
    origin, args = get_origin(tp), get_args(tp)
    if origin is Annotated:
        out = _convert(value, args[0], path)
        if "regex" in args[1:]:
            try:
                re.compile(out)
            except re.error as exc:
                raise FactsError(f"{path}: not a valid regular expression ({exc})") from None
        return out
    if origin is Literal:
        if value in args:
            return value
        raise _fail(path, tp, value)
    if tp is str:
        if isinstance(value, str):
            return value
        raise _fail(path, tp, value)
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise _fail(path, tp, value)
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise _fail(path, tp, value)
    if tp is type(None):
        if value is None:
            return None
        raise _fail(path, tp, value)
    if origin in (Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _convert(value, arg, path)
            except FactsError as exc:
                if not str(exc).startswith(f"{path}: expected "):
                    raise  # a key inside the value is wrong: name that key
        raise _fail(path, tp, value)
    if origin is tuple:
        if not isinstance(value, list):
            raise _fail(path, tp, value)
        if len(args) == 2 and args[1] is Ellipsis:
            if args[0] is str and all(type(v) is str for v in value):
                return tuple(value)  # the long lists of names and versions: no per-item call needed
            return tuple(_convert(v, args[0], f"{path}[{i}]") for i, v in enumerate(value))
        if len(value) != len(args):
            raise _fail(path, tp, value)
        return tuple(_convert(v, a, f"{path}[{i}]") for i, (v, a) in enumerate(zip(value, args, strict=True)))
    if origin in (Mapping, dict):
        if not isinstance(value, dict):
            raise _fail(path, tp, value)
        val_tp = args[1]  # keys are strings
        if val_tp is str and all(type(k) is str and type(v) is str for k, v in value.items()):
            return dict(value)
        mapping: dict[str, Any] = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise FactsError(f"{path}: key {k!r} is not a string (quote it)")
            mapping[k] = _convert(v, val_tp, f"{path}.{k}")
        return mapping
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise _fail(path, tp, value)
        fields = {f.name: f for f in dataclasses.fields(tp)}
        for key in value:
            if key not in fields:
                near = difflib.get_close_matches(str(key), list(fields), n=1)
                hint = f" (did you mean {near[0]!r}?)" if near else f" (known: {', '.join(fields)})"
                raise FactsError(f"{path}: unknown key {key!r}{hint}")
        hints = _hints(tp)
        kwargs = {}
        for name in fields:
            if name in value:
                kwargs[name] = _convert(value[name], hints[name], f"{path}.{name}")
            elif fields[name].default is dataclasses.MISSING and fields[name].default_factory is dataclasses.MISSING:
                raise FactsError(f"{path}: missing key {name!r}")
        return tp(**kwargs)
    raise TypeError(f"{path}: unsupported type {tp!r} in the facts schema")  # a schema bug, not bad input
