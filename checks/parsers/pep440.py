"""PEP 440 versions through `packaging` (what pip itself uses): a sort key, the public part and whether a
specifier set allows a version. Unreadable input gives None, never an exception."""

from __future__ import annotations

from functools import lru_cache

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

VersionKey = Version


@lru_cache(maxsize=4096)
def version_key(text: str) -> VersionKey | None:
    """A sort key for a PEP 440 version (`2.7.1.post2`, `0.11.0rc1`, `2.10.0+cpu`); None when not a version.
    The local label (`+cpu`) is ignored: `2.10.0+cpu` and `2.10.0` give equal keys."""
    try:
        version = Version(text.strip())
    except InvalidVersion:
        return None
    return Version(version.public) if version.local is not None else version


def public_version(text: str) -> str:
    """`2.10.0+cpu` -> `2.10.0`."""
    return text.split("+", 1)[0]


@lru_cache(maxsize=4096)
def spec_allows(specs: tuple[tuple[str, str], ...], version: str) -> bool | None:
    """Whether `version` meets every (op, version) of a specifier set, as pip judges an installed version
    (pre-releases count: `2.2.0rc1` meets `>=2.1`, and misses `<2.2`); None when something cannot be read."""
    try:
        have = Version(version.strip())
        allowed = SpecifierSet(",".join(op + want for op, want in specs))
    except (InvalidVersion, InvalidSpecifier):
        return None
    return allowed.contains(have, prereleases=True)


def is_version(text: str) -> bool:
    """True when `text` is a version PEP 440 accepts (`2.7.1`, `2.9.0.post2`, `0.22.0.dev20250409`, `1.0+cpu`)."""
    return version_key(text) is not None
