"""NPU318: a Dockerfile RUN whose last line ends with `&&`, `||` or `|` and no `\\`."""

from __future__ import annotations

from collections.abc import Iterable

from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import ASCEND_DOCKERFILE
from npu_review.checks.model import Severity
from npu_review.checks.parsers.dockerfile import INSTRUCTIONS, Dockerfile, dangling_operator
from npu_review.checks.rule import Hit, Rule


class RunLineDanglingOperator(Rule):
    """A RUN line ends with `&&`, `||` or `|` but no `\\`, so the instruction ends there.

    Why: without the backslash Docker ends the RUN at that line. The shell gets a command list that ends with
    an operator (`syntax error: unexpected end of file`) and the next line is read as an instruction of its
    own (`unknown instruction: PIP`): the Ascend image does not build. It happens when a line is added at the
    end of a continued RUN, or a `\\` is lost in an edit.

    Bad:
        RUN pip install torch-npu==2.7.1 &&
            pip install -e vllm-ascend

    Good:
        RUN pip install torch-npu==2.7.1 && \\
            pip install -e vllm-ascend

    Fix: end the line with ` \\` (a suggestion does it when the next line belongs to the command), or remove the
    operator when the RUN was meant to end.

    Not reported: here-document RUNs (`RUN <<EOF`), whose lines the shell reads as they are, and the exec form.
    """

    id = "NPU318"
    name = "run-line-dangling-operator"
    severity = Severity.ERROR
    title = "RUN line ends with `&&`, `||` or `|` and no `\\`"
    kinds = frozenset({ASCEND_DOCKERFILE})

    def check_dockerfile(self, df: Dockerfile, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        escape = df.escape
        for instr in df.of("RUN"):
            op = dangling_operator(instr)
            if op is None:
                continue
            line = instr.end_line
            text = src.line(line)
            nxt = next((src.line(n) for n in range(line + 1, len(src.lines) + 1) if src.line(n).strip()), "")
            word = nxt.split(None, 1)[0].upper() if nxt.strip() else ""
            new_instruction = word in INSTRUCTIONS
            follow = (
                f"the next line (`{nxt.strip()[:50]}`) is read as an instruction of its own"
                if nxt.strip() and not new_instruction and not nxt.lstrip().startswith("#")
                else "the shell gets a command list that ends with an operator"
            )
            yield Hit(
                src.path,
                line,
                f"This RUN line ends with `{op}` but no `{escape}`, so the instruction ends here: "
                f"{follow} and the build fails (`syntax error: unexpected end of file`). End the line with "
                f"` {escape}` to continue the command, or drop the `{op}`.",
                suggestion=text.rstrip() + f" {escape}" if nxt.strip() and not new_instruction else None,
            )
