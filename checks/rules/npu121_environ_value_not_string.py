"""NPU121: Python that sets an environment variable to a number, a bool or None (`os.environ["X"] = 1`), which
raises TypeError before the Ascend setting it was meant to make takes effect."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from npu_review.checks import lazyre
from npu_review.checks.analysis.vllm_launches import ascend_text
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import DOCS, NPU_SCRIPT, PYTHON
from npu_review.checks.model import Severity
from npu_review.checks.parsers.codeblocks import shell_blocks
from npu_review.checks.parsers.markdown import flavor_of
from npu_review.checks.rule import Hit, Rule

PYTHON_LANGUAGES = frozenset({"python", "py", "python3", "ipython", "pycon"})

# A literal that is not a str: a number, True/False/None. Only a whole literal counts (`1`, `-1`, `0.5`, `True`),
# never an expression (`str(1)`, `f"{n}"`, `1 if x else 0`): the value must end the statement (or a comment does).
_NOT_STR = r"(?P<value>-?\d+(?:\.\d+)?|True|False|None)"
_NAME = r"""(?P<q>["'])(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?P=q)"""
_END = r"[ \t]*(?:#.*)?$"
_FORMS = (
    # os.environ["X"] = 1
    lazyre.compile(rf"\benviron[ \t]*\[[ \t]*{_NAME}[ \t]*\][ \t]*=(?!=)[ \t]*{_NOT_STR}{_END}"),
    # os.environ.setdefault("X", 1), os.putenv("X", 1)
    lazyre.compile(rf"\b(?:environ\.setdefault|putenv)[ \t]*\([ \t]*{_NAME}[ \t]*,[ \t]*{_NOT_STR}[ \t]*\){_END}"),
    # os.environ.update({"X": 1}) and os.environ.update(X=1), one entry on the line
    lazyre.compile(rf"\benviron\.update[ \t]*\([ \t]*\{{[ \t]*{_NAME}[ \t]*:[ \t]*{_NOT_STR}[ \t]*\}}[ \t]*\){_END}"),
    lazyre.compile(rf"\benviron\.update[ \t]*\([ \t]*(?P<name>[A-Za-z_]\w*)[ \t]*=[ \t]*{_NOT_STR}[ \t]*\){_END}"),
)


class EnvironValueNotString(Rule):
    """Python sets an environment variable to a number, a bool or None.

    Why: `os.environ` holds strings only: `os.environ["VLLM_USE_V1"] = 1` raises `TypeError: str expected, not
    int` on that line, so the script or the docs example stops before the Ascend setting it was written for
    (the graph mode, the NPU device list, the HCCL timeout) ever applies. vllm-ascend's graph-mode guide
    shipped its offline example that way, and no reader could run it. `os.environ.setdefault`, `os.putenv` and
    `os.environ.update` raise the same.

    Bad:
        import os
        import torch_npu
        os.environ["ASCEND_RT_VISIBLE_DEVICES"] = 0
        os.environ["VLLM_USE_V1"] = 1

    Good:
        import os
        import torch_npu
        os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0"
        os.environ["VLLM_USE_V1"] = "1"

    Fix: quote the value (`"1"`), or convert it with `str(...)`.

    Where: Python files that name Ascend (an NPU script, a module with an Ascend marker) and the Python code
    blocks of Ascend docs. Only a literal number, `True`, `False` or `None` is reported, as the whole value of
    the statement: an expression (`str(n)`, a variable, a conditional) is left alone.
    """

    id = "NPU121"
    name = "environ-value-not-string"
    severity = Severity.ERROR
    title = "Environment variable set to a non-string value in Python"
    kinds = frozenset({PYTHON, NPU_SCRIPT, DOCS})
    needles = ("environ", "putenv")

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        text = src.text
        if "environ" not in text and "putenv" not in text:
            return
        flavor = flavor_of(src.path)
        if flavor is not None:
            if DOCS not in src.kinds or not ascend_text(ctx, text):
                return
            for block in shell_blocks(text, flavor, PYTHON_LANGUAGES):
                yield from _hits(src.path, block.lines)
            return
        if not src.path.endswith(".py") or not ascend_text(ctx, text):
            return
        yield from _hits(src.path, enumerate(src.lines, start=1))


def _hits(path: str, lines: Iterable[tuple[int, str]]) -> Iterator[Hit]:
    for n, line in lines:
        if "environ" not in line and "putenv" not in line:
            continue
        for form in _FORMS:
            m = form.search(line)
            if m is None:
                continue
            name, value = m.group("name"), m.group("value")
            kind = "None" if value == "None" else "a bool" if value in ("True", "False") else "a number"
            quoted = "" if value == "None" else f'"{value}"'
            fix = f"Write `{quoted}`." if quoted else "Leave the variable unset (`os.environ.pop(...)`) instead."
            yield Hit(
                path,
                n,
                f"`{name}` is set to {kind} (`{value}`): the environment holds strings only, so this line raises "
                f"TypeError and the setting never applies. {fix}",
                # One habit, one comment: the ports of one example written as numbers, each its own line.
                cause=f"os.environ set to {kind}",
            )
            break
