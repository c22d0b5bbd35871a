"""NPU107: a change flips a default that NPU launch scripts rely on (a config key, a script's device option)
without pinning it in them."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from npu_review.checks import globs, lazyre
from npu_review.checks.analysis.device import ascend_device_value, leaves_ascend, npu_reading
from npu_review.checks.analysis.references import ascend_command_refs
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.facts.schema import HydraSchema
from npu_review.checks.kinds import HYDRA_CONFIG, NPU_SCRIPT, PYTHON, SHELL
from npu_review.checks.model import ChangeStatus, Related, Severity
from npu_review.checks.parsers.shell import Invocation, hydra_str
from npu_review.checks.rule import Hit, Rule

if TYPE_CHECKING:
    from npu_review.checks.analysis.pyargs import OptionDefault

_SELECT_DEFAULT = lazyre.compile(r"\A\$\{oc\.select:\s*[A-Za-z_][\w.]*\s*,(.*)\}\Z", re.S)
_GENERATED = lazyre.compile(r"(^|/)_generated_[^/]*\.ya?ml\Z")


class DefaultChangeWithoutNpuSweep(Rule):
    """A change flips a default that NPU launch scripts rely on, and some of them do not pin it: a watched verl
    config default, or the device option of a Python script that Ascend launch scripts run.

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

    The same holds for a Python entry script's device option. A GPU port of a model flips the `argparse`
    default of `--device_target` from `Ascend` to `GPU` (`--device` from `npu` to `cuda`, a backend from
    `hccl` to `nccl`: the facts' `device_defaults.families`), or gives a script that hard-coded
    `set_context(device_target="Ascend")` a new option that defaults to `GPU`; the Ascend launch scripts that
    run it without the option now ask for another device on an Ascend machine. MindSpore's model zoo did this
    twice (mindspore-ai/models !947, DeepID's `train.py`; !1173, vit_base's `eval.py`), its
    `run_standalone_train_ascend.sh` and `run_standalone_eval_ascend.sh` fixed only later.

    Bad (a device option; the Ascend launcher passes none):
        # research/cv/DeepID/train.py
         parser = argparse.ArgumentParser(description="DeepID")
        -parser.add_argument("--device_target", type=str, default="Ascend")
        +parser.add_argument("--device_target", type=str, default="GPU")
         args = parser.parse_args()
        # research/cv/DeepID/scripts/run_standalone_train_ascend.sh
         python train.py --device_id=$DEVICE_ID > log_train.txt 2>&1 &

    Good (the Ascend launcher says its device, in the same change):
        # research/cv/DeepID/train.py
         parser = argparse.ArgumentParser(description="DeepID")
        -parser.add_argument("--device_target", type=str, default="Ascend")
        +parser.add_argument("--device_target", type=str, default="GPU")
         args = parser.parse_args()
        # research/cv/DeepID/scripts/run_standalone_train_ascend.sh
        -python train.py --device_id=$DEVICE_ID > log_train.txt 2>&1 &
        +python train.py --device_target=Ascend --device_id=$DEVICE_ID > log_train.txt 2>&1 &

    An Ascend launch script is one that runs on NPU as the analysis layer reads it (`device.npu_reading`): named
    or placed for Ascend (`run_*_ascend.sh`, `examples/npu/`, a folder named for Ascend), or setting Ascend's
    variables (`RANK_TABLE_FILE`, `HCCL_*`, `ASCEND_RT_VISIBLE_DEVICES`); arms of a script for another device
    are left out. Its commands are resolved to the repository's scripts as NPU117 resolves them (`python
    train.py` from the script's folder or one above it, `nohup`, `mpirun`, `taskset` and the like). The option
    counts as passed when the command gives one of its option strings, `--opt=value` or a prefix argparse
    expands to it, or hands on something unknown (`"$@"`, `$ARGS`).

    Fix: pin the old value in the listed scripts, or run them with the new default and say so. For a Hydra key,
    advisory: a notice on the changed default line, listing the NPU scripts (Megatron ones for the mbridge keys)
    whose commands leave the key unset. For a device option, a warning on the changed default line, listing the
    Ascend launch scripts that pass no such option: a script named or set up for Ascend that now asks for a GPU
    (or the CPU) fails on an Ascend machine or runs slowly elsewhere, and nothing in the change tells its users;
    a warning, not an error, since the GPU port meant the new default and the fix is in files it did not touch.
    Silent on `--all` audits, for keys that are not watched, when every concerned script sets the key or passes
    the option itself, when no Ascend launch script runs the changed script, when the new default still names
    Ascend (`Ascend` -> `ascend`, `npu` -> `npu:0`) or no device (`None`, a value read from the environment),
    and for an option whose parser is in another module than the script the launcher runs.
    """

    id = "NPU107"
    name = "default-change-without-npu-sweep"
    severity = Severity.NOTICE
    title = "A default that NPU launch scripts rely on (a config key, a device option) changes without pinning it"
    kinds = frozenset({HYDRA_CONFIG, PYTHON})
    context_kinds = frozenset({HYDRA_CONFIG, SHELL, NPU_SCRIPT})

    def check_project(self, ctx: Context) -> Iterable[Hit]:
        if ctx.audit:
            return
        yield from _hydra_defaults(ctx)
        yield from _argparse_defaults(ctx)


def _hydra_defaults(ctx: Context) -> Iterator[Hit]:
    """A watched Hydra config default changes, and NPU launch scripts concerned with it leave it unset."""
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


# -- a Python entry script's device option ------------------------------------------------------------------------


@dataclass(frozen=True)
class _Flip:
    """An option of a changed script whose default moves it off the NPU."""

    option: OptionDefault  # the option at head, with its new default
    old: str  # the device it ran on before: the option's old default, or the value the script hard-coded
    hard_coded: int  # the line at base of that hard-coded value (0: the option's old default)


def _argparse_defaults(ctx: Context) -> Iterator[Hit]:
    """A changed Python script's device option now defaults away from Ascend, and Ascend launch scripts that run
    the script pass no such option."""
    limit = ctx.facts.default_sweep.max_listed
    for path, change in sorted(ctx.changeset.changes.items()):
        if change.status in (ChangeStatus.DELETED, ChangeStatus.ADDED) or not path.endswith(".py"):
            continue
        head = ctx.source(path)
        if head is None or "add_argument" not in head.text:
            continue
        if not any("default" in head.line(n) or "add_argument" in head.line(n) for n in ctx.added_lines(path)):
            continue  # no default written (nor an option added: `default=` may sit on an unchanged line)
        base = ctx.source(change.old_path or path, rev="base")
        if base is None:
            continue
        for flip in _flips(ctx, path, head, base):
            unpinned = list(_unpinned_launchers(ctx, head, flip.option))
            if not unpinned:
                continue
            opt = flip.option
            name = next((o for o in opt.options if o.startswith("--")), opt.options[0])
            listed = ", ".join(f"{p}:{n}" for p, n in unpinned[:limit])
            more = f" and {len(unpinned) - limit} more" if len(unpinned) > limit else ""
            what = (
                f"`{name}` now defaults to `{opt.default}`, where the script ran on `{flip.old}` "
                f"(hard-coded at line {flip.hard_coded} before this change)"
                if flip.hard_coded
                else f"The default of `{name}` changes from `{flip.old}` to `{opt.default}`"
            )
            yield Hit(
                path,
                opt.line,
                f"{what}. {len(unpinned)} Ascend launch script(s) run `{path}` without `{name}` and so leave the "
                f"NPU with it: {listed}{more}. Pass `{name} {flip.old}` in them, or keep the Ascend default and "
                f"let the other devices' scripts pass `{name} {opt.default}`.",
                severity=Severity.WARNING,
                related=tuple(Related(p, n, f"runs {posixpath.basename(path)} without {name}") for p, n in unpinned),
            )


def _flips(ctx: Context, path: str, head: SourceFile, base: SourceFile) -> Iterator[_Flip]:
    # (the Python parsers are imported where a changed Python file is read: a review of a script needs none)
    from npu_review.checks.analysis.pyargs import device_choice, option_defaults

    new, old = option_defaults(ctx, head), option_defaults(ctx, base)
    seen: set[int] = set()
    for opt in new.values():
        if opt.call_line in seen or opt.default is None or not ctx.is_added_line(path, opt.line):
            continue
        seen.add(opt.call_line)
        before = next((old[o] for o in opt.options if o in old), None)
        if before is not None:
            if before.default is not None and leaves_ascend(ctx, before.default, opt.default):
                yield _Flip(opt, before.default, 0)
            continue
        # A new option: the script ran on the device it hard-coded (`set_context(device_target="Ascend")`), if
        # that was Ascend's everywhere, the change took it out and the option now chooses the device.
        was, now = device_choice(ctx, base).literals, device_choice(ctx, head)
        if not was or not all(leaves_ascend(ctx, v, opt.default) for v, _ in was):
            continue
        if opt.dest not in now.names or any(ascend_device_value(ctx, v) for v, _ in now.literals):
            continue
        yield _Flip(opt, was[0][0], was[0][1])


def _unpinned_launchers(ctx: Context, script: SourceFile, opt: OptionDefault) -> Iterator[tuple[str, int]]:
    """(path, line of the first such command) of the Ascend launch scripts with a command that runs `script` and
    passes no value for the option (one that passes it in one branch may leave it out in another): the scripts as
    they run on NPU (device.npu_reading: named or placed for Ascend, or setting Ascend's variables), their
    commands resolved to this repository's script as NPU117 resolves them."""
    from npu_review.checks.analysis.pyargs import passes_option, python_interface

    entry = script.path
    folder, name = posixpath.split(entry)
    shells = list(ctx.paths_of_kind(SHELL))
    # A command that runs the script names it by its file name from a folder at or below the script's, or by a
    # path with its folder from elsewhere (`python tools/train.py`).
    near = [p for p in shells if not folder or p.startswith(folder + "/")]
    found = ctx.paths_mentioning([name], near)
    if folder:
        far = [p for p in shells if not p.startswith(folder + "/")]
        found += ctx.paths_mentioning([f"{posixpath.basename(folder)}/{name}"], far)
    iface = python_interface(ctx, script)
    for path in sorted(found):
        src = ctx.source(path)
        if src is None or npu_reading(ctx, src) is None:
            continue
        for ref in ascend_command_refs(ctx, src):
            if ref.how == "python" and ref.found == entry and not passes_option(iface, opt.options, ref.args):
                yield path, ref.command_line
                break
