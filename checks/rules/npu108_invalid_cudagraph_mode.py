"""NPU108: a `cudagraph_mode` vLLM does not know, or FULL graphs with rollout context parallel."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from npu_review.checks.context import Context, SourceFile
from npu_review.checks.indexes.vllm_launches import vllm_launches
from npu_review.checks.kinds import DOCS, NPU_SCRIPT, PYTHON, SHELL, YAML
from npu_review.checks.model import Severity
from npu_review.checks.parsers.shell import Invocation, Override, as_int, hydra_str, npu_view, parse
from npu_review.checks.parsers.vllm_cli import resolve
from npu_review.checks.rule import Hit, Rule


@dataclass(frozen=True)
class ModeIssue:
    """What is wrong with one cudagraph_mode value (shared with NPU103, which must not repeat it)."""

    message: str
    suggestion_value: str | None = None  # the exact canonical spelling, when there is one


def mode_keys(ctx: Context) -> list[str]:
    return list(ctx.facts.launch.cudagraph_mode_keys)


def mode_issue(ctx: Context, inv: Invocation, value: str) -> ModeIssue | None:
    """Why `value` (already shell-resolved) is not a usable cudagraph_mode for this command, or None."""
    issue = mode_name_issue(ctx, value)
    if issue is not None:
        return issue
    modes = ctx.facts.graph_modes
    v = value.strip()
    canon = v.upper() if modes.case_insensitive else v
    if canon in set(modes.full_with_prefill):
        for key in ctx.facts.launch.rollout_context_parallel_keys:
            eff = inv.effective(key)
            size = as_int(eff.value)
            if eff.present is True and eff.override is not None and size is not None and size > 1:
                shown = f"{key.rsplit('.', 1)[-1]}={size}"
                return _full_with_cp(v, shown, eff.override.line, "rollout context parallel")
    return None


def _full_with_cp(value: str, shown: str, line: int, what: str = "context parallel") -> ModeIssue:
    return ModeIssue(
        f"`cudagraph_mode={value}` captures full graphs for prefill too, which vLLM(-Ascend) does not "
        f"support with {what} (`{shown}` on line {line}). Use FULL_DECODE_ONLY or "
        "PIECEWISE, or drop context parallel."
    )


def mode_name_issue(ctx: Context, value: str) -> ModeIssue | None:
    """Why `value` is not a cudagraph_mode name vLLM knows, or None."""
    modes = ctx.facts.graph_modes
    valid, insensitive = list(modes.valid), modes.case_insensitive
    v = value.strip()
    if v in ("", "null", "None", "~") or v.isdigit():
        return None  # vLLM's default, or an enum value given as a number
    canon = v.upper() if insensitive else v
    if canon not in valid:
        normalised = re.sub(r"[\s-]+", "_", v.strip()).upper()
        if normalised in valid:
            return ModeIssue(
                f"`cudagraph_mode={v}` is not a vLLM CUDAGraphMode; write `{normalised}` (valid: {', '.join(valid)}).",
                normalised,
            )
        close = difflib.get_close_matches(canon, valid, n=1, cutoff=0.75)
        hint = f" Did you mean `{close[0]}`?" if close else ""
        return ModeIssue(
            f"`cudagraph_mode={v}` is not a vLLM CUDAGraphMode (valid: {', '.join(valid)}): the rollout fails "
            f"when vLLM parses its compilation config.{hint}"
        )
    return None


def deciding_overrides(inv: Invocation, key: str) -> list[tuple[Override, str]]:
    """(override, value) pairs that can be the final cudagraph_mode of the command, with known values."""
    eff = inv.effective(key)
    if eff.override is None:
        return []
    if isinstance(eff.value, str):
        return [(eff.override, eff.value)]
    out: list[tuple[Override, str]] = []
    for o in reversed(eff.overrides):  # an arm that may not run: each of its values may be the final one
        if o.key == key and isinstance(o.value, str):
            out.append((o, o.value))
        if not o.conditional:
            break
    return out[::-1]


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
        view = npu_view(
            ctx.parsed("shell", src, parse), src.kinds, ctx.facts.ascend_values.device_key, ctx.facts.launchers
        )
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
                issue = _full_with_cp(v, f"{flag} {size}", line)
        if issue is None:
            continue
        message = issue.message.replace("the rollout fails", "the server fails")
        if (mode.line, message) in reported:
            continue
        reported.add((mode.line, message))
        yield Hit(src.path, mode.line, message)
