"""The Rule base class, and the registry: the explicit list in checks/rules/__init__.py, one id per rule."""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from npu_review.checks import lazyre
from npu_review.checks.model import Related, Severity

if TYPE_CHECKING:
    from npu_review.checks.context import Context, SourceFile
    from npu_review.checks.facts import Facts
    from npu_review.checks.parsers.dockerfile import Dockerfile
    from npu_review.checks.parsers.gha.workflow import Job, Step, Workflow

RULE_ID = lazyre.compile(r"NPU\d{3}\Z")
# The file kinds whose model the walk hands out (kept here, not imported from checks.kinds: its facts load at
# import, and the registry must stay cheap to import).
WORKFLOW_KINDS = frozenset({"workflow", "ascend_workflow"})
DOCKERFILE_KINDS = frozenset({"dockerfile", "ascend_dockerfile"})


@dataclass(frozen=True)
class Hit:
    """What a rule reports; the engine turns it into a Finding (severity, scope, suppression, fingerprint)."""

    path: str
    line: int
    message: str
    end_line: int | None = None
    suggestion: str | None = None
    severity: Severity | None = None  # None: the rule's default (after config overrides)
    related: tuple[Related, ...] = ()
    # A cross-file finding the change caused although the line itself is unchanged (a consumer still pulling
    # a tag whose producer the change deleted): kept on a change when set. Rules set it only when the change
    # is the cause; the App lists such findings in the review body and the check run, not inline.
    caused_by_change: bool = False
    # What makes two findings of this rule one cause: the offending text normalized (the flag, the setting and its
    # value, the pin), never a line number. Findings of one cause anywhere in the change are one inline comment
    # (checks.causes). None: the message is the cause (the same comment said twice is one cause).
    cause: str | None = None
    # Lines of this file whose text the advice asks to write elsewhere too (the same edit in a twin file): when one
    # of them carries an error or warning of another rule, following the advice would spread that problem, so the
    # engine makes this hit a notice that names the finding (the comment on the line itself says the cause).
    spreads: tuple[int, ...] = ()

    def unless_introduced(self, ctx: Context, also: Iterable[tuple[str, int]] = ()) -> Hit:
        """This hit as it is when the change under review writes its line (or one of `also`: the lines that make
        the same statement, a pin's CANN), else as a notice: a setting the project already lives with (an audit
        introduces nothing, ctx.introduces) is not worth an inline comment."""
        if self.severity is Severity.NOTICE or ctx.introduces(self.path, self.line):
            return self
        if any(ctx.introduces(path, line) for path, line in also):
            return self
        return dataclasses.replace(self, severity=Severity.NOTICE)


# Whether a rule class implements a hook of the workflow walk (Rule._walks_workflows), asked once per class.
_WALKS: dict[type, bool] = {}


class Rule:
    """Base class. The subclass docstring is the rule's documentation: why, bad, good, fix.

    A rule overrides `check_file` (called for each file at head whose kinds meet `kinds`: the changed files
    on a change, every file with `--all`) and/or `check_project` (called once, for cross-file rules, which
    must themselves place their findings on lines the change touched; see Context.touched).

    Or it takes part in the walk, as zizmor's audits do: the engine parses a workflow or a Dockerfile once and
    hands its parts to every rule that implements a hook (`check_workflow`, `check_job`, `check_step` for each
    job and step of a workflow; `check_dockerfile`); no rule loops over jobs and steps or parses by itself.
    `needles` is a text pre-test: a rule with needles runs on a file only when one of them is in its text.

    What a rule reads is its contract with the App, which fetches only the files some concerned rule declares
    (checks.engine.needed_paths): the changed files of its `kinds` (at head and base), the unchanged files of
    its `context_kinds` and `context_paths`, with `reads_moved_files` the deleted and added files, and with
    `named_suffixes` the files of those endings the changed files name (`named_paths`). Any
    other `ctx.source()` gives None in the App but the text in the CLI: the fixture tests run each case with
    its rule alone through the App's selection, where such a read fails (tests/fixture_support.SelectedTree).
    """

    id: ClassVar[str]
    name: ClassVar[str]  # kebab-case
    severity: ClassVar[Severity]
    title: ClassVar[str]  # one line
    kinds: ClassVar[frozenset[str]] = frozenset()
    # Kinds of files the rule reads at head even when the change does not touch them (cross-file context).
    # None: `kinds` for rules that implement check_project, nothing for the others. The App fetches only what
    # rules need, so keep this narrow; `context_paths` names single files or globs instead of whole kinds.
    context_kinds: ClassVar[frozenset[str] | None] = None
    # The changed kinds that make the rule read its context (None: its kinds and context kinds). A rule that also
    # checks docs on their own names the kinds whose change its context is about.
    context_triggers: ClassVar[frozenset[str] | None] = None
    # True for a rule that pairs a deleted file with an added one as a rename (a diff without rename detection):
    # it reads the deleted files at base and the added files at head, whatever their kinds.
    reads_moved_files: ClassVar[bool] = False
    # File-name endings (".py") of the unchanged files a changed file of the rule's kinds names by file name, which
    # the rule reads (NPU117 reads the parser of a Python script a guide runs): what a change names is known only
    # from its text, so the App fetches these after the changed files (checks.engine.named_paths).
    named_suffixes: ClassVar[tuple[str, ...]] = ()
    # True for a project rule that may report on a changed file of any kind (NPU501 on a file's name). Any other
    # project rule runs on a change only when it touches a file of the rule's kinds or context triggers, a path of
    # its `context_paths` or `context_after` globs, or deletes or renames a file (engine._Runner._concerns).
    reports_on_any_path: ClassVar[bool] = False
    enabled_by_default: ClassVar[bool] = True

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        return ()

    def check_project(self, ctx: Context) -> Iterable[Hit]:
        return ()

    # -- the walk -----------------------------------------------------------------------------------------
    needles: ClassVar[tuple[str, ...]] = ()

    def check_workflow(self, wf: Workflow, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        return ()

    def check_job(self, job: Job, wf: Workflow, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        return ()

    def check_step(self, step: Step, job: Job, wf: Workflow, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        return ()

    def check_dockerfile(self, df: Dockerfile, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        return ()

    def run_file(self, src: SourceFile, ctx: Context) -> Iterator[Hit]:
        """Everything the rule reports on one file: `check_file`, then the walk of its workflow or Dockerfile."""
        cls = type(self)
        needles = cls.needles
        if needles:
            text = src.text
            for needle in needles:  # (a loop, not any(): this runs for every rule and file of an audit)
                if needle in text:
                    break
            else:
                return
        yield from self.check_file(src, ctx)
        walks = _WALKS.get(cls)
        if walks is None:
            walks = _WALKS[cls] = cls._walks_workflows()
        if walks and src.kinds & WORKFLOW_KINDS:
            from npu_review.checks.analysis.workflows import workflow

            wf = workflow(ctx, src.path)
            if wf is not None:
                yield from self.check_workflow(wf, src, ctx)
                for job in wf.jobs.values():
                    yield from self.check_job(job, wf, src, ctx)
                    for step in job.steps:
                        yield from self.check_step(step, job, wf, src, ctx)
        if cls.check_dockerfile is not Rule.check_dockerfile and src.kinds & DOCKERFILE_KINDS:
            yield from self.check_dockerfile(ctx.dockerfile(src), src, ctx)

    @classmethod
    def _walks_workflows(cls) -> bool:
        return any(getattr(cls, h) is not getattr(Rule, h) for h in ("check_workflow", "check_job", "check_step"))

    @classmethod
    def is_per_file(cls) -> bool:
        return (
            cls.check_file is not Rule.check_file
            or cls._walks_workflows()
            or cls.check_dockerfile is not Rule.check_dockerfile
        )

    @classmethod
    def is_project(cls) -> bool:
        return cls.check_project is not Rule.check_project

    @classmethod
    def reads_context(cls) -> frozenset[str]:
        if cls.context_kinds is not None:
            return cls.context_kinds
        return cls.kinds if cls.is_project() else frozenset()

    @classmethod
    def triggers_context(cls) -> frozenset[str]:
        """The kinds of changed files after which the rule reads its context."""
        if cls.context_triggers is not None:
            return cls.context_triggers
        return cls.kinds | cls.reads_context()

    @classmethod
    def context_paths(cls, facts: Facts) -> tuple[str, ...]:
        """Globs of files the rule reads at head besides its kinds (e.g. a registry module)."""
        return ()

    @classmethod
    def context_after(cls, facts: Facts) -> tuple[tuple[str, ...], frozenset[str]]:
        """(globs of paths, kinds): after a change to a file one of the globs matches, the rule also reads every
        file of those kinds at head. A registry whose change can leave other files stale (a variable renamed in
        `envs.py`) says so here, so that the App fetches those files only when the registry changes."""
        return (), frozenset()

    @classmethod
    def path_triggers(cls, facts: Facts) -> tuple[str, ...]:
        """Globs of paths whose change concerns the rule whatever their kinds: its context paths and the paths of
        its `context_after`."""
        return (*cls.context_paths(facts), *cls.context_after(facts)[0])

    @classmethod
    def has_path_triggers(cls) -> bool:
        return cls.context_paths.__func__ is not Rule.context_paths.__func__ or (  # type: ignore[attr-defined]
            cls.context_after.__func__ is not Rule.context_after.__func__  # type: ignore[attr-defined]
        )

    @classmethod
    def doc(cls) -> str:
        import inspect  # ~5 ms to import: for the documentation only

        return inspect.cleandoc(cls.__doc__ or cls.title)


def validate(rules: tuple[type[Rule], ...]) -> dict[str, type[Rule]]:
    """The rules by id, refusing malformed or reused ids and names that are not kebab-case."""
    out: dict[str, type[Rule]] = {}
    for cls in rules:
        if not RULE_ID.match(cls.id):
            raise ValueError(f"bad rule id {cls.id!r}")
        if cls.id in out:
            raise ValueError(f"rule id {cls.id} listed twice")
        if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", cls.name):
            raise ValueError(f"rule name {cls.name!r} is not kebab-case")
        out[cls.id] = cls
    return dict(sorted(out.items()))


_ALL: dict[str, type[Rule]] | None = None


def all_rules() -> dict[str, type[Rule]]:
    """Every rule by id, every rule module imported: the explicit list `checks.rules.MODULES`."""
    global _ALL
    if _ALL is None:
        from npu_review.checks.rules import RULES

        _ALL = validate(RULES)
    return dict(_ALL)


@dataclass(frozen=True)
class RuleSpec:
    """What the engine decides by before a rule's module is imported: its id, name and severity, the kinds of
    files it reads, and which hooks it implements. `load()` imports the rule."""

    id: str
    name: str
    module: str
    cls: str
    severity: Severity
    title: str
    enabled_by_default: bool
    kinds: frozenset[str]
    per_file: bool
    project: bool
    triggers: frozenset[str]  # Rule.triggers_context()
    # For a project rule, what makes a change concern it besides the kinds above (Rule.reports_on_any_path,
    # Rule.has_path_triggers): the engine runs the others only on a change that touches their kinds.
    any_path: bool = False
    path_triggers: bool = False
    reads: frozenset[str] = frozenset()  # Rule.reads_context(): the kinds of the files it reads as context

    def load(self) -> type[Rule]:
        from npu_review.checks.rules import load

        return load(self.module, self.cls)


def _spec(module: str, cls: type[Rule]) -> RuleSpec:
    return RuleSpec(
        id=cls.id,
        name=cls.name,
        module=module,
        cls=cls.__name__,
        severity=cls.severity,
        title=cls.title,
        enabled_by_default=cls.enabled_by_default,
        kinds=frozenset(cls.kinds),
        per_file=cls.is_per_file(),
        project=cls.is_project(),
        triggers=frozenset(cls.triggers_context()),
        any_path=cls.reports_on_any_path,
        path_triggers=cls.has_path_triggers(),
        reads=frozenset(cls.reads_context()),
    )


def _make_specs() -> dict[str, RuleSpec]:
    from npu_review.checks.rules import MODULES

    rules = all_rules()
    modules = {cls: module for module, cls in MODULES}
    return {rid: _spec(modules[cls.__name__], cls) for rid, cls in rules.items()}


_SPECS: dict[str, RuleSpec] | None = None


def rule_specs() -> dict[str, RuleSpec]:
    """Every rule's RuleSpec by id, in id order. Made by importing every rule once, then kept in the caller's cache
    folder (checks.diskcache) keyed by the engine's source files, so that a run imports only the rules it needs."""
    global _SPECS
    if _SPECS is None:
        from npu_review.checks import diskcache
        from npu_review.checks.rules import MODULES

        def valid(found: object) -> bool:
            return isinstance(found, dict) and sorted((s.module, s.cls) for s in found.values()) == sorted(MODULES)

        if diskcache.folder() is None:
            _SPECS = _make_specs()
        else:
            _SPECS = diskcache.cached("rules", _source_key(), _make_specs, valid)
    return dict(_SPECS)


def path_triggers(specs: Iterable[RuleSpec], facts: Facts, knowledge: object) -> dict[str, tuple[str, ...]]:
    """`Rule.path_triggers(facts)` of each of these project rules that has them, by id. Kept in the caller's cache
    folder keyed by the engine's code, the facts' data, the profile and the repo config's `knowledge:` overrides
    (which make the facts): a review that asks whether a change concerns a rule then does not import the rule."""
    wanted = sorted(s.id for s in specs if s.project and s.path_triggers)

    def make() -> dict[str, tuple[str, ...]]:
        loaded = {s.id: s.load() for s in rule_specs().values() if s.id in wanted}
        return {rid: tuple(loaded[rid].path_triggers(facts)) for rid in wanted}

    from npu_review.checks import diskcache

    if diskcache.folder() is None:
        return make()
    key = derived_key(wanted, facts.profile, knowledge)
    return diskcache.cached(
        "path-triggers", key, make, lambda found: isinstance(found, dict) and sorted(found) == wanted
    )


def derived_key(*made_with: object) -> str:
    """The key of what the caller's cache folder keeps that is made by the engine's code from its facts' data and
    `made_with` (the profile, the repo config's `knowledge:`...): a hash of the three."""
    import hashlib
    import json

    from npu_review.checks.facts import _cache_key

    named = json.dumps(list(made_with), sort_keys=True, default=repr)
    return hashlib.sha256(f"{_source_key()}\0{_cache_key()}\0{named}".encode()).hexdigest()[:24]


@functools.cache  # the engine's files do not change under a running process
def _source_key() -> str:
    """A hash of the engine's Python files (path, size, modification time, as Python's own bytecode cache checks
    them) and of the interpreter: a rule's kinds may come from any module of the engine."""
    import hashlib
    import os
    import sys

    root = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha256(f"{sys.version}\0{root}".encode())
    for dirpath, dirnames, names in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(names):
            if name.endswith(".py"):
                st = os.stat(os.path.join(dirpath, name))
                digest.update(f"{dirpath}/{name}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return digest.hexdigest()[:24]
