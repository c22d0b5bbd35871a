"""NPU116: a `key= value` override or `--option= value` split by a blank: the key gets an empty value."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from npu_review.checks import lazyre
from npu_review.checks.analysis.scripts import (
    ShellUnit,
    ascend_step_unit,
    doc_is_ascend,
    doc_units,
    script_unit,
    unit_shell,
)
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import ASCEND_WORKFLOW, DOCS, NPU_SCRIPT, SHELL
from npu_review.checks.model import Severity
from npu_review.checks.parsers.markdown import flavor_of
from npu_review.checks.rule import Hit, Rule

if TYPE_CHECKING:
    from npu_review.checks.parsers.gha.workflow import Job, Step, Workflow

# A Hydra override with nothing after `=` (`data.train_files=`), or a long option (`--model=`).
_EMPTY = lazyre.compile(r"[\"']?(?:(?:\+\+|\+)?[a-z_]\w*(?:\.\w+)+|--[a-z][\w-]*)=[\"']?\Z")
_REF = lazyre.compile(r"\"?\$\{?([A-Za-z_]\w*)(?:\[[@*]\])?\}?\"?\Z")
# Options whose argument is one `name=value` setting (git's `-c`, a define, a container's environment): an empty
# value there clears the setting, and the next word is the command's next argument.
_SETTING_OPTIONS = frozenset({"-c", "-D", "--set", "--conf", "--config", "-e", "--env", "--build-arg"})
_ARG_LIST_NAME = lazyre.compile(r"(?i)args|opts|options|flags|params|extra|overrides|cmd")


class OverrideValueSplit(Rule):
    """A `key= value` override (or `--option= value`) with a blank after `=`.

    Why: the shell splits at the blank, so the launcher gets `key=` (an empty string: an empty train file, a
    null model path) and `value` as a stray argument, which Hydra rejects (or argparse reads as a positional).
    The job fails at start-up on the NPU nodes it queued for, or trains on a default. MindSpeed-RL's GRPO test
    script passed `data.train_files= ${TRAIN_FILE}`.

    Bad:
        python3 -m verl.trainer.main_ppo \\
            data.train_files= ${TRAIN_FILE} \\
            data.val_files=${TEST_FILE}

    Good:
        python3 -m verl.trainer.main_ppo \\
            data.train_files=${TRAIN_FILE} \\
            data.val_files=${TEST_FILE}

    Fix: remove the blank after `=` (a suggestion does it).

    Where: NPU scripts, `run:` steps of Ascend jobs and shell blocks of Ascend docs. Not reported: an empty
    value followed by another override or option (`key= other.key=1`: an empty value on purpose), or by a
    variable that holds arguments (`key= $EXTRA_ARGS`), and a setting given to an option that takes one
    (`git -c credential.helper= push` clears the helper on purpose; `-D`, `--set`, `-e`, `--build-arg`).
    """

    id = "NPU116"
    name = "override-value-split"
    severity = Severity.ERROR
    title = "A `key= value` override split by a blank: the key gets an empty value"
    kinds = frozenset({SHELL, NPU_SCRIPT, DOCS, ASCEND_WORKFLOW})
    needles = ("= ",)

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if DOCS in src.kinds and flavor_of(src.path) is not None:
            for unit in doc_units(ctx, src):
                yield from _check(unit, ctx)
        elif SHELL in src.kinds or NPU_SCRIPT in src.kinds:
            script = script_unit(ctx, src)
            if script is not None:
                yield from _check(script, ctx)

    def check_step(self, step: Step, job: Job, wf: Workflow, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if step.run is None or "= " not in step.run.value:
            return
        unit = ascend_step_unit(ctx, src.path, job, step)
        if unit is not None:
            yield from _check(unit, ctx)


_SPLIT = lazyre.compile(r"=[\"']?[ \t]+[^\s\\-]")
_KEY_BEFORE = lazyre.compile(r"(?:[\"']?[+~]{0,2}[a-z_]\w*(?:\.\w+)+|--[a-z][\w-]*)")


def _worth(text: str) -> bool:
    """The cheap no: no `key= value` or `--option= value` in the text."""
    for m in _SPLIT.finditer(text):
        start = max(text.rfind(" ", 0, m.start()), text.rfind("\n", 0, m.start()), text.rfind("\t", 0, m.start())) + 1
        if _KEY_BEFORE.fullmatch(text, start, m.start()):
            return True
    return False


def _check(unit: ShellUnit, ctx: Context) -> Iterator[Hit]:
    if "= " not in unit.source.text or not _worth(unit.source.text):
        return
    if unit.where == "docs":
        src = ctx.source(unit.path)
        if src is None or not doc_is_ascend(ctx, src):
            return
    for cmd in unit_shell(unit).commands:
        words = cmd.words
        for k in range(1, len(words) - 1):
            w, nxt = words[k], words[k + 1]
            if not w.raw.endswith(("=", "='", '="')) or not _EMPTY.match(w.raw):
                continue
            if nxt.raw.startswith("-") or re.match(r"[\"']?[+~]?[\w.]+=", nxt.raw):
                continue  # another option or override: the empty value is meant
            if words[k - 1].raw in _SETTING_OPTIONS:
                continue  # `git -c credential.helper= push`: a setting emptied on purpose, then the next argument
            ref = _REF.match(nxt.raw)
            if ref and _ARG_LIST_NAME.search(ref.group(1)):
                continue  # a variable of arguments: what it holds is unknown
            key = w.raw.strip("\"'").rstrip("=")
            src = ctx.source(unit.path)
            text = src.line(w.line) if src is not None else ""
            fixed = text.replace(f"{w.raw} {nxt.raw}", f"{w.raw}{nxt.raw}", 1) if w.line == nxt.line else None
            yield Hit(
                unit.path,
                w.line,
                f"`{w.raw} {nxt.raw}`: the blank after `=` splits this in two, so `{key}` gets an empty value and "
                f"`{nxt.raw}` is passed as a stray argument (the launcher rejects it, or runs without the value). "
                f"Write `{w.raw}{nxt.raw}`.",
                suggestion=fixed if fixed != text else None,
            )
