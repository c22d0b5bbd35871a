"""Runner labels: the label sets a job's `runs-on` asks for, and which of them name Ascend runners."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from npu_review.checks.facts.schema import AscendRunners

if TYPE_CHECKING:
    from npu_review.checks.parsers.gha.workflow import Job, Scope, Workflow
    from npu_review.checks.parsers.yamlmarks import Node

# The labels of GitHub's own runners: GitHub docs, "GitHub-hosted runners reference" (standard and larger runners,
# https://docs.github.com/en/actions/reference/runners/github-hosted-runners), read 2026-12-06. Part of the
# Actions language, as a job's keys are, rather than a fact of Ascend or of a project.
GITHUB_HOSTED_LABELS = frozenset(
    {"ubuntu-latest", "ubuntu-24.04", "ubuntu-22.04", "ubuntu-20.04", "ubuntu-slim", "ubuntu-24.04-arm",
     "ubuntu-22.04-arm", "windows-latest", "windows-2025", "windows-2022", "windows-2019", "windows-11-arm",
     "macos-latest", "macos-26", "macos-15", "macos-14", "macos-13", "macos-latest-large", "macos-26-large",
     "macos-15-large", "macos-14-large", "macos-13-large", "macos-latest-xlarge", "macos-26-xlarge",
     "macos-15-xlarge", "macos-14-xlarge", "macos-13-xlarge", "macos-15-intel"}
)  # fmt: skip
# The labels every self-hosted runner has ("Choosing the runner for a job": self-hosted, its OS, its architecture;
# labels are case-insensitive).
SELF_HOSTED_DEFAULT_LABELS = frozenset({"self-hosted", "linux", "windows", "macos", "x64", "arm", "arm64"})


def runner_label_sets(wf: Workflow, job: Job) -> list[tuple[str, ...] | None]:
    """The distinct label sets of a job's `runs-on` over its matrix legs (None for a leg that cannot be known).

    `runs-on: X`, `runs-on: [self-hosted, X]`, `runs-on: {group: G, labels: [X]}` and `${{ matrix.runner }}`.
    """
    from npu_review.checks.parsers.gha.workflow import legs

    node = job.node.get("runs-on")
    if node is None:
        return []
    out: list[tuple[str, ...] | None] = []
    for scope in legs(wf, job):
        labels = _labels_of(node, scope)
        if labels not in out:
            out.append(labels)
    return out


def _labels_of(node: Node, scope: Scope) -> tuple[str, ...] | None:
    if node.is_map:
        inner = node.get("labels")
        if inner is None:
            return None  # a runner group alone: which machines it has is not in the file
        node = inner
    items = [node] if node.is_scalar else node.items if node.is_seq else []
    labels: list[str] = []
    for item in items:
        if not item.is_scalar:
            return None
        vals = scope.resolve(item)
        if len(vals) != 1 or not vals[0].known:
            return None
        labels.append(vals[0].text.strip())
    return tuple(labels) if labels else None


@dataclass(frozen=True)
class Runner:
    """A self-hosted Ascend runner label and what the facts (or its shape) say about it."""

    label: str
    device: str | None  # image device it runs: "910b" or "a3"; None when unknown
    npus: int | None  # NPUs a job may use on one node; None when unknown
    status: str  # "current" (listed), "retired" (listed as retired), "shape" (Ascend-shaped, not listed)
    note: str = ""


@dataclass(frozen=True)
class ProjectLabel:
    """A runner label the project itself lists (`.github/actionlint.yaml`, a runner-label JSON file)."""

    label: str
    device: str | None  # image device, from the file's chip (None: not said, or a chip without one)
    npus: int | None  # NPUs the file says the runner has (None: not said)
    npu: bool  # False when the file says it is no NPU runner (`chip: cpu`, `npu_num: 0`)
    source: str  # the file's path


class RunnerCatalog:
    """Ascend runner labels from the facts' `ascend_runners` and from the project's own label lists."""

    def __init__(self, section: AscendRunners, project: Mapping[str, ProjectLabel] | None = None) -> None:
        self.current: dict[str, tuple[str | None, int | None]] = {
            name: (spec.device, spec.npus) for name, spec in section.labels.items()
        }
        self.project = dict(project or {})
        self.retired: dict[str, str] = dict(section.retired)
        pattern = re.compile(section.label_pattern) if section.label_pattern else None
        # The shape names the family and the NPU count; a pattern without both groups describes no runner.
        self.pattern = pattern if pattern is not None and {"family", "npus"} <= set(pattern.groupindex) else None
        self.families = dict(section.families)
        self.others = [re.compile(p) for p in section.other_patterns]
        # The NPU labels the project lists are current labels too (a label it lists is served).
        for label in self.project:
            found = self.runner(label)
            if found is not None:
                self.current.setdefault(label, (found.device, found.npus))

    def runner(self, label: str) -> Runner | None:
        """What `label` is when it names an Ascend runner, else None (`ubuntu-latest`, `self-hosted`)."""
        shape = self.pattern.match(label) if self.pattern is not None else None
        shaped_device = self.families.get(shape.group("family")) if shape else None
        shaped_npus = int(shape.group("npus")) or None if shape else None  # `-0`: a launcher, capacity unknown
        listed = self.project.get(label)
        if listed is not None:
            if not listed.npu:
                return None
            shaped = shape is not None or any(p.search(label) for p in self.others)
            if listed.device is not None or listed.npus is not None or shaped or label in self.current:
                device = listed.device or (self.current.get(label, (None, None))[0]) or shaped_device
                npus = listed.npus if listed.npus is not None else self.current.get(label, (None, None))[1]
                return Runner(label, device, npus or shaped_npus, "current", f"listed in {listed.source}")
        if label in self.current:
            device, npus = self.current[label]
            return Runner(label, device or shaped_device, npus or shaped_npus, "current")
        if label in self.retired:
            return Runner(label, shaped_device, shaped_npus, "retired", self.retired[label])
        if shape is not None:
            return Runner(label, shaped_device, shaped_npus, "shape")
        if any(p.search(label) for p in self.others):
            return Runner(label, None, None, "shape")
        return None

    def of(self, labels: tuple[str, ...]) -> Runner | None:
        """The Ascend runner a `runs-on` label set asks for (its first Ascend label), else None."""
        for label in labels:
            found = self.runner(label)
            if found is not None:
                return found
        return None
