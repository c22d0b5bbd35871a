"""NPU101: `TASK_QUEUE_ENABLE=2` exported while the vLLM rollout runs in graph mode (ACL Graph)."""

from __future__ import annotations

from collections.abc import Iterable

from npu_review.checks.analysis.device import npu_reading
from npu_review.checks.analysis.scripts import RUNNERS, resolve_script
from npu_review.checks.analysis.vllm_launches import Launch, vllm_launches
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import DOCS, NPU_SCRIPT, SHELL, YAML
from npu_review.checks.model import Severity
from npu_review.checks.parsers.shell import UNKNOWN, EnvValue, Invocation, View, as_bool, hydra_str
from npu_review.checks.parsers.vllm_cli import Resolved, resolve
from npu_review.checks.rule import Hit, Rule


class GraphModeWithTaskQueue2(Rule):
    """An NPU launch script exports `TASK_QUEUE_ENABLE=2` while the vLLM rollout runs in graph mode.

    Why: on Ascend, vLLM-Ascend captures ACL graphs by default (`enforce_eager=False`, also verl's default).
    ACL Graph and task-queue level 2 cannot both be on (docs/ascend_tutorial perf_tuning_on_ascend.rst): the
    rollout fails or hangs. Level 2 is right for eager scripts only; graph mode wants level 1.
    `VLLM_ASCEND_TASK_QUEUE_ENABLE` gives the rollout workers a level of their own.

    Bad:
        export TASK_QUEUE_ENABLE=2
        python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.name=vllm \\
            actor_rollout_ref.rollout.enforce_eager=False ...

    Good:
        export TASK_QUEUE_ENABLE=1                      # graph mode
        # or stay eager:      actor_rollout_ref.rollout.enforce_eager=True
        # or keep 2 for training only:   export VLLM_ASCEND_TASK_QUEUE_ENABLE=1

    Fix: export `TASK_QUEUE_ENABLE=1`, or set `actor_rollout_ref.rollout.enforce_eager=True`, or export
    `VLLM_ASCEND_TASK_QUEUE_ENABLE=1` so that the rollout workers use level 1. The rule stays silent when
    the rollout is SGLang, when `enforce_eager` cannot be resolved, on GPU branches of dual-device scripts, and
    under TorchAir graph mode (`VLLM_ENABLE_GRAPH_MODE=1` exported, or a `torchair_graph_config` override that
    turns it on): TorchAir runs no ACL Graph, so level 2 is not in conflict. It does not follow `ray job submit`
    (the job gets the cluster's environment).

    vLLM servers started directly are checked too, in any layout: `vllm serve MODEL ...` and `python -m
    vllm.entrypoints.openai.api_server ...` in shell scripts, in shell code blocks (and the `$ ` lines of console
    blocks) of Markdown/reST docs, and YAML test configs whose `server_cmd:` (a string or a list of arguments) gets
    `TASK_QUEUE_ENABLE: "2"` from an `envs:`/`env_common:` mapping. There graph mode is on unless the command has
    `--enforce-eager` (the `enforce_eager` key inside `--speculative-config` makes only the drafter eager and does
    not count); `-O0`, `cudagraph_mode` NONE, compilation mode 0, TorchAir (`torchair_graph_config` enabled in
    `--additional-config`) and options that cannot be read (`$EXTRA_ARGS`, an array filled in an arm that may not
    run) keep it silent. `VLLM_ASCEND_TASK_QUEUE_ENABLE` is not read there (it is a trainer's setting for its
    rollout workers).
    """

    id = "NPU101"
    name = "graph-mode-with-task-queue-2"
    severity = Severity.ERROR
    title = "TASK_QUEUE_ENABLE=2 exported while the vLLM rollout runs in graph mode"
    kinds = frozenset({SHELL, NPU_SCRIPT, DOCS, YAML})
    context_kinds = frozenset({SHELL, NPU_SCRIPT})  # the scripts a launcher calls (_called_scripts)
    context_triggers = frozenset({SHELL, NPU_SCRIPT})  # docs and YAML configs call no script

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        reported: set[int] = set()
        yield from _vllm_servers(src, ctx, reported)
        if SHELL not in src.kinds and NPU_SCRIPT not in src.kinds:
            return
        view = npu_reading(ctx, src)
        if view is None:
            return
        launch, task_queue = ctx.facts.launch, ctx.facts.task_queue
        levels = set(task_queue.graph_incompatible_levels)
        recommended = task_queue.graph_recommended_level
        tq_name, rollout_tq_name = task_queue.env, launch.rollout_task_queue_env
        name_key, eager_key = launch.rollout_name_key, launch.enforce_eager_key
        targets: list[tuple[Invocation, Invocation | int, str]] = [(inv, inv, "") for inv in view.invocations]
        targets += list(_called_scripts(src, ctx, view, (tq_name, rollout_tq_name)))
        for inv, at, where_file in targets:
            if inv.launcher == "ray":
                continue  # `ray job submit`: the job runs with the cluster's environment, not this shell's
            env = _rollout_level(view, at, tq_name, rollout_tq_name)
            if env is None or not isinstance(env.value, str) or env.value.strip() not in levels:
                continue
            if not _is_vllm(inv, name_key, launch.rollout_root):
                continue
            if _torchair(view, at, inv) or (where_file and _torchair_in(ctx, where_file[4:], inv)):
                continue  # TorchAir graph mode: no ACL Graph is captured, level 2 is not in conflict
            eager = inv.effective(eager_key)
            if eager.present is None or (eager.value is not None and as_bool(eager.value) is not False):
                continue  # eager (True), unknown, or set only in an arm that may not run
            if eager.override is not None:
                where = f"`enforce_eager={hydra_str(eager.value)}` on line {eager.override.line}{where_file}"
                candidates = (*env.lines, *(() if where_file else eager.override.lines))
            else:
                where = f"`enforce_eager` is not set{where_file}, so graph mode is on by default"
                candidates = env.lines
            place = _new_place(ctx, src.path, env.line, candidates, reported)
            if place is None:
                continue
            line, via = place
            yield Hit(
                src.path,
                line,
                f"`{env.name}={env.value.strip()}`{via} reaches the vLLM rollout, which runs in graph mode "
                f"(ACL Graph): {where} (command on line {inv.line}{where_file}). ACL Graph and task-queue level "
                f"{env.value.strip()} cannot both be on. Export `{tq_name}={recommended}` for graph mode, set "
                f"`{eager_key}=True` to stay eager, or export `{rollout_tq_name}={recommended}` for the rollout "
                "workers.",
            )


def _rollout_level(view: View, inv: Invocation | int, tq_name: str, rollout_tq_name: str) -> EnvValue | None:
    """The task-queue level the rollout workers get: VLLM_ASCEND_TASK_QUEUE_ENABLE wins when non-empty."""
    specific = view.env(rollout_tq_name, inv)
    if specific is not None and specific.exported is True:
        if specific.value is UNKNOWN:
            return None  # cannot tell which level the rollout gets
        if isinstance(specific.value, str) and specific.value.strip():
            return specific
    elif specific is not None:
        return None  # exported only in an arm that may not run
    env = view.env(tq_name, inv)
    return env if env is not None and env.exported is True else None


# TorchAir graph mode (vLLM-Ascend's other graph mode, e.g. in an r1_ascend recipe): no ACL Graph runs.
_TORCHAIR_ENV = "VLLM_ENABLE_GRAPH_MODE"
_TORCHAIR_KEY = "torchair_graph_config"


def _torchair(view: View, at: Invocation | int, inv: Invocation) -> bool:
    """The rollout runs TorchAir graph mode: `VLLM_ENABLE_GRAPH_MODE=1` is exported for the command, or an
    override turns on a `torchair_graph_config` (its `enabled` key, or the dict itself)."""
    env = view.env(_TORCHAIR_ENV, at)
    if env is not None and isinstance(env.value, str) and env.value.strip() == "1":
        return True
    for o in inv.overrides:
        if _TORCHAIR_KEY not in o.key and _TORCHAIR_KEY not in (o.raw or ""):
            continue
        if o.key.endswith(f"{_TORCHAIR_KEY}.enabled"):
            if isinstance(o.value, str) and as_bool(o.value) is True:
                return True
        elif o.prefix != "~":
            return True
    return False


def _torchair_in(ctx: Context, path: str, inv: Invocation) -> bool:
    """The called script (which runs `inv`) exports VLLM_ENABLE_GRAPH_MODE=1 itself."""
    other = ctx.source(path)
    if other is None:
        return False
    view = npu_reading(ctx, other, assume_npu=True)
    return view is not None and _torchair(view, inv, inv)


def _called_scripts(
    src: SourceFile, ctx: Context, view: View, env_names: tuple[str, ...]
) -> Iterable[tuple[Invocation, Invocation | int, str]]:
    """Launch commands of repository scripts this one runs (`bash path/x.sh`, `source x.sh`), which inherit
    its exported variables: (their invocation, the point of the call here, " in path")."""
    for call in view.calls:
        if call.program not in RUNNERS or not call.argument.endswith(".sh"):
            continue
        target = resolve_script(ctx, src.path, call.argument)
        if target is None or target == src.path:
            continue
        other = ctx.source(target)
        if other is None:
            continue
        other_view = npu_reading(ctx, other, assume_npu=True)
        if other_view is None or any(other_view.env(n) is not None for n in env_names):
            continue  # the called script sets the level itself: its own check covers it
        for inv in other_view.invocations:
            yield inv, call.index, f" in {target}"


def _is_vllm(inv: Invocation, name_key: str, root: str) -> bool:
    name = inv.effective(name_key)
    if name.value is UNKNOWN:
        return True  # unresolved: vLLM is the usual backend
    if name.value is None:
        # Missing: the trainer's default (vLLM) when the command configures the trainer that has the rollout
        # (an override under the rollout key's root, `actor_rollout_ref.`); a `torchrun train.py` of another
        # framework that sets none has no vLLM rollout at all.
        return any(o.key.startswith(root) for o in inv.overrides)
    value = hydra_str(name.value)
    return isinstance(value, str) and value.lower() == "vllm"


def _new_place(
    ctx: Context, path: str, env_line: int, candidates: Iterable[int], reported: set[int]
) -> tuple[int, str] | None:
    """The line to report on (the first the change adds among `candidates`) and how the message names the
    export's own line when it is another; None when a finding of this file is already on that line."""
    line = ctx.first_added(path, candidates)
    if line in reported:
        return None
    reported.add(line)
    return line, f" (line {env_line})" if line != env_line else ""


def _vllm_servers(src: SourceFile, ctx: Context, reported: set[int]) -> Iterable[Hit]:
    """vLLM servers started directly (`vllm serve`, the OpenAI api_server, a YAML `server_cmd`) in graph mode,
    vLLM's default, with the task-queue level 2 in their environment."""
    task_queue, cli = ctx.facts.task_queue, ctx.facts.vllm_cli
    levels = set(task_queue.graph_incompatible_levels)
    for launch in vllm_launches(ctx, src):
        env = launch.env.get(task_queue.env)
        if env is None or env.value not in levels:
            continue
        config = resolve(launch.args, cli)
        if config.eager is not False or config.no_graph is not None or _torchair_server(launch, config, ctx):
            continue
        mode = config.setting("compilation", "cudagraph_mode")
        graph = f"`cudagraph_mode={mode.value}` on line {mode.line}" if mode is not None else "graph mode by default"
        place = _new_place(ctx, src.path, env.line, (*env.lines, launch.line), reported)
        if place is None:
            continue
        line, via = place
        yield Hit(
            src.path,
            line,
            f"`{task_queue.env}={env.value}`{via} reaches the vLLM server started on line {launch.line}, which "
            f"runs in graph mode (ACL Graph): no `{cli.eager_flag}`, {graph}. ACL Graph and task-queue level "
            f"{env.value} cannot both be on. Export `{task_queue.env}={task_queue.graph_recommended_level}` for "
            f"graph mode, or add `{cli.eager_flag}` to stay eager.",
        )


def _torchair_server(launch: Launch, config: Resolved, ctx: Context) -> bool:
    """TorchAir graph mode (no ACL Graph): VLLM_ENABLE_GRAPH_MODE=1, or an additional config whose
    torchair_graph_config is enabled; an additional config that cannot be read may be one."""
    env = launch.env.get(_TORCHAIR_ENV)
    if env is not None and env.value in (None, "1"):
        return True
    if "additional" in config.unknown_config:
        return True
    torchair = config.setting("additional", ctx.facts.vllm_cli.torchair_key)
    if torchair is None:
        return False
    value = torchair.value
    return not isinstance(value, dict) or value.get("enabled", value.get("enable")) not in (False, None)
