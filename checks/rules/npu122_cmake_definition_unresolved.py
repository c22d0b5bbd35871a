"""NPU122: an Ascend build passes cmake a `-D` definition that cmake rejects, or one whose name no CMake file of the
repository reads while a name one edit away is read, or a SOC name its CMake files compare in another case."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from rapidfuzz.distance import OSA

from npu_review.checks import lazyre
from npu_review.checks.analysis.cmake import (
    CMAKE_GLOBS,
    CMakeReads,
    Definition,
    cmake_reads,
    python_definitions,
    unit_definitions,
)
from npu_review.checks.analysis.device import npu_project, soc_names
from npu_review.checks.analysis.scripts import ShellUnit, ascend_step_unit, run_unit, script_unit
from npu_review.checks.analysis.vllm_launches import ascend_text
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.facts import Facts
from npu_review.checks.kinds import ASCEND_DOCKERFILE, ASCEND_WORKFLOW, NPU_SCRIPT, PYTHON, SHELL
from npu_review.checks.model import Related, Severity
from npu_review.checks.parsers.sh import Source
from npu_review.checks.rule import Hit, Rule

if TYPE_CHECKING:
    from npu_review.checks.parsers.dockerfile import Dockerfile
    from npu_review.checks.parsers.gha.workflow import Job, Step, Workflow

# A name this long or longer may be two edits from the one meant; a shorter one only one. Names shorter than
# _MIN_LENGTH are left alone (`USE_NPU` and `USE_CPU` are two options, not a typo).
_TWO_EDITS_FROM = 12
_MIN_LENGTH = 6
# A `_`-separated word this short that differs is another word (`A2`/`A3`, `NPU`/`CPU`), not a misspelling.
_MIN_WORD = 4


class CMakeDefinitionUnresolved(Rule):
    """An Ascend build passes cmake a `-D` definition that cmake rejects, or one whose name no CMake file of the
    repository reads while a name one or two edits away is read.

    Why: cmake takes a cache definition as `-D <var>=<value>` or `-D <var>:<type>=<value>`; `-DBUILD_OPPLUGIN`
    alone stops it with "Parse error in command line argument" before anything is configured (CMake 3.x and 4.x
    alike), so the Ascend build never starts. A definition whose name the project does not read is kept without
    complaint (cmake only lists it under "Manually-specified variables were not used by the project"), so the
    setting silently does nothing: vllm-ascend's setup.py passed `-DPYHTON_INCLUDE_PATH=...`, and the
    `PYTHON_INCLUDE_PATH` its CMakeLists.txt reads for the AscendC kernel build stayed empty; Ascend/pytorch's
    setup.py appended `-DBUILD_OPPLUGIN` with no value.

    Bad:
        # CMakeLists.txt
        include_directories(${PYTHON_INCLUDE_PATH} ${ASCEND_HOME_PATH}/include)
        # setup.py
        import torch_npu
        cmake_args = ["-DASCEND_HOME_PATH=/usr/local/Ascend/ascend-toolkit/latest"]
        cmake_args.append("-DPYHTON_INCLUDE_PATH=" + get_paths()["include"])
        cmake_args.append("-DBUILD_OPPLUGIN")

    Good:
        # CMakeLists.txt
        include_directories(${PYTHON_INCLUDE_PATH} ${ASCEND_HOME_PATH}/include)
        # setup.py
        import torch_npu
        cmake_args = ["-DASCEND_HOME_PATH=/usr/local/Ascend/ascend-toolkit/latest"]
        cmake_args.append("-DPYTHON_INCLUDE_PATH=" + get_paths()["include"])
        cmake_args.append("-DBUILD_OPPLUGIN=ON")

    Fix: give every definition a value (`-DNAME=ON`); spell the name as the CMake files read it.

    Where: cmake's arguments in Python build scripts (a list named like `cmake_args`, a list that starts with cmake,
    a `"cmake ..."` command string, a helper that builds `f"-D{name}={value}"` called with a literal name), `cmake`
    commands of build scripts, `run:` steps of Ascend jobs and RUNs of Ascend Dockerfiles (the `-D` words of a
    variable or array they expand included), in an Ascend project or in files that are Ascend themselves. The names
    read are the ones every CMakeLists.txt and *.cmake file of the revision reads (`${NAME}`, a bare name in `if()`,
    `DEFINED NAME`, `option(NAME`, `set(NAME ... CACHE`), sub-directories included. Not reported: a name any CMake
    file mentions at all, the variables of CMake and its find modules (`CMAKE_*`, `Python3_*`, `<Package>_DIR`:
    facts `cmake_definitions`), names far from every read one (projects pass extra definitions on purpose), names
    shorter than six characters, names that differ in a short or numbered word (`A2`/`A3`) or by a whole word more
    (`ENABLE_TEST_C` beside `ENABLE_TEST`), names whose differing word the CMake files use themselves
    (`UDMA_SUPPORT` beside `RDMA_SUPPORT` where they build `udma_demo`: another transport, an option no longer
    read), names close to two read ones, a name built from a variable, `-D` of
    other tools (compiler flags in `CFLAGS` or a list named like flags), and a cmake command that runs after the
    unit fetched or unpacked another source tree (`git clone`, `wget`, `tar`) or moved into an absolute folder: it
    configures another project.

    A definition's value is compared too: a CMake file that tests a SOC variable with `STREQUAL` against a SOC name
    (`if(SOC_VERSION STREQUAL "ascend310p3")`) while an Ascend Dockerfile of the repository builds with the same
    SOC in other letters (`export SOC_VERSION=ASCEND310P3`, `ARG`, `ENV`). CANN takes a SOC name in any case (its
    AscendC build lower-cases it: `string(TOLOWER "${SOC_VERSION}" _LOWER_SOC_VERSION)` in asc-devkit's
    host_config.cmake), and projects write both (`Ascend910B1`, `ascend910b1`), but `STREQUAL` is case-sensitive:
    for that image the test is false and the branch meant for its device never runs (vllm-ascend's 310P image
    built the A2/A3 operator set until 418fccf compared with `MATCHES`). The SOC names are the facts'
    (`ascend_names.socs`, `soc_versions`). Not reported: a comparison some build's value matches exactly, a
    variable whose case a CMake file or a setup.py line folds (`TOLOWER`, `.lower()`), values from a variable.
    The finding goes on the comparison, or on the Dockerfile's line when the change sets it there.
    """

    id = "NPU122"
    name = "cmake-definition-unresolved"
    severity = Severity.WARNING
    title = "A cmake -D definition that cmake rejects or that no CMake file reads"
    kinds = frozenset({PYTHON, SHELL, NPU_SCRIPT, ASCEND_WORKFLOW, ASCEND_DOCKERFILE})
    needles = ("-D",)

    context_kinds = frozenset()  # (a project check too: its context is the CMake files, then the Dockerfiles)

    @classmethod
    def context_paths(cls, facts: Facts) -> tuple[str, ...]:
        return (*CMAKE_GLOBS, *_PY_BUILDS)  # the names the repository's CMake files read; what setup.py passes on

    @classmethod
    def context_after(cls, facts: Facts) -> tuple[tuple[str, ...], frozenset[str]]:
        # The SOC names the images pass, read when a CMake file changes (a comparison of its SOC variable).
        return CMAKE_GLOBS, frozenset({ASCEND_DOCKERFILE})

    def check_project(self, ctx: Context) -> Iterable[Hit]:
        yield from _soc_comparisons(ctx)

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if PYTHON in src.kinds and src.path.endswith(".py"):
            if "cmake" not in src.text.lower():
                return
            defs = ctx.parsed("npu122-python", src, python_definitions)
            if defs and (npu_project(ctx) or ascend_text(ctx, src.text)):
                yield from _judge(src.path, defs, ctx)
            return
        if (SHELL in src.kinds or NPU_SCRIPT in src.kinds) and "cmake" in src.text:
            unit = script_unit(ctx, src)
            if unit is None and (npu_project(ctx) or ascend_text(ctx, src.text)):
                unit = ShellUnit(src.path, Source.file(src.text), "script", 1)
            if unit is not None:
                yield from _judge(src.path, unit_definitions(unit), ctx)

    def check_step(self, step: Step, job: Job, wf: Workflow, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if step.run is None or not any("cmake" in t for _, t in step.run.text_lines()):
            return
        unit = ascend_step_unit(ctx, src.path, job, step)
        if unit is not None:
            yield from _judge(src.path, unit_definitions(unit), ctx)

    def check_dockerfile(self, df: Dockerfile, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if "cmake" not in src.text:
            return
        foreign = False  # an earlier RUN fetched another source tree: its cmake commands configure that one
        for instr in df.of("RUN"):
            unit = run_unit(src.path, instr)
            if unit is None:
                continue
            defs = unit_definitions(unit, foreign)
            yield from _judge(src.path, defs, ctx)
            foreign = foreign or _fetches(unit.source.text)


def _fetches(text: str) -> bool:
    return any(w in text for w in ("git clone", "wget ", "curl ", "tar ", "unzip "))


def _judge(path: str, defs: Iterable[Definition], ctx: Context) -> Iterator[Hit]:
    reads: CMakeReads | None = None
    for d in defs:
        if d.malformed:
            yield _malformed(path, d)
            continue
        if not d.own_project or _predefined(d.name, ctx):
            continue
        if reads is None:
            reads = cmake_reads(ctx)
        if not reads.read or d.name in reads.mentioned:
            continue
        meant = _closest(d.name, reads)
        if meant is not None:
            yield _misspelled(path, d, meant, reads)


def _malformed(path: str, d: Definition) -> Hit:
    by = f" (built by `{d.via}`)" if d.via else ""
    return Hit(
        path,
        d.line,
        f"`{d.raw}`{by} has no `=value`: cmake takes a definition as `-D <var>=<value>` (or "
        f'`-D <var>:<type>=<value>`) and stops with "Parse error in command line argument: {d.name}" before it '
        f"configures anything, so this Ascend build never starts. Write `-D{d.name}=ON` (or the value the CMake "
        "files test).",
        severity=Severity.ERROR,
        cause=f"malformed {d.name}",
    )


def _misspelled(path: str, d: Definition, meant: tuple[str, int], reads: CMakeReads) -> Hit:
    name, edits = meant
    where_path, where_line = reads.read[name]
    by = f" (built by `{d.via}`)" if d.via else ""
    away = "one edit" if edits == 1 else f"{edits} edits"
    return Hit(
        path,
        d.line,
        f"`{d.raw}`{by} sets `{d.name}`, which no CMakeLists.txt or .cmake file of the repository reads; they read "
        f"`{name}` ({where_path}:{where_line}), {away} away. cmake keeps an unread definition with only a "
        f'"Manually-specified variables were not used" warning, so the Ascend build configures as if nothing were '
        f"passed: `{name}` keeps its default (empty when it has none). Pass `-D{name}=...`.",
        related=(Related(where_path, where_line, f"`{name}` is read here"),),
        cause=f"{d.name}->{name}",
    )


def _predefined(name: str, ctx: Context) -> bool:
    facts = ctx.facts.cmake_definitions
    return (
        name in facts.predefined_names
        or name.startswith(tuple(facts.predefined_prefixes))
        or name.endswith(tuple(facts.predefined_suffixes))
    )


def _closest(name: str, reads: CMakeReads) -> tuple[str, int] | None:
    """The one read name within reach of `name` and its distance, None when none or several are."""
    if len(name) < _MIN_LENGTH:
        return None
    allowed = 2 if len(name) >= _TWO_EDITS_FROM else 1
    found: list[tuple[int, str]] = []
    for r in reads.read:
        if abs(len(r) - len(name)) > allowed:
            continue
        d = OSA.distance(name, r, score_cutoff=allowed)
        if d <= allowed:
            found.append((d, r))
    if not found:
        return None
    low = min(d for d, _ in found)
    closest = [r for d, r in found if d == low]
    if len(closest) != 1 or not _typo(name, closest[0]):
        return None
    if _words_of_its_own(name, closest[0], reads):
        return None
    return closest[0], low


def _words_of_its_own(name: str, meant: str, reads: CMakeReads) -> bool:
    """The words by which `name` differs from `meant` are words the CMake files use themselves (`UDMA` in
    `ACLSHMEM_UDMA_SUPPORT` against `ACLSHMEM_RDMA_SUPPORT`, where the files build `udma_demo` and print "HCOM UDMA
    compile support"): another thing of the project, an option dropped or never read, not a misspelling whose
    fix is the name one edit away (rs-r76, judged false: following it turns RDMA on)."""
    words = {w.upper() for token in reads.mentioned for w in token.split("_") if w}
    own = [x for x, y in zip(name.split("_"), meant.split("_"), strict=False) if x != y]
    return bool(own) and len(name.split("_")) == len(meant.split("_")) and all(x.upper() in words for x in own)


def _typo(a: str, b: str) -> bool:
    """The names differ as a misspelling does: not in a short or numbered word (`BUILD_A2`/`BUILD_A3`), and not
    by a whole word more (`ENABLE_TEST_C` is another option than `ENABLE_TEST`)."""
    wa, wb = a.split("_"), b.split("_")
    if len(wa) != len(wb):
        return a.replace("_", "") == b.replace("_", "")  # only a `_` added or lost (`INCLUDEPATH`)
    diff = [(x, y) for x, y in zip(wa, wb, strict=True) if x != y]
    return all(len(x) >= _MIN_WORD and len(y) >= _MIN_WORD and not any(c.isdigit() for c in x + y) for x, y in diff)


# -- a SOC comparison that a build's SOC name misses by its letter case ----------------------------------------------

_PY_BUILDS = ("setup.py", "**/setup.py")
# `if(SOC_VERSION STREQUAL "ascend310p3")`, `elseif("${SOC_VERSION}" STREQUAL ascend310p3)`: the variable (group 1),
# the value (group 2).
_STREQUAL = lazyre.compile(
    r"(?im)^[ \t]*(?:else)?if[ \t]*\([^)\n]*?(?<![\w$])\"?(?:\$\{)?([A-Za-z_][A-Za-z0-9_]*)\}?\"?[ \t]+STREQUAL[ \t]+"
    r"\"?([A-Za-z][A-Za-z0-9_-]*)\"?[ \t]*[)\s]"
)
# A CMake file or a Python build script that changes a SOC name's case before comparing it.
_CASE_FOLD = lazyre.compile(r"(?i)\bTO(?:LOWER|UPPER)\b|\.(?:lower|upper|casefold)\(\)")


def _soc_comparisons(ctx: Context) -> Iterator[Hit]:
    """A CMake comparison (`STREQUAL`, case-sensitive) of a variable with a SOC name that an Ascend Dockerfile of
    the revision sets the same variable to only in another letter case (`ascend310p3` against
    `SOC_VERSION=ASCEND310P3`): for that image's build the comparison is false."""
    comparisons = list(_cmake_soc_comparisons(ctx))
    if not comparisons:
        return
    names = {name for name, *_ in comparisons}
    passed = _dockerfile_socs(ctx, names)
    if not passed:
        return
    for py in ctx.paths_matching(_PY_BUILDS):
        src = ctx.source(py)
        if src is not None and any(_folds(src.text, n) for n in names):
            return  # setup.py may fold the case of what it passes on
    for name, value, path, line in comparisons:
        values = [(v, p, n) for v, p, n in passed.get(name, ()) if v != value]
        same = [v for v, _, _ in passed.get(name, ()) if v == value]
        other = [(v, p, n) for v, p, n in values if v.lower() == value.lower()]
        if same or not other:
            continue
        shown, where, at = other[0]
        place = ctx.first_added(path, [line]) if ctx.is_added_line(path, line) else None
        if place is None and not any(ctx.is_added_line(p, n) for _, p, n in other):
            continue
        hit_path, hit_line = (path, line) if place is not None else (other[0][1], other[0][2])
        related = [Related(path, line, f"compares `{name}` with `{value}`")] if hit_path != path else []
        related += [Related(p, n, f"sets `{name}={v}`") for v, p, n in other if (p, n) != (hit_path, hit_line)]
        yield Hit(
            hit_path,
            hit_line,
            f'`{name} STREQUAL "{value}"` ({path}:{line}) compares case-sensitively, but {where}:{at} builds with '
            f"`{name}={shown}`, the same SOC in other letters (CANN reads SOC names in any case): for that build the "
            f"comparison is false, so the branch meant for its device never runs. Compare the lower-cased value "
            f'(`string(TOLOWER "${{{name}}}" ...)`) or write the value as the builds pass it.',
            related=tuple(related),
            cause=f"soc case {name} {value.lower()}",
        )


def _cmake_soc_comparisons(ctx: Context) -> Iterator[tuple[str, str, str, int]]:
    """(variable, SOC name, path, line) of the CMake files' `STREQUAL` comparisons with a SOC name, in files that do
    not fold the case of a SOC name first."""
    socs = soc_names(ctx)
    found: list[tuple[str, str, str, int]] = []
    texts: list[str] = []
    for path in ctx.paths_matching(tuple(CMAKE_GLOBS)):
        src = ctx.source(path)
        if src is None:
            continue
        texts.append(src.text)
        if "STREQUAL" in src.text:
            for m in _STREQUAL.finditer(src.text):
                if m.group(2).lower() in socs:
                    found.append((m.group(1), m.group(2), path, src.text.count("\n", 0, m.start(2)) + 1))
    # A CMake file that folds the variable's case (`string(TOLOWER "${SOC_VERSION}" SOC_VERSION)`) may do so before
    # any comparison of another file: none of its comparisons is judged.
    folded = {name for name, *_ in found if any(_folds(t, name) for t in texts)}
    yield from (c for c in found if c[0] not in folded)


def _folds(text: str, name: str) -> bool:
    """A line of `text` names `name` (any case: `soc_version` in Python) and changes a value's case."""
    low = name.lower()
    return any(low in line.lower() and _CASE_FOLD.search(line) for line in text.splitlines())


def _dockerfile_socs(ctx: Context, names: set[str]) -> dict[str, list[tuple[str, str, int]]]:
    """name -> (the SOC name, the Dockerfile, the line) of every literal SOC name an Ascend Dockerfile sets one of
    `names` to (`ARG`/`ENV`, an assignment or `export` in a RUN)."""
    from npu_review.checks.parsers.dockerfile import build_args, steps

    socs = soc_names(ctx)
    found: dict[str, list[tuple[str, str, int]]] = {}

    def keep(name: str, value: str, path: str, line: int) -> None:
        value = value.strip("\"'")
        if name in names and value and "$" not in value and value.lower() in socs:
            found.setdefault(name, []).append((value, path, line))

    for path in ctx.paths_of_kind(ASCEND_DOCKERFILE):
        src = ctx.source(path)
        if src is None or not any(n in src.text for n in names):
            continue
        df = ctx.dockerfile(src)
        for line, name, value in build_args(df):
            keep(name, value, path, line)
        for step in steps(df):
            for name, value, word in step.cmd.assignments():
                keep(name, value or "", path, word.line)
            argv = step.cmd.argv
            if argv and argv[0] == "export":
                for w in step.cmd.words[step.cmd.start + 1 :]:
                    name, eq, value = w.unquoted.partition("=")
                    if eq:
                        keep(name, value, path, w.line)
    return found
