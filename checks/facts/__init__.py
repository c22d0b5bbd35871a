"""The facts rules rely on: universal Ascend facts (ascend.yml) and one project's (profiles/<name>.yml), typed.

`load(overrides, profile)` merges the repo config's `knowledge:` overrides into the shipped data (mappings merge,
lists and scalars replace) and builds a frozen `Facts`, checking every key and type: a typo or a wrong type
raises FactsError naming the key. Rules read `ctx.facts.<section>.<field>`; the data files are the only place a
value lives.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Iterable, Mapping
from importlib import resources
from typing import Any

import yaml

from npu_review.checks import globs
from npu_review.checks.facts.schema import PROJECT, UNIVERSAL, Facts, sections
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
def profiles() -> tuple[str, ...]:
    """The names of the shipped project profiles."""
    folder = resources.files("npu_review.checks.facts").joinpath("profiles")
    return tuple(sorted(p.name.removesuffix(".yml") for p in folder.iterdir() if p.name.endswith(".yml")))


@functools.cache
def _shipped(profile: str) -> dict[str, Any]:
    universal, project = _read("ascend.yml"), _read("profiles", f"{profile}.yml")
    # Each file holds exactly its scope's sections: a section in the wrong file is a packaging bug.
    assert sorted(universal) == sorted(sections(UNIVERSAL)), sorted(set(universal) ^ set(sections(UNIVERSAL)))
    assert sorted(project) == sorted(sections(PROJECT)), sorted(set(project) ^ set(sections(PROJECT)))
    return {**universal, **project}


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
    return build(Facts, {"profile": profile, **_merge(_shipped(profile), overrides)}, "knowledge")


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
