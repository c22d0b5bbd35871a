"""NPU304: a blank line inside a backslash-continued instruction (Docker warns; a future release makes it an error)."""

from __future__ import annotations

from collections.abc import Iterable

from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import ASCEND_DOCKERFILE
from npu_review.checks.model import Severity
from npu_review.checks.parsers.dockerfile import BLANK, CONTENT, INSTRUCTIONS, Dockerfile
from npu_review.checks.rule import Hit, Rule


class EmptyContinuationLine(Rule):
    """A blank line sits inside a backslash-continued instruction (in practice: a long RUN).

    Why: Docker skips the blank line and warns "Empty continuation line found in: RUN …
    Empty continuation lines will become errors in a future release". It also hides the structure: a reader
    takes the blank line for the end of the RUN, while everything after it is still part of it.

    Comment lines inside a continuation are allowed and not reported. When the line after the blank line is
    a new instruction (`ENV …`, `RUN …`), the finding is an error: the previous line's trailing `\\` makes Docker
    join that instruction to the RUN as shell words, which is never what was meant.

    Bad:
        RUN bash Ascend-cann-toolkit_9.1.0_linux-aarch64.run --quiet --install && \\

            bash Ascend-cann-nnal_9.1.0_linux-aarch64.run --quiet --install

    Good:
        RUN bash Ascend-cann-toolkit_9.1.0_linux-aarch64.run --quiet --install && \\
            # then the NNAL package
            bash Ascend-cann-nnal_9.1.0_linux-aarch64.run --quiet --install

    Fix: delete the blank line, or turn it into a `#` comment line.
    """

    id = "NPU304"
    name = "empty-continuation-line"
    severity = Severity.NOTICE
    title = "Blank line inside a continued RUN"
    kinds = frozenset({ASCEND_DOCKERFILE})

    def check_dockerfile(self, df: Dockerfile, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        for instr in df.instructions:
            physical = instr.physical
            for i, phys in enumerate(physical):
                if phys.kind != BLANK:
                    continue
                nxt = next((p for p in physical[i + 1 :] if p.kind == CONTENT), None)
                keyword = _instruction_keyword(nxt.text) if nxt is not None else None
                if keyword is not None and nxt is not None:
                    yield Hit(
                        src.path,
                        phys.number,
                        f"The {instr.keyword} that starts on line {instr.line} does not end at this blank line: the "
                        f"line before ends with `{df.escape}`, so Docker skips the blank line and joins "
                        f"`{keyword} …` (line {nxt.number}) to the {instr.keyword} as shell words. Remove the "
                        f"trailing `{df.escape}` (and any dangling `&&`) from the line before.",
                        severity=Severity.ERROR,
                    )
                    continue
                yield Hit(
                    src.path,
                    phys.number,
                    f"Blank line inside the {instr.keyword} that starts on line {instr.line}: Docker skips it with "
                    'a warning ("Empty continuation lines will become errors in a future release"). Delete it '
                    "or make it a `#` comment.",
                    suggestion="",
                )


def _instruction_keyword(text: str) -> str | None:
    """The Dockerfile instruction a line starts with (written in capitals, as instructions conventionally are)."""
    word = text.strip().split(maxsplit=1)
    return word[0] if word and word[0] in INSTRUCTIONS else None
