"""NPU102: cudagraph settings that `enforce_eager=True` makes dead."""

from __future__ import annotations

from collections.abc import Iterable

from checks.context import Context, SourceFile
from checks.kinds import NPU_SCRIPT, SHELL
from checks.model import Severity
from checks.parsers.shell import as_bool, hydra_str, npu_view, parse
from checks.rule import Hit, Rule


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

    Fix: remove the graph settings, or set `enforce_eager=False` if graph mode is meant (then use
    `TASK_QUEUE_ENABLE=1`). The last override of a key wins, as in Hydra; an `enforce_eager` that cannot be
    resolved (`enforce_eager=${ENFORCE_EAGER}` without a default) keeps the rule silent.
    """

    id = "NPU102"
    name = "graph-config-dead-under-eager"
    severity = Severity.WARNING
    title = "cudagraph settings are ignored because enforce_eager=True"
    kinds = frozenset({SHELL, NPU_SCRIPT})

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        view = npu_view(
            ctx.parsed("shell", src, parse), src.kinds, ctx.facts.ascend_values.device_key, ctx.facts.launchers
        )
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
            for key in keys:
                graph = inv.effective(key)
                if graph.present is not True or graph.override is None:
                    continue
                line = _first_added(ctx, src.path, (*graph.override.lines, *eager.override.lines))
                if line in reported:
                    continue
                reported.add(line)
                short = key.rsplit(".", 1)[-1]
                shown = hydra_str(graph.value)
                value = f"={shown}" if isinstance(shown, str) else ""
                yield Hit(
                    src.path,
                    line,
                    f"`{short}{value}` (line {graph.override.line}) has no effect: `enforce_eager=True` on line "
                    f"{eager.override.line} runs the vLLM rollout eagerly, so no graph is captured. Remove the "
                    "graph settings, or set `enforce_eager=False` if graph mode is meant (and use "
                    "TASK_QUEUE_ENABLE=1 with it).",
                )


def _first_added(ctx: Context, path: str, lines: Iterable[int]) -> int:
    ordered = [n for n in lines if n > 0]
    for n in ordered:
        if ctx.is_added_line(path, n):
            return n
    return ordered[0] if ordered else 1
