"""NPU107: a change flips a config default that NPU launch scripts rely on without pinning it in them."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from npu_review.checks import globs, lazyre
from npu_review.checks.analysis.device import npu_reading
from npu_review.checks.context import Context
from npu_review.checks.facts.schema import HydraSchema
from npu_review.checks.kinds import HYDRA_CONFIG, NPU_SCRIPT, SHELL
from npu_review.checks.model import ChangeStatus, Related, Severity
from npu_review.checks.parsers.shell import Invocation, hydra_str
from npu_review.checks.rule import Hit, Rule

_SELECT_DEFAULT = lazyre.compile(r"\A\$\{oc\.select:\s*[A-Za-z_][\w.]*\s*,(.*)\}\Z", re.S)
_GENERATED = lazyre.compile(r"(^|/)_generated_[^/]*\.ya?ml\Z")


class DefaultChangeWithoutNpuSweep(Rule):
    """A change flips a verl config default that NPU launch scripts inherit, and some of them do not pin it.

    Why: NPU scripts run on images that trail the GPU stack; a default that is right on GPU can break every
    Ascend script that relied on the old one. #6951 made Megatron-Bridge the default
    (`vanilla_mbridge: True -> False`) while the Ascend images still needed the vanilla bridge; the Ascend
    Megatron scripts had to be fixed afterwards (#7081, #7148). The list of watched keys is data
    (the facts' `default_sweep.watched`).

    Bad (and `tests/special_npu/run_qwen3_06b_grpo_mindspeed.sh`, a Megatron script, does not set it):
        # verl/trainer/config/engine/megatron.yaml
        -vanilla_mbridge: True
        +vanilla_mbridge: False

    Good (the NPU scripts that still need the old behaviour pin it, in the same change):
        # verl/trainer/config/engine/megatron.yaml
        -vanilla_mbridge: True
        +vanilla_mbridge: False
        # tests/special_npu/run_qwen3_06b_grpo_mindspeed.sh
             --config-name='ppo_megatron_trainer.yaml' \\
        +    actor_rollout_ref.actor.megatron.vanilla_mbridge=True \\
             actor_rollout_ref.model.path=$HOME/models/Qwen/Qwen3-0.6B \\

    Or say in the PR that they were run with the new default.

    Fix: pin the old value in the listed scripts, or run them with the new default and say so. Advisory: a
    notice on the changed default line, listing the NPU scripts (Megatron ones for the mbridge keys) whose
    commands leave the key unset. Silent on `--all` audits, for keys that are not watched, and when every
    concerned script sets the key itself.
    """

    id = "NPU107"
    name = "default-change-without-npu-sweep"
    severity = Severity.NOTICE
    title = "A config default that NPU launch scripts rely on changes without pinning it in them"
    kinds = frozenset({HYDRA_CONFIG})
    context_kinds = frozenset({HYDRA_CONFIG, SHELL, NPU_SCRIPT})

    def check_project(self, ctx: Context) -> Iterable[Hit]:
        if ctx.audit:
            return
        facts = ctx.facts.default_sweep
        watched = facts.watched
        if not watched:
            return
        config_globs = facts.config_globs
        changes: dict[str, list[_Change]] = {}
        for path, change in sorted(ctx.changeset.changes.items()):
            if change.status == ChangeStatus.DELETED or not globs.match_any(path, config_globs):
                continue
            for item in _changed_defaults(ctx, path, change.old_path or path, set(watched)):
                changes.setdefault(item.leaf, []).append(item)
        if not changes:
            return
        limit = facts.max_listed
        for leaf, items in sorted(changes.items()):
            anchor = min(items, key=_preference)
            applies = re.compile(watched[leaf].applies_to)
            unpinned = list(_unpinned_scripts(ctx, leaf, applies))
            if not unpinned:
                continue
            listed = ", ".join(f"{p}:{n}" for p, n in unpinned[:limit])
            more = f" and {len(unpinned) - limit} more" if len(unpinned) > limit else ""
            elsewhere = sorted({f"{i.path}:{i.line}" for i in items if i is not anchor})
            also = f" (also changed at {', '.join(elsewhere)})" if elsewhere else ""
            yield Hit(
                anchor.path,
                anchor.line,
                f"The default of `{leaf}` changes from {anchor.old} to {anchor.new}{also}. "
                f"{len(unpinned)} NPU launch script(s) leave `{leaf}` unset and so switch with it: {listed}{more}. "
                f"Ascend images often trail the GPU stack: pin `...{leaf}={anchor.old}` in those scripts, or run "
                "them with the new default and say so in the PR.",
                related=tuple(Related(p, n, f"leaves {leaf} unset") for p, n in unpinned),
            )


@dataclass(frozen=True)
class _Change:
    leaf: str
    path: str
    line: int
    old: str
    new: str
    interpolated: bool  # the value is an `${oc.select:..., default}`


def _preference(c: _Change) -> tuple[int, int, str, int]:
    """Report on the file a person edits (not the generated one), on a literal rather than an oc.select."""
    return (1 if _GENERATED.search(c.path) else 0, 1 if c.interpolated else 0, c.path, c.line)


def _scalars(text: str) -> dict[str, tuple[str, int]] | None:
    from npu_review.checks.parsers import yamlmarks

    doc = yamlmarks.parse(text)
    if doc.root is None or not doc.root.is_map:
        return None
    out: dict[str, tuple[str, int]] = {}
    for path, node in doc.root.walk():
        if node.is_scalar and path and all(isinstance(p, str) for p in path):
            out[".".join(str(p) for p in path)] = (node.value, node.line)
    return out


def _literal(value: str) -> tuple[str, bool] | None:
    """The default a scalar gives (the oc.select fallback for an interpolation), normalised; None if other."""
    text = value.strip()
    m = _SELECT_DEFAULT.match(text)
    if m:
        return _norm(m.group(1)), True
    if text.startswith("${"):
        return None
    return _norm(text), False


def _norm(text: str) -> str:
    t = text.strip().strip("\"'")
    return t.capitalize() if t.lower() in ("true", "false") else t


def _changed_defaults(ctx: Context, path: str, old_path: str, watched: set[str]) -> Iterator[_Change]:
    head = ctx.source(path)
    base = ctx.source(old_path, rev="base")
    if head is None or base is None:
        return
    new_map = ctx.memo(("npu107-scalars", "head", path), lambda: _scalars(head.text))
    old_map = ctx.memo(("npu107-scalars", "base", old_path), lambda: _scalars(base.text))
    if new_map is None or old_map is None:
        return
    for key, (value, line) in new_map.items():
        leaf = key.rsplit(".", 1)[-1]
        if leaf not in watched or key not in old_map or not ctx.is_added_line(path, line):
            continue
        new, old = _literal(value), _literal(old_map[key][0])
        if new is None or old is None or new[0] == old[0]:
            continue
        yield _Change(leaf, path, line, old[0], new[0], new[1])


def _unpinned_scripts(ctx: Context, leaf: str, applies: re.Pattern[str]) -> Iterator[tuple[str, int]]:
    """(path, line of the first concerned command) of NPU scripts whose commands leave `leaf` unset."""
    facts, marker = ctx.facts.hydra_schema, ctx.facts.default_sweep.script_marker
    for path in ctx.paths_of_kind(SHELL):
        src = ctx.source(path)
        if src is None or marker not in src.text:
            continue
        view = npu_reading(ctx, src)
        if view is None:
            continue
        for inv in view.invocations:
            if not _concerned(inv, applies, facts) or _sets(inv, leaf):
                continue
            yield path, inv.line
            break


def _concerned(inv: Invocation, applies: re.Pattern[str], facts: HydraSchema) -> bool:
    """The command uses the part of the config the key belongs to (for mbridge keys: Megatron)."""
    from npu_review.checks.parsers import hydra_config

    words = [o.key for o in inv.overrides]
    words += [f"{o.key}={hydra_str(o.value)}" for o in inv.overrides if o.key.endswith(".strategy")]
    choice = hydra_config.config_file_for(inv, facts)
    if choice.file:
        words.append(choice.file)
    words += [w for w in inv.args if w.startswith(("--config-name", "-cn", "model_engine="))]
    return any(applies.search(w) for w in words)


def _sets(inv: Invocation, leaf: str) -> bool:
    return any(o.key == leaf or o.key.endswith("." + leaf) for o in inv.overrides)
