"""NPU103: a change switches an NPU launch script to graph mode or changes its cudagraph_mode."""

from __future__ import annotations

from collections.abc import Iterable

from npu_review.checks.analysis.device import npu_reading
from npu_review.checks.analysis.launch import mode_issue, mode_keys
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import NPU_SCRIPT, SHELL
from npu_review.checks.messages import short_key
from npu_review.checks.model import ChangeStatus, Severity
from npu_review.checks.parsers.shell import Effective, Invocation, View, as_bool, as_int, hydra_str
from npu_review.checks.rule import Hit, Rule

_CP_SUFFIX = "context_parallel_size"


class GraphModeSwitch(Rule):
    """A change turns on graph mode (ACL Graph) in an NPU launch script, or changes its cudagraph_mode.

    Why: graph mode is supported and even recommended on Ascend (`enforce_eager=False` with
    `cudagraph_mode=FULL_DECODE_ONLY` is the documented setup), so this is no error. But it changes how the
    rollout runs, and it has been slipped into unrelated changes (#7035, titled "update ascend ci docker
    tag", switched an NPU script from eager to FULL_DECODE_ONLY). Graph mode needs TASK_QUEUE_ENABLE=1 (not
    2), FULL graphs do not work with context parallel, and the image's vLLM-Ascend must support ACL Graph
    (>= 0.9.1) and the chosen mode.

    Bad (in a PR titled "[ci] test: update ascend ci docker tag"):
        -    actor_rollout_ref.rollout.enforce_eager=True \\
        +    actor_rollout_ref.rollout.enforce_eager=False \\
        +    +actor_rollout_ref.rollout.engine_kwargs.vllm.compilation_config.cudagraph_mode="FULL_DECODE_ONLY" \\

    The same lines in a PR that says so ("[rollout, perf] feat: enable ACL graph for the Qwen3-8B NPU
    example"), with TASK_QUEUE_ENABLE=1 and a run on the target image, are a notice instead. So is a flip
    alone to the `cudagraph_mode` the script already set (which eager mode left dead, NPU102's finding): the
    change makes the script do what it says, whatever the title.

    Good (back to eager mode, in a PR titled "[ci] chore: fix npu ci failure"):
        -    actor_rollout_ref.rollout.enforce_eager=False \\
        +    actor_rollout_ref.rollout.enforce_eager=True \\

    One finding per command: an `enforce_eager` flip and the `cudagraph_mode` that comes with it are one
    change, said once, with the conditions as they stand in the script (task-queue level, context parallel)
    and the vLLM-Ascend version graph mode needs.

    Fix: make it a change of its own (or name it in the title), check the three points above, and show a
    run. The finding is a notice; it becomes a warning when the title does not mention the rollout, perf,
    cfg, graph or vllm, or when FULL is combined with context parallel. Invalid modes and FULL with rollout
    context parallel are NPU108's errors and are not repeated here. Never reported on GPU scripts or on
    `--all` audits (there is nothing to compare).
    """

    id = "NPU103"
    name = "graph-mode-switch"
    severity = Severity.NOTICE
    title = "A change switches an NPU launch script to graph mode or changes cudagraph_mode"
    kinds = frozenset({SHELL, NPU_SCRIPT})

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if ctx.audit:
            return
        change = ctx.changeset.changed(src.path)
        if change is None or change.status == ChangeStatus.ADDED:
            return  # a new script switches nothing
        base = ctx.source(change.old_path or src.path, rev="base")
        if base is None:
            return
        head_view = npu_reading(ctx, src)
        base_view = npu_reading(ctx, base, rev="base")
        if head_view is None or base_view is None or not base_view.invocations:
            return
        eager_key = ctx.facts.launch.enforce_eager_key
        base_eager = [_eager(inv, eager_key) for inv in base_view.invocations]
        base_modes = {_mode(inv, key) for inv in base_view.invocations for key in mode_keys(ctx)}
        before = sorted(m for m in base_modes if m is not None)
        was = f"was {', '.join(before)}" if before else "was not set"
        default = ctx.facts.launch.cudagraph_mode_default
        if None in base_modes and default:
            base_modes.add(default.upper())  # making the project's default explicit changes nothing
        reported: set[int] = set()
        for inv in head_view.invocations:
            eager = inv.effective(eager_key)
            head_eager = _eager(inv, eager_key)
            if eager.present is None or head_eager is None or head_eager is True:
                continue  # unknown, or still eager: nothing switched to graph mode
            modes = [(key, inv.effective(key)) for key in mode_keys(ctx)]
            # (lines, what changed, mode value, whether a deletion alone caused it)
            items: list[tuple[tuple[int, ...], str, str | None, bool]] = []
            if all(b is True for b in base_eager):
                what = (
                    f"`enforce_eager` goes from True to {hydra_str(eager.value)} (graph mode)"
                    if eager.override is not None
                    else "`enforce_eager=True` is removed, so graph mode (the default) is on"
                )
                lines = eager.override.lines if eager.override is not None else ()
                lines += tuple(n for _k, e in modes if e.override is not None for n in e.override.lines)
                # Deleting `enforce_eager=True` may leave no added line behind: the finding then sits on the
                # command's first line, unchanged, and is kept as caused by the change.
                deleted_only = eager.override is None and not any(ctx.is_added_line(src.path, n) for n in lines)
                items.append((lines or (inv.line,), what, _first_mode(modes), deleted_only))
            for _key, eff in modes:
                value = hydra_str(eff.value)
                if eff.present is not True or eff.override is None or not isinstance(value, str):
                    continue
                if value.upper() in base_modes:
                    continue
                items.append((eff.override.lines, f"`cudagraph_mode` is now {value} ({was})", value, False))
            if not items:
                continue
            # One command, one cause: the switch and the mode it comes with are one finding.
            deleted_only = all(d for *_, d in items)
            all_lines = tuple(n for lines, *_ in items for n in lines)
            line = inv.line if deleted_only else ctx.first_added(src.path, all_lines)
            if line in reported:
                continue
            reported.add(line)
            what = " and ".join(dict.fromkeys(w for _, w, _, _ in items))
            mode = next((m for _, _, m, _ in items if m is not None), None)
            # A flip alone, to the graph mode the script already named (dead under eager until now, NPU102's
            # finding): the change makes the script do what it said, whatever its title.
            asked = len(items) == 1 and items[0][2] is not None and items[0][2].upper() in before
            reasons = _escalations(ctx, inv, mode, asked)
            yield Hit(
                src.path,
                line,
                _message(ctx, head_view, inv, what, mode, reasons),
                severity=Severity.WARNING if reasons else None,
                caused_by_change=deleted_only,
            )


def _eager(inv: Invocation, key: str) -> bool | None:
    """True/False when known (absent = False, the default), None when unresolved or conditional."""
    eff = inv.effective(key)
    if eff.present is None:
        return None
    if eff.value is None:
        return False
    return as_bool(eff.value)


def _mode(inv: Invocation, key: str) -> str | None:
    value = hydra_str(inv.effective(key).value)
    return value.upper() if isinstance(value, str) else None


def _first_mode(modes: list[tuple[str, Effective]]) -> str | None:
    for _key, eff in modes:
        value = hydra_str(eff.value)
        if isinstance(value, str):
            return value
    return None


def _context_parallel(inv: Invocation) -> list[tuple[str, int, int]]:
    """(key, size, line) of every `*context_parallel_size` > 1 the command sets."""
    out = []
    for key in dict.fromkeys(o.key for o in inv.overrides if o.key.endswith(_CP_SUFFIX)):
        eff = inv.effective(key)
        size = as_int(eff.value)
        if eff.present is True and eff.override is not None and size is not None and size > 1:
            out.append((key, size, eff.override.line))
    return out


def _escalations(ctx: Context, inv: Invocation, mode: str | None, asked: bool = False) -> list[str]:
    """Why the finding is a warning; `asked`: the change only turns on the graph mode the script already set,
    which no title needs to announce."""
    reasons = []
    title = ctx.changeset.title.strip()
    words = [w.lower() for w in ctx.facts.launch.graph_change_title_words]
    if title and not asked and not any(w in title.lower() for w in words):
        reasons.append(f'the title "{title}" does not say that it changes the rollout')
    if mode is not None:
        issue = mode_issue(ctx, inv, mode)
        if issue is not None:
            if not ctx.config.enabled("NPU108"):
                reasons.append(issue.message)  # NPU108 would say it; here only when it is switched off
        elif mode.upper() in ctx.facts.graph_modes.full_with_prefill:
            cp = _context_parallel(inv)
            if cp:
                key, size, line = cp[0]
                shown = short_key(key, ctx.facts.ascend_values.message_prefix)
                reasons.append(f"FULL graphs are combined with context parallel (`{shown}={size}`, line {line})")
    return reasons


def _message(ctx: Context, view: View, inv: Invocation, what: str, mode: str | None, reasons: list[str]) -> str:
    since = ctx.facts.vllm_ascend.graph_mode_since
    tq = view.env(ctx.facts.task_queue.env, inv)
    if tq is None:
        tq_text = "TASK_QUEUE_ENABLE is not exported here (graph mode needs level 1, never 2)"
    elif isinstance(tq.value, str):
        tq_text = f"TASK_QUEUE_ENABLE={tq.value} on line {tq.line} (graph mode needs 1, never 2)"
    else:
        tq_text = f"TASK_QUEUE_ENABLE on line {tq.line} cannot be resolved (graph mode needs 1, never 2)"
    cp = _context_parallel(inv)
    prefix = ctx.facts.ascend_values.message_prefix
    cp_text = (
        "context parallel: " + ", ".join(f"`{short_key(k, prefix)}={n}` (line {ln})" for k, n, ln in cp)
        if cp
        else "no context parallel is set (FULL graphs do not work with it)"
    )
    mode_text = f" and cudagraph_mode={mode}" if mode else ""
    text = (
        f"Graph-mode change on NPU: {what}. Graph mode is supported on Ascend; its conditions here: {tq_text}; "
        f"{cp_text}; the image's vLLM-Ascend must support ACL Graph (>= {since}){mode_text}. Show a run on the "
        "target image."
    )
    if reasons:
        text += " Raised to a warning: " + "; ".join(reasons) + "."
    return text
