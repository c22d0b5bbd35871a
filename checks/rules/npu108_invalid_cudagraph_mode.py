"""NPU108: a `cudagraph_mode` vLLM does not know, or FULL graphs with rollout context parallel."""

from __future__ import annotations

from collections.abc import Iterable

from npu_review.checks.analysis.device import npu_reading
from npu_review.checks.analysis.launch import deciding_overrides, full_with_cp, mode_issue, mode_keys, mode_name_issue
from npu_review.checks.analysis.vllm_launches import vllm_launches
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import DOCS, NPU_SCRIPT, PYTHON, SHELL, YAML
from npu_review.checks.model import Severity
from npu_review.checks.parsers.shell import Override, hydra_str
from npu_review.checks.parsers.vllm_cli import resolve
from npu_review.checks.rule import Hit, Rule


class InvalidCudagraphMode(Rule):
    """`cudagraph_mode` is not a mode vLLM knows, or FULL graphs are combined with rollout context parallel.

    Why: vLLM parses `compilation_config.cudagraph_mode` with `CUDAGraphMode[value.upper()]`: any other
    spelling (`FULL-DECODE-ONLY`, `FULL_DECODE`) fails when the rollout starts, after the model has been
    loaded. Valid: NONE, PIECEWISE, FULL, FULL_DECODE_ONLY, FULL_AND_PIECEWISE (case does not matter).
    `FULL` also captures prefill, which is not supported with prefill/decode context parallel (verl itself
    falls back to PIECEWISE when `decode_context_parallel_size > 1`).

    Bad:
        +actor_rollout_ref.rollout.engine_kwargs.vllm.compilation_config.cudagraph_mode=FULL-DECODE-ONLY
        +actor_rollout_ref.rollout.engine_kwargs.vllm.compilation_config.cudagraph_mode=FULL \\
        +actor_rollout_ref.rollout.engine_kwargs.vllm.decode_context_parallel_size=2

    Good:
        +actor_rollout_ref.rollout.engine_kwargs.vllm.compilation_config.cudagraph_mode=FULL_DECODE_ONLY

    Fix: use one of the valid names (the suggestion gives the exact spelling when the intent is clear);
    with context parallel, use FULL_DECODE_ONLY or PIECEWISE. Values that cannot be resolved are not
    checked. (Whether the image's vLLM-Ascend supports graph mode at all, >= 0.9.1, is not checked here:
    a launch script does not say which image runs it.)

    vLLM servers and engines are checked too, in any layout: `--compilation-config '{"cudagraph_mode": ...}'`,
    `-cc.cudagraph_mode=...` or `--compilation-config.cudagraph_mode ...` of `vllm serve` / `python -m
    vllm.entrypoints.openai.api_server` in shell scripts, docs shell and console code blocks and YAML `server_cmd:`
    configs, with `-dcp`/`-pcp` (`--decode-context-parallel-size`, `--prefill-context-parallel-size`) for the
    context parallel check; and Python calls (`LLM(...)`) with `compilation_config={"cudagraph_mode": ...}` or
    `CompilationConfig(cudagraph_mode=...)`.
    """

    id = "NPU108"
    name = "invalid-cudagraph-mode"
    severity = Severity.ERROR
    title = "cudagraph_mode is not a valid vLLM mode, or FULL is combined with context parallel"
    kinds = frozenset({SHELL, NPU_SCRIPT, DOCS, YAML, PYTHON})

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        yield from _vllm_servers(src, ctx)
        if SHELL not in src.kinds and NPU_SCRIPT not in src.kinds:
            return
        view = npu_reading(ctx, src)
        if view is None:
            return
        reported: set[tuple[int, str]] = set()
        for inv in view.invocations:
            for key in mode_keys(ctx):
                for o, raw_value in deciding_overrides(inv, key):
                    value = hydra_str(raw_value)
                    if not isinstance(value, str):
                        continue
                    issue = mode_issue(ctx, inv, value)
                    if issue is None:
                        continue
                    line = ctx.first_added(src.path, o.lines)
                    if (line, issue.message) in reported:
                        continue
                    reported.add((line, issue.message))
                    suggestion = None
                    if issue.suggestion_value is not None and line == o.line:
                        suggestion = _replace_literal(src.line(o.line), o, value, issue.suggestion_value)
                    yield Hit(src.path, line, issue.message, suggestion=suggestion)


def _replace_literal(text: str, o: Override, value: str, canonical: str) -> str | None:
    """The line with the literal value replaced, when the token is written there once (no ${VAR})."""
    if o.raw is None or "$" in o.raw or text.count(o.text) != 1:
        return None
    head, sep, tail = o.text.partition("=")
    if tail.count(value) != 1:
        return None
    return text.replace(o.text, head + sep + tail.replace(value, canonical))


def _vllm_servers(src: SourceFile, ctx: Context) -> Iterable[Hit]:
    """The cudagraph_mode of vLLM servers and `LLM(...)` calls (`--compilation-config '{"cudagraph_mode": ...}'`,
    `-cc.cudagraph_mode=...`, `compilation_config={...}`), with their context parallel options."""
    modes = ctx.facts.graph_modes
    reported: set[tuple[int, str]] = set()
    for launch in vllm_launches(ctx, src):
        config = resolve(launch.args, ctx.facts.vllm_cli)
        mode = config.setting("compilation", "cudagraph_mode")
        if mode is None or not isinstance(mode.value, str):
            continue
        issue = mode_name_issue(ctx, mode.value)
        v = mode.value.strip()
        if issue is None and (v.upper() if modes.case_insensitive else v) in set(modes.full_with_prefill):
            cp = [(flag, size, line) for flag, size, line in config.context_parallel if size > 1]
            if cp:
                flag, size, line = cp[-1]
                issue = full_with_cp(v, f"{flag} {size}", line)
        if issue is None:
            continue
        message = issue.message.replace("the rollout fails", "the server fails")
        if (mode.line, message) in reported:
            continue
        reported.add((mode.line, message))
        yield Hit(src.path, mode.line, message)
