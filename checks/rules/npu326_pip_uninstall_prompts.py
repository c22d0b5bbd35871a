"""NPU326: `pip uninstall` without `-y` in a Docker build or a CI step, where nobody answers its prompt."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from npu_review.checks.analysis.scripts import ShellUnit, ascend_step_unit
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import ASCEND_DOCKERFILE, ASCEND_WORKFLOW
from npu_review.checks.model import Severity
from npu_review.checks.parsers.dockerfile import Dockerfile
from npu_review.checks.parsers.gha.workflow import Job, Step, Workflow
from npu_review.checks.parsers.pipcli import pip_call
from npu_review.checks.parsers.sh import Command, commands
from npu_review.checks.rule import Hit, Rule

# pip's own way of saying yes to every prompt: `-y`, `--yes`, or `y` among clustered short options (`-qy`).
_YES = re.compile(r"--yes|-[A-Za-z]*y[A-Za-z]*")


class PipUninstallPrompts(Rule):
    """`pip uninstall` without `-y` runs in an Ascend image build or an Ascend CI step.

    Why: `pip uninstall` asks `Proceed (Y/n)?` for each installed package. A `docker build` RUN has no terminal
    and a CI step's input is empty, so nobody answers: pip stops with `EOFError` and exit status 2, the package
    stays installed, and under `&&` or `set -e` the image build or the NPU job fails. Ascend images and jobs
    uninstall often (a CUDA build of torch, a stray triton, the project's previous wheel) before installing the
    NPU build. sgl-kernel-npu's first Ascend CI ran `python3 -m pip uninstall deepep` and had to add `-y` the next
    day.

    Bad:
        RUN pip install torch-npu==2.8.0.post2 && \\
            pip uninstall triton && \\
            pip install triton-ascend==3.2.0

    Good:
        RUN pip install torch-npu==2.8.0.post2 && \\
            pip uninstall -y triton && \\
            pip install triton-ascend==3.2.0

    Fix: add `-y` (a suggestion does it).

    Not reported: `uv pip uninstall` (uv never asks), an uninstall that is given an answer (`yes | pip uninstall
    x`, input redirected), a file that sets `PIP_YES`, and scripts (a person may run them at a terminal).
    """

    id = "NPU326"
    name = "pip-uninstall-prompts"
    severity = Severity.ERROR
    title = "`pip uninstall` without `-y` where nobody can answer"
    kinds = frozenset({ASCEND_WORKFLOW, ASCEND_DOCKERFILE})
    needles = ("uninstall",)

    def check_step(self, step: Step, job: Job, wf: Workflow, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if step.run is None or "uninstall" not in step.run.value or "PIP_YES" in src.text:
            return
        unit = ascend_step_unit(ctx, src.path, job, step)
        if unit is not None:
            yield from _check(src, _unit_commands(unit), "this CI step")

    def check_dockerfile(self, df: Dockerfile, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if "PIP_YES" in src.text:
            return
        for instr in df.of("RUN"):
            if "uninstall" in instr.args:
                yield from _check(src, instr.commands, "`docker build`")


def _unit_commands(unit: ShellUnit) -> list[Command]:
    return commands(unit.source)


def _check(src: SourceFile, cmds: Iterable[Command], where: str) -> Iterator[Hit]:
    before: Command | None = None
    for cmd in cmds:
        piped, before = before is not None and before.op in ("|", "|&"), cmd
        if piped or any("<" in r.op for r in cmd.redirects):
            continue  # `yes | pip uninstall x`, `pip uninstall x < answers`: its answers come from there
        argv = cmd.argv
        if "uninstall" not in argv or (argv and argv[cmd.start :][:1] == ("uv",)):
            continue
        call = pip_call(cmd)
        if call is None or call.verb != "uninstall" or any(_YES.fullmatch(a) for a in argv[cmd.start + 1 :]):
            continue
        names = [f"`{w.unquoted}`" for _req, w in call.packages[:3]]
        names += [f"the packages of `{w.unquoted}`" for w in call.files[:1]]
        what = ", ".join(names) or "the packages"
        text = src.line(cmd.line)
        yield Hit(
            src.path,
            cmd.line,
            f"`pip uninstall` asks `Proceed (Y/n)?` for {what} when installed, and in {where} nobody answers: pip "
            f"stops with `EOFError` (exit status 2), the package stays installed, and the build or job fails "
            f"where the command's status counts. Add `-y`.",
            suggestion=text.replace("uninstall", "uninstall -y", 1) if text.count("uninstall") == 1 else None,
            cause="pip uninstall without -y",
        )
