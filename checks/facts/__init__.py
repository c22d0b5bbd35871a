"""The facts rules rely on: universal Ascend facts (ascend.yml by hand, sourced.json from their sources by
bench/facts/refresh.py) and one project's (profiles/<name>.yml), typed.

`load(overrides, profile)` merges the repo config's `knowledge:` overrides into the shipped data (mappings merge,
lists and scalars replace) and builds a frozen `Facts`, checking every key and type: a typo or a wrong type
raises FactsError naming the key. Rules read `ctx.facts.<section>.<field>`; the data files are the only place a
value lives.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Iterable, Mapping
from importlib import resources
from typing import Any

import yaml

from npu_review.checks import globs
from npu_review.checks.facts.schema import PROJECT, UNIVERSAL, Facts, sections, sourced_sections
from npu_review.checks.facts.typed import FactsError, build

__all__ = ["DEFAULT_PROFILE", "FALLBACK_PROFILE", "Facts", "FactsError", "default_facts", "detect", "load", "profiles"]

# The facts a config holds before the repository is known (validation of `knowledge:`); a run replaces them with
# the profile `detect` chooses for the tree unless the config names one (Config.for_tree).
DEFAULT_PROFILE = "verl"
# The profile of a repository that looks like no known project: universal facts, no project's layout.
FALLBACK_PROFILE = "generic"


@functools.cache  # ascend.yml goes into every profile: read it once
def _read(*parts: str) -> dict[str, Any]:
    text = resources.files("npu_review.checks.facts").joinpath(*parts).read_text(encoding="utf-8")
    # libyaml's safe loader when built in: the same data, 3 ms instead of 40 ms at every start-up.
    data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    assert isinstance(data, dict), parts
    return data


@functools.cache
def _read_sourced() -> tuple[dict[str, Any], dict[str, str]]:
    """sourced.json (what bench/facts/refresh.py writes): its sections, and each one's `about` line. JSON, not
    YAML: it is read at every start-up, 0.2 ms instead of 6."""
    text = resources.files("npu_review.checks.facts").joinpath("sourced.json").read_text(encoding="utf-8")
    data = json.loads(text)
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
    folder = resources.files("npu_review.checks.facts").joinpath("profiles")
    return tuple(sorted(p.name.removesuffix(".yml") for p in folder.iterdir() if p.name.endswith(".yml")))


@functools.cache
def _shipped(profile: str) -> dict[str, Any]:
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
    return build(Facts, {"profile": profile, **_shipped(profile)}, "knowledge")


@functools.cache
def _looks_like() -> tuple[tuple[str, tuple[re.Pattern[str], ...]], ...]:
    # From the data as shipped (`project.looks_like`, a list of globs): building every profile's typed facts
    # only to read one list cost each start-up ~40 ms. tests/test_facts.py builds and checks every profile.
    return tuple(
        (name, tuple(globs.compile_glob(g) for g in _read("profiles", f"{name}.yml")["project"]["looks_like"]))
        for name in profiles()
    )


def detect(paths: Iterable[str]) -> str:
    """The profile for a repository with these paths: the one with the most of its `project.looks_like` globs
    matched (ties by name), FALLBACK_PROFILE when none matches. Paths only: the App has them before fetching."""
    candidates = [(name, pats) for name, pats in _looks_like() if pats]
    matched: dict[str, set[int]] = {name: set() for name, _ in candidates}
    for path in paths:
        for name, pats in candidates:
            seen = matched[name]
            if len(seen) < len(pats):
                seen.update(i for i, pat in enumerate(pats) if i not in seen and pat.match(path))
    best = max(candidates, key=lambda c: (len(matched[c[0]]), [-ord(ch) for ch in c[0]]), default=None)
    return best[0] if best is not None and matched[best[0]] else FALLBACK_PROFILE


def default_facts() -> Facts:
    """The shipped facts of the default profile (no repo config)."""
    return _default(DEFAULT_PROFILE)
