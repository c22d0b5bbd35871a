"""Launch commands as the rules read them: the trainer config (Hydra schema) a command addresses, and what is
wrong with a `cudagraph_mode` value for that command (NPU103 and NPU108 both ask, and must say the same)."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from npu_review.checks.context import Context
from npu_review.checks.parsers import hydra_config
from npu_review.checks.parsers.hydra_config import Schema
from npu_review.checks.parsers.shell import Invocation, Override, as_int


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
                return full_with_cp(v, shown, eff.override.line, "rollout context parallel")
    return None


def full_with_cp(value: str, shown: str, line: int, what: str = "context parallel") -> ModeIssue:
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


def schema_for(ctx: Context, inv: Invocation) -> Schema | None:
    """The generated config that describes `inv`'s config, parsed once per run; None when unknown or absent."""
    choice = hydra_config.config_file_for(inv, ctx.facts.hydra_schema)
    if choice.file is None:
        return None
    path = choice.file

    def load() -> Schema | None:
        src = ctx.source(path)
        return None if src is None else hydra_config.from_doc(path, ctx.yaml(src))

    return ctx.memo(("hydra-schema", "head", path), load)


def free_form(ctx: Context) -> list[re.Pattern[str]]:
    def build() -> list[re.Pattern[str]]:
        return [re.compile(p) for p in ctx.facts.hydra_schema.free_form]

    return ctx.memo(("hydra-free-form", "head", ""), build)
