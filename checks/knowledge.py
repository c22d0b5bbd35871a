"""The knowledge base: Ascend facts shipped as data (knowledge.yml), overridable from the repo config."""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping
from importlib import resources
from typing import Any

import yaml


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


@functools.lru_cache(maxsize=1)
def _shipped() -> dict[str, Any]:
    text = resources.files("checks").joinpath("knowledge.yml").read_text(encoding="utf-8")
    # libyaml's safe loader when built in: the same data, 3 ms instead of 40 ms at every start-up.
    data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    assert isinstance(data, dict)
    return data


class Knowledge:
    """Read-only access to the facts: `kb.section("graph_modes")["valid"]`."""

    def __init__(self, overrides: Mapping[str, Any] | None = None) -> None:
        self._data = _merge(_shipped(), overrides or {})

    def section(self, name: str) -> dict[str, Any]:
        value = self._data.get(name, {})
        return value if isinstance(value, dict) else {}

    def get(self, section: str, key: str, default: Any = None) -> Any:
        return self.section(section).get(key, default)
