"""NPU321: a line of an NPU requirements file that pip rejects, or reads as another package than meant."""

from __future__ import annotations

from collections.abc import Iterable

from npu_review.checks.analysis.device import npu_requirements
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import REQUIREMENTS
from npu_review.checks.model import Severity
from npu_review.checks.parsers.requirements import REQUIREMENT_OPTIONS, LineError, line_error, logical_lines
from npu_review.checks.rule import Hit, Rule


class RequirementsFileInvalid(Rule):
    """A requirements file that pip rejects, or reads as another package than the one meant.

    Why: pip reads a requirements file line by line, and stops at the first line it cannot take: the whole
    `pip install -r` fails, and with it the job or the image build that installs the file. Four ways this
    happens in NPU projects:
    * an option that pip accepts only on the command line, written after a requirement (`onnxscript==0.2.2
      --no-deps`: "no such option: --no-deps"); after a requirement pip takes only `--hash`,
      `--global-option` and `--config-settings`, and on a line of its own only the index, constraint and
      binary options;
    * a version glued to the name with `-` (`torchvision-0.22.0.dev20250409`): a valid project name to pip,
      so it looks for a package called `torchvision-0.22.0.dev20250409` and finds none;
    * a version PEP 440 does not know (`torch==latest`), or `=` where `==` was meant (`torch=2.1.0`);
    * a line that is no requirement at all: a name that does not start and end with a letter or a digit (a pin
      mangled by an edit, `~orch==2.1.0`; a conda export's `_libgcc_mutex==0.1` pasted in).
    Ascend/pytorch's test requirements had the first two (fixed in cc6b71e and d1774b3).

    Only NPU requirement files are read: named for NPU (`requirements-npu.txt`), listing an Ascend package
    (torch_npu, triton-ascend), or any in a repository that is about Ascend (its package is `vllm_ascend`,
    `torch_npu`, ...). Silent on lines pip reads from the environment (`${VAR}`), URLs, paths and archive files.

    Bad (`requirements-npu.txt`):
        onnxscript==0.2.2 --no-deps
        torchvision-0.22.0.dev20250409
        torch_npu=2.5.1

    Good:
        onnxscript==0.2.2
        torchvision==0.22.0.dev20250409
        torch_npu==2.5.1

    Fix: write `name==version`, and pass `--no-deps` (or any other install option) on the `pip install` command
    line, or install that package in a step of its own.
    """

    id = "NPU321"
    name = "requirements-file-invalid"
    severity = Severity.ERROR
    title = "Requirements file line that pip rejects or reads as another package"
    kinds = frozenset({REQUIREMENTS})

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if not npu_requirements(ctx, src):
            return
        for line in logical_lines(src.text):
            err = line_error(line.text)
            if err is None:
                continue
            yield Hit(src.path, line.line, _message(err), suggestion=_suggestion(src, line.line, err))


def _message(err: LineError) -> str:
    if err.kind == "option":
        allowed = ", ".join(f"`{o}`" for o in sorted(REQUIREMENT_OPTIONS - {"-C", "--install-option"}))
        return (
            f'pip does not accept `{err.token}` in a requirements file ("no such option"), so `pip install -r` '
            f"of this file fails before it installs anything: after a requirement only {allowed} may follow. "
            f"Pass `{err.token}` on the `pip install` command line, or install this package in its own step."
        )
    if err.kind == "glued-version":
        return (
            f"`{err.token}` is one project name to pip, not a name and a version: pip looks for a package called "
            f"`{err.token}`, finds none, and the install fails. Write `{err.meant}`."
        )
    if err.kind == "bad-name":
        return (
            f"`{err.token}` is not a requirement pip accepts (a project name starts and ends with a letter or a "
            "digit): pip rejects this line, and the whole file with it."
        )
    if err.kind == "empty-specifier":
        return (
            f"`{err.token}` has an empty version specifier (two commas with nothing between them): pip rejects "
            "this requirement, and the whole file with it. Drop the extra comma."
        )
    if err.kind == "bad-operator":
        return f"`{err.token}` is not a requirement pip accepts (`=` is no version operator). Write `{err.meant}`."
    return f"`{err.token}` is not a PEP 440 version: pip rejects this requirement, and the whole file with it."


def _suggestion(src: SourceFile, n: int, err: LineError) -> str | None:
    """The line with the glued name or the `=` fixed, when it is written on one physical line."""
    if err.meant is None:
        return None
    text = src.line(n)
    if text.count(err.token) != 1 or text.rstrip().endswith("\\"):
        return None
    return text.replace(err.token, err.meant)
