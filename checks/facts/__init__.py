"""The facts rules rely on: universal Ascend facts (ascend.yml by hand, sourced.json from their sources by
bench/facts/refresh.py) and one project's (profiles/<name>.yml), typed.

`load(overrides, profile)` merges the repo config's `knowledge:` overrides into the shipped data (mappings merge,
lists and scalars replace) and builds a frozen `Facts`, checking every key and type: a typo or a wrong type
raises FactsError naming the key. Rules read `ctx.facts.<section>.<field>`; the data files are the only place a
value lives.

The validated facts of each profile are kept in a cache folder when the caller names one (checks.diskcache; the
CLI does): a pickle keyed by the hash of the data files and of the code that builds them, so that a start-up reads
one file instead of loading YAML and checking every key.
"""

from __future__ import annotations

import bisect
import copy
import functools
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from npu_review.checks import globs
from npu_review.checks.facts.typed import FactsError

if TYPE_CHECKING:
    from npu_review.checks.facts.schema import Facts

T = TypeVar("T")

__all__ = ["DEFAULT_PROFILE", "FALLBACK_PROFILE", "Facts", "FactsError", "default_facts", "detect", "load", "profiles"]

# The facts a config holds before the repository is known (validation of `knowledge:`); a run replaces them with
# the profile `detect` chooses for the tree unless the config names one (Config.for_tree).
DEFAULT_PROFILE = "verl"
# The profile of a repository that looks like no known project: universal facts, no project's layout.
FALLBACK_PROFILE = "generic"

# This package's folder: the data files sit beside this module (read as files: importlib.resources costs a start-up
# as much as the read).
_HERE = os.path.dirname(os.path.abspath(__file__))
# The other code whose classes or values the pickled facts hold (besides this folder's modules).
_CODE = (os.path.join(os.path.dirname(_HERE), "parsers", "sh", "launchers.py"),)


def _data(*parts: str) -> str:
    with open(os.path.join(_HERE, *parts), encoding="utf-8") as fh:
        return fh.read()


@functools.cache
def _cache_key() -> str:
    """The hash of every data file and module of this folder (and `_CODE`) and of the interpreter's version: the
    cached facts are those files' as long as none changes."""
    import hashlib
    import sys

    digest = hashlib.sha256(sys.version.encode())
    files = [os.path.join(dirpath, name) for dirpath, _, names in os.walk(_HERE) for name in names]
    for path in sorted(
        [*(f for f in files if f.endswith((".py", ".yml", ".json")) and "__pycache__" not in f), *_CODE]
    ):
        digest.update(os.path.relpath(path, _HERE).encode() + b"\0")
        with open(path, "rb") as fh:
            digest.update(fh.read())
        digest.update(b"\0")
    return digest.hexdigest()[:24]


def _cached(name: str, make: Callable[[], T], valid: Callable[[object], bool]) -> T:
    """`make()`, kept between runs in the caller's cache folder (checks.diskcache) under this folder's hash."""
    from npu_review.checks import diskcache

    if diskcache.folder() is None:
        return make()
    return diskcache.cached(f"facts-{name}", _cache_key(), make, valid)


@functools.cache  # ascend.yml goes into every profile: read it once
def _read(*parts: str) -> dict[str, Any]:
    import yaml

    text = _data(*parts)
    # libyaml's safe loader when built in: the same data, 3 ms instead of 40 ms at every start-up.
    data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    assert isinstance(data, dict), parts
    return data


@functools.cache
def _read_sourced() -> tuple[dict[str, Any], dict[str, str]]:
    """sourced.json (what bench/facts/refresh.py writes): its sections, and each one's `about` line. JSON, not
    YAML: it is read at every start-up, 0.2 ms instead of 6."""
    data = json.loads(_data("sourced.json"))
    assert isinstance(data, dict)
    data.pop("about", None)
    about = {name: str(section.pop("about", "")) for name, section in data.items()}
    return data, about


def about(section: str) -> str:
    """What a sourced section holds, in one line ("" for the sections written by hand)."""
    return _read_sourced()[1].get(section, "")


@functools.cache
def profiles() -> tuple[str, ...]:
    """The names of the shipped project profiles."""
    names = os.listdir(os.path.join(_HERE, "profiles"))
    return tuple(sorted(n.removesuffix(".yml") for n in names if n.endswith(".yml")))


@functools.cache
def _shipped(profile: str) -> dict[str, Any]:
    from npu_review.checks.facts.schema import PROJECT, UNIVERSAL, sections, sourced_sections

    hand, sourced = _read("ascend.yml"), _read_sourced()[0]
    project = _read("profiles", f"{profile}.yml")
    # Each file holds exactly its sections: a section in the wrong file is a packaging bug. sourced.yml is what
    # bench/facts/refresh.py writes from the sources (sourced.json); ascend.yml the universal facts written by hand.
    generated = sourced_sections()
    want = sorted(set(sections(UNIVERSAL)) - set(generated))
    assert sorted(hand) == want, sorted(set(hand) ^ set(want))
    assert sorted(sourced) == sorted(generated), sorted(set(sourced) ^ set(generated))
    assert sorted(project) == sorted(sections(PROJECT)), sorted(set(project) ^ set(sections(PROJECT)))
    return {**hand, **sourced, **project}


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def load(overrides: Mapping[str, Any] | None = None, profile: str = DEFAULT_PROFILE) -> Facts:
    """The facts of `profile` with the repo config's `knowledge:` overrides; FactsError names a bad key."""
    if profile not in profiles():
        raise FactsError(f"profile: unknown profile {profile!r} (known: {', '.join(profiles())})")
    if not overrides:
        return _default(profile)
    if "profile" in overrides:
        raise FactsError("knowledge: unknown key 'profile' (the profile is named by the top-level `profile:` key)")
    from npu_review.checks.facts.schema import Facts
    from npu_review.checks.facts.typed import build

    return build(Facts, {"profile": profile, **_merge(_shipped(profile), _legacy(overrides))}, "knowledge")


def _legacy(overrides: Mapping[str, Any]) -> Mapping[str, Any]:
    """Keys of older configs, read as today's: `cann_torch_npu: {table: {CANN: [torch_npu, ...]}}` adds those
    releases to `torch_npu_releases` (each built for that CANN, extending the torch of its release numbers)."""
    old = overrides.get("cann_torch_npu")
    if old is None:
        return overrides
    table = old.get("table") if isinstance(old, Mapping) else None
    if not isinstance(table, Mapping) or set(old) - {"table", "source", "date"}:
        raise FactsError("knowledge.cann_torch_npu: expected {table: {CANN version: [torch_npu versions]}}")
    releases: dict[str, Any] = {}
    for cann, versions in table.items():
        if not isinstance(cann, str):
            raise FactsError(f"knowledge.cann_torch_npu.table: key {cann!r} is not a string (quote it)")
        if not isinstance(versions, list) or not all(isinstance(v, str) for v in versions):
            raise FactsError(f"knowledge.cann_torch_npu.table.{cann}: expected a list of strings")
        for v in versions:
            torch = re.match(r"\d+(?:\.\d+)*", v)
            releases[v] = {"torch": torch.group(0) if torch else v, "cann": cann.lower(), "listed": True}
    rest = {k: v for k, v in overrides.items() if k != "cann_torch_npu"}
    return _merge(rest, {"torch_npu_releases": {"releases": releases}})


@functools.cache
def _default(profile: str) -> Facts:
    from npu_review.checks.facts.schema import Facts
    from npu_review.checks.facts.typed import build

    return _cached(
        profile,
        lambda: build(Facts, {"profile": profile, **_shipped(profile)}, "knowledge"),
        lambda found: isinstance(found, Facts) and found.profile == profile,
    )


@functools.cache
def _looks_like_globs() -> dict[str, list[str]]:
    # From the data as shipped (`project.looks_like`, a list of globs): building every profile's typed facts
    # only to read one list cost each start-up ~40 ms. tests/test_facts.py builds and checks every profile.
    # The globs of each profile are kept in the cache folder with the facts.
    looks: dict[str, list[str]] = _cached(
        "looks_like",
        lambda: {name: list(_read("profiles", f"{name}.yml")["project"]["looks_like"]) for name in profiles()},
        lambda found: isinstance(found, dict) and sorted(found) == list(profiles()),
    )
    return looks


@functools.cache
def _looks_like() -> tuple[tuple[str, tuple[re.Pattern[str], ...]], ...]:
    looks = _looks_like_globs()
    return tuple((name, tuple(globs.compile_glob(g) for g in looks[name])) for name in profiles())


def detect(paths: Iterable[str]) -> str:
    """The profile for a repository with these paths: the one with the most of its `project.looks_like` globs
    matched (ties by name), FALLBACK_PROFILE when none matches. Paths only: the App has them before fetching."""
    looks = _looks_like_globs()
    # Each glob with the literal its paths start with.
    candidates = [
        (name, [(globs.literal_prefix(g), pat) for g, pat in zip(looks[name], pats, strict=True)])
        for name, pats in _looks_like()
        if pats
    ]
    # Each glob is tried on the range of the sorted paths that start with its literal, up to its first match: a
    # path outside that range cannot match it (40,000 paths: a few ranges read instead of every path).
    ordered = sorted(paths)
    matched: dict[str, int] = {}
    for name, pats in candidates:
        found = 0
        for prefix, pat in pats:
            k = bisect.bisect_left(ordered, prefix)
            while k < len(ordered) and ordered[k].startswith(prefix):
                if pat.match(ordered[k]):
                    found += 1
                    break
                k += 1
        matched[name] = found
    best = max(candidates, key=lambda c: (matched[c[0]], [-ord(ch) for ch in c[0]]), default=None)
    return best[0] if best is not None and matched[best[0]] else FALLBACK_PROFILE


def default_facts() -> Facts:
    """The shipped facts of the default profile (no repo config)."""
    return _default(DEFAULT_PROFILE)


def __getattr__(name: str) -> Any:
    if name == "Facts":  # the schema, imported on first use (~30 ms of dataclasses)
        from npu_review.checks.facts.schema import Facts

        return Facts
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
