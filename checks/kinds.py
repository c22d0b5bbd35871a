"""File kinds (which rules read a file): path globs (the profile's, facts `file_kinds`, which the repo config's
`paths:` replaces kind by kind), and for the Ascend kinds the file's content as well.

A path kind is decided by its globs alone. A content kind (`ascend_dockerfile`, `ascend_workflow`, `npu_script`)
refines a path kind: every file of the base kind is a candidate, and its text decides (checks.ascend, read by
Context when it loads the file); the content kind's globs are hints that decide without reading. The App fetches
candidates, so the CLI and the App see the same kinds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

from npu_review.checks import globs

if TYPE_CHECKING:
    from npu_review.checks.facts.schema import FileKinds

# Kinds. A file may have several (an NPU launch script is also a shell script).
SHELL = "shell"  # every shell script; NPU1xx rules still require an NPU context inside it
NPU_SCRIPT = "npu_script"  # shell scripts that are NPU-only by their path
WORKFLOW = "workflow"  # every CI workflow (GitHub's or GitCode's; producers may not say "ascend" in their name)
ASCEND_WORKFLOW = "ascend_workflow"  # workflows that run on or build for Ascend
DOCKERFILE = "dockerfile"
ASCEND_DOCKERFILE = "ascend_dockerfile"
DOCS = "docs"
PYTHON = "python"
REQUIREMENTS = "requirements"
YAML = "yaml"  # every YAML file (test configs, env maps); workflows are also WORKFLOW
PYPROJECT = "pyproject"  # every pyproject.toml (a project's dependencies)
MARKUP = "markup"  # every Markdown / reStructuredText file: install guides live outside docs/ too (doc/, x/docs/)
HYDRA_CONFIG = "hydra_config"  # the project's Hydra config tree, generated reference files included (NPU105-107)
# Build and tool configuration in the formats that stop at a stray line: JSON, TOML, INI/cfg, CMake.
BUILD_CONFIG = "build_config"

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
        YAML,
        PYPROJECT,
        MARKUP,
        HYDRA_CONFIG,
        BUILD_CONFIG,
    }
)

# Content kind -> the path kind whose files it is decided among.
CONTENT_KINDS: Mapping[str, str] = {ASCEND_DOCKERFILE: DOCKERFILE, ASCEND_WORKFLOW: WORKFLOW, NPU_SCRIPT: SHELL}
# Kinds that a file's extension decides in every layout, so no profile needs to list them (a profile or the
# repo config's `paths:` may still name them to replace these globs).
UNIVERSAL_KIND_GLOBS: Mapping[str, tuple[str, ...]] = {
    YAML: ("**/*.yaml", "**/*.yml"),
    PYPROJECT: ("**/pyproject.toml",),
    MARKUP: ("**/*.md", "**/*.rst", "**/*.markdown"),
    BUILD_CONFIG: ("**/*.json", "**/*.toml", "**/*.ini", "**/*.cfg", "**/CMakeLists.txt", "**/*.cmake"),
}


@dataclass(frozen=True, slots=True)
class WorkflowHost:
    """A forge that runs the workflow files of one folder. GitHub Actions and GitCode's AtomGit Action read the same
    workflow format (`on:`, `jobs:`, `runs-on:`, `container:`, `steps:` with `run:`/`uses:`/`with:`, `env:`,
    `strategy.matrix`, `workflow_call`), each from its own folder; GitCode adds `stages:` (jobs grouped in stages
    run one stage after another) and `post:`, and names its context `atomgit` where GitHub's is `github`."""

    folder: str  # the folder whose files the forge runs (directly in it, not in its subfolders)
    name: str  # the forge's name, for messages
    context: str  # the expression context of the run and its event (`github.event.*`, `atomgit.event.*`)
    env_file: str  # the variable naming the file a step appends `NAME=value` to for the later steps
    output_file: str  # the variable naming the file a step appends its outputs to

    @property
    def root(self) -> str:
        """The forge's folder in the repository (`.github`), which holds its workflow folder and CI data files."""
        return self.folder.partition("/")[0]


# docs.github.com, "Workflow syntax for GitHub Actions" (workflows in .github/workflows) and "Workflow commands"
# (GITHUB_ENV, GITHUB_OUTPUT); docs.gitcode.com, "工作流文件位置与基本结构" (".gitcode/workflows/<workflow-name>.yml",
# .yml and .yaml; `stages`, `jobs` at the top or in each stage, `post`), "上下文" (the `atomgit` context:
# atomgit.event, atomgit.repository_owner, ...) and "Workflow Commands" (ATOMGIT_ENV, ATOMGIT_OUTPUT), read
# 2026-12-08; the hicann/* projects' .gitcode/workflows (stages, `uses: .gitcode/workflows/x.yml` calls).
GITHUB = WorkflowHost(".github/workflows", "GitHub", "github", "GITHUB_ENV", "GITHUB_OUTPUT")
GITCODE = WorkflowHost(".gitcode/workflows", "GitCode", "atomgit", "ATOMGIT_ENV", "ATOMGIT_OUTPUT")
WORKFLOW_HOSTS: tuple[WorkflowHost, ...] = (GITHUB, GITCODE)
_HOST_BY_FOLDER = {h.folder: h for h in WORKFLOW_HOSTS}


def workflow_host(path: str) -> WorkflowHost | None:
    """The forge that runs the file at `path`: the host whose workflow folder holds it directly; None elsewhere
    (a subfolder of the workflow folder is not read: `.github/workflows/configs/x.yaml` is a data file)."""
    folder, _, name = path.rpartition("/")
    host = _HOST_BY_FOLDER.get(folder)
    return host if host is not None and name.endswith((".yml", ".yaml")) else None


def workflow_folder_host(path: str) -> WorkflowHost | None:
    """The host whose workflow folder holds `path` at any depth (its subfolders hold the data files and scripts
    the workflows read: `.github/workflows/configs/*.yaml`, `.gitcode/workflows/scripts/`)."""
    for host in WORKFLOW_HOSTS:
        if path.startswith(host.folder + "/"):
            return host
    return None


def host_of_folder(folder: str) -> WorkflowHost | None:
    """The host whose workflow folder is `folder` (`.github/workflows`), else None."""
    return _HOST_BY_FOLDER.get(folder.rstrip("/"))


def in_ci_folders(*tails: str) -> tuple[str, ...]:
    """The globs `<root>/<tail>` of each forge's folder (`.github/**/config*/*.yaml`, `.gitcode/**/config*/*.yaml`):
    where a project keeps the data files its workflows read."""
    return tuple(f"{h.root}/{tail}" for h in WORKFLOW_HOSTS for tail in tails)


def with_all_workflow_folders(patterns: Iterable[str]) -> tuple[str, ...]:
    """The globs, each written for one workflow folder (`.github/workflows/*npu*.yml`) followed by its twin under
    every other workflow folder (`.gitcode/workflows/*npu*.yml`): a profile or the repo config names one folder
    and means the workflows of every forge. Globs outside the workflow folders are kept as they are."""
    out: list[str] = []
    for p in patterns:
        out.append(p)
        for host in WORKFLOW_HOSTS:
            if p.startswith(host.folder + "/"):
                tail = p[len(host.folder) :]
                out.extend(o.folder + tail for o in WORKFLOW_HOSTS if o is not host)
    return tuple(dict.fromkeys(out))


class KindMap:
    """Classifies paths by the profile's globs (`defaults`: the facts' `file_kinds`, the default profile's when
    not given). `overrides` replaces the globs of the kinds it names."""

    def __init__(
        self, overrides: Mapping[str, tuple[str, ...]] | None = None, defaults: FileKinds | None = None
    ) -> None:
        if defaults is None:
            from npu_review.checks.facts import default_facts

            defaults = default_facts().file_kinds
        kinds = defaults
        merged = dict(UNIVERSAL_KIND_GLOBS)
        merged.update({f.name: getattr(kinds, f.name) for f in fields(kinds) if f.name in KNOWN_KINDS})
        merged.update(overrides or {})
        for kind in (WORKFLOW, ASCEND_WORKFLOW):
            if merged.get(kind):
                merged[kind] = with_all_workflow_folders(merged[kind])
        self.globs: dict[str, tuple[str, ...]] = merged
        # What each glob says of a file name (globs.name_parts): a path is tested against the globs its name's
        # extension admits alone (a .py file: 3 globs of 35), and a glob whose name may have any extension
        # (`Dockerfile.*`) only when the name holds its literal. 40,000 paths: 0.1 s instead of 0.24 s.
        self._parts = [(k, [(p, globs.name_parts(p)) for p in pats]) for k, pats in merged.items() if pats]
        self._plans: dict[str, _Plan] = {}  # by extension
        self._shared_plans: dict[_Plan, _Plan] = {}
        self._regexes: dict[tuple[str, ...], re.Pattern[str]] = {}
        self._cache: dict[str, frozenset[str]] = {}
        self._candidates: dict[str, frozenset[str]] = {}
        self._by_tuple: dict[tuple[str, ...], frozenset[str]] = {}  # the kinds a plan found, in its order -> their set
        self._admitted: dict[frozenset[str], frozenset[str]] = {}  # a path's kinds -> its candidates
        # One object per distinct set of kinds (a tree has a few dozen): 40,000 paths held 17 MiB of equal sets.
        self._sets: dict[frozenset[str], frozenset[str]] = {}

    def adopt(self, known: dict[str, frozenset[str]]) -> None:
        """Take the kinds of paths classified before by the same globs (kept between runs by the caller): a path
        among them is not matched again. The dict is this map's from now on (the paths it classifies are added)."""
        for found in set(known.values()):  # (a snapshot: another review's thread may be adding to it)
            self._sets.setdefault(found, found)
        known.update(self._cache)
        self._cache = known

    @property
    def known(self) -> dict[str, frozenset[str]]:
        """Every path classified so far, with its kinds (what `adopt` takes)."""
        return self._cache

    def kinds(self, path: str) -> frozenset[str]:
        """The kinds the path's globs give (for a content kind: a hint that decides without reading)."""
        hit = self._cache.get(path)
        if hit is None:
            name = path.rpartition("/")[2]
            extension = name.rpartition(".")[2]
            plan = self._plans.get(extension)
            if plan is None:
                plan = self._plans[extension] = self._plan(extension)
            found = tuple([k for k, needle, m in plan if (not needle or needle in name) and m.match(path)])
            hit = self._by_tuple.get(found)
            if hit is None:
                hit = frozenset(found)
                hit = self._by_tuple[found] = self._sets.setdefault(hit, hit)
            self._cache[path] = hit
        return hit

    def _plan(self, extension: str) -> _Plan:
        """For a name with this extension: each kind whose globs may match it, with the regex of those globs
        alone and a literal the name must hold first ("": none), in the order of the kinds. A glob left out
        cannot match, so the kinds found are those of the regexes of every glob."""
        out = []
        for k, parts in self._parts:
            admitted = [(p, part) for p, part in parts if part is None or globs.tail_admits(part[0], extension)]
            if not admitted:
                continue
            needle = "" if all(part is not None and part[0] for _p, part in admitted) else _common(admitted)
            if needle or any(part is None or part[0] or not any(part[1]) for _p, part in admitted):
                groups = {needle: admitted}
            else:
                # No literal all the globs share (`Dockerfile.*`, `Containerfile.*` for a `.py` name): each glob's
                # longest literal tests its own regex, so that a name holding none is matched against nothing.
                groups = {}
                for p, part in admitted:
                    assert part is not None
                    groups.setdefault(max(part[1], key=len), []).append((p, part))
            for group_needle, group in groups.items():
                pats = tuple(p for p, _part in group)
                m = self._regexes.get(pats)
                if m is None:
                    compiled = globs.compile_any(pats)
                    assert compiled is not None
                    m = self._regexes[pats] = compiled
                out.append((k, group_needle, m))
        plan = tuple(out)
        return self._shared_plans.setdefault(plan, plan)

    def candidates(self, path: str) -> frozenset[str]:
        """The kinds the file may have once its text is read: its path kinds and the content kinds they admit.
        What the engine and the App select files by."""
        hit = self._candidates.get(path)
        if hit is None:
            own = self.kinds(path)
            hit = self._admitted.get(own)
            if hit is None:
                hit = own | {k for k, base in CONTENT_KINDS.items() if base in own}
                hit = self._admitted[own] = self._sets.setdefault(hit, hit)
            self._candidates[path] = hit
        return hit

    def group(self, paths: Iterable[str]) -> dict[frozenset[str], list[str]]:
        """The paths with candidate kinds, grouped by those (`candidates`), each group in the order given: one pass
        that asks the per-path caches directly."""
        known, admitted = self._cache, self._admitted
        out: dict[frozenset[str], list[str]] = {}
        for p in paths:
            own = known.get(p)
            found = None if own is None else admitted.get(own)
            if found is None:
                found = self.candidates(p)
            if found:
                group = out.get(found)
                if group is None:
                    out[found] = [p]
                else:
                    group.append(p)
        return out

    def has(self, path: str, kind: str) -> bool:
        return kind in self.kinds(path)


# (kind, a literal the file name must hold or "", the regex of the kind's globs that its extension admits)
_Plan = tuple[tuple[str, str, "re.Pattern[str]"], ...]


def _common(admitted: list[tuple[str, tuple[str, tuple[str, ...]] | None]]) -> str:
    """The longest literal of the first glob's file name that a name every glob matches holds ("": none known):
    one that is part of a literal of each glob's name (globs.name_parts)."""
    runs = [part[1] if part is not None else None for _p, part in admitted]
    first = runs[0]
    if first is None or any(r is None for r in runs):
        return ""
    for needle in sorted(first, key=len, reverse=True):
        if all(any(needle in run for run in other) for other in runs[1:] if other is not None):
            return needle
    return ""
