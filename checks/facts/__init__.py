"""The facts rules rely on: universal Ascend facts (ascend.yml) and one project's (profiles/<name>.yml), typed.

`load(overrides, profile)` merges the repo config's `knowledge:` overrides into the shipped data (mappings merge,
lists and scalars replace) and builds a frozen `Facts`, checking every key and type: a typo or a wrong type
raises FactsError naming the key. Rules read `ctx.facts.<section>.<field>`; the data files are the only place a
value lives.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping
from importlib import resources
from typing import Any

import yaml

from checks.facts.schema import PROJECT, UNIVERSAL, Facts, sections
from checks.facts.typed import FactsError, build

__all__ = ["DEFAULT_PROFILE", "Facts", "FactsError", "default_facts", "load", "profiles"]

# The profile used when the repo config names none (the only one so far; issue 10 adds detection).
DEFAULT_PROFILE = "verl"


def _read(*parts: str) -> dict[str, Any]:
    text = resources.files("checks.facts").joinpath(*parts).read_text(encoding="utf-8")
    # libyaml's safe loader when built in: the same data, 3 ms instead of 40 ms at every start-up.
    data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    assert isinstance(data, dict), parts
    return data


@functools.cache
def profiles() -> tuple[str, ...]:
    """The names of the shipped project profiles."""
    folder = resources.files("checks.facts").joinpath("profiles")
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


def default_facts() -> Facts:
    """The shipped facts of the default profile (no repo config)."""
    return _default(DEFAULT_PROFILE)
