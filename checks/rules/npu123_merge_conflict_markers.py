"""NPU123: merge conflict markers committed in an Ascend script, image, requirements file, build config or install
guide."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from npu_review.checks import lazyre
from npu_review.checks.analysis.device import npu_requirements
from npu_review.checks.analysis.scripts import doc_is_ascend, script_unit
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import ASCEND_DOCKERFILE, BUILD_CONFIG, DOCS, NPU_SCRIPT, PYTHON, REQUIREMENTS, SHELL
from npu_review.checks.model import Severity
from npu_review.checks.rule import Hit, Rule

# What git writes at the start of a line around a conflict: ours, (diff3) the base, the divider, theirs.
_OURS = lazyre.compile(r"<{7}(?:[ \t].*)?")
_BASE = lazyre.compile(r"\|{7}(?:[ \t].*)?")
_DIVIDER = lazyre.compile(r"={7}[ \t]*")
_THEIRS = lazyre.compile(r">{7}(?:[ \t].*)?")
_FENCE = lazyre.compile(r"[ \t]{0,3}(?:`{3,}|~{3,})")


class MergeConflictMarkers(Rule):
    """A merge conflict was committed with git's markers still in the file.

    Why: a merge or rebase that stopped on a conflict leaves both sides in the file between `<<<<<<< ours`,
    `=======` and `>>>>>>> theirs`; committed as they are, they break the file where it is used: bash stops with a
    syntax error at the `<<<<<<<` line (a `<<<` with nothing before it), Docker rejects the Dockerfile ("unknown
    instruction: <<<<<<<"), pip stops at the line ("Invalid requirement"), and an install guide shows both
    versions of its steps. vllm-ascend committed them in `csrc/build_aclnn.sh` (several times), in a CI test
    selection script and in the multi-node nightly's run script; sgl-kernel-npu in its attention ops' build script.

    Bad (`scripts/run_npu.sh`):
        export ASCEND_RT_VISIBLE_DEVICES=0,1
        <<<<<<< HEAD
        export HCCL_BUFFSIZE=512
        =======
        export HCCL_BUFFSIZE=1024
        >>>>>>> main

    Good:
        export ASCEND_RT_VISIBLE_DEVICES=0,1
        export HCCL_BUFFSIZE=1024

    Fix: keep the side meant (or merge the two) and delete the marker lines.

    Where: NPU scripts, Ascend Dockerfiles, NPU requirements files, and the build configuration and Python of an
    Ascend build (JSON, TOML, INI, CMake and Python files that name Ascend, CANN, the NPU or a SOC, or any such
    file of a repository that is Ascend's as a whole: an operator build's kernel config no longer parses), an
    error: the file no longer runs, parses or installs; Ascend install guides, a warning. A block is reported when
    all its markers are there in order, at the start of their lines (a lone `=======` is a heading's underline),
    outside a docs code block (a guide may show what a conflict looks like). Workflows: NPU200 (the YAML no longer
    loads).
    """

    id = "NPU123"
    name = "merge-conflict-markers"
    severity = Severity.ERROR
    title = "Merge conflict markers committed"
    kinds = frozenset({SHELL, NPU_SCRIPT, ASCEND_DOCKERFILE, REQUIREMENTS, DOCS, BUILD_CONFIG, PYTHON})
    needles = ("<<<<<<<",)

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        text = src.text
        if "<<<<<<<" not in text or ">>>>>>>" not in text:
            return
        what = _what_stops(src, ctx)
        if what is None:
            return
        docs = DOCS in src.kinds
        quiet = _still_parses(src, ctx)
        if quiet:
            # The markers sit inside a string or a docstring: the file still parses, but it carries both sides.
            what = "they sit inside a string or a docstring, so the file still parses, but it carries both sides"
        for ours, lines in _conflicts(text.split("\n"), skip_fences=docs):
            listed = ", ".join(str(n) for n in lines)
            yield Hit(
                src.path,
                ours,
                f"Merge conflict markers are committed (lines {listed}): {what}. Keep the side meant (or merge "
                "the two) and delete the marker lines.",
                end_line=lines[-1],
                severity=Severity.WARNING if docs or quiet else None,
                cause="merge conflict markers",
            )


def _still_parses(src: SourceFile, ctx: Context) -> bool:
    """A Python or JSON file that parses with its markers (they are inside strings)."""
    if src.path.endswith(".py") and PYTHON in src.kinds:
        return ctx.python_ast(src) is not None
    if src.path.endswith(".json"):
        try:
            json.loads(src.text)
        except ValueError:
            return False
        return True
    return False


def _conflicts(lines: list[str], skip_fences: bool) -> Iterator[tuple[int, list[int]]]:
    """Each conflict block: the line of its `<<<<<<<` and the lines of all its markers (1-based), for blocks
    whose divider and `>>>>>>>` follow in order (before the next `<<<<<<<`)."""
    fenced = False
    start: list[int] | None = None
    divided = False
    for n, line in enumerate(lines, 1):
        if skip_fences and _FENCE.match(line):
            fenced = not fenced
            start, divided = None, False
            continue
        if fenced:
            continue
        if _OURS.fullmatch(line):
            start, divided = [n], False
        elif start is None:
            continue
        elif _BASE.fullmatch(line) and not divided:
            start.append(n)
        elif _DIVIDER.fullmatch(line) and not divided:
            start.append(n)
            divided = True
        elif _THEIRS.fullmatch(line) and divided:
            start.append(n)
            yield start[0], start
            start, divided = None, False


# What a build config or a Python file is Ascend's by (its own words), in a repository that is not Ascend's as a whole.
_ASCEND_TEXT = lazyre.compile(r"(?i)ascend|\bcann\b|\bnpu\b|hccl|torch_npu|soc_version")
# What stops at the markers, by the file's format.
_FORMATS = (
    ((".json",), "the JSON no longer parses, so whatever reads this config stops"),
    ((".toml",), "the TOML no longer parses, so the build that reads it stops"),
    ((".ini", ".cfg"), "the config no longer parses (a line that is no `key = value`)"),
    (("CMakeLists.txt", ".cmake"), "cmake stops there with a parse error, so the build is not configured"),
    ((".py",), "Python stops with a SyntaxError at the first marker, so the module cannot be imported or run"),
)


def _what_stops(src: SourceFile, ctx: Context) -> str | None:
    """What the markers break in this file, when it is Ascend material; None when it is not."""
    if src.kinds & {BUILD_CONFIG, PYTHON} and not src.kinds & {SHELL, DOCS, REQUIREMENTS}:
        what = next((w for ends, w in _FORMATS if src.path.endswith(ends)), None)
        if what is None or not (ctx.ascend_only() or _ASCEND_TEXT.search(src.text)):
            return None
        return what
    if DOCS in src.kinds:
        return (
            "the guide shows its readers both sides of the conflict, git's markers between them"
            if doc_is_ascend(ctx, src)
            else None
        )
    if ASCEND_DOCKERFILE in src.kinds:
        return 'Docker rejects the Dockerfile there ("unknown instruction: <<<<<<<"), so the image does not build'
    if REQUIREMENTS in src.kinds:
        return (
            'pip stops there ("Invalid requirement"), so the whole install fails'
            if npu_requirements(ctx, src)
            else None
        )
    if script_unit(ctx, src) is None:  # an NPU script (by its path or what it reads)
        return None
    return "the shell stops there with a syntax error, and both sides of the conflict are in the script"
