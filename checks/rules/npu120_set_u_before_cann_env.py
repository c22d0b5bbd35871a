"""NPU120: `set -u` in effect when a CANN/NNAL `set_env.sh` that reads unset variables is sourced."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from npu_review.checks.analysis.scripts import ShellUnit, ascend_step_unit, run_unit, script_unit, unit_shell
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import ASCEND_DOCKERFILE, ASCEND_WORKFLOW, NPU_SCRIPT, SHELL
from npu_review.checks.model import Related, Severity
from npu_review.checks.rule import Hit, Rule

if TYPE_CHECKING:
    from npu_review.checks.parsers.dockerfile import Dockerfile
    from npu_review.checks.parsers.gha.workflow import Job, Step, Workflow


class SetUBeforeCannEnv(Rule):
    """A script sources the NNAL `set_env.sh` while `set -u` (nounset) is in effect.

    Why: the NNAL ATB environment script (`/usr/local/Ascend/nnal/atb/set_env.sh`) reads variables it never
    sets (`$ZSH_VERSION`, and `$1` in its argument parser when it is sourced without arguments). Under
    `set -u` (`set -euo pipefail`, `set -o nounset`, a Dockerfile `SHELL ["/bin/bash", "-euo", "pipefail",
    "-c"]`) bash stops the whole script at the first of them (`ZSH_VERSION: unbound variable`): the NPU job or
    image build dies before its first real command. vllm-ascend's multi-node pod script did this and had to wrap
    the line in `set +u` / `set -u`.

    Bad:
        set -euo pipefail
        source /usr/local/Ascend/ascend-toolkit/set_env.sh
        source /usr/local/Ascend/nnal/atb/set_env.sh

    Good:
        set -euo pipefail
        source /usr/local/Ascend/ascend-toolkit/set_env.sh
        set +u
        source /usr/local/Ascend/nnal/atb/set_env.sh
        set -u

    Fix: turn nounset off around the line (`set +u` before, `set -u` after), or source it before `set -u`.

    Which scripts abort is a fact (`cann_shell.nounset_aborts`, read from the script's source). The CANN
    toolkit's own `set_env.sh` reads only `LD_LIBRARY_PATH` and `PYTHONPATH` unguarded, which the CANN images
    set: it is not reported.
    """

    id = "NPU120"
    name = "set-u-before-cann-env"
    severity = Severity.ERROR
    title = "`set -u` in effect when the NNAL set_env.sh is sourced"
    kinds = frozenset({SHELL, NPU_SCRIPT, ASCEND_WORKFLOW, ASCEND_DOCKERFILE})
    needles = ("set_env",)

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if SHELL in src.kinds or NPU_SCRIPT in src.kinds:
            unit = script_unit(ctx, src)
            if unit is not None:
                yield from _check(unit, ctx, _shebang_nounset(src.text))

    def check_step(self, step: Step, job: Job, wf: Workflow, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if step.run is None or "set_env" not in step.run.value:
            return
        shell = step.node.scalar("shell") or ""
        unit = ascend_step_unit(ctx, src.path, job, step)
        if unit is not None:
            yield from _check(unit, ctx, _flags_nounset(shell.split()[1:]))

    def check_dockerfile(self, df: Dockerfile, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        nounset = False
        for instr in df.instructions:
            if instr.keyword == "FROM":
                nounset = False
            elif instr.keyword == "SHELL":
                try:
                    argv = json.loads(instr.args)
                except ValueError:
                    argv = []
                nounset = isinstance(argv, list) and _flags_nounset([str(a) for a in argv[1:]])
            elif instr.keyword == "RUN" and "set_env" in instr.args:
                unit = run_unit(src.path, instr)
                if unit is not None:
                    yield from _check(unit, ctx, nounset)


def _shebang_nounset(text: str) -> bool:
    first = text.split("\n", 1)[0]
    return first.startswith("#!") and _flags_nounset(first.split()[1:])


def _flags_nounset(words: list[str]) -> bool:
    """Whether these shell options (`-euo pipefail`, `-o nounset`, `+u`) leave nounset on."""
    on = False
    for k, w in enumerate(words):
        if w in ("-o", "+o") and k + 1 < len(words) and words[k + 1] == "nounset":
            on = w == "-o"
        elif re.fullmatch(r"-[a-zA-Z]+", w) and "u" in w:
            on = True
        elif re.fullmatch(r"\+[a-zA-Z]+", w) and "u" in w:
            on = False
    return on


def _check(unit: ShellUnit, ctx: Context, nounset: bool) -> Iterator[Hit]:
    facts = ctx.facts.cann_shell
    patterns = [re.compile(p) for p in facts.nounset_aborts]
    set_line = 0
    for cmd in unit_shell(unit).commands:
        argv = [w.unquoted for w in cmd.words]
        if argv[0] == "set":
            before = nounset
            nounset = _flags_nounset(argv[1:]) if any("u" in a or a == "nounset" for a in argv[1:]) else nounset
            if nounset and not before:
                set_line = cmd.line
            continue
        if argv[0] not in ("source", ".") or len(argv) < 2 or not nounset:
            continue
        target = argv[1]
        k = next((i for i, p in enumerate(patterns) if p.search(target)), None)
        if k is None:
            continue
        name = facts.nounset_names[k] if k < len(facts.nounset_names) else "this"
        where = f"`set -u` on line {set_line}" if set_line else "nounset (`-u`) of this shell"
        yield Hit(
            unit.path,
            cmd.line,
            f"`{argv[0]} {target}` runs under {where}: the {name} set_env.sh reads variables it never sets "
            f"(`$ZSH_VERSION`, `$1`), so bash stops the script here (`unbound variable`) before the NPU work "
            f"starts. Put `set +u` before this line and `set -u` after it.",
            related=(Related(unit.path, set_line, "turns on `set -u`"),) if set_line else (),
        )
