"""NPU315: a pinned torch, torch-npu, torchvision, triton-ascend, vllm or vllm-ascend version never published."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from npu_review.checks import lazyre
from npu_review.checks.analysis.workflows import workflow
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.facts.releases import BranchName, Releases, Unpublished, releases
from npu_review.checks.kinds import DOCKERFILE, DOCS, PYPROJECT, REQUIREMENTS, SHELL, WORKFLOW
from npu_review.checks.model import Severity
from npu_review.checks.parsers.requirements import Requirement, parse_requirement, parse_requirements_file
from npu_review.checks.parsers.sh import Source, commands
from npu_review.checks.rule import Hit, Rule

if TYPE_CHECKING:
    from npu_review.checks.parsers.pipcli import PipCall

# A URL after an index option: `--index-url URL`, `--index-url=URL`, `PIP_INDEX_URL=URL`, `index-url = "URL"`.
_URL_AFTER = r"""[ \t]*(?:=|[ \t])[ \t]*["']?([^\s"'\\]+)"""


@dataclass(frozen=True)
class _Pin:
    requirement: Requirement
    line: int


class VersionNeverPublished(Rule):
    """A pinned torch, torch-npu, torchvision, triton-ascend, vllm or vllm-ascend version was never published.

    Why: `pip install torch-npu==2.4.0.post1` fails with "No matching distribution found": PyPI published
    2.4.0.post2 and 2.4.0.post4, never post1 (Ascend numbers its post builds by CANN line, not one by one), and
    vllm-ascend published 0.9.0rc1 and rc2, then 0.9.1, never a final 0.9.0. The image or the CI job breaks at
    the install, often after a long build, or a version guessed in an install guide sends every reader into the
    same error.

    The published versions are facts read from PyPI (`published_versions`, with its date; `npu-review facts
    published_versions`), and torch_npu builds that Ascend released outside PyPI (the release tags of
    Ascend/pytorch: `torch_npu_releases`) count as published. Only a version inside what the data covers is
    judged: the index published a later build of the same release (`2.4.0.post2` after a pinned `2.4.0.post1`,
    `2.10.0` after `2.10.0rc3`), or, for a version that is not a post build, a later release of the same minor
    series (`0.9.1` after `0.9.0`). A version newer than the data, a post build after the last one published
    (Ascend keeps publishing them), a nightly (`.devN`), a torch release candidate (torch publishes those on its
    own test index) and a local build (`+cpu`, judged by its public version) are not judged. Neither is a file
    that names another package index (`--index-url`, `--extra-index-url`, `--find-links`, `PIP_INDEX_URL`, `pip
    config set global.index-url`, uv's index settings) than PyPI, its mirrors or PyTorch's per-platform indexes
    (`package_indexes`): that index may hold other builds.

    Whatever the index, two more versions were never published:
    * a nightly of a package that numbers every nightly by its build date (`nightly_builds`: torch, torchvision,
      torchaudio and torch_npu `.devYYYYMMDD`, triton-ascend also `.devYYYYMMDDHH`) whose number is no date
      (`torchvision==0.22.0.dev2025312`, a digit short: Ascend/pytorch's test requirements pinned it, fixed in
      092ffed), or is a day more than one after the change's (the nightly was not built then; one day is left
      for time zones). A number that does not start like a date (`.dev1`) is not judged, nor the nightlies of
      other packages (vLLM numbers its own by commit count);
    * in a doc's compatibility table, a torch_npu (or PyTorch) version cell that holds the name of one of
      Ascend/pytorch's branches without its `v` (`1.8.1-3.0.rc3`: torch 1.8.1 on the TorchNPU 3.0.rc3 line,
      fixed in 850ec52 to `1.8.1.rc3`): a torch of the data, then a release of a TorchNPU line of the data, so a
      range of torch versions (`2.1.0-2.2.0`) is none. The message names the torch_npu release of that branch.

    Where: exact pins (`==`) in requirements files, `pip install` in Dockerfile RUN steps (a version from an ARG
    default included, reported on the ARG), workflow `run:` steps, shell scripts and docs (any code block, inline
    code or sentence: install guides are copied), the dependencies of pyproject.toml (`[project] dependencies`
    and optional dependencies), and the version cells of the tables of docs about Ascend (Markdown, HTML and
    reST tables: nightlies and branch names only).

    Bad:
        RUN pip install torch==2.4.0 torch-npu==2.4.0.post1

    Good:
        RUN pip install torch==2.4.0 torch-npu==2.4.0.post2

    Fix: pin a version the index publishes (the message lists those of the same release), or install from the
    index that holds the build and say so in the file (`--extra-index-url`).
    """

    id = "NPU315"
    name = "version-never-published"
    severity = Severity.WARNING
    title = "Pinned version of an Ascend stack package that was never published"
    kinds = frozenset({REQUIREMENTS, DOCKERFILE, WORKFLOW, SHELL, PYPROJECT, DOCS})

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if DOCS in src.kinds and _may_have_cells(src.text):
            yield from self._cells(src, ctx)
        if not _may_pin(src.text, ctx):
            return
        if DOCS in src.kinds:
            found = list(_docs_pins(src))
        elif PYPROJECT in src.kinds:
            found = list(_pyproject_pins(src))
        elif REQUIREMENTS in src.kinds:
            found = [_Pin(req, n) for n, req in parse_requirements_file(src.text)]
        elif DOCKERFILE in src.kinds:
            found = list(_dockerfile_pins(src, ctx))
        elif WORKFLOW in src.kinds:
            found = list(_workflow_pins(src, ctx))
        else:
            found = list(_calls_pins(Source.file(src.text)))
        yield from self._judge(src.path, found, ctx, src.text)

    def _cells(self, src: SourceFile, ctx: Context) -> Iterator[Hit]:
        """The version cells of a doc's compatibility tables: a nightly with no date, a branch name."""
        from npu_review.checks.analysis.guides import guide_stack

        guide = guide_stack(ctx, src)
        if guide is None:
            return
        rel = releases(ctx.facts)
        for cell in guide.cells:
            if cell.component in ("torch", "torch-npu"):
                branch = rel.branch_name(cell.text)
                if branch is not None:
                    yield Hit(src.path, cell.line, _branch_message(cell.text, branch))
                    continue
            for m in _CELL_NIGHTLY.finditer(cell.text):
                message = _unpublished_nightly(rel, cell.component, m.group(0), ctx)
                if message is not None:
                    yield Hit(src.path, cell.line, message)

    def _judge(self, path: str, found: list[_Pin], ctx: Context, text: str) -> Iterator[Hit]:
        rel = releases(ctx.facts)
        date = ctx.facts.published_versions.date
        other = None  # whether the file names another index: asked only when a pin is judged against PyPI
        for pin in found:
            version = pin.requirement.pinned
            if version is None:
                continue
            nightly = _unpublished_nightly(rel, pin.requirement.name, version, ctx)
            if nightly is not None:
                yield Hit(path, pin.line, nightly)
                continue
            if other is None:
                other = _other_index(text, ctx)
            if other:
                continue
            missing = rel.never_published(pin.requirement.name, version)
            if missing is None:
                continue
            yield Hit(path, pin.line, _message(missing, date))


# A doc that may have a table cell to judge: a dated-looking nightly, or a `<torch>-<release>` branch name.
# The quick no for the cells: a dated nightly (`dev20YYMMDD`), or a branch name (`1.8.1-3.0.rc3`). Each is found
# from its literal part (`dev20`, the `-` of the branch) and the rest tested before it: a scan that tries the
# whole pattern at every digit of every text took 14 times as long.
_CELL_DATED = lazyre.compile(r"\.?dev20\d{4}")
_CELL_BRANCH_TAIL = lazyre.compile(r"-\d+\.\d+\.(?:rc)?\d")
_CELL_BRANCH_TORCH = lazyre.compile(r"\d\.\d+\.\d+\Z")
# How far before a match's literal part its head is looked for (a version or a package name with its extras).
_HEAD_SPAN = 300


def _may_have_cells(text: str) -> bool:
    if "dev20" in text and _CELL_DATED.search(text):
        return True
    return any(
        _CELL_BRANCH_TORCH.search(text, max(0, m.start() - _HEAD_SPAN), m.start())
        for m in _CELL_BRANCH_TAIL.finditer(text)
    )


_CELL_NIGHTLY = lazyre.compile(
    r"(?<![\w.])\d+(?:\.\d+)+(?:\.?(?:rc|a|b)\d+)?(?:\.post\d+)?\.?dev\d+(?![\w.])", re.IGNORECASE
)


def _unpublished_nightly(rel: Releases, package: str, version: str, ctx: Context) -> str | None:
    """The message for a nightly of a date-numbered package that was not built (by the review's day), else
    None. No index holds it, whichever the file names: these packages number every nightly by its day."""
    n = rel.nightly(package, version)
    if n is None:
        return None
    forms = " or ".join(f"`.dev{f}`" for f in n.forms)
    if n.date is None:
        return (
            f"{n.package} {version} was never published: {n.package} numbers its nightly builds by their date "
            f"({forms}), and `{n.number}` is none (a digit missing or added, or a month, day or hour that does not "
            "exist), so no index holds it and pip finds no such version. Pin the nightly of a real day (or a release)."
        )
    review = ctx.review_date()
    if _days_between(review, n.date) > 1:
        return (
            f"{n.package} {version} was not published as of this change ({review}): it is the nightly of "
            f"{n.date}, a day that had not come, so pip finds no such version. Pin a nightly that was built "
            "(its date is in the version), or a release."
        )
    return None


def _days_between(earlier: str, later: str) -> int:
    import datetime  # here: only a dated nightly asks

    try:
        return (datetime.date.fromisoformat(later) - datetime.date.fromisoformat(earlier)).days
    except ValueError:
        return 0


def _branch_message(text: str, b: BranchName) -> str:
    fix = f"Write the torch_npu release of that branch, {' or '.join(b.builds)}." if b.builds else "Write a version."
    return (
        f"`{text}` is not a version but the name of Ascend/pytorch's branch `v{text.removeprefix('v')}` (torch "
        f"{b.torch} on the TorchNPU {b.line} line): no index publishes a torch_npu of that name, so a reader who "
        f'installs this row\'s version gets "No matching distribution found". {fix}'
    )


def _message(m: Unpublished, date: str) -> str:
    shown = ", ".join(m.siblings[-8:])
    more = "" if len(m.siblings) <= 8 else f" (and {len(m.siblings) - 8} earlier)"
    elsewhere = ", nor as a release of Ascend/pytorch" if m.package == "torch-npu" else ""
    return (
        f"{m.package} {m.version} was never published on PyPI{elsewhere} (as of {date}; the releases around it "
        f"are {shown}{more}): pip finds no such version. Pin a published one."
    )


_PIN_EQ = lazyre.compile(r"===?[ \t]*[\d$]")


def _may_pin(text: str, ctx: Context) -> bool:
    """The quick no: no package of the data followed by `==` (or `===`) and a version or a variable. Found from
    the `==` (few in a text), the package name then looked for right before it: a case-blind scan for the names
    at every position of every text was most of this rule's time."""
    head = _pin_head(ctx)
    return any(head.search(text, max(0, m.start() - _HEAD_SPAN), m.start()) for m in _PIN_EQ.finditer(text))


def _pin_head(ctx: Context) -> re.Pattern[str]:
    """A package of the data (with extras) and blanks, ending where the search ends (right before `==`)."""

    def build() -> re.Pattern[str]:
        names = "|".join(
            re.escape(p).replace(r"\-", "[-_.]") for p in sorted(ctx.facts.published_versions.packages, key=len)[::-1]
        )
        return re.compile(rf"(?i)(?<![\w.-])(?:{names})(?:\[[^\]]*\])?[ \t]*\Z")

    return ctx.memo(("npu315-hint", "head", ""), build)


def _other_index(text: str, ctx: Context) -> bool:
    """The file points pip at an index that is not PyPI, a mirror of it or PyTorch's per-platform one (or at
    one it cannot read: a URL with `$`)."""
    facts = ctx.facts.package_indexes
    if not any(o in text for o in facts.index_options):
        return False
    pattern = ctx.memo(
        ("npu315-index", "head", ""),
        lambda: re.compile(r"(?<![\w.-])(?:" + "|".join(re.escape(o) for o in facts.index_options) + r")" + _URL_AFTER),
    )
    pypi = ctx.memo(("npu315-pypi", "head", ""), lambda: [re.compile(p) for p in facts.pypi])
    for m in pattern.finditer(text):
        url = m.group(1).rstrip("/")
        if "://" not in url and not url.startswith("$"):
            continue  # `-f requirements.txt`-like words are no index
        if not any(p.search(url) for p in pypi):
            return True
    return "[[tool.uv.index]]" in text


# A pip command written in a doc: in a code block of any language (an unlabeled one too), after a `$ ` prompt,
# in inline code or in a sentence; it runs to the end of the line or the closing backtick.
_DOC_PIP = lazyre.compile(
    r"(?:\buv[ \t]+pip|\bpython3?(?:\.\d+)?[ \t]+-m[ \t]+pip|\bpip3?(?:\.\d+)?)[ \t]+install\b[^`\n]*"
)


def _docs_pins(src: SourceFile) -> Iterator[_Pin]:
    for n, line in enumerate(src.lines, 1):
        if "install" not in line:
            continue
        for m in _DOC_PIP.finditer(line):
            yield from _calls_pins(Source.lines([(n, m.group(0))]))


def _calls_pins(source: Source) -> Iterator[_Pin]:
    # Only the lines that may hold a pip install build their commands (most lines of a script do not).
    from npu_review.checks.parsers.pipcli import pip_call

    for cmd in commands(source, heredoc_bodies=True, keep=lambda ll: "install" in ll.text and "pip" in ll.text):
        call = pip_call(cmd)
        if call is not None and call.verb in ("install", "download", "wheel"):
            yield from _call_pins(call)


def _call_pins(call: PipCall) -> Iterator[_Pin]:
    for req, word in call.packages:
        yield _Pin(req, word.line)


def _workflow_pins(src: SourceFile, ctx: Context) -> Iterator[_Pin]:
    wf = workflow(ctx, src.path)
    if wf is None:
        return
    for job in wf.jobs.values():
        for step in job.steps:
            if step.run is not None:
                yield from _calls_pins(Source.lines(step.run.text_lines()))


def _dockerfile_pins(src: SourceFile, ctx: Context) -> Iterator[_Pin]:
    """Pins of the RUN steps' pip commands; a `name==${ARG}` pin takes the ARG's default of its stage and is
    reported on that ARG (where the version is written)."""
    from npu_review.checks.parsers.dockerfile import build_args, expand, steps

    df = ctx.dockerfile(src)
    defs = build_args(df)
    froms = [i.line for i in df.of("FROM")]
    for step in steps(df):
        call = step.pip
        if call is None or call.verb not in ("install", "download", "wheel"):
            continue
        yield from _call_pins(call)
        start = max((n for n in froms if n < step.instr.line), default=0)
        stage = [d for d in defs if d[0] > start]
        for word in call.others:
            if "$" not in word.unquoted:
                continue
            text, used = expand(word.unquoted, stage, word.line)
            req = parse_requirement(text) if used and "$" not in text else None
            if req is not None:
                yield _Pin(req, max(used.values()))


def _pyproject_pins(src: SourceFile) -> Iterator[_Pin]:
    import tomllib  # here: only a pyproject.toml with a pin of the data needs it

    try:
        data = tomllib.loads(src.text)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return
    project = data.get("project")
    if not isinstance(project, dict):
        return
    specs: list[str] = [d for d in project.get("dependencies", []) if isinstance(d, str)]
    optional = project.get("optional-dependencies", {})
    if isinstance(optional, dict):
        for deps in optional.values():
            if isinstance(deps, list):
                specs.extend(d for d in deps if isinstance(d, str))
    lines = src.lines
    for spec in specs:
        req = parse_requirement(spec)
        if req is None or req.pinned is None:
            continue
        quoted = (f'"{spec}"', f"'{spec}'")
        line = next((n for n, text in enumerate(lines, 1) if any(q in text for q in quoted)), 0)
        if line:
            yield _Pin(req, line)
