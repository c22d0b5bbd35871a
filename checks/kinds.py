"""File kinds (which rules read a file), decided by path globs whose defaults fit verl's layout."""

from __future__ import annotations

from collections.abc import Mapping

from checks import globs

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
HYDRA_CONFIG = "hydra_config"  # verl's Hydra config tree, the generated reference files included (NPU105-107)

DEFAULT_KIND_GLOBS: Mapping[str, tuple[str, ...]] = {
    SHELL: ("**/*.sh", "**/*.bash"),
    NPU_SCRIPT: (
        "**/*_npu.sh",
        "**/*_npu_*.sh",
        "**/special_npu/**/*.sh",
        "examples/ascend_extras/**/*.sh",
        "**/ascend*.sh",
        "**/*_ascend.sh",
        "**/*_ascend_*.sh",
        "scripts/*npu*.sh",
        "docs/ascend_tutorial/**/*.sh",
    ),
    WORKFLOW: (".github/workflows/*.yml", ".github/workflows/*.yaml"),
    ASCEND_WORKFLOW: (
        ".github/workflows/*ascend*.yml",
        ".github/workflows/*ascend*.yaml",
        ".github/workflows/*npu*.yml",
        ".github/workflows/*npu*.yaml",
    ),
    DOCKERFILE: ("**/Dockerfile", "**/Dockerfile.*", "**/*.Dockerfile", "**/*.dockerfile"),
    ASCEND_DOCKERFILE: ("docker/ascend/**/Dockerfile*", "**/*ascend*/Dockerfile*", "**/Dockerfile*ascend*"),
    DOCS: ("docs/**/*.md", "docs/**/*.rst", "docker/ascend/*.md", "**/README.md", "*.md"),
    PYTHON: ("**/*.py",),
    REQUIREMENTS: ("requirements*.txt", "**/requirements*.txt"),
    HYDRA_CONFIG: ("verl/trainer/config/**/*.yaml", "verl/trainer/config/**/*.yml"),
}

KNOWN_KINDS = frozenset(DEFAULT_KIND_GLOBS)


class KindMap:
    """Classifies paths. `overrides` replaces the default globs of the kinds it names."""

    def __init__(self, overrides: Mapping[str, tuple[str, ...]] | None = None) -> None:
        merged = dict(DEFAULT_KIND_GLOBS)
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
