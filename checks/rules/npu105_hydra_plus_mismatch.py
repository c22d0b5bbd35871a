"""NPU105: a Hydra override's `+` prefix does not match verl's config (append an existing key, set a missing one)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import TYPE_CHECKING

from npu_review.checks.analysis.device import npu_reading
from npu_review.checks.analysis.launch import free_form, schema_for
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import HYDRA_CONFIG, NPU_SCRIPT, SHELL
from npu_review.checks.model import Severity
from npu_review.checks.parsers.shell import Override
from npu_review.checks.rule import Hit, Rule

if TYPE_CHECKING:
    from npu_review.checks.parsers.hydra_config import Schema


class HydraPlusMismatch(Rule):
    """A Hydra override in an NPU launch script uses `+` for a key verl's config has, or omits it for one it lacks.

    Why: verl composes its config in Hydra's struct mode. `+a.b.c=1` appends a key and fails with "Could not
    append to config. An item is already at 'a.b.c'" when the key exists; a bare `a.b.c=1` overrides and fails
    with "Key 'c' is not in struct" when it does not. Either way the job dies at start-up, after it has waited
    for NPUs. Keys move between releases (#5473, #6951 and others renamed or added keys), so a script that was
    right last month may be wrong today.

    Bad (the config has the first key, not the second):
        python3 -m verl.trainer.main_ppo \\
            +actor_rollout_ref.rollout.checkpoint_engine.update_weights_bucket_megabytes=4096 \\
            actor_rollout_ref.model.override_config.attn_implementation=eager

    Good:
        python3 -m verl.trainer.main_ppo \\
            actor_rollout_ref.rollout.checkpoint_engine.update_weights_bucket_megabytes=4096 \\
            +actor_rollout_ref.model.override_config.attn_implementation=eager \\
            ++actor_rollout_ref.actor.megatron.override_transformer_config.attention_backend=auto

    Keys under one parent the schema lacks are one cause, said in one finding that lists them. A top-level name
    the generated file does not show is missing only when the primary config (`ppo_trainer.yaml` beside it) does
    not compose it either: its own keys, its defaults list's group packages (`data@data`), the configs it lists
    (merged at its root) and `_global_` group files of plain keys (`model_engine: dp`); a defaults list that can
    place anything else at the root leaves such names unchecked.

    Fix: drop the `+` for an existing key, add it for a new one (or use `++`, which works either way). The
    keys are read from the repository's own `verl/trainer/config/_generated_ppo_trainer.yaml` and
    `_generated_ppo_megatron_trainer.yaml`, chosen by `--config-name` and `model_engine=`. Commands with
    another entry point, config path or config group, free-form subtrees (`engine_kwargs`,
    `override_transformer_config`, `compilation_config`, `custom_*`, `ray_kwargs`, `hydra`), keys below a
    null or interpolated value, and `++`/`~` overrides are not checked.
    """

    id = "NPU105"
    name = "hydra-plus-mismatch"
    severity = Severity.ERROR
    title = "A Hydra `+` override appends an existing key, or a bare override sets a key the config lacks"
    kinds = frozenset({SHELL, NPU_SCRIPT})
    context_kinds = frozenset({HYDRA_CONFIG})

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        view = npu_reading(ctx, src)
        if view is None:
            return
        free = free_form(ctx)
        reported: set[tuple[int, str]] = set()
        for inv in view.invocations:
            # Bare keys under one missing parent are one cause (the parent is not in the schema): one finding.
            missing: dict[str, list[Override]] = {}
            schema = schema_for(ctx, inv)
            if schema is None:
                continue
            for o in inv.overrides:
                if (o.line, o.text) in reported or o.prefix not in ("", "+"):
                    continue
                if any(rx.search(o.key) for rx in free):
                    continue
                status = schema.status(o.key)
                if o.prefix == "+" and status == "exists":
                    reported.add((o.line, o.text))
                    yield Hit(
                        src.path,
                        o.line,
                        f"`+{o.key}` appends a key that already exists in the trainer's config ({schema.path}, "
                        f'line {_line(schema, o.key)}): Hydra stops with "Could not append to config. An item is '
                        f"already at '{o.key}'\". Drop the `+` (or use `++`).",
                        suggestion=_respell(src, o, ""),
                    )
                elif o.prefix == "" and status == "missing":
                    reported.add((o.line, o.text))
                    missing.setdefault(_missing_root(schema, o.key), []).append(o)
            for root, group in missing.items():
                first = group[0]
                if len(group) == 1 or root == first.key:
                    for o in group:
                        yield Hit(
                            src.path,
                            o.line,
                            f"`{o.key}` is not in the trainer's config ({schema.path}{_nearest(schema, o.key)}): Hydra "
                            f"stops with \"Key '{o.key.rsplit('.', 1)[-1]}' is not in struct\". Write `+{o.key}=...` "
                            "to add it, or check the key's spelling and whether it was renamed.",
                            suggestion=_respell(src, o, "+"),
                        )
                    continue
                at = next((o for o in group if ctx.is_added_line(src.path, o.line)), first)
                keys = ", ".join(f"`{o.key}` (line {o.line})" for o in group)
                yield Hit(
                    src.path,
                    at.line,
                    f"{keys} are not in the trainer's config ({schema.path}{_nearest(schema, first.key)}): Hydra "
                    f'stops with "Key ... is not in struct" at the first of them. `{root}` is not in the schema: '
                    f"if it was renamed, write these keys under its new name; `+` on each would start the run but "
                    "add keys that only code reading them makes do anything.",
                )


def _missing_root(schema: Schema, key: str) -> str:
    """The shortest prefix of `key` the schema lacks (`a.b.c` when `a.b` exists, `a.b` when only `a` does)."""
    parts = key.split(".")
    for n in range(1, len(parts) + 1):
        prefix = ".".join(parts[:n])
        if schema.status(prefix) == "missing":
            return prefix
    return key


def _line(schema: Schema, key: str) -> int:
    _status, node = schema.node(key)
    return node.line if node is not None else 0


def _nearest(schema: Schema, key: str) -> str:
    """`; its parent a.b (line N) has no such key` for the message."""
    parent = key.rsplit(".", 1)[0]
    status, node = schema.node(parent)
    if status != "exists" or node is None:
        deepest = key.split(".")
        while deepest and schema.status(".".join(deepest)) != "exists":
            deepest.pop()
        if deepest:
            return f"; it has no `{key.split('.')[len(deepest)]}` under `{'.'.join(deepest)}`"
        top = key.split(".")[0]
        close = difflib.get_close_matches(top, [k for k, _, _ in schema.root.entries()], n=1)
        return f"; its top level has `{close[0]}`, not `{top}`" if close else ""
    return f", `{parent}` on line {node.line} has no `{key.rsplit('.', 1)[-1]}`"


def _respell(src: SourceFile, o: Override, prefix: str) -> str | None:
    """The override's line with the token's `+` prefix changed, when the token stands on it exactly once."""
    line = src.line(o.line)
    if line.count(o.text) != 1:
        return None
    old_head = o.text.split("=", 1)[0]
    bare = old_head.lstrip("\"'")
    quotes = old_head[: len(old_head) - len(bare)]
    new_head = quotes + prefix + bare.lstrip("+~")
    return line.replace(o.text, new_head + o.text[len(old_head) :], 1)
