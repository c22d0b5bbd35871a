"""File kinds (which rules read a file), decided by path globs: the profile's (facts `file_kinds`), which the
repo config's `paths:` replaces kind by kind."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields

from checks import globs
from checks.facts import default_facts
from checks.facts.schema import FileKinds

# Kinds. A file may have several (an NPU launch script is also a shell script).
SHELL = "shell"  # every shell script; NPU1xx rules still require an NPU context inside it
NPU_SCRIPT = "npu_script"  # shell scripts that are NPU-only by their path
WORKFLOW = "workflow"  # every GitHub Actions workflow (producers may not say "ascend" in their name)
ASCEND_WORKFLOW = "ascend_workflow"  # workflows that run on or build for Ascend
DOCKERFILE = "dockerfile"
ASCEND_DOCKERFILE = "ascend_dockerfile"
DOCS = "docs"
PYTHON = "python"
REQUIREMENTS = "requirements"
HYDRA_CONFIG = "hydra_config"  # the project's Hydra config tree, generated reference files included (NPU105-107)

KNOWN_KINDS = frozenset(
    {
        SHELL,
        NPU_SCRIPT,
        WORKFLOW,
        ASCEND_WORKFLOW,
        DOCKERFILE,
        ASCEND_DOCKERFILE,
        DOCS,
        PYTHON,
        REQUIREMENTS,
        HYDRA_CONFIG,
    }
)


class KindMap:
    """Classifies paths by the profile's globs (`defaults`: the facts' `file_kinds`, the default profile's when
    not given). `overrides` replaces the globs of the kinds it names."""

    def __init__(
        self, overrides: Mapping[str, tuple[str, ...]] | None = None, defaults: FileKinds | None = None
    ) -> None:
        kinds = defaults if defaults is not None else default_facts().file_kinds
        merged = {f.name: getattr(kinds, f.name) for f in fields(kinds) if f.name in KNOWN_KINDS}
        merged.update(overrides or {})
        self.globs: dict[str, tuple[str, ...]] = merged
        self._matchers = [(k, m) for k, pats in merged.items() if (m := globs.compile_any(pats)) is not None]
        self._cache: dict[str, frozenset[str]] = {}

    def kinds(self, path: str) -> frozenset[str]:
        hit = self._cache.get(path)
        if hit is None:
            hit = frozenset(k for k, m in self._matchers if m.match(path))
            self._cache[path] = hit
        return hit

    def has(self, path: str, kind: str) -> bool:
        return kind in self.kinds(path)
