"""KindMap classifies a path by the globs its file name's extension admits (and a literal the name must hold):
the kinds must be those of matching every kind's regex on the full path."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npu_review.checks import facts as facts_data
from npu_review.checks import globs
from npu_review.checks.kinds import DOCKERFILE, KindMap

PATHS = [
    "Dockerfile",
    "Dockerfile.ascend",
    "Dockerfile.ascend_9.1.0_a2",
    "docker/ascend/Dockerfile.ascend_8.2.rc1_a3_28968",
    "docker/ascend/Dockerfile",
    "docker/npu/Dockerfile",
    "docker/ascend-a2/Dockerfile.cpu",
    "docker/x86.Dockerfile",
    "docker/x86.dockerfile",
    "docker/ascend/README.md",
    "docker/ascend/supported_tags.md",
    "Dockerfiles/readme.txt",
    "docs/x.md",
    "docs/a/b/c.rst",
    "docs/ascend_tutorial/run.sh",
    "docs/ascend_tutorial/deep/er/run.sh",
    "README.md",
    "sub/README.md",
    "CHANGELOG.markdown",
    "requirements.txt",
    "requirements-npu.txt",
    "requirements/requirements-npu.txt",
    "requirements/npu.txt",
    ".github/workflows/a_npu.yml",
    ".github/workflows/e2e_ascend.yaml",
    ".github/workflows/ci.yml",
    ".github/workflows/sub/ci.yml",
    ".github/actionlint.yaml",
    ".github/workflows",
    "pyproject.toml",
    "sub/pyproject.toml",
    "notpyproject.toml",
    "setup.py",
    "verl/trainer/config/ppo_trainer.yaml",
    "verl/trainer/config/a/b.yml",
    "verl/trainer/main.py",
    "examples/ascend_extras/x/run.sh",
    "examples/run_qwen_npu.sh",
    "examples/run_npu_qwen.sh",
    "scripts/install_npu.sh",
    "scripts/sub/install_npu.sh",
    "tests/special_npu/a/b.sh",
    "ascend_run.sh",
    "x/ascend.sh",
    "x/run_ascend.sh",
    "x/run_ascend_a2.sh",
    "run.bash",
    "Makefile",
    "LICENSE",
    ".gitignore",
    ".pre-commit-config.yaml",
    "a/.hidden/.env",
    "a/.sh",
    ".md",
    "py",
    "a/b.c/d",
    "a/b.py/c",
    "noext/Dockerfile",
    "weird name/with space.md",
    "trailing.",
    "a/b/",
]

# Globs a profile or `paths:` may give: classes (which may hold `/`), `**` inside a name, names without a folder.
OVERRIDES = {
    "docs": ("docs/**", "*.md", "guide?.rst"),
    "shell": ("**/*.sh", "**/*.[bz]sh", "tools/**sh"),
    "requirements": ("req[!/]*.txt", "**/requirements*.in", "deps/*"),
    "dockerfile": ("**/Dockerfile*", "**/*.Dockerfile", "docker/**/x"),
    "python": ("**/*.py", "**/*.py?", "a**b/c.py", "x**/y.md"),
    "yaml": ("**/*.yaml", "**/*.yml", "trailing."),
    "hydra_config": ("conf/",),
}


def _reference(km: KindMap, path: str) -> frozenset[str]:
    """Every kind's globs as one regex, matched on the full path (what KindMap did before it sorted by name)."""
    return frozenset(k for k, pats in km.globs.items() if (m := globs.compile_any(pats)) and m.match(path))


@pytest.mark.parametrize("profile", facts_data.profiles())
def test_the_kinds_of_a_path_are_those_its_globs_give(profile: str) -> None:
    km = KindMap(defaults=facts_data.load(None, profile).file_kinds)
    for path in PATHS:
        assert km.kinds(path) == _reference(km, path), path


def test_overridden_globs_classify_as_their_regexes_do() -> None:
    km = KindMap(OVERRIDES)
    for path in PATHS:
        assert km.kinds(path) == _reference(km, path), path
    assert km.kinds("req/x.txt") == _reference(km, "req/x.txt") == frozenset()  # `[!/]` stays inside the name
    assert "python" in km.kinds("a/b/c.py") and "python" in km.kinds("x/y.md")


def test_random_paths_classify_as_their_regexes_do() -> None:
    parts = ["docs", "docker", "ascend", "a", ".github", "workflows", "config", "verl", "trainer", "special_npu"]
    names = ["Dockerfile", "Dockerfile.ascend_9", "x.Dockerfile", "run_npu.sh", "README.md", "requirements-npu.txt"]
    names += ["ascend_ci.yml", "b.yaml", "pyproject.toml", "c.py", "d.rst", "e", ".f", "g.", "npu_h.bash"]
    # Names whose extension admits several Dockerfile globs with no literal in common (each tested on its own).
    names += ["Dockerfile.gen.py", "Containerfile.a.py", "Dockerfile_x.py", "Dockerfile-y.yml", "my.Dockerfile.py"]
    rng = random.Random(7)
    kms = [KindMap(), KindMap(OVERRIDES)]
    for _ in range(3000):
        path = "/".join([*rng.sample(parts, rng.randrange(4)), rng.choice(names)])
        for km in kms:
            assert km.kinds(path) == _reference(km, path), path


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text(alphabet="ab./*?_-", max_size=8), st.text(alphabet="ab./_-", max_size=12))
def test_a_glob_tells_the_name_of_every_path_it_matches(pattern: str, path: str) -> None:
    parts = globs.name_parts(pattern)
    if parts is None or not globs.match(path, pattern):
        return
    tail, runs = parts
    name = path.rpartition("/")[2]
    assert name.endswith(tail) and all(r in name for r in runs)
    assert globs.tail_admits(tail, name.rpartition(".")[2])


@pytest.mark.parametrize(
    "path",
    [
        "Containerfile",
        "container-images/cann/Containerfile",
        "container-images/cann/Containerfile.openeuler",
        "tensorflow-modelzoo/Dockerfile_aarch64",
        "build/Dockerfile-310P-1usoc",
        "cann/8.1.rc1-910b-ubuntu22.04-py3.10/dockerfile",
        "docker/Dockerfile.npu",
    ],
)
def test_the_names_docker_and_podman_build_are_dockerfiles_in_every_profile(path: str) -> None:
    # Podman's Containerfile, the lower-case name Docker also reads, and the `_arch` / `-variant` names of
    # Ascend's own image repositories (ascend-docker-image, ascend-device-plugin).
    for profile in facts_data.profiles():
        assert DOCKERFILE in KindMap(defaults=facts_data.load(None, profile).file_kinds).kinds(path), (profile, path)
