"""NPU325: a line of an Ascend Dockerfile starts an instruction Docker does not have (`unknown instruction`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from npu_review.checks import lazyre
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import ASCEND_DOCKERFILE
from npu_review.checks.model import Severity
from npu_review.checks.parsers.dockerfile import INSTRUCTIONS, Dockerfile, Instruction, dangling_operator
from npu_review.checks.rule import Hit, Rule

# A file filled in before it is built: a placeholder where an instruction would be (`{EXTRA_CONTENT}`,
# `{{ base }}`, `%%RUN%%`, `@INSTALL@`; not a variable, `${ASCEND_HOME}`), or committed conflict markers (NPU123's).
# Such a file is not built as it is.
_NOT_AS_WRITTEN = lazyre.compile(r"(?<!\$)\{|%%|@\w+@|\A(?:<{7}|={7}|>{7})")
# The BuildKit front ends that read the instructions this rule knows (a `# syntax=` directive naming another one,
# such as dockerfile-plus, may add its own).
_DOCKER_SYNTAX = lazyre.compile(r"(?:docker\.io/)?docker/dockerfile(?:-upstream)?(?::[\w.-]+)?(?:@sha256:[0-9a-f]+)?")


class UnknownDockerfileInstruction(Rule):
    """A line of an Ascend Dockerfile starts with a word that is no Dockerfile instruction, so the image does not
    build.

    Why: Docker reads a Dockerfile line by line. A line that does not end with `\\` ends its instruction; the
    next line must start a new one (`RUN`, `ENV`, `COPY`, ...). When a `\\` is lost in a long `RUN` or `ENV`,
    when a line is inserted in the middle of a continued instruction, or when a command is added without its
    `RUN`, Docker stops with `unknown instruction: PYTHON3` before it builds anything: the Ascend image, and
    every CI job that pulls it, is gone until someone fixes the line. cann-recipes-train added
    `python3 -m pip install torch==2.5.1 torch-npu==2.5.1.post1` to its DeepSeek image without a `RUN`;
    Ascend's image repositories inserted `ENV ASCEND_AICPU_PATH=...` in the middle of a continued `ENV PYTHONPATH`.

    Bad:
        RUN pip install --no-cache-dir torch==2.5.1
        python3 -m pip install torch-npu==2.5.1.post1

    Good:
        RUN pip install --no-cache-dir torch==2.5.1
        RUN python3 -m pip install torch-npu==2.5.1.post1

    Fix: start the line with the instruction it belongs to (a suggestion does it for a command after a complete
    instruction), or end the line before it with ` \\` when it continues that instruction.

    Not reported: the line after a RUN that ends with `&&`, `||` or `|` (NPU318 reports that RUN); the lines after
    the first unknown one of a run of them (one cause); files that are not built as written (a placeholder where
    an instruction would be, conflict markers) or that have no FROM; a `# syntax=` front end other than Docker's.
    """

    id = "NPU325"
    name = "unknown-dockerfile-instruction"
    severity = Severity.ERROR
    title = "Dockerfile line starts with no instruction"
    kinds = frozenset({ASCEND_DOCKERFILE})

    def check_dockerfile(self, df: Dockerfile, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        syntax = df.directives.get("syntax")
        if syntax is not None and not _DOCKER_SYNTAX.fullmatch(syntax):
            return
        instrs = df.instructions
        if not any(i.keyword == "FROM" for i in instrs):
            return  # not a Dockerfile (a note or a list that a Dockerfile glob matched)
        unknown = [i for i in instrs if i.keyword not in INSTRUCTIONS]
        if not unknown or any(_NOT_AS_WRITTEN.search(i.keyword) for i in unknown):
            return
        escape = df.escape
        for k, instr in enumerate(instrs):
            if instr.keyword in INSTRUCTIONS:
                continue
            before = instrs[k - 1] if k else None
            if before is not None and (before.keyword not in INSTRUCTIONS or dangling_operator(before) is not None):
                continue  # the same lost line end (reported with the first), or NPU318's
            hit = self._hit(instr, before, src, ctx, escape)
            # The unknown lines right after it: each lost its line end too (a list cut in several places); Docker
            # stops at the first, and the next build at the next one.
            more = []
            for nxt in instrs[k + 1 :]:
                if nxt.keyword in INSTRUCTIONS:
                    break
                more.append(nxt.line)
            if more:
                lines = ", ".join(str(n) for n in more[:5]) + (", ..." if len(more) > 5 else "")
                hit = replace(
                    hit,
                    message=f"{hit.message} Line{'s' if len(more) > 1 else ''} {lines} after it "
                    f"start{'' if len(more) > 1 else 's'} no instruction either: the line before each "
                    "needs the same.",
                )
            yield hit

    def _hit(self, instr: Instruction, before: Instruction | None, src: SourceFile, ctx: Context, escape: str) -> Hit:
        text = src.line(instr.line)
        word = text.split(None, 1)[0]
        shown = word if len(word) <= 40 else word[:40] + "..."
        stops = f"`{shown}` is no Dockerfile instruction, so `docker build` stops at this line (`unknown instruction`)"
        command = _COMMAND.fullmatch(word) is not None
        start = "Start this line with its instruction" + (" (`RUN` for a command)" if command else "")
        if before is None:
            return Hit(src.path, instr.line, f"{stops}. {start}.")
        end = before.end_line
        last = src.line(end).split(None, 1)
        if end != before.line and last and last[0].upper() in INSTRUCTIONS:
            # An instruction inserted inside a continued one (`ENV A=\`, `ENV B=x`, `$A/x:\`): it ends the first.
            message = (
                f"{stops}: line {end} (`{last[0]} ...`) sits inside the {before.keyword} continued from line "
                f"{before.line}, so it ends that {before.keyword} and this line is left over. Move line {end} out of "
                f"the continued {before.keyword} (before line {before.line}, or after its last line)."
            )
            return Hit(src.path, instr.line, message, caused_by_change=ctx.is_added_line(src.path, end))
        # How the line before would continue onto this one: a command after a RUN's command needs an operator too,
        # more arguments of it (a package list cut by a lost `\`) do not; which one the line is, only its author knows.
        if before.keyword == "RUN" and not _OPERATOR.match(text):
            joint = f"end line {end} with ` {escape}` (and `&&` before it if this line starts a command of its own)"
        else:
            joint = f"end line {end} with ` {escape}`"
        message = (
            f"{stops}: the {before.keyword} above ends on line {end}, where no `{escape}` continues it. {start}, "
            f"or, if this line belongs to that {before.keyword}, {joint}."
        )
        # A command after a complete instruction, at the start of the line: it lost its `RUN`.
        suggestion = f"RUN {text.strip()}" if command and not text[:1].isspace() else None
        # A change that drops the escape character at the end of the instruction above makes this line unknown.
        caused = ctx.is_added_line(src.path, end)
        return Hit(src.path, instr.line, message, suggestion=suggestion, caused_by_change=caused)


# A program or a path to one (`python3`, `pip3`, `./build.sh`, `/opt/conda/bin/pip`): what a lost `RUN` leaves.
_COMMAND = lazyre.compile(r"(?:\.{0,2}/)?[A-Za-z_][\w.+-]*(?:/[\w.+-]+)*")
_OPERATOR = lazyre.compile(r"[ \t]*(?:&&|\|\||\||;)")
