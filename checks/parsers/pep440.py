"""PEP 440 versions: a sort key, the public part and whether a specifier set allows a version."""

from __future__ import annotations

import re

_VERSION = re.compile(
    r"v?(?P<rel>\d+(?:\.\d+)*)(?:[.-]?(?P<pre>a|b|rc)(?P<pren>\d*))?(?:[.-]?post(?P<post>\d*))?"
    r"(?:[.-]?dev(?P<dev>\d*))?(?:\+(?P<local>[A-Za-z0-9.]+))?",
    re.I,
)


VersionKey = tuple[tuple[int, ...], tuple[int, int], int, int]


def version_key(text: str) -> VersionKey | None:
    """A sort key for a PEP 440 version (`2.7.1.post2`, `0.11.0rc1`, `2.10.0+cpu`); None when not a version.
    The local label (`+cpu`) is ignored."""
    m = _VERSION.fullmatch(text.strip())
    if not m:
        return None
    rel = tuple(int(p) for p in m.group("rel").split("."))
    rel = rel + (0,) * max(0, 4 - len(rel))
    pre, post, dev = m.group("pre"), m.group("post"), m.group("dev")
    if pre:
        pre_key: tuple[int, int] = ({"a": 0, "b": 1, "rc": 2}[pre.lower()], int(m.group("pren") or 0))
    elif dev is not None and post is None:
        pre_key = (-1, 0)
    else:
        pre_key = (3, 0)
    post_key = int(post or 0) if post is not None else -1
    dev_key = int(dev or 0) if dev is not None else 1 << 62
    return (rel, pre_key, post_key, dev_key)


def public_version(text: str) -> str:
    """`2.10.0+cpu` -> `2.10.0`."""
    return text.split("+", 1)[0]


def spec_allows(specs: tuple[tuple[str, str], ...], version: str) -> bool | None:
    """Whether `version` meets every (op, version) of a specifier set; None when something cannot be read."""
    have = version_key(version)
    if have is None:
        return None
    for op, want in specs:
        if op == "===":
            if want != version:
                return False
            continue
        if want.endswith(".*") and op in ("==", "!="):
            prefix = public_version(want[:-2]).split(".")
            same = public_version(version).split(".")[: len(prefix)] == prefix
            if same != (op == "=="):
                return False
            continue
        key = version_key(want)
        if key is None:
            return None
        have_cmp = version_key(public_version(version)) if "+" not in want else have
        assert have_cmp is not None
        if op == "==":
            ok = have_cmp == key if "+" not in want else version == want
        elif op == "!=":
            ok = have_cmp != key
        elif op == ">=":
            ok = have_cmp >= key
        elif op == "<=":
            ok = have_cmp <= key
        elif op == ">":
            ok = have_cmp > key
        elif op == "<":
            ok = have_cmp < key
        else:  # ~=
            parts = public_version(want).split(".")
            upper = parts[:-1]
            if not upper:
                return None
            ok = have_cmp >= key and public_version(version).split(".")[: len(upper)] == upper
        if not ok:
            return False
    return True


# PEP 440 Appendix B's regular expression (the canonical grammar pip accepts, case-insensitive).
_PEP440 = re.compile(
    r"v?(?:(?:[0-9]+)!)?[0-9]+(?:\.[0-9]+)*"
    r"(?:[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview)[-_.]?[0-9]*)?"
    r"(?:-[0-9]+|[-_.]?(?:post|rev|r)[-_.]?[0-9]*)?"
    r"(?:[-_.]?dev[-_.]?[0-9]*)?"
    r"(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?",
    re.IGNORECASE,
)


def is_version(text: str) -> bool:
    """True when `text` is a version PEP 440 accepts (`2.7.1`, `2.9.0.post2`, `0.22.0.dev20250409`, `1.0+cpu`)."""
    return _PEP440.fullmatch(text.strip()) is not None
