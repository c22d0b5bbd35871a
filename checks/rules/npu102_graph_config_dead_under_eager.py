"""NPU102: cudagraph settings that `enforce_eager=True` makes dead."""

from __future__ import annotations

from collections.abc import Iterable

from npu_review.checks.analysis.change import swept
from npu_review.checks.analysis.device import npu_reading
from npu_review.checks.analysis.vllm_launches import vllm_launches
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import DOCS, NPU_SCRIPT, PYTHON, SHELL, YAML
from npu_review.checks.model import Severity
from npu_review.checks.parsers.shell import as_bool, hydra_str
from npu_review.checks.parsers.vllm_cli import resolve
from npu_review.checks.rule import Hit, Rule


class GraphConfigDeadUnderEager(Rule):
    """A launch script sets `cudagraph_mode` or `cudagraph_capture_sizes` while `enforce_eager=True`.

    Why: with `enforce_eager=True` vLLM (and vLLM-Ascend) captures no graph at all, so the graph settings
    do nothing. The script reads as if graph mode were tuned and measured when it is not; and whoever later
    flips `enforce_eager` inherits capture sizes and a mode nobody ran (and must also move TASK_QUEUE_ENABLE
    from 2 to 1, see NPU101).

    Bad:
        actor_rollout_ref.rollout.enforce_eager=True \\
        +actor_rollout_ref.rollout.engine_kwargs.vllm.compilation_config.cudagraph_mode=FULL_DECODE_ONLY \\

    Good:
        actor_rollout_ref.rollout.enforce_eager=False \\
        +actor_rollout_ref.rollout.engine_kwargs.vllm.compilation_config.cudagraph_mode=FULL_DECODE_ONLY \\

    One finding per `enforce_eager=True`: the graph settings it makes dead are listed together. It is a warning
    when the change writes the eager switch or a graph setting, and a notice for settings the project already
    lives with (an audit, or lines the change leaves alone: an eager test run beside its graph twin keeps the
    same arguments on purpose). A change that
    adds the same graph line to many scripts at once (a sweep) is not reported on the scripts that were eager
    before it: they run eager on purpose, and the sweep is not about them.

    Fix: remove the graph settings, or set `enforce_eager=False` if graph mode is meant (then use
    `TASK_QUEUE_ENABLE=1`). The last override of a key wins, as in Hydra; an `enforce_eager` that cannot be
    resolved (`enforce_eager=${ENFORCE_EAGER}` without a default) keeps the rule silent.

    vLLM servers and engines are checked too, in any layout: `vllm serve` / `python -m
    vllm.entrypoints.openai.api_server` with `--enforce-eager` and a `--compilation-config` (or
    `--cudagraph-capture-sizes`) that sets `cudagraph_mode` or `cudagraph_capture_sizes`, in shell scripts, docs
    shell and console code blocks and YAML `server_cmd:` configs; and Python calls (`LLM(...)`, `VllmRunner(...)`,
    `EngineArgs(...)`) with `enforce_eager=True` and such a `compilation_config={...}` or
    `cudagraph_capture_sizes=[...]`. The `enforce_eager` inside `--speculative-config` is the drafter's, not the
    model's; `cudagraph_mode` NONE is not reported; an `--enforce-eager` added in an arm that may not run, or an
    `enforce_eager=` that is not a literal, keeps it silent.
    """

    id = "NPU102"
    name = "graph-config-dead-under-eager"
    severity = Severity.WARNING
    title = "cudagraph settings are ignored because enforce_eager=True"
    kinds = frozenset({SHELL, NPU_SCRIPT, DOCS, YAML, PYTHON})

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        yield from _vllm_servers(src, ctx)
        if SHELL not in src.kinds and NPU_SCRIPT not in src.kinds:
            return
        view = npu_reading(ctx, src)
        if view is None:
            return
        launch = ctx.facts.launch
        eager_key = launch.enforce_eager_key
        keys = [*launch.cudagraph_mode_keys, *launch.cudagraph_capture_keys]
        reported: set[int] = set()
        for inv in view.invocations:
            eager = inv.effective(eager_key)
            if eager.present is not True or eager.override is None or as_bool(eager.value) is not True:
                continue
            dead = []
            for key in keys:
                graph = inv.effective(key)
                if graph.present is not True or graph.override is None:
                    continue
                dead.append((key, graph))
            if not dead:
                continue
            dead.sort(key=lambda kg: kg[1].override.line if kg[1].override is not None else 0)
            graph_lines = [g.override.line for _, g in dead if g.override is not None]
            if not any(ctx.is_added_line(src.path, n) for n in eager.override.lines) and all(
                swept(ctx, src.path, n) for n in graph_lines
            ):
                # A sweep added the same graph line to many scripts, this one eager on purpose before the change:
                # the change is not about this script's mode (issue 21: noise, not a comment).
                continue
            # One `enforce_eager=True`, one cause: every graph setting it makes dead goes in one finding.
            lines = [n for _, g in dead if g.override is not None for n in g.override.lines]
            line = ctx.first_added(src.path, (*lines, *eager.override.lines))
            if line in reported:
                continue
            reported.add(line)
            shown = []
            for key, graph in dead:
                assert graph.override is not None
                value = hydra_str(graph.value)
                shown.append(
                    f"`{key.rsplit('.', 1)[-1]}{'=' + value if isinstance(value, str) else ''}` "
                    f"(line {graph.override.line})"
                )
            what = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + f" and {shown[-1]}"
            verb = "has" if len(shown) == 1 else "have"
            yield Hit(
                src.path,
                line,
                f"{what} {verb} no effect: `enforce_eager=True` on line {eager.override.line} runs the vLLM "
                "rollout eagerly, so no graph is captured. Remove the graph settings, or set "
                "`enforce_eager=False` if graph mode is meant (and use TASK_QUEUE_ENABLE=1 with it).",
            ).unless_introduced(ctx, [(src.path, n) for n in (*lines, *eager.override.lines)])


# The compilation-config keys that only act on captured graphs.
_GRAPH_KEYS = ("cudagraph_mode", "cudagraph_capture_sizes")


def _vllm_servers(src: SourceFile, ctx: Context) -> Iterable[Hit]:
    """vLLM servers and `LLM(...)` calls made eager (`--enforce-eager`, `enforce_eager=True`) that still set
    graph keys of their compilation config."""
    cli = ctx.facts.vllm_cli
    reported: set[int] = set()
    for launch in vllm_launches(ctx, src):
        config = resolve(launch.args, cli)
        if config.eager is not True or config.eager_line is None:
            continue
        dead = []
        for key in _GRAPH_KEYS:
            s = config.setting("compilation", key)
            if s is None or s.conditional or (key == "cudagraph_mode" and str(s.value).upper() == "NONE"):
                continue
            dead.append((key, s))
        if not dead:
            continue
        if not ctx.is_added_line(src.path, config.eager_line) and all(swept(ctx, src.path, s.line) for _k, s in dead):
            continue  # a sweep's graph line in a server that was eager before it (see the docstring)
        line = ctx.first_added(src.path, (*(s.line for _k, s in dead), config.eager_line))
        if line in reported:
            continue
        reported.add(line)
        shown = [f"`{key}={_show(s.value)}` (line {s.line})" for key, s in dead]
        what = shown[0] if len(shown) == 1 else " and ".join(shown)
        verb = "has" if len(shown) == 1 else "have"
        eager = "`enforce_eager=True`" if launch.where == "python" else f"`{cli.eager_flag}`"
        yield Hit(
            src.path,
            line,
            f"{what} {verb} no effect: {eager} on line {config.eager_line} runs the vLLM server eagerly, so no "
            f"graph is captured. Remove the graph settings, or drop {eager} if graph mode is meant (and use "
            "TASK_QUEUE_ENABLE=1 with it).",
            # Dead settings the project lives with (an eager test run beside its graph twin keeps the same
            # arguments on purpose; old ones are cruft) are a notice; the change that writes them gets the warning.
        ).unless_introduced(ctx, [(src.path, n) for n in (*(s.line for _k, s in dead), config.eager_line)])


def _show(value: object) -> str:
    if isinstance(value, list):
        return "[" + ",".join(str(v) for v in value) + "]"
    return str(value)
