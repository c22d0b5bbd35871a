"""What the engine keeps between runs in a folder the caller names (the validated facts, the rule registry): pickles
keyed by what they were made from. Off unless the caller names a folder (`use`); a cache that cannot be read or
written is left alone, and an entry that does not load is made anew."""

from __future__ import annotations

import contextlib
import os
import pickle
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

# The folder (None: nothing is kept). The CLI sets it; the engine itself reads no environment.
_folder: str | None = None


def use(folder: str | None) -> None:
    """Keep entries in `folder` (created when first written), or nowhere (None)."""
    global _folder
    _folder = folder


def folder() -> str | None:
    return _folder


def cached(name: str, key: str, make: Callable[[], T], valid: Callable[[object], bool]) -> T:
    """`make()`, kept under `name` and `key` (a hash of what it is made from). An entry that cannot be read, does
    not unpickle or fails `valid` is made anew and written over; one that cannot be written is not kept."""
    if _folder is None:
        return make()
    path = os.path.join(_folder, f"{name}-{key}.pickle")
    try:
        with open(path, "rb") as fh:
            found = pickle.load(fh)
        if valid(found):
            return found
    except Exception:  # absent, unreadable, truncated or from other code: made anew
        pass
    value = make()
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(_folder, exist_ok=True)
        with open(tmp, "wb") as fh:
            pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)  # whole or not at all, for a run reading it meanwhile
    except OSError:  # a read-only or full disk: the next run makes it again
        with contextlib.suppress(OSError):
            os.remove(tmp)
    return value
