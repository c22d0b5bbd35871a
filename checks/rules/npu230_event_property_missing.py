"""NPU230: an expression reads `github.event.<name>` where no event that triggers the workflow has that property."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from npu_review.checks import lazyre
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import ASCEND_WORKFLOW, GITHUB, workflow_host
from npu_review.checks.model import Related, Severity
from npu_review.checks.parsers.gha.workflow import Workflow
from npu_review.checks.rule import Hit, Rule

# `${{ ... }}` on one line, and a one-line `if:` (an implicit expression).
_EXPR = lazyre.compile(r"\$\{\{(.*?)\}\}")
_IF = lazyre.compile(r"^\s*(?:-\s+)?if:\s*(?P<v>[^|>\s].*)$")
# `github.event.name` and what follows it (`.a.b`), not `github.event_name` or `github.event['x']`.
_REF = lazyre.compile(r"(?<![\w.])github\.event\.(?P<name>[A-Za-z_][\w-]*)(?P<rest>(?:\.[A-Za-z_][\w-]*)*)")
# An event whose payload the run does not see as its own: a called workflow gets its caller's.
_UNKNOWN_EVENTS = frozenset({"workflow_call"})
# A test of the event's name (`github.event_name == 'release'`, `[ "${{ github.event_name }}" = "release" ]`): code
# written for that event, dead where the workflow lacks its trigger, not a wrong name.
_EVENT_TEST = lazyre.compile(
    r"event_name\s*(?:\}\}\s*)?[\"']?\s*[!=]=?\s*[\"'](?P<a>[\w-]+)[\"']"
    r"|[\"'](?P<b>[\w-]+)[\"']\s*[!=]=?\s*[\"']?(?:\$\{\{\s*)?github\.event_name"
)
_LISTED = 6


class EventPropertyMissing(Rule):
    """An expression reads `github.event.<name>`, and no event that triggers the workflow has that property.

    Why: `github.event` is the payload of the event that started the run. A property it does not have is no
    error to GitHub: the expression is empty (an `if:` on it is false), the step runs with an empty value and
    the job does something else than meant, without a word in the log. vllm-ascend's `/nightly` command
    handler read `github.event.repository_dispatch.action` to tell a nightly from a weekly request; a
    `repository_dispatch` payload has `action` at its top, so the command type was always empty (fixed in
    #11339).

    Checked: in an Ascend workflow, every `github.event.<name>` inside `${{ }}` or a one-line `if:`, against
    the top-level properties of the payloads of all the events in its `on:` (the facts' `github_events`, read
    from octokit/webhooks' payload schemas, every activity type together). A name none of them has is
    reported once per file, with its other lines; where a later part of the path is a property (`action` in
    `github.event.repository_dispatch.action`), or a property is close to the name, the message names it.

    Not reported: workflows with an event the facts do not describe (`schedule`, which no schema covers) or
    `workflow_call` (a called workflow sees its caller's payload), names some trigger's payload has (a
    workflow triggered by `push` and `pull_request` may read `github.event.pull_request` in the jobs that run
    on pull requests), an operand of `||` (`github.event.pull_request.number || github.ref` has its fallback),
    a concurrency `group:` (an empty part only groups runs: boilerplate copied between workflows),
    and a property named after an event the file tests for (`github.event.release` where a step checks
    `github.event_name == 'release'`: code for that event, dead without its trigger rather than wrong).

    Bad (`.github/workflows/pr_nightly_command.yml`):
        on:
          repository_dispatch:
            types: [nightly-command, weekly-command]
        jobs:
          dispatch:
            runs-on: linux-aarch64-a3-0
            steps:
              - run: echo "type=${{ github.event.repository_dispatch.action }}"

    Good:
        on:
          repository_dispatch:
            types: [nightly-command, weekly-command]
        jobs:
          dispatch:
            runs-on: linux-aarch64-a3-0
            steps:
              - run: echo "type=${{ github.event.action }}"

    Fix: read the property the payload has (`github.event.action` is a `repository_dispatch` event's type,
    `github.event.inputs.X` a `workflow_dispatch` input), or add the trigger whose payload has it.
    """

    id = "NPU230"
    name = "event-property-missing"
    severity = Severity.ERROR
    title = "`github.event.<name>` that no trigger's payload has"
    kinds = frozenset({ASCEND_WORKFLOW})
    needles = ("github.event.",)

    def check_workflow(self, wf: Workflow, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if workflow_host(src.path) is not GITHUB:
            return  # GitHub's webhook payloads; GitCode's event is `atomgit.event`, with payloads of its own
        triggers = wf.triggers
        payloads = ctx.facts.github_events.payload_keys
        if not triggers or triggers & _UNKNOWN_EVENTS or any(t not in payloads for t in triggers):
            return
        known = frozenset(k for t in triggers for k in payloads[t])
        tested = {m.group("a") or m.group("b") for m in _EVENT_TEST.finditer(src.text)}
        found: dict[str, list[tuple[int, str]]] = {}  # name -> (line, rest of the path)
        for n, text_line in enumerate(src.lines, start=1):
            stripped = text_line.lstrip()
            if not stripped or stripped.startswith(("#", "group:")) or "github.event." not in text_line:
                continue  # a concurrency group only groups runs: an empty part is boilerplate, not a wrong value
            texts = [m.group(1) for m in _EXPR.finditer(text_line)]
            m_if = _IF.match(text_line)
            if m_if is not None and "${{" not in m_if.group("v"):
                texts.append(m_if.group("v"))
            for text in texts:
                for ref in _REF.finditer(text):
                    name = ref.group("name")
                    if name in known or name in tested:
                        continue  # a property some trigger's payload has, or code for an event the file tests for
                    if text[ref.end() :].lstrip().startswith("||") or text[: ref.start()].rstrip().endswith("||"):
                        continue  # an operand of `||`: the expression has its fallback for an empty value
                    found.setdefault(name, []).append((n, ref.group("rest")))
        events = " and ".join(f"`{t}`" for t in sorted(triggers))
        if len(triggers) == 1:
            subject = f"the payload of {events} events does not have (its properties"
        else:
            subject = f"the payloads of {events} events do not have (their properties"
        for name, places in found.items():
            line, rest = places[0]
            later = [p for p in rest.split(".") if p in known]
            # The event of the property's name (`workflow_run`), else the first two whose payloads have it.
            owners = [e for e in sorted(payloads) if name in payloads[e]][:2]
            if name in payloads.get(name, ()):
                owners = [name]
            close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.75)
            if later:
                hint = f" The payload has `{later[0]}` at its top: `github.event.{later[0]}`?"
            elif owners:
                listed = " and ".join(f"`{e}`" for e in owners)
                hint = (
                    f" {listed} events have it, and this workflow has no such trigger: add it, or drop the expression."
                )
            elif close:
                hint = f" Did you mean `github.event.{close[0]}`?"
            else:
                hint = ""
            shown = ", ".join(sorted(known)[:_LISTED]) + (", ..." if len(known) > _LISTED else "")
            others = [n for n, _ in places[1:]]
            also = f" (also on line{'s' if len(others) > 1 else ''} {', '.join(map(str, others))})" if others else ""
            yield Hit(
                src.path,
                line,
                f"`github.event.{name}{rest}`{also} reads a property that {subject}: {shown}): the expression is "
                f"always empty.{hint}",
                related=tuple(Related(src.path, n, "the same property") for n in others),
                cause=f"github.event.{name}",
            )
