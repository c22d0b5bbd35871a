"""Path globs with `**`, as GitHub's `paths:` filters and our config use them.

Written here rather than taken from a library: Python 3.11's fnmatch lets `*` cross `/`, and gitignore-style
libraries (pathspec) anchor and negate differently from GitHub's filter patterns, which our rules must mirror.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable


@functools.lru_cache(maxsize=4096)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """`**` matches across `/` (and `**/` may match nothing), `*` and `?` stay inside one segment."""
    return re.compile(_glob_regex(pattern), re.DOTALL)


@functools.lru_cache(maxsize=4096)
def _glob_regex(pattern: str) -> str:
    """The text of `compile_glob`'s regex: `compile_any` joins these, and compiles none of them alone."""
    i, n, out = 0, len(pattern), []
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            j = pattern.find("]", i + 1)
            if j == -1:
                out.append(re.escape(c))
                i += 1
            else:
                body = pattern[i + 1 : j]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = j + 1
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out) + r"\Z"


def match(path: str, pattern: str) -> bool:
    return compile_glob(pattern).match(path) is not None


def match_any(path: str, patterns: Iterable[str]) -> bool:
    if isinstance(patterns, tuple):  # a fixed list (a rule's globs, the config's): one regex, compiled once
        combined = _compiled_any(patterns)
        return combined is not None and combined.match(path) is not None
    return any(compile_glob(p).match(path) for p in patterns)


@functools.lru_cache(maxsize=256)
def _compiled_any(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    return compile_any(patterns)


def literal_folder(pattern: str) -> str:
    """The folders every path the glob matches starts with (`.github/` of `.github/**/*.json`, "" of `**/x.sh`):
    the glob's leading segments that hold no wildcard, each with its `/`."""
    end = 0
    while True:
        slash = pattern.find("/", end)
        if slash == -1 or any(c in pattern[end:slash] for c in "*?["):
            return pattern[:end]
        end = slash + 1


def compile_any(patterns: Iterable[str]) -> re.Pattern[str] | None:
    """One regex matching a path that any of the globs matches (None for no globs): one `match` per path."""
    parts = [f"(?:{_glob_regex(p)})" for p in patterns]
    return re.compile("|".join(parts), re.DOTALL) if parts else None


def name_parts(pattern: str) -> tuple[str, tuple[str, ...]] | None:
    """What the glob says of the file name (the text after a path's last `/`) of every path it matches: the name
    ends with the first string (the literal after the last wildcard of the glob's last segment; "" when that ends
    with one) and holds each of the others (the literal runs of that segment). None when the last segment may span
    more than the name: a `**` (which crosses `/`) or a `[...]` class anywhere (which may hold `/`)."""
    if "[" in pattern:
        return None
    last = pattern.rsplit("/", 1)[-1]
    if "**" in last:
        return None
    runs = tuple(r for r in re.split(r"[*?]", last) if r)
    cut = max(last.rfind("*"), last.rfind("?"))
    return last[cut + 1 :], runs


def tail_admits(tail: str, extension: str) -> bool:
    """Whether a file name ending with `tail` may have this extension: the text after its last `.`, or the whole
    name when it has none (`name.rpartition(".")[2]`)."""
    if "." in tail:
        return extension == tail.rpartition(".")[2]
    return extension.endswith(tail)


def literal_prefix(pattern: str) -> str:
    """The text every path the glob matches starts with: the glob up to its first wildcard."""
    cut = min((i for i in (pattern.find("*"), pattern.find("?"), pattern.find("[")) if i >= 0), default=len(pattern))
    return pattern[:cut]


def is_glob(pattern: str) -> bool:
    return any(ch in pattern for ch in "*?[")
