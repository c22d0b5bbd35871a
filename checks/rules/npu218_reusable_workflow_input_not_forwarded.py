"""NPU218: a reusable workflow's input or secret that a call does not pass, or a declared input nothing reads."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from npu_review.checks import lazyre
from npu_review.checks.analysis.workflows import workflow_at, workflow_paths
from npu_review.checks.context import Context
from npu_review.checks.facts import Facts
from npu_review.checks.kinds import ASCEND_WORKFLOW, GITHUB, WORKFLOW, workflow_host
from npu_review.checks.model import Related, Severity
from npu_review.checks.rule import Hit, Rule

if TYPE_CHECKING:
    from npu_review.checks.parsers.gha.calls import Call, Param, SecretRead
    from npu_review.checks.parsers.gha.workflow import Workflow


class ReusableWorkflowInputNotForwarded(Rule):
    """A call of a reusable workflow leaves out an input or secret it needs, or a workflow declares an input
    that nothing reads.

    Why: a `workflow_call` input or secret reaches the called workflow only from each `uses:` call site that
    passes it. A required one left out fails the call before any job starts (errors). An optional secret or
    input added to the called workflow and passed at some call sites but not at another is empty there: the
    step that needs it skips or fails only in that caller's runs, often a weekly or release schedule. And a
    `workflow_dispatch` or `workflow_call` input that no expression reads (`inputs.X`,
    `github.event.inputs.X`) silently drops the value given: a run started for a release branch builds main.
    vllm-ascend shipped both: a new secret forwarded at two of the three calls of the multi-node test workflow,
    and a dispatch input `vllm_ascend_branch` never passed to the image builds that accept it.

    A secret the called workflow reads (`secrets.NAME`, GITHUB_TOKEN aside) without declaring it under
    `on.workflow_call.secrets` reaches it only through `secrets: inherit`: GitHub gives a called workflow only
    the secrets its call passes, an explicit `secrets:` mapping may name only declared ones, and "if the secrets
    are inherited by using `secrets: inherit` in the calling workflow, you can reference them even if they are
    not explicitly defined in the `on` key" (docs.github.com, Reusing workflows). A call without it runs the
    workflow with that secret empty: the download, login or upload that needs it fails or skips itself (a
    warning). That holds down a chain too: a workflow that hands its secrets on with `secrets: inherit` needs
    from its own callers whatever the workflow it calls reads. A fork guard on the step does not help: the step
    runs in the main repository, with the secret empty. Ascend/pytorch's NPU CI forward job called its receiving
    workflow without `secrets: inherit`, and the builds that one calls with `secrets: inherit` got no Huawei
    Cloud access keys; vllm-ascend's scheduled codecov refresh called its unit-test workflow without it, and the
    upload ran with no `CODECOV_TOKEN`; its nightly multi-node call left the cluster's `KUBECONFIG_B64` empty
    (fixed two days later).

    Bad (the other calls of `_e2e.yaml` pass its optional secret `UPLOAD_TOKEN`):
        weekly-multi-node:
          uses: ./.github/workflows/_e2e.yaml
          secrets:
            KUBECONFIG_B64: ${{ secrets.KUBECONFIG_B64 }}

    Good:
        weekly-multi-node:
          uses: ./.github/workflows/_e2e.yaml
          secrets:
            KUBECONFIG_B64: ${{ secrets.KUBECONFIG_B64 }}
            UPLOAD_TOKEN: ${{ secrets.UPLOAD_TOKEN }}

    Bad (the called workflow reads a secret it does not declare):
        forward:
          uses: ./.github/workflows/receive-trigger.yml
          with:
            event_type: push
        # .github/workflows/receive-trigger.yml
        name: receive trigger
        on:
          workflow_call:
            inputs:
              event_type:
                type: string
                required: true
        jobs:
          build:
            runs-on: linux-aarch64-a2-1
            steps:
              - run: ./ci/build.sh "${{ inputs.event_type }}"
                env:
                  OBS_AK: ${{ secrets.OBS_AK }}

    Good (the same called workflow):
        forward:
          uses: ./.github/workflows/receive-trigger.yml
          secrets: inherit
          with:
            event_type: push
        # .github/workflows/receive-trigger.yml
        name: receive trigger
        on:
          workflow_call:
            inputs:
              event_type:
                type: string
                required: true
        jobs:
          build:
            runs-on: linux-aarch64-a2-1
            steps:
              - run: ./ci/build.sh "${{ inputs.event_type }}"
                env:
                  OBS_AK: ${{ secrets.OBS_AK }}

    A declared input that the workflows it calls accept under the same name is reported on the first call that
    does not pass it on (its `with:`, with the line to add), listing the others; when every such call already
    sets that input from another value, adding it again would write the key twice: that is a notice that the
    declaration is dead (remove it, or read it first in the existing value).

    Fix: pass the input or secret at every call site (or `secrets: inherit`; for a secret the called workflow
    does not declare, only `secrets: inherit` or declaring it there), and read every declared input
    (pass a dispatch input on to the reusable workflows that accept it), or remove the declaration.

    A required input that the called workflow never reads and a call that leaves it out are one cause, one comment
    on the call (dropping the input fixes both).

    In an audit, an input nothing reads is a notice (the project lives with it: an input kept so that a
    dispatcher's `-f name=` does not fail, or copied from a sibling workflow, is cruft more often than a lost
    value); a change that declares it or removes its last read gets the warning.

    Not reported: an optional `workflow_call` input no call passes (a dead declaration: nothing is lost),
    optional inputs with a default a call leaves out, optional ones that fewer than two other
    calls pass (a new one: two in three of them; an old one, only a secret: every other call), optional secrets
    of a call that passes no secrets at all (it runs without them on purpose) or whose job has a comment
    saying it leaves something out (`# … intentionally omitted`), calls with `secrets: inherit`, an undeclared
    secret read with a fallback of its own (`secrets.PAT || github.token`) or only in a job or step whose `if:`
    needs an input that this call sets, or leaves to its default, false or to another value than the one asked
    for (`if: inputs.publish`, `if: inputs.type == 'schedule'`), or true where it asks for it false (`if: ... &&
    !inputs.is_priv`), a call by address
    (`owner/name/.github/workflows/x.yml@ref`) unless it names this repository and the file is in it, workflows
    that read the whole `inputs` object (`toJSON(inputs)`) or the event payload file, and in a change, gaps that
    were there before it. An entry of `inputs:` or `secrets:` whose value is a scalar (`required: true`,
    `default: 'main'`) is no input: it is a key of the input above, indented one level too shallow.
    """

    id = "NPU218"
    name = "reusable-workflow-input-not-forwarded"
    severity = Severity.WARNING
    title = "Reusable workflow input or secret not passed by a call, or declared input never read"
    kinds = frozenset({WORKFLOW, ASCEND_WORKFLOW})

    @classmethod
    def context_paths(cls, facts: Facts) -> tuple[str, ...]:
        """The repository's own actions, whose steps may read a dispatch input (`github.event.inputs.X`)."""
        return ("**/action.yml", "**/action.yaml")

    def check_project(self, ctx: Context) -> Iterable[Hit]:
        head = _Revision(ctx, "head")
        base = None if ctx.audit else _Revision(ctx, "base")
        yield from self._forwarding(ctx, head, base)
        yield from self._not_inherited(head, base)
        yield from self._unread(ctx, head, base)

    # -- call sites that leave a declared input or secret out -------------------------------------------------
    def _forwarding(self, ctx: Context, head: _Revision, base: _Revision | None) -> Iterator[Hit]:
        from npu_review.checks.parsers.gha.calls import declared, passes

        for target in head.called():
            target_calls = head.calls_to(target)
            wf = head.workflow(target)
            if not target_calls or wf is None or "workflow_call" not in wf.triggers:
                continue
            params = declared(wf, "workflow_call", "input") + declared(wf, "workflow_call", "secret")
            base_wf = base.workflow(target) if base is not None else None
            base_params = (
                {(p.kind, p.name.lower()): p for p in declared(base_wf, "workflow_call", "input")}
                | {(p.kind, p.name.lower()): p for p in declared(base_wf, "workflow_call", "secret")}
                if base_wf is not None
                else {}
            )
            for call in target_calls:
                others = [c for c in target_calls if c is not call]
                optional: list[tuple[Param, list[Call]]] = []
                for param in params:
                    if passes(call, param):
                        continue
                    if base is not None and not self._new_gap(call, param, base):
                        continue
                    if param.required and not (param.kind == "input" and param.has_default):
                        message = (
                            f"This call of `{target}` does not pass the required {param.kind} `{param.name}`: "
                            "the run fails before the called workflow starts."
                        )
                        # One cause with the called workflow's declaration that nothing reads (`_unread`): one fix.
                        cause = f"input {param.name} of {target}" if param.kind == "input" else None
                        yield Hit(
                            call.caller.path,
                            call.line,
                            message,
                            severity=Severity.ERROR,
                            caused_by_change=True,
                            cause=cause,
                        )
                        continue
                    if param.kind == "input" and param.has_default:
                        continue  # left to its default
                    if param.kind == "secret" and call.job.node.get("secrets") is None:
                        continue  # a call that passes no secrets at all runs without them on purpose
                    passing = [c for c in others if passes(c, param)]
                    # most of the other calls pass it (a new one: two in three; an old one: every other, two or more)
                    new_param = base is not None and (param.kind, param.name.lower()) not in base_params
                    if len(passing) < 2 or (3 * len(passing) < 2 * len(others) if new_param else passing != others):
                        continue
                    if not new_param and param.kind != "secret":
                        continue
                    optional.append((param, passing))
                if optional and head.says_why(call):
                    optional = []  # a comment in the call job says it leaves something out on purpose
                if optional:
                    names = ", ".join(f"{p.kind} `{p.name}`" for p, _ in optional)
                    passing = optional[0][1]
                    shown = ", ".join(f"`{c.caller.path}` job `{c.job.id}`" for c in passing[:2])
                    more = f" and {len(passing) - 2} more" if len(passing) > 2 else ""
                    how = " and ".join(
                        dict.fromkeys(f"`{'secrets' if p.kind == 'secret' else 'with'}:`" for p, _ in optional)
                    )
                    it = "it" if len(optional) == 1 else "them"
                    yield Hit(
                        call.caller.path,
                        call.line,
                        f"This call of `{target}` does not pass {names}, which {shown}{more} pass: here "
                        f"{'it is' if len(optional) == 1 else 'they are'} empty, so what needs {it} is skipped or "
                        f"fails only in this caller's runs. Add {it} under {how}.",
                        caused_by_change=True,
                    )

    # -- calls without `secrets: inherit` of workflows that read secrets they do not declare ----------------------
    def _not_inherited(self, head: _Revision, base: _Revision | None) -> Iterator[Hit]:
        for target in head.inheriting_targets():
            if workflow_host(target) is not GITHUB:
                # GitCode's called workflows read the caller's secrets without `secrets: inherit` (hicann/*: every
                # call of their compile/UT workflows passes none, and those read `secrets.AK`): GitHub's rule only.
                continue
            needed = head.undeclared_reads(target)
            if not needed:
                continue
            for call in head.calls_to(target):
                if call.inherit or call.secrets_unknown:
                    continue
                wf = head.workflow(target)
                missing = {
                    k: reached[0]
                    for k, reads in needed.items()
                    if (reached := [(w, r) for w, r in reads if not _gated_off(call, wf, r.gates)])
                }
                if base is not None:
                    old_call = next(
                        (
                            c
                            for c in base.calls_to(target)
                            if c.caller.path == call.caller.path and c.job.id == call.job.id
                        ),
                        None,
                    )
                    if old_call is not None and not (old_call.inherit or old_call.secrets_unknown):
                        before = base.undeclared_reads(target)
                        missing = {k: v for k, v in missing.items() if k not in before}  # a gap it had before
                if not missing:
                    continue
                reads = list(missing.values())
                it = "it" if len(reads) == 1 else "them"
                groups: dict[str, list[SecretRead]] = {}
                for w, r in reads[:4]:
                    groups.setdefault(w, []).append(r)
                shown = ", ".join(
                    ", ".join(f"`secrets.{r.name}`" for r in rs)
                    + (
                        f" (line {rs[0].line})"
                        if w == target
                        else f" (line {rs[0].line} of `{w}`, which it calls with `secrets: inherit`)"
                    )
                    for w, rs in groups.items()
                ) + (f" and {len(reads) - 4} more" if len(reads) > 4 else "")
                are = "it is" if len(reads) == 1 else "they are"
                verb = "reads" if all(w == target for w, _ in reads) else "needs"
                passing = "passes secrets one by one" if call.secrets else "passes no secrets"
                yield Hit(
                    call.caller.path,
                    call.line,
                    f"This call of `{target}` {passing}, but `{target}` {verb} {shown} without declaring {it} under "
                    "`on.workflow_call.secrets`. A called workflow gets only the secrets its call passes, and one it "
                    f"does not declare only through `secrets: inherit`: here {are} empty, so the step that needs {it} "
                    "fails or is skipped. Add `secrets: inherit` to this job (or "
                    "declare the secret in the called workflow and pass it under `secrets:`).",
                    related=tuple(Related(w, r.line, f"reads secrets.{r.name}") for w, r in reads[:3]),
                    caused_by_change=True,
                )

    @staticmethod
    def _new_gap(call: Call, param: Param, base: _Revision) -> bool:
        """In a change: the call did not leave the parameter out before it (new parameter, call or omission)."""
        from npu_review.checks.parsers.gha.calls import declared, passes

        base_wf = base.workflow(call.target)
        if base_wf is None:
            return True
        base_params = declared(base_wf, "workflow_call", param.kind)
        match = [p for p in base_params if p.name.lower() == param.name.lower()]
        if not match:
            return True
        needed_now = param.required and not (param.kind == "input" and param.has_default)
        needed_then = match[0].required and not (match[0].kind == "input" and match[0].has_default)
        if needed_now and not needed_then:
            return True
        old = [c for c in base.calls_to(call.target) if c.caller.path == call.caller.path]
        old_call = next((c for c in old if c.job.id == call.job.id), None)
        return old_call is None or passes(old_call, param)

    # -- declared inputs nothing reads ------------------------------------------------------------------------
    def _unread(self, ctx: Context, head: _Revision, base: _Revision | None) -> Iterator[Hit]:
        from npu_review.checks.parsers.gha.calls import passes

        for path in head.declaring():
            wf = head.workflow(path)
            if wf is None:
                continue
            unread = head.unread_inputs(wf)
            if not unread:
                continue
            base_wf = base.workflow(path) if base is not None else None
            before = base.unread_inputs(base_wf) if base is not None and base_wf is not None else None
            before_names = {p.name.lower() for p in before or ()}
            for param in unread:
                if base is not None and param.name.lower() in before_names:
                    continue  # unread before the change too
                if param.event == "workflow_call" and not param.required:
                    callers = head.calls_to(path)
                    if not any(passes(c, param) for c in callers):
                        continue  # no call gives it a value: a dead declaration, nothing is lost
                accepting = head.targets_accepting(wf, param.name)
                source = "given when the run is started" if param.event == "workflow_dispatch" else "callers pass"
                said = (
                    f"Input `{param.name}` of `{param.event}` is declared but nothing reads it (no "
                    f"`inputs.{param.name}` in the workflow): the value {source} is silently ignored."
                )
                if accepting:
                    yield from self._not_passed_on(ctx, wf, param, accepting, said)
                    continue
                # In an audit the project has lived with it: an input kept for a dispatcher's `-f name=` or copied
                # from a sibling workflow is cruft more often than a lost value (a notice, not a comment).
                yield Hit(
                    path,
                    param.line,
                    said,
                    caused_by_change=True,
                    severity=Severity.NOTICE if ctx.audit else None,
                    # A required input nothing reads and a call that leaves it out are one cause (drop the input).
                    cause=f"input {param.name} of {path}" if param.event == "workflow_call" else None,
                )

    def _not_passed_on(
        self, ctx: Context, wf: Workflow, param: Param, accepting: list[str], unread: str
    ) -> Iterator[Hit]:
        """An unread input that workflows this one calls accept: reported where it is not passed on (each call that
        leaves it out, on its `with:`), or, when every such call sets that input from something else already, as a
        dead declaration (a notice: passing it again would write the key twice)."""
        from npu_review.checks.parsers.gha.calls import calls

        key = param.name.lower()
        targeted = [c for c in calls(wf, ctx.changeset.repository) if c.target in accepting]
        missing = [c for c in targeted if key not in {k.lower() for k in c.with_}]
        if not missing:
            setting = targeted[0]
            line = next(n for k, n in setting.with_lines.items() if k.lower() == key)
            yield Hit(
                wf.path,
                param.line,
                f"{unread} The calls set `{param.name}` from another value (line {line}): remove the input, or "
                f"make them read it first (`{param.name}: ${{{{ inputs.{param.name} || ... }}}}`).",
                severity=Severity.NOTICE,
                caused_by_change=True,
            )
            return
        first = missing[0]
        src = ctx.source(wf.path)
        with_node = first.job.node.get("with")
        with_key = first.job.node.key_node("with")
        line, end, suggestion = first.line, first.line, None
        if with_node is not None and with_key is not None and with_node.is_map and with_node.pairs and src is not None:
            line, end = with_key.line, max(v.end_line for _, v in with_node.pairs)
            key_indent = len(src.line(line)) - len(src.line(line).lstrip())
            # A mapping's end mark is the next key's position: step back over blank lines and the next key.
            while end > line and (
                not src.line(end).strip() or len(src.line(end)) - len(src.line(end).lstrip()) <= key_indent
            ):
                end -= 1
            entry = with_node.pairs[0][0]
            indent = " " * (len(src.line(entry.line)) - len(src.line(entry.line).lstrip()))
            block = [src.line(n) for n in range(line, end + 1)]
            suggestion = "\n".join([*block, f"{indent}{param.name}: ${{{{ inputs.{param.name} }}}}"])
        others = missing[1:]
        more = (
            " Nor do "
            + ", ".join(f"job `{c.job.id}` (line {c.line})" for c in others[:3])
            + ("..." if len(others) > 3 else "")
            + "."
            if others
            else ""
        )
        yield Hit(
            wf.path,
            line,
            f"This call of `{first.target}` does not pass on the `{param.event}` input `{param.name}` (line "
            f"{param.line}), which the called workflow accepts: it runs with its own default, and the value given "
            f"here is ignored.{more} Add `{param.name}: ${{{{ inputs.{param.name} }}}}` under `with:`.",
            end_line=end,
            suggestion=suggestion,
            related=tuple(
                Related(wf.path, n, f"also leaves out {param.name}") for n in [param.line] + [c.line for c in others]
            ),
            caused_by_change=True,
        )


_FALSY = frozenset({"", "false", "0", "''", '""'})


def _gated_off(call: Call, wf: Workflow | None, gates: frozenset[tuple[str, str | None]]) -> bool:
    """One of the inputs that gate a read is off in this call: false, or another value than the one the `if:` asks
    for, as a literal it passes, or as the default it leaves it to (none is empty)."""
    from npu_review.checks.parsers.gha.calls import NOT_GATE

    inputs = wf.root.at("on", "workflow_call", "inputs") if wf is not None else None
    for gate, wanted in gates:
        given = next((v for k, v in call.with_.items() if k.lower() == gate), None)
        if given is None:
            spec = next((v for k, _, v in inputs.entries() if k.lower() == gate), None) if inputs is not None else None
            if spec is None or not spec.is_map:
                continue  # not an input it declares: nothing known
            given = spec.get("default")
        if given is not None and (not given.is_scalar or "${{" in given.value):
            continue  # a value known only when it runs
        value = given.value.strip().lower() if given is not None else ""  # left out without a default: empty
        if wanted == NOT_GATE:
            if value not in _FALSY:
                return True  # `!inputs.x` with x set true: the step never runs in this call
        elif (value in _FALSY) if wanted is None else (value != wanted):
            return True
    return False


_WHY = lazyre.compile(r"\b(?:intentional\w*|deliberate\w*|on purpose|omit\w*|not needed|unneeded|without)\b", re.I)


class _Revision:
    """The workflows of one revision, their calls and the inputs they leave unread. In an audit every workflow is
    read; on a change, those that can carry one of its findings (see `called` and `declaring`) and what they need
    (the workflows they call, those that call a target), found by their file names in the workflows' texts: a call
    (`uses: ./.github/workflows/x.yml`) names its target's file name literally."""

    def __init__(self, ctx: Context, rev: str) -> None:
        self.ctx = ctx
        self.rev = rev
        self.paths = workflow_paths(ctx, rev)
        self._known = frozenset(self.paths)
        self._read: dict[str, tuple[Workflow, str] | None] = {}
        self._calls: dict[str, list[Call]] | None = None  # every call by target, once every workflow is read
        self._calls_to: dict[str, list[Call]] = {}
        self._whole_inputs: dict[str, bool] = {}  # by text: each is asked for itself and by its callers
        self._undeclared: dict[str, dict[str, list[tuple[str, SecretRead]]]] = {}
        self.repository = ctx.changeset.repository
        self.automatic = frozenset(n.lower() for n in ctx.facts.github_actions.automatic_secrets)
        # The file names of the files the change touches (none in an audit, where every workflow is read).
        self._names = (
            frozenset()
            if ctx.audit
            else frozenset(
                p.rsplit("/", 1)[-1]
                for c in ctx.changeset.changes.values()
                for p in (c.path, c.old_path)
                if p is not None
            )
        )

    def _load(self, path: str) -> tuple[Workflow, str] | None:
        if path not in self._read:
            found = None
            if path in self._known:
                wf = workflow_at(self.ctx, path, self.rev)
                src = self.ctx.source_at(path, self.rev)
                if wf is not None and src is not None:
                    found = (wf, src.text)
            self._read[path] = found
        return self._read[path]

    def calls_of(self, wf: Workflow) -> list[Call]:
        from npu_review.checks.parsers.gha.calls import calls

        return calls(wf, self.repository)

    def workflow(self, path: str) -> Workflow | None:
        found = self._load(path)
        return found[0] if found is not None else None

    def text(self, path: str) -> str | None:
        found = self._load(path)
        return found[1] if found is not None else None

    def _naming(self, names: frozenset[str]) -> list[str]:
        """The workflows (in path order) whose text names one of `names` (every workflow in an audit)."""
        if self.ctx.audit:
            return self.paths
        # (found without reading the others where the tree can search its files)
        return self.ctx.paths_mentioning(sorted(names), self.paths, self.rev)

    def _all_calls(self) -> dict[str, list[Call]]:
        if self._calls is None:
            out: dict[str, list[Call]] = {}
            for path in self.paths:
                wf = self.workflow(path)
                for call in self.calls_of(wf) if wf is not None else ():
                    out.setdefault(call.target, []).append(call)
            self._calls = out
        return self._calls

    def calls_to(self, target: str) -> list[Call]:
        """Every call of `target` (by caller path, then job), from the workflows whose text names its file name."""
        if self.ctx.audit:
            return self._all_calls().get(target, [])
        found = self._calls_to.get(target)
        if found is None:
            found = self._calls_to[target] = [
                call
                for path in self._naming(frozenset({target.rsplit("/", 1)[-1]}))
                if (wf := self.workflow(path)) is not None
                for call in self.calls_of(wf)
                if call.target == target
            ]
        return found

    def called(self) -> list[str]:
        """The call targets whose calls can carry a finding, sorted: every one in an audit; on a change, a touched
        workflow or one a touched workflow calls (the gap must be new: the target or the caller changed)."""
        if self.ctx.audit:
            return sorted(self._all_calls())
        targets = {p for p in self.paths if self.ctx.touched(p)}
        for path in list(targets):
            wf = self.workflow(path)
            targets.update(call.target for call in (self.calls_of(wf) if wf is not None else ()))
        return sorted(targets)

    def inheriting_targets(self) -> list[str]:
        """The call targets whose calls can lack a `secrets: inherit` in a way the change caused, sorted: `called`
        and, up the calls that hand secrets on with `secrets: inherit`, the reusable workflows that call them (a
        workflow that starts reading a secret needs it from each caller up such a chain)."""
        targets = set(self.called())
        if self.ctx.audit:
            return sorted(targets)
        todo = [p for p in targets if self.ctx.touched(p)]
        while todo:
            path = todo.pop()
            for call in self.calls_to(path):
                up = call.caller.path
                if call.inherit and up not in targets and "workflow_call" in call.caller.triggers:
                    targets.add(up)
                    todo.append(up)
        return sorted(targets)

    def undeclared_reads(self, path: str) -> dict[str, list[tuple[str, SecretRead]]]:
        """The secrets a call of `path` can pass only by `secrets: inherit` (by lower-case name: each read and the
        workflow it is in): those it needs (see `_needs`) less those it declares under `on.workflow_call.secrets`
        (which a call passes by name)."""
        from npu_review.checks.parsers.gha.calls import declared

        wf = self.workflow(path)
        if wf is None or "workflow_call" not in wf.triggers:
            return {}
        declared_here = {p.name.lower() for p in declared(wf, "workflow_call", "secret")}
        return {k: v for k, v in self._needs(path).items() if k not in declared_here}

    def _needs(self, path: str) -> dict[str, list[tuple[str, SecretRead]]]:
        """The secrets of its caller that `path` reads: in its jobs' expressions, and those the workflows it calls
        with `secrets: inherit` read so (each gets all of this one's; their input gates are theirs, dropped here).
        Not GITHUB_TOKEN and the like, which every workflow is given."""
        from npu_review.checks.parsers.gha.calls import secret_reads

        found = self._undeclared.get(path)
        if found is not None:
            return found
        self._undeclared[path] = {}  # a cycle (which GitHub rejects) stops here
        wf = self.workflow(path)
        out: dict[str, list[tuple[str, SecretRead]]] = {}
        if wf is not None:
            for read in secret_reads(wf):
                if read.name.lower() not in self.automatic:
                    out.setdefault(read.name.lower(), []).append((path, read))
            for call in self.calls_of(wf):
                if call.inherit and call.target != path:
                    for key, reads in self._needs(call.target).items():
                        out.setdefault(key, []).extend((w, replace(r, gates=frozenset())) for w, r in reads)
        self._undeclared[path] = out
        return out

    def declaring(self) -> list[str]:
        """The workflows whose unread inputs can carry a finding, in path order: every one in an audit; on a
        change, those it touches or that name a touched file (a workflow it calls: what it reads may have moved)."""
        if self.ctx.audit:
            return self.paths
        named = set(self._naming(self._names))
        return [p for p in self.paths if p in named or self.ctx.touched(p)]

    def _whole(self, text: str) -> bool:
        """The text reads the whole `inputs` object or the event payload (see WHOLE_INPUTS)."""
        from npu_review.checks.parsers.gha.calls import reads_whole_inputs

        found = self._whole_inputs.get(text)
        if found is None:
            found = self._whole_inputs[text] = reads_whole_inputs(text)
        return found

    def says_why(self, call: Call) -> bool:
        """A comment inside the call job says it leaves something out on purpose."""
        lines = (self.text(call.caller.path) or "").splitlines()[call.job.node.line - 1 : call.job.node.end_line]
        return any(_WHY.search(line.partition("#")[2]) for line in lines if "#" in line)

    def targets_accepting(self, wf: Workflow, name: str) -> list[str]:
        """Local workflows `wf` calls that declare a `workflow_call` input `name`."""
        from npu_review.checks.parsers.gha.calls import declared

        out: list[str] = []
        for call in self.calls_of(wf):
            target = self.workflow(call.target)
            if target is None or call.target in out:
                continue
            if any(p.name.lower() == name.lower() for p in declared(target, "workflow_call", "input")):
                out.append(call.target)
        return out

    def unread_inputs(self, wf: Workflow) -> list[Param]:
        from npu_review.checks.parsers.gha.calls import declared, input_reference

        text = self.text(wf.path) or ""
        if self._whole(text):
            return []
        called = [t for c in self.calls_of(wf) if (t := self.text(c.target)) is not None]
        # And inside the repository's own actions its steps use (`uses: ./.github/actions/release`): a composite
        # action reads the run's `github.event.inputs` as the workflow does.
        for folder in _local_actions(wf):
            for name in ("action.yml", "action.yaml"):
                action = self.ctx.source_at(f"{folder}/{name}", self.rev)
                if action is not None:
                    called.append(action.text)
        out: list[Param] = []
        seen: set[str] = set()
        for event in ("workflow_dispatch", "workflow_call"):
            for param in declared(wf, event, "input"):
                key = param.name.lower()
                if key in seen:
                    continue
                seen.add(key)
                ref = input_reference(param.name)
                if ref.search(text):
                    continue
                # A dispatch input is also `github.event.inputs.X` inside the workflows this one calls.
                if event == "workflow_dispatch" and any(self._whole(t) or _event_input(param.name, t) for t in called):
                    continue
                out.append(param)
        return out


def _local_actions(wf: Workflow) -> list[str]:
    """The folders of the repository's own actions the workflow's steps use (`uses: ./.github/actions/x`)."""
    out = []
    for job in wf.jobs.values():
        for step in job.steps:
            if step.uses and step.uses.startswith("./"):
                folder = posixpath.normpath(step.uses[2:].split("@", 1)[0])
                if folder not in out and not folder.startswith(".."):
                    out.append(folder)
    return out


def _event_input(name: str, text: str) -> bool:
    return re.search(rf"event\s*\.\s*inputs\s*\.\s*{re.escape(name)}(?![\w-])", text, re.I) is not None
