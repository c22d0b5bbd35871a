"""`run(ChangeSet, Config) -> Report`: every rule, then scope, suppression, severity and fingerprints.

Pure: no network, no clock, no environment. The CLI and the App both call this.
"""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import importlib
import logging
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial

from npu_review.checks import diskcache, globs, lazyre
from npu_review.checks.config import Config, default_config
from npu_review.checks.context import Context, ParseCache, SourceFile
from npu_review.checks.kinds import DOCKERFILE, MARKUP, NPU_SCRIPT, PYTHON, SHELL, KindMap
from npu_review.checks.model import ChangeSet, ChangeStatus, FileChange, Finding, MemoryTree, Severity
from npu_review.checks.rule import Hit, Rule, RuleSpec, all_rules, path_triggers, rule_specs
from npu_review.checks.suppress import Suppressions, scan

log = logging.getLogger(__name__)

# CPU seconds one rule may spend in one run when the caller gives a clock (the App and the CLI do): a
# pathological file must not stall a server. Whole-tree audits of verl take well under a second per rule.
DEFAULT_RULE_BUDGET_S = 20.0

# A parallel run needs twice this many files, and a coarse share holds at least this many: below that, starting a
# process costs more than it saves.
MIN_FILES_PER_SHARE = 200
# Modules the parsers and analyses import where first used (so that a one-file review does not pay for them), which
# the processes of a shared-out audit would each import again (a tree large enough to share out has docs,
# workflows, a .gitignore): imported once before the fork. ~40 ms a process; markdown-it and pathspec the most.
_FIRST_USE_IMPORTS = (
    "npu_review.checks.parsers.mdblocks",
    "markdown_it",
    "npu_review.checks.parsers.gha.evaluate",
    "npu_review.checks.parsers.dockercli",
    "npu_review.checks.parsers.hydra_config",
    "npu_review.checks.analysis.pyargs",
    "pathspec",
)
# An audit of at least this many files lets go of what the project rules kept before their process takes another
# share (see `run`). Below, what they keep is small (verl's 1,300 files: that process peaks at ~68 MiB), and the
# shares after them built it again for ~3 % more of the audit's CPU (rebuilt indexes, the collection).
_RELEASE_FILES = 10_000
# The most path kinds kept between runs (Runner.keep_kinds): a few trees of the largest repositories.
_KEPT_PATHS = 200_000

# Meta findings the engine itself produces.
UNKNOWN_SUPPRESSION = ("NPU001", "unknown-rule-in-suppression")
_NO_DIRECTIVES = Suppressions()  # shared by every file without a directive; never mutated


@dataclass
class Report:
    findings: list[Finding]
    files_checked: int
    # Problems that did not stop the run (a rule failed on one file); shown to the user, never hidden.
    errors: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        c = Counter(f.severity.label for f in self.findings)
        return {s.label: c.get(s.label, 0) for s in sorted(Severity, reverse=True)}


def fingerprint(rule: str, path: str, content: str, occurrence: int) -> str:
    """Stable across edits that only move the line: rule + path + whitespace-folded line text."""
    norm = re.sub(r"\s+", " ", content).strip()
    digest = hashlib.sha256(f"{rule}\0{path}\0{norm}\0{occurrence}".encode("utf-8", "surrogateescape")).hexdigest()
    return digest[:20]


def cause_id(rule: str, hit: Hit) -> str:
    """The id of a finding's cause: its rule (or same-cause family) and the offending text the rule names, else
    its message, whitespace-folded. Stable across runs; the same for the same text in any file of the change."""
    text = hit.cause if hit.cause is not None else hit.message
    norm = _same_in_twins(re.sub(r"\s+", " ", text).strip())
    return hashlib.sha256(f"{fingerprint_key(rule)}\0{norm}".encode("utf-8", "surrogateescape")).hexdigest()[:12]


# What differs between the same mistake's places and is no part of it: where it is (a line, `path:line`), and
# which Ascend device a twin file is for (an A2 and an A3 Dockerfile, the `910b` and `a3` images, a table's A2 and
# A3 rows). The same pin in twin files, the same setting in two launch scripts, a swap of the two devices' links:
# one cause (judged blind, replay-r9: each twin's own comment a duplicate).
_PLACE = lazyre.compile(r"\((?:at )?lines? \d+(?:[-–]\d+)?\)|\blines? \d+(?:[-–]\d+)?\b|:\d+(?![\w.])")
_DEVICE = lazyre.compile(
    r"(?<![A-Za-z0-9])(?:atlas ?)?(?:ascend)?(?:a[235]|910(?:_?93|[bc]\d?)?|310p\d?)(?![A-Za-z0-9])", re.IGNORECASE
)
_DEVICE_TWICE = lazyre.compile(r"<device> \(<device>\)")


def said_alike(text: str) -> str:
    """A message with what differs between one mistake's places left out (its places, the device of a twin file):
    two findings whose texts give the same `said_alike` say the same thing."""
    return _same_in_twins(re.sub(r"\s+", " ", text).strip())


def _same_in_twins(text: str) -> str:
    return _DEVICE_TWICE.sub("<device>", _DEVICE.sub("<device>", _PLACE.sub("<place>", text)))


def known_rule_ids() -> frozenset[str]:
    return frozenset(rule_specs()) | {UNKNOWN_SUPPRESSION[0]}


def targets(changeset: ChangeSet, config: Config) -> list[str]:
    """The files per-file rules look at: changed and present at head, or every file with --all."""
    if changeset.audit:
        paths: Iterable[str] = changeset.head.paths()
    else:
        paths = (p for p, c in changeset.changes.items() if c.status != ChangeStatus.DELETED and not c.binary)
    return sorted(p for p in paths if not globs.match_any(p, config.ignore_paths))


def active_rules(config: Config) -> list[Rule]:
    return [cls() for rid, cls in all_rules().items() if config.enabled(rid, cls.enabled_by_default)]


def needed_paths(
    head_paths: Iterable[str], changes: Mapping[str, FileChange], config: Config
) -> tuple[set[str], set[str]]:
    """Which files' content a review reads: (paths at head, paths at base). The App fetches just these.

    A rule's unchanged context is read only when the change touches a file of the rule's kinds or context
    kinds, or deletes or renames a file (references to it may be left behind): otherwise the rule can report
    nothing on this change, since findings sit on changed lines or are caused by the change.
    """
    head_paths = list(head_paths)
    config = config.for_tree(head_paths)
    kindmap = KindMap(config.paths, config.facts.file_kinds)
    rules = active_rules(config)
    # The changed files of every rule's kinds: per-file rules check them, project rules read them too.
    file_kinds = frozenset().union(*(r.kinds for r in rules))

    # Candidates, not path kinds: a file of a content kind (an Ascend Dockerfile anywhere) is known to be one only
    # once read, so every file that may be one is fetched.
    def keep(path: str, kinds: frozenset[str]) -> bool:
        return bool(kindmap.candidates(path) & kinds) and not globs.match_any(path, config.ignore_paths)

    touched_kinds: frozenset[str] = frozenset().union(
        *(kindmap.candidates(p) for c in changes.values() for p in (c.path, c.old_path) if p)
    )
    moved = any(c.status in (ChangeStatus.DELETED, ChangeStatus.RENAMED) for c in changes.values())
    concerned = [r for r in rules if moved or r.triggers_context() & touched_kinds]
    context = frozenset().union(*(r.reads_context() for r in concerned))
    changed = [p for c in changes.values() for p in (c.path, c.old_path) if p]
    for r in rules:
        after, after_kinds = r.context_after(config.facts)
        if after_kinds and any(globs.match_any(p, after) for p in changed):
            context |= after_kinds
    wanted = file_kinds | context
    # A rule's context paths (a registry module or two) are read whenever it checks a changed file, even where its
    # context kinds wait for a narrower trigger (NPU106 reads vLLM-Ascend's config reader for a changed doc).
    by_paths = [r for r in rules if moved or (r.triggers_context() | r.kinds) & touched_kinds]
    extra = tuple(g for r in by_paths for g in r.context_paths(config.facts))
    head = {p for p, c in changes.items() if c.status != ChangeStatus.DELETED and keep(p, wanted)}
    head |= {p for p in head_paths if keep(p, context) or (extra and globs.match_any(p, extra))}
    base = set()
    for p, c in changes.items():
        old = c.old_path or p
        if c.status != ChangeStatus.ADDED and keep(old, wanted):
            base.add(old)
    if moved and any(r.reads_moved_files for r in concerned):
        head |= {p for p, c in changes.items() if c.status == ChangeStatus.ADDED}
        base |= {p for p, c in changes.items() if c.status == ChangeStatus.DELETED}
    return head, base


# The most files a change's texts name that the App fetches for the rules reading named files (a guide naming every
# script of a repository is read with what fits; the rest reads as absent, so those rules stay silent on it).
MAX_NAMED_PATHS = 40
_NAMED_WORD = lazyre.compile(r"[\w./-]+")


def named_paths(
    head_paths: Iterable[str],
    changed_texts: Mapping[str, str | None],
    changes: Mapping[str, FileChange],
    config: Config,
) -> set[str]:
    """The files at head that the changed files' texts name by file name, for the rules that read such
    files (`Rule.named_suffixes`): every path whose file name a changed file of the rule's kinds writes, found
    after the changed files are fetched (the App's second fetch; `needed_paths` decides the first from paths alone).
    """
    head_paths = list(head_paths)
    config = config.for_tree(head_paths)
    kindmap = KindMap(config.paths, config.facts.file_kinds)
    wanted: dict[str, frozenset[str]] = {}
    for r in active_rules(config):
        for suffix in r.named_suffixes:
            wanted[suffix] = wanted.get(suffix, frozenset()) | r.kinds
    if not wanted:
        return set()
    names: set[str] = set()
    folders: set[str] = set()  # the folders of the changed files that name some: their neighbours come first
    for path, text in changed_texts.items():
        if not text or path not in changes or changes[path].status == ChangeStatus.DELETED:
            continue
        kinds = kindmap.candidates(path)
        suffixes = tuple(s for s, k in wanted.items() if kinds & k and s in text)
        if suffixes:
            found = {w.rsplit("/", 1)[-1] for w in _NAMED_WORD.findall(text) if w.endswith(suffixes)}
            if found:
                names |= found
                folders.add(path.rsplit("/", 1)[0] if "/" in path else "")
    if not names:
        return set()
    by_name: dict[str, list[str]] = {}
    for p in head_paths:
        base = p.rsplit("/", 1)[-1]
        if base in names and not globs.match_any(p, config.ignore_paths):
            by_name.setdefault(base, []).append(p)

    def near(p: str) -> tuple[bool, str]:
        """Beside or below a naming file first (a guide's own scripts), then the rest by path."""
        return (not any(f == "" or p.startswith(f + "/") for f in folders), p)

    # Each name's nearest file first, then each name's next one, ...: a name shared by a hundred files (`run.sh`)
    # does not crowd out the one other name the guide gives.
    ranked = [sorted(paths, key=near) for _, paths in sorted(by_name.items())]
    out: list[str] = []
    for k in range(max(map(len, ranked), default=0)):
        out.extend(paths[k] for paths in ranked if k < len(paths))
    return set(out[:MAX_NAMED_PATHS])


@dataclass
class Partial:
    """What one share of a run found: raw hits (before scope, suppression and severity), the suppression
    directives of the files it read, how many files its rules checked, and the problems it met."""

    hits: list[tuple[type[Rule], Hit]] = field(default_factory=list)
    suppressions: dict[str, Suppressions] = field(default_factory=dict)
    checked: int = 0
    errors: list[str] = field(default_factory=list)
    # What the project rules found, when they ran in the same share (see `run`).
    project: Partial | None = None
    # The text of each hit's line, where its file was at hand when the hit came (the fingerprint's input): the
    # process that merges the shares then reads again only the files it was not taken from.
    lines: dict[tuple[str, int], str] = field(default_factory=dict)
    # In an audit, what `retired_dockerfiles` needs of the build graph, from the process that ran the project
    # rules (which has built the graph): the process merging the shares then need not build it again.
    retirement: Retirement | None = None


# Runs a task for each share index 0..n-1, in any order and any process, and returns their results in index
# order. Without one, `run` works in this process; the CLI passes a process pool so that a whole-tree audit
# uses every core.
ShareMapper = Callable[[Callable[[int], Partial], int], Iterable[Partial]]


def _share_keys(known: dict[str, frozenset[str]], paths: Iterable[str]) -> None:
    """Key `known` (the kinds kept from an earlier run, read back from the cache folder with strings of its own) by
    the tree's own path strings where they are equal: in an audit, which reads every path, each of the 40,000
    paths of a large tree was held twice in every process, the second copy 3.5 MiB. The same dict (the store
    keeps it), the same entries; ~10 ms for 40,000 paths."""
    for path in paths:
        found = known.pop(path, None)
        if found is not None:
            known[path] = found


class _Runner:
    """The rules in one process: their context (memoised parses), their time spent, and which are stopped."""

    def __init__(
        self,
        changeset: ChangeSet,
        config: Config,
        clock: Callable[[], float] | None,
        rule_budget_s: float,
        parses: ParseCache | None = None,
    ) -> None:
        self.known = known_rule_ids()
        self.kindmap = KindMap(config.paths, config.facts.file_kinds)
        self.ctx = Context(changeset, config, self.kindmap, parses)
        # The kinds of the paths seen in earlier runs (the caller's cache folder): a tree's 40,000 paths are
        # matched against the globs once, not at every review.
        self._kinds_store = self.ctx.store("path-kinds")
        self._kinds_known = 0
        if self._kinds_store is not None:
            known = self._kinds_store.get("paths")
            if isinstance(known, dict):
                if self.ctx.audit:
                    _share_keys(known, self.ctx.head_paths())
                self.kindmap.adopt(known)
            self._kinds_known = len(self.kindmap.known)
        # The enabled rules, by what the registry says of them: a per-file rule's module is imported (`_rule`) when
        # a file of its kinds is checked, a project rule's when the project rules run.
        self.active = [s for s in rule_specs().values() if config.enabled(s.id, s.enabled_by_default)]
        self.per_file = [s for s in self.active if s.per_file]
        self._rules: dict[str, Rule] = {}
        self.clock = clock
        self.budget = rule_budget_s
        self.spent: dict[str, float] = {}
        self.stopped: set[str] = set()
        # The per-file rules that read a file of these kinds (a handful of kind sets cover a whole tree).
        self._wanted: dict[frozenset[str], list[Rule]] = {}
        # In an audit of some files (`run(only=…)`), those of them at head: what the project rules must concern.
        self.selected: list[str] | None = None

    def keep_kinds(self) -> None:
        """Keep the kinds of the paths this run classified for the next (at most _KEPT_PATHS: beyond, those of
        this run's trees alone)."""
        store = self._kinds_store
        known = self.kindmap.known
        if store is None or len(known) == self._kinds_known:
            return
        if len(known) > _KEPT_PATHS:
            ctx = self.ctx
            paths = set(ctx.paths_at("head")) | (set() if ctx.audit else set(ctx.paths_at("base")))
            known = {p: k for p, k in known.items() if p in paths}
        store.put("paths", known)

    def _rule(self, spec: RuleSpec) -> Rule:
        rule = self._rules.get(spec.id)
        if rule is None:
            rule = self._rules[spec.id] = spec.load()()
        return rule

    def wanted(self, kinds: frozenset[str]) -> list[Rule]:
        found = self._wanted.get(kinds)
        if found is None:
            found = self._wanted[kinds] = [self._rule(s) for s in self.per_file if s.kinds & kinds]
        return found

    def _timed(self, out: Partial, rule: Rule, where: str, work: Callable[[], Iterable[Hit]]) -> None:
        if rule.id in self.stopped:
            return
        clock = self.clock
        start = clock() if clock else 0.0
        found: list[Hit] = []
        try:
            found.extend(work())  # (what a rule yielded before it failed is kept)
        except Exception as exc:  # one broken rule must not sink the run
            log.exception("rule %s failed on %s", rule.id, where)
            out.errors.append(f"{rule.id} could not check {where}: {type(exc).__name__}: {exc}")
        if found:  # most calls (a rule, a file) find nothing
            cls = type(rule)
            out.hits.extend((cls, h) for h in found)
            for hit in found:
                key = (hit.path, hit.line)
                if key not in out.lines and (src := self.ctx.held(hit.path)) is not None:
                    out.lines[key] = src.line(hit.line)
        if clock:
            self.spent[rule.id] = spent = self.spent.get(rule.id, 0.0) + clock() - start
            if spent > self.budget:
                self.stopped.add(rule.id)
                out.errors.append(
                    f"{rule.id} was stopped after {spent:.1f} s (budget {self.budget:.0f} s, last at "
                    f"{where}); its findings may be incomplete"
                )

    def files(self, paths: list[str]) -> Partial:
        """The per-file rules over `paths`, in that order; every file's suppression directives."""
        out = Partial()
        ctx = self.ctx
        announce = getattr(ctx.changeset.head, "read_order", None)
        if callable(announce):  # a tree that reads ahead (git) fetches in this order
            announce(paths)
        for path in paths:
            src = ctx.source(path)
            if src is None:
                continue
            wanted = self.wanted(src.kinds)
            # Directives are read while the text is at hand; the file's text and parses go after its rules.
            text = src.text
            out.suppressions[path] = scan(text, self.known) if "npu-review:" in text else _NO_DIRECTIVES
            if wanted:
                out.checked += 1
                for rule in wanted:
                    self._timed(out, rule, path, partial(rule.run_file, src, ctx))
            ctx.release(path)
        return out

    def project(self) -> Partial:
        out = Partial()
        concerns = self._concerns()
        for spec in self.active:
            if spec.project and concerns(spec):
                rule = self._rule(spec)
                self._timed(out, rule, "the repository", partial(rule.check_project, self.ctx))
        # What the project rules kept between runs (ctx.store) is written back where they ran (a forked share's
        # process too).
        diskcache.flush()
        return out

    def _concerns(self) -> Callable[[RuleSpec], bool]:
        """Whether the change concerns a project rule: every rule in an audit of the whole tree, or after a change
        that deletes or renames a file (references to it may be left anywhere); in an audit of some files, a rule
        that reads a file of their kinds (or their paths); else a rule that may report on a changed path of
        any kind (NPU501), or one whose kinds or context triggers a changed file may have, or whose context or
        trigger globs (`Rule.path_triggers`) a changed path matches. A project rule reports on the lines a change
        touched, or on what a change to the files it reads caused: a change to none of them (a Python module for a
        workflow rule, an OWNERS file for every rule) can give it nothing to say, and on a large tree it would read
        every workflow and Dockerfile for nothing. What the App fetches for a rule (needed_paths) is decided alike."""
        changes = self.ctx.changeset.changes.values()
        named = self.selected
        if self.ctx.audit and named is not None:
            # An audit of some files (`check PATH…`) keeps the findings on them alone: a rule reports on the files it
            # reads, so one that reads no file of their kinds (nor their paths) has nothing to say there.
            changed = named
        elif self.ctx.audit or any(c.status in (ChangeStatus.DELETED, ChangeStatus.RENAMED) for c in changes):
            return lambda _spec: True
        else:
            changed = [p for c in changes for p in (c.path, c.old_path) if p]
        touched: frozenset[str] = frozenset().union(*(self.kindmap.candidates(p) for p in changed))
        table: dict[str, tuple[str, ...]] | None = None

        def concerns(spec: RuleSpec) -> bool:
            nonlocal table
            kinds = spec.kinds | spec.triggers | (spec.reads if named is not None else frozenset())
            if spec.any_path or not kinds.isdisjoint(touched):
                return True
            if not spec.path_triggers:
                return False
            if table is None:
                table = path_triggers(self.active, self.ctx.facts, self.ctx.config.knowledge)
            pats = table.get(spec.id, ())
            return bool(pats) and any(globs.match_any(p, pats) for p in changed)

        return concerns


def run(
    changeset: ChangeSet,
    config: Config | None = None,
    clock: Callable[[], float] | None = None,
    rule_budget_s: float = DEFAULT_RULE_BUDGET_S,
    mapper: ShareMapper | None = None,
    jobs: int = 1,
    parses: ParseCache | None = None,
    only: Callable[[str], bool] | None = None,
) -> Report:
    """Run every enabled rule. With a `clock` (the caller's: the engine reads none itself), a rule that has
    spent more than `rule_budget_s` in this run (in one process) is stopped for the files left, and the
    report says so. With a `mapper` and `jobs` > 1, the files are cut into shares (see `_shares`), each handed
    to the mapper, the project rules with the first share of the files that are neither Python nor shell (or as
    a share of their own when there is none); the findings are the same as without. `parses`: a ParseCache the
    caller keeps between runs (the App's workers: a push to a PR, or another PR on the same base, finds the
    unchanged files parsed). The CLI passes none: within one change's review it saved ~6 % of the CPU on the
    40,000-file generated tree for ~50 MB more at the peak. `only`: the report is on the paths it accepts alone
    (`check PATH…`): the per-file rules check those files and no others (a per-file rule reports on the file it
    checks; the rest of the tree is still read as context), and the project rules' findings elsewhere are
    dropped. The findings on those paths are the same as in the whole report."""
    config = (default_config() if config is None else config).for_tree(changeset.head.paths())
    files = targets(changeset, config)
    if only is not None:
        files = [p for p in files if only(p)]
    runner = _Runner(changeset, config, clock, rule_budget_s, parses)
    if only is not None:
        runner.selected = files
    scan_unknown = config.enabled(UNKNOWN_SUPPRESSION[0])
    # The files the loop reads: those some per-file rule wants, and every one when NPU001 looks for directives.
    paths = [p for p in files if scan_unknown or any(r.kinds & runner.kindmap.candidates(p) for r in runner.per_file)]
    parts: list[Partial]
    if mapper is None or jobs <= 1 or len(paths) < 2 * MIN_FILES_PER_SHARE:
        parts = [runner.files(paths), runner.project()]
    else:
        slices = _shares(paths, runner.kindmap, jobs)
        # The rules are imported here, before the processes fork: each would otherwise import the modules of the
        # rules its files need, the same modules in every process.
        for spec in runner.active:
            runner._rule(spec)
        lazyre.compile_pending()  # and their patterns compiled (checks.lazyre), once for every process
        for name in _FIRST_USE_IMPORTS:  # and what the parsers import at first use, which every process would
            importlib.import_module(name)
        # The project rules run in the process that checks the first share of the files that are neither Python
        # nor shell scripts (workflows, Dockerfiles, docs), as the first task: both build the workflow models,
        # the image inventory and the Ascend job list, which that process then builds once. Without such a
        # share, they are a task of their own.
        lead = next((k for k, s in enumerate(slices) if _family(s[0], runner.kindmap) == 1), None)
        order = ([lead] if lead is not None else []) + [k for k in range(len(slices)) if k != lead]
        tasks = order if lead is not None else [-1, *order]
        # Each process works with its copy of this runner (a forked child starts with the state it has now:
        # rules, facts, the kinds of every path), so the parses a process memoised serve every share it is given.

        def project() -> Partial:
            out = runner.project()
            if runner.ctx.audit:
                out.retirement = retirement(runner.ctx)
            return out

        def share(i: int) -> Partial:
            k = tasks[i]
            if k < 0:
                out = project()
            else:
                out = runner.files(slices[k])
                if k != lead:
                    return out
                out.project = project()
            # What the project rules kept for the run (the workflow models, the image inventory, the build graph,
            # the indexes of the tree) is let go of before this process takes another share: that share's rules
            # build what they need of it, as in a process that ran no project rules, and what was held would add
            # to what they build (the 40,000-file tree: 147 MiB held when the project rules were done, 169 MiB
            # after two more shares of shell scripts and docs). The memos hold reference cycles (closures over
            # the context), hence the collection. Not in an audit of fewer files (see _RELEASE_FILES).
            if len(paths) >= _RELEASE_FILES:
                runner.ctx.release_all()
                gc.collect()
            return out

        done = dict(zip(tasks, mapper(share, len(tasks)), strict=True))
        # Files, then the project rules, as in one process; findings are sorted in the end (by path, line, rule
        # and message, a total order), so the report does not depend on how the files were shared out.
        parts = [done[k] for k in range(len(slices))]
        parts.append(done[-1] if lead is None else done[lead].project or Partial())
    suppressions = {path: found for part in parts for path, found in part.suppressions.items()}
    hits = [hit for part in parts for hit in part.hits]
    ctx = runner.ctx
    if only is not None:
        hits = [hit for hit in hits if only(hit[1].path)]
    findings = _finalise(hits, ctx, runner.known, suppressions)
    if scan_unknown:
        findings.extend(_unknown_suppressions(suppressions, ctx))
    lines = {key: text for part in parts for key, text in part.lines.items()}
    if ctx.audit:
        findings = retired_dockerfiles(findings, ctx, parts[-1].retirement)
    findings = _with_fingerprints(merge_same_cause(findings), ctx, lines)
    runner.keep_kinds()
    diskcache.flush()
    ctx.release_all()
    # (only a file a rule would read: a missing video or model weights is no loss to the review, and a mirror may
    # leave out dozens of them in one change)
    errors = [
        f"{path}: not reviewed: its content is not in this repository (a partial clone or mirror leaves it out)"
        for path in changeset.unreadable
        if ctx.kindmap.candidates(path)
    ]
    errors += [e for part in parts for e in part.errors]
    return Report(sorted(findings, key=Finding.sort_key), sum(p.checked for p in parts), errors)


# A change with a file of each kind the rules read. Reviewing it once builds what the rules and parsers build once per
# process (the facts' derived tables, the kind globs' plans per extension, the parsers' lazily made objects), so that
# a long-lived reviewer (the App's review processes) does not build it on its first real review's clock.
_WARM_UP_FILES = {
    "docker/ascend/Dockerfile.warm": (
        "FROM quay.io/ascend/cann:8.5.0-910b-ubuntu22.04-py3.11\n"
        "RUN pip install torch==2.7.1 torch_npu==2.7.1 && \\\n"
        "    wget https://example.com/a.tar.gz\n"
    ),
    ".github/workflows/ascend_warm.yml": (
        "name: ascend\non: [pull_request]\njobs:\n  test:\n    runs-on: linux-aarch64-a2-1\n"
        "    container:\n      image: quay.io/ascend/cann:8.5.0-910b-ubuntu22.04-py3.11\n"
        "    steps:\n      - uses: actions/checkout@v4\n      - run: bash tests/run_warm_npu.sh\n"
    ),
    "tests/run_warm_npu.sh": (
        "#!/bin/bash\nsource /usr/local/Ascend/ascend-toolkit/set_env.sh\nexport HCCL_CONNECT_TIMEOUT=1200\n"
        "python3 -m vllm.entrypoints.openai.api_server --model m --enforce-eager\n"
    ),
    "docs/ascend_warm.md": (
        "# Run on Ascend\n\nSee [the script](../tests/run_warm_npu.sh).\n\n```bash\npip install torch_npu==2.7.1\n```\n"
    ),
    "configs/warm.yaml": "trainer:\n  device: npu\n",
    "pkg/warm.py": "import os\n\nimport torch\n\nDEVICE = os.environ.get('DEVICE', 'npu')\n",
    "requirements-npu.txt": "torch==2.7.1\ntorch_npu==2.7.1\n",
    "pyproject.toml": '[project]\nname = "warm"\ndependencies = ["torch==2.7.1"]\n',
}


def warm_up_change() -> ChangeSet:
    files: dict[str, str | None] = dict(_WARM_UP_FILES)
    lines = {p: frozenset(range(1, (t or "").count("\n") + 2)) for p, t in files.items()}
    changes = {p: FileChange(p, ChangeStatus.ADDED, added_lines=lines[p]) for p in files}
    return ChangeSet(head=MemoryTree(files), changes=changes)


def warm_up() -> None:
    """Imports every rule and reviews a small change of every file kind (its report is dropped): what a process
    that will review many changes does before the first."""
    all_rules()
    run(warm_up_change())


# Shell scripts and docs: the costly files (parses, views, a doc's code blocks), which share no index between them.
_FINE_KINDS = frozenset({SHELL, NPU_SCRIPT, MARKUP})
# Shares of them per process: small pieces that even out the load at the end.
FINE_SHARES_PER_JOB = 4


def _family(path: str, kindmap: KindMap) -> int:
    """0: Python, 1: the rest, 2: shell scripts and docs (see `_shares`)."""
    kinds = kindmap.kinds(path)
    return 2 if kinds & _FINE_KINDS else 0 if PYTHON in kinds else 1


def _shares(paths: list[str], kindmap: KindMap, jobs: int) -> list[list[str]]:
    """Shares that follow what the rules build per process. Python files (NPU401's index of every module)
    and the rest (workflows, Dockerfiles, YAML: the image inventory, the Ascend job list) go in as few shares
    as the balance allows, at most 1/jobs of the files each and of equal sizes, so that one process builds each
    index; shell scripts and docs, the costliest files and sharing no index, are cut fine and handed out last,
    to even out the load (verl's 179 docs in the share of the project rules kept one process busy 0.2 s after
    the other had run out of work). Each share keeps the files' order."""
    families: tuple[list[str], list[str], list[str]] = ([], [], [])
    for p in paths:
        families[_family(p, kindmap)].append(p)
    coarse = max(MIN_FILES_PER_SHARE, -(-len(paths) // jobs))
    fine = max(1, -(-len(families[2]) // (jobs * FINE_SHARES_PER_JOB)))
    out: list[list[str]] = []
    for family, size in zip(families, (coarse, coarse, fine), strict=True):
        # As many shares as `size` allows, of equal sizes (verl's 651 Python files in shares of 591 and 60 gave one
        # process nearly all of them, and the other the same index to build for a tenth of the files).
        pieces = -(-len(family) // size)
        even = -(-len(family) // pieces) if pieces else size
        out.extend(family[i : i + even] for i in range(0, len(family), even))
    return out


def _suppressions(ctx: Context, path: str, known: frozenset[str], seen: dict[str, Suppressions]) -> Suppressions:
    if path not in seen:  # a file the per-file loop did not read (a project rule's finding)
        src = ctx.source(path)
        seen[path] = scan(src.text, known) if src is not None else Suppressions()
    return seen[path]


def _finalise(
    raw: list[tuple[type[Rule], Hit]], ctx: Context, known: frozenset[str], suppressions: dict[str, Suppressions]
) -> list[Finding]:
    config = ctx.config
    seen: set[tuple[str, str, int, str]] = set()
    out: list[Finding] = []
    spreading: list[tuple[int, Hit]] = []
    for cls, hit in raw:
        if globs.match_any(hit.path, config.ignore_paths):
            continue
        end = max(hit.end_line or hit.line, hit.line)
        if not hit.caused_by_change and (
            not ctx.is_added_line(hit.path, hit.line) or ctx.only_reformats(hit.path, hit.line, end)
        ):
            continue  # old debt on untouched (or only re-formatted) lines is not this change's business
        if _suppressions(ctx, hit.path, known, suppressions).covers(cls.id, hit.line, end):
            continue
        key = (cls.id, hit.path, hit.line, hit.message)
        if key in seen:
            continue
        seen.add(key)
        severity = config.severity(cls.id, hit.severity or cls.severity)
        if hit.spreads and severity > Severity.NOTICE:
            spreading.append((len(out), hit))
        out.append(
            Finding(
                rule=cls.id,
                name=cls.name,
                severity=severity,
                path=hit.path,
                line=hit.line,
                end_line=end,
                message=hit.message,
                suggestion=hit.suggestion,
                related=hit.related,
                cause=cause_id(cls.id, hit),
            )
        )
    return _unspread(out, spreading)


def _unspread(findings: list[Finding], spreading: list[tuple[int, Hit]]) -> list[Finding]:
    """A finding whose advice would copy a line that carries an error or warning of another rule (see
    Hit.spreads) becomes a notice naming it: one comment for the cause, on the line, and no advice to spread it."""
    if not spreading:
        return findings
    flagged: dict[tuple[str, int], list[str]] = {}
    for f in findings:
        if f.severity > Severity.NOTICE:
            for n in range(f.line, f.end_line + 1):
                flagged.setdefault((f.path, n), []).append(f.rule)
    for i, hit in spreading:
        f = findings[i]
        carried = sorted((n, rule) for n in hit.spreads for rule in flagged.get((f.path, n), ()) if rule != f.rule)
        if carried:
            named = ", ".join(f"line {n} ({rule})" for n, rule in dict.fromkeys(carried))
            findings[i] = dataclasses.replace(
                f,
                severity=Severity.NOTICE,
                message=f"{f.message} First settle the finding on {named}: the same edit would copy it.",
            )
    return findings


def _unknown_suppressions(suppressions: dict[str, Suppressions], ctx: Context) -> list[Finding]:
    """NPU001 for directives in the target files that name no rule (on added lines)."""
    rid, name = UNKNOWN_SUPPRESSION
    out = []
    for path, found in suppressions.items():
        for line, bad in found.unknown:
            if ctx.is_added_line(path, line):
                message = (
                    f"Suppression names {bad!r}, which is not an npu-review rule; it suppresses nothing "
                    "(see `npu-review rules`)."
                )
                out.append(
                    Finding(
                        rule=rid,
                        name=name,
                        severity=ctx.config.severity(rid, Severity.WARNING),
                        path=path,
                        line=line,
                        end_line=line,
                        message=message,
                        cause=cause_id(rid, Hit(path, line, message, cause=bad)),
                    )
                )
    return out


@dataclass(frozen=True)
class Retirement:
    """What `retired_dockerfiles` reads of the build graph: the Dockerfiles its builds build, the patterns of
    those whose Dockerfile is one of several paths, and whether some build's Dockerfile cannot be told at all."""

    built: frozenset[str]
    maybes: tuple[re.Pattern[str], ...]
    untold: bool


def retirement(ctx: Context) -> Retirement:
    from npu_review.checks.analysis.builds import graph

    builds = graph(ctx).builds
    return Retirement(
        frozenset(b.dockerfile for b in builds if b.dockerfile is not None),
        tuple(b.maybe for b in builds if b.dockerfile is None and b.maybe is not None),
        any(b.dockerfile is None and b.maybe is None for b in builds),
    )


def retired_dockerfiles(findings: list[Finding], ctx: Context, known: Retirement | None = None) -> list[Finding]:
    """In an audit, a Dockerfile that nothing builds any more (no workflow, script or install doc of a repository
    that builds its other Dockerfiles) is a recipe kept for history: its errors and warnings are notices, since
    fixing it changes no image anyone gets. A change that edits it is reviewed as usual. `known`: the graph's
    part, from the process that built it (see `Partial.retirement`); else the graph is built here."""
    dockerfile = {f.path for f in findings if f.severity > Severity.NOTICE and ctx.kindmap.has(f.path, DOCKERFILE)}
    if not dockerfile:
        return findings
    r = known if known is not None else retirement(ctx)
    if not r.built or r.untold:
        return findings  # the repository builds none of them, or a build's Dockerfile cannot be told
    retired = {p for p in dockerfile if p not in r.built and not any(m.search(p) for m in r.maybes)}
    if not retired:
        return findings
    return [
        dataclasses.replace(
            f,
            severity=Severity.NOTICE,
            message=f.message + " (No workflow, script or install doc builds this Dockerfile any more.)",
        )
        if f.path in retired and f.severity > Severity.NOTICE
        else f
        for f in findings
    ]


# Rules that say the same cause when they report on the same line: one finding (one comment) carries them all.
# NPU201 (mixed formats) and NPU202 (tag not pushed) on one consumer line are one stale tag; NPU307 (pairing)
# and NPU308 (pins re-resolved) on one pip line are one set of torch pins.
SAME_CAUSE = (("NPU201", "NPU202"), ("NPU307", "NPU308"))
_FAMILY = {rid: "+".join(family) for family in SAME_CAUSE for rid in family}


def fingerprint_key(rule: str) -> str:
    """What a fingerprint is keyed on: the rule, or its same-cause family, so that a finding keeps its
    fingerprint whether one or several rules of the family report on its line."""
    return _FAMILY.get(rule, rule)


def merge_same_cause(findings: list[Finding]) -> list[Finding]:
    """One finding per (path, line, same-cause family): the most severe rule first, every rule id listed."""
    groups: dict[tuple[str, int, str], list[Finding]] = {}
    out: list[Finding] = []
    for f in findings:
        family = _FAMILY.get(f.rule)
        if family is None:
            out.append(f)
        else:
            groups.setdefault((f.path, f.line, family), []).append(f)
    for members in groups.values():
        if len(members) == 1:
            out.append(members[0])
            continue
        members.sort(key=lambda f: (-f.severity, f.rule))
        lead, rest = members[0], members[1:]
        ids = tuple(dict.fromkeys(f.rule for f in members))
        message = " ".join([lead.message, *(f"Also {f.rule} ({f.name}): {f.message}" for f in rest)])
        suggestion = (
            lead.suggestion
            if lead.suggestion is not None
            else next((f.suggestion for f in rest if f.suggestion is not None), None)
        )
        related = tuple(dict.fromkeys(r for f in members for r in f.related))
        out.append(
            Finding(
                **{
                    **lead.__dict__,
                    "end_line": max(f.end_line for f in members),
                    "message": message,
                    "suggestion": suggestion,
                    "related": related,
                    "rules": ids,
                }
            )
        )
    return out


def _with_fingerprints(
    findings: list[Finding], ctx: Context, lines: Mapping[tuple[str, int], str] | None = None
) -> list[Finding]:
    """Each finding with its fingerprint; `lines`: the text of lines already known (see `Partial.lines`)."""
    occurrences: Counter[tuple[str, str, str]] = Counter()
    known = lines or {}
    out = []
    for f in sorted(findings, key=Finding.sort_key):
        content = known.get((f.path, f.line))
        if content is None:
            src: SourceFile | None = ctx.source(f.path)
            content = src.line(f.line) if src is not None else ""
        rule = fingerprint_key(f.rule)
        key = (rule, f.path, re.sub(r"\s+", " ", content).strip())
        n = occurrences[key]
        occurrences[key] += 1
        fp = fingerprint(rule, f.path, content, n)
        # A suggestion that is the line as it stands changes nothing: it is no fix to offer (an NPU502 rewrite of a
        # link whose text already is the path it computed; rs-r44, judged noise for it).
        # ("" deletes the line, whatever it holds: a fix, never the line as it stands)
        same = bool(f.suggestion) and f.suggestion is not None and f.suggestion.rstrip() == content.rstrip()
        out.append(Finding(**{**f.__dict__, "fingerprint": fp, **({"suggestion": None} if same else {})}))
    return out
