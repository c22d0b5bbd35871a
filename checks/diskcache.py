"""What the engine keeps between runs in a folder the caller names (the validated facts, the rule registry): pickles
keyed by what they were made from. Off unless the caller names a folder (`use`); a cache that cannot be read or
written is left alone, and an entry that does not load is made anew."""

from __future__ import annotations

import contextlib
import os
import pickle
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

# The folder (None: nothing is kept). The CLI sets it; the engine itself reads no environment.
_folder: str | None = None
# Stores kept in this process's memory alone when there is no folder (a long-lived reviewer: the App's review
# processes), with at most this many entries each; 0: not kept.
_memory_limit = 0


def use(folder: str | None) -> None:
    """Keep entries in `folder` (created when first written), or nowhere (None)."""
    global _folder
    _folder = folder


def keep_in_memory(limit: int) -> None:
    """Without a folder, keep the stores (`store`) in this process's memory, at most `limit` entries each (0:
    not at all): the next review in the process finds them."""
    global _memory_limit
    _memory_limit = limit


def keeping() -> bool:
    """Whether `store` keeps anything (a folder, or stores in memory)."""
    return _folder is not None or _memory_limit > 0


def folder() -> str | None:
    return _folder


def cached(name: str, key: str, make: Callable[[], T], valid: Callable[[object], bool], keep: int = 0) -> T:
    """`make()`, kept under `name` and `key` (a hash of what it is made from). An entry that cannot be read, does
    not unpickle or fails `valid` is made anew and written over; one that cannot be written is not kept. `keep`:
    when one is written, the other keys' files of `name` but the `keep` - 1 newest are removed (0: none is)."""
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
    if keep:
        _prune(path, keep)
    return value


# How many keys' files of one store stay in the folder (the newest; see Store._prune).
KEEP_KEYS = 3


class Store:
    """Entries derived from one blob each (a workflow's image products...), kept between runs in one pickle per
    store (`name`, `key`: a hash of what the entries are made with: code, facts, profile): a review of a change on
    a large tree reads and evaluates only the blobs it has not seen. Bounded: at most `limit` entries, those used
    least recently first out. Written back by `flush` when an entry was added; a store that cannot be read starts
    empty, and one that cannot be written is not kept."""

    def __init__(self, name: str, key: str, limit: int) -> None:
        self.path = None if _folder is None else os.path.join(_folder, f"{name}-{key}.pickle")
        self.limit = limit
        self._entries: dict[str, object] | None = None
        self.dirty = False
        self._lock = threading.Lock()  # the App may run reviews in threads of one process

    def _loaded(self) -> dict[str, object]:
        if self._entries is None:
            self._entries = {}
            if self.path is not None:
                try:
                    with open(self.path, "rb") as fh:
                        found = pickle.load(fh)
                    if isinstance(found, dict):
                        self._entries = found
                except Exception:  # absent, unreadable, truncated or from other code: starts empty
                    pass
        return self._entries

    def get(self, key: str) -> object | None:
        with self._lock:
            entries = self._loaded()
            value = entries.pop(key, None)
            if value is not None:
                entries[key] = value  # most recently used last
            return value

    def put(self, key: str, value: object) -> None:
        with self._lock:
            entries = self._loaded()
            entries.pop(key, None)
            entries[key] = value
            while len(entries) > self.limit:
                del entries[next(iter(entries))]
            self.dirty = True

    def flush(self) -> None:
        if not self.dirty or self.path is None or self._entries is None:
            return
        with self._lock:
            self.dirty = False
            entries = dict(self._entries)  # (pickled outside the lock: a review thread may add meanwhile)
        tmp = f"{self.path}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            with open(tmp, "wb") as fh:
                pickle.dump(entries, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, self.path)
        except (OSError, pickle.PicklingError):  # a read-only or full disk: the next run makes them again
            with contextlib.suppress(OSError):
                os.remove(tmp)
            return
        self._prune()

    def _prune(self) -> None:
        """Remove this store's files made under other keys (other code or facts: an upgrade's), all but the
        KEEP_KEYS newest: a store can be a few MB, and a folder would grow by one at each upgrade."""
        assert self.path is not None
        _prune(self.path, KEEP_KEYS)


def _prune(path: str, keep: int) -> None:
    """Remove the files of the name of `path` (`name-key.pickle`) made under other keys, all but the `keep` - 1
    newest."""
    folder, name = os.path.split(path)
    prefix = name[: name.rindex("-") + 1]
    with contextlib.suppress(OSError):
        found = [
            os.path.join(folder, f)
            for f in os.listdir(folder)
            if f.startswith(prefix) and f.endswith(".pickle") and "-" not in f[len(prefix) :]
        ]
        others = sorted((p for p in found if p != path), key=os.path.getmtime, reverse=True)
        for old in others[keep - 1 :]:
            os.remove(old)


_stores: dict[tuple[str | None, str, str], Store] = {}


def store(name: str, key: str, limit: int = 20_000) -> Store | None:
    """The store `name` made under `key` in the folder, or in memory (`keep_in_memory`): one object per process, so
    that the reviews of one process (a replay's, an App review process's) share it; None when nothing is kept."""
    if _folder is None and _memory_limit <= 0:
        return None
    found = _stores.get((_folder, name, key))
    if found is None:
        if _folder is None:
            limit = min(limit, _memory_limit)
            # Another key's store of the same name is an older engine's or facts' (or another profile's): in
            # memory, only the latest of each name stays.
            for old in [k for k in _stores if k[0] is None and k[1] == name]:
                del _stores[old]
        found = _stores[(_folder, name, key)] = Store(name, key, limit)
    return found


def flush() -> None:
    """Write back every store an entry was added to."""
    for found in _stores.values():
        found.flush()
