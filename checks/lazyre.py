"""Regular expressions compiled at their first use rather than when their module is imported.

A one-file review imports the rules, parsers and analyses of its file's kinds, and with them some 500 module-level
patterns, most of which that review never uses: compiling them all was about a fifth of its run. A module writes
`_WORD = lazyre.compile(r"...")` where it wrote `re.compile`; the pattern compiles at the first attribute read other
than `.pattern` (kept as given, so that a pattern built from another's text at import stays lazy), and from then on
its methods are the compiled pattern's own, read from the stand-in's instance dict.

The stand-in is typed as `re.Pattern[str]`, and answers `isinstance(x, re.Pattern)` as one (its `__class__`), which
is also what lets the `re` module's functions take it (`re.sub(_WORD, ...)` calls `_WORD.sub`). Like a compiled
pattern it is its own copy, and it pickles as its pattern and flags. A match's `.re` is the compiled pattern, not
the stand-in: compare it with `==` (which compares the two as patterns), never with `is`.
"""

from __future__ import annotations

import re
from typing import Any, cast

# Every stand-in made, for `compile_pending` (module-level patterns: they live as long as their modules).
_made: list[_Pattern] = []

# What a compiled pattern offers: once compiled, each is put in the stand-in's instance dict.
_ATTRIBUTES = (
    "search",
    "match",
    "fullmatch",
    "split",
    "findall",
    "finditer",
    "sub",
    "subn",
    "scanner",
    "flags",
    "groups",
    "groupindex",
)


# Python's own setter of `obj.__class__`, which the stand-in's `__class__` property hides.
_set_class = object.__dict__["__class__"].__set__


class _Pattern:
    """A pattern and its flags, compiled when first used (see the module's docstring): what both states share."""

    def __init__(self, pattern: str, flags: int) -> None:
        self.pattern = pattern
        self._flags = flags

    def _compiled(self) -> re.Pattern[str]:
        compiled: re.Pattern[str] | None = self.__dict__.get("_real")
        if compiled is None:
            compiled = self.__dict__["_real"] = re.compile(self.pattern, self._flags)
            for name in _ATTRIBUTES:
                self.__dict__[name] = getattr(compiled, name)
            # Compiled: a class without `__getattr__`, whose attribute reads are Python's plain ones (a class with
            # `__getattr__` makes every read of `.match` through it slower).
            _set_class(self, _Compiled)
        return compiled

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # isinstance(x, re.Pattern), and the re module's functions, take it
        return re.Pattern

    def __repr__(self) -> str:
        return repr(self._compiled())

    def __eq__(self, other: object) -> bool:
        return self._compiled() == (other._compiled() if isinstance(other, _Pattern) else other)

    def __hash__(self) -> int:
        return hash(self._compiled())

    def __copy__(self) -> _Pattern:
        return self

    def __deepcopy__(self, memo: object) -> _Pattern:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (compile, (self.pattern, self._flags))


class _Lazy(_Pattern):
    """Not compiled yet: the first read of a pattern's attribute compiles it."""

    def __getattr__(self, name: str) -> Any:
        # Only called for a name not in the instance dict: the first use, or a name a pattern lacks.
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._compiled(), name)


class _Compiled(_Pattern):
    """Compiled: the pattern's methods and attributes are in the instance dict."""


def compile(pattern: str, flags: int = 0) -> re.Pattern[str]:  # (re.compile's name, on purpose)
    """`re.compile(pattern, flags)`, compiled at its first use."""
    lazy = _Lazy(pattern, flags)
    _made.append(lazy)
    return cast("re.Pattern[str]", lazy)


def compile_pending() -> None:
    """Compile every stand-in not compiled yet: before worker processes fork, so that each does not compile the
    same patterns again."""
    for lazy in _made:
        lazy._compiled()
