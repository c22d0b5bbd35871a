"""NPU316: a CANN installer, operator (kernels / ops) or NNAL file name that CANN does not ship for that version."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from npu_review.checks import lazyre
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.facts.cann_files import FILE_NAME, CannFile, cann_files, parse
from npu_review.checks.kinds import DOCKERFILE, DOCS, SHELL, WORKFLOW
from npu_review.checks.model import Severity
from npu_review.checks.rule import Hit, Rule

# `NAME=value` (shell, also after `export`, `ENV`, `ARG`) and `NAME: value` (a workflow's env:) with a literal value.
_ASSIGN = lazyre.compile(
    r"^[ \t-]*(?:export[ \t]+|ENV[ \t]+|ARG[ \t]+)?([A-Z_][A-Z0-9_]*)(?:=|:[ \t]+)"
    r"""["']?([A-Za-z0-9._-]+)["']?[ \t]*(?:#.*)?$""",
    re.M,
)
_VAR = lazyre.compile(r"\$\{(\w+)(?::?-([^}]*))?\}|\$(\w+)")


class CannPackageFileUnknown(Rule):
    """A CANN installer, operator package or NNAL file name that CANN does not ship for its version, device and
    architecture.

    Why: the `.run` files change names between CANN versions: up to 8.3.RC2 the operator packages are
    `Ascend-cann-kernels-<device>_<version>_linux-<arch>.run` (`Atlas-A3-cann-kernels_…` for A3), from 8.5.0
    `Ascend-cann-<device>-ops_…` (`Ascend-cann-A3-ops_…`), with the device as CANN spells it (`A3`), and the
    architectures are `aarch64` and `x86_64` (CANN 7.0's ATB packages add the C++ ABI after it: `_abi0`,
    `_abi1`). A name CANN never shipped is a 404 (or a 403
    from the download server) in the middle of an image build, or an install guide nobody can follow: a
    project that moved its image to 8.5.1 kept `Ascend-cann-kernels-910b_8.5.1_linux-aarch64.run` and the
    download failed.

    The files are facts read from the images that download them (`cann_packages`: Ascend/cann-container-image,
    torch_npu's docker/devel, Ascend/ascend-docker-image; `npu-review facts cann_packages`). A name is reported
    when CANN lists that version and, for the same package role (toolkit, NNAL, the operators of a device), a
    file of another name: another naming of the operator packages, another spelling of the device (`a3`) or of
    the architecture (`arm64`). The version's case is not judged (CANN's beta tree spells `8.3.rc1` where the
    release tree spells `8.3.RC1`). A version the data does not list, a device whose
    operator package the data lacks for that version, another package (`Ascend-cann-nnrt`, the 9.x
    `Ascend-cann_<version>` bundle) and a part left to a variable that the file does not set (`${ARCH}`) are not
    judged. A version or architecture set in the file (`ARG CANN_VERSION=8.5.0`, `CANN_VERSION=8.5.0` in a script)
    is read; a Dockerfile default that names nothing (`ARG ARCH=none`, `unknown`, empty) is a placeholder the builds
    fill in, not read; nor is a file linked in a daily or dated build's folder (`CANN/20251212_newest/`: a
    pre-release's names). In a doc, a name whose version is left to the reader
    (`Atlas-A3-cann-kernels_${version}_…`) is read with the one CANN version its line states (the download page it
    links, `cann=8.5.0`, or `CANN 8.5.0`), else with the one example value the doc defines the variable by
    (`${version}` ... e.g. `8.5.0`): which naming a release gives its packages does not depend on what else the
    reader fills in. A line that states two versions, or a variable given two example values, is not judged. The
    names one line gives wrong are one finding.
    A name whose version stays open (no version set, stated or exemplified) is judged against every release the
    data lists: an A2 or A3 operator package under a name none of them ships, in any naming (`Atlas-cann-A3-ops`,
    `Ascend-cann-910_93-ops`, `Ascend-cann-kernels-A3`), does not exist whatever version is filled in (hixl's
    and GE's build guides named `Atlas-cann-A3-ops_${cann_version}_…` for weeks, then `Ascend-cann-A3-ops`);
    other devices (310B, 950), whose packages the data may not list in every release, are not judged so.

    Where: Dockerfiles, shell scripts and workflows (an error: the build fails), docs (a warning).

    Bad:
        RUN wget https://ascend-repo.obs.cn-east-2.myhuaweicloud.com/CANN/CANN%208.5.1/Ascend-cann-kernels-910b_8.5.1_linux-aarch64.run

    Good:
        RUN wget https://ascend-repo.obs.cn-east-2.myhuaweicloud.com/CANN/CANN%208.5.1/Ascend-cann-910b-ops_8.5.1_linux-aarch64.run

    Fix: use the file name the message gives (the suggestion replaces it when the line names it once).
    """

    id = "NPU316"
    name = "cann-package-file-unknown"
    severity = Severity.ERROR
    title = "CANN package file name that CANN does not ship for that version, device or architecture"
    kinds = frozenset({DOCKERFILE, SHELL, WORKFLOW, DOCS})

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        text = src.text
        if "cann" not in text or ".run" not in text:
            return
        files = cann_files(ctx.facts)
        resolve = _dockerfile_resolver(src, ctx) if DOCKERFILE in src.kinds else _text_resolver(text)
        doc = DOCS in src.kinds
        severity = Severity.WARNING if doc else None
        defined = _doc_definitions(text) if doc else {}
        for n, line in enumerate(src.lines, 1):
            if ".run" not in line or "cann" not in line:
                continue
            # One finding per line: the names a line gives wrong have one cause (the release the line installs
            # names its packages otherwise), and the suggestion fixes them together.
            messages: list[str] = []
            readings: list[str] = []  # how a version the line leaves to a variable was read
            fixed: str | None = line
            for at, found in parse(line):
                if _DAILY_FOLDER.search(line, 0, at):
                    continue  # a daily build's folder: its files are named as that day's build named them
                meant = _resolved(found, resolve, n)
                if meant is None:
                    continue
                stated = ""
                if doc and "$" in meant.version:
                    meant, stated = _doc_version(meant, line, defined)
                problem = files.problem(meant)
                if problem is None:
                    continue
                message, replacement = problem.message, problem.replacement
                if stated:  # said as the doc writes it, the variable kept
                    written = f"_{found.version}_"
                    message = message.replace(f"_{meant.version}_", written)
                    reading = f"`{found.version}` read as CANN {meant.version}, the version {stated}"
                    if reading not in readings:
                        readings.append(reading)
                    if replacement is not None:
                        replacement = replacement.replace(f"_{meant.version}_", written, 1)
                elif meant.text != found.text:
                    replacement = None  # the line writes variables the name was read with
                if message in messages:
                    continue
                messages.append(message)
                if fixed is not None and replacement and line.count(found.text) == 1:
                    fixed = fixed.replace(found.text, replacement)
                else:
                    fixed = None
            if messages:
                suggestion = fixed if fixed is not None and fixed != line else None
                text = " ".join(messages) + (f" ({'; '.join(readings)}.)" if readings else "")
                yield Hit(src.path, n, text, suggestion=suggestion, severity=severity)


# The folder of a daily or dated build just before a file name in a link (`CANN/20251212_newest/`, `.../daily/`,
# `nightly/`): a pre-release's files, which the release data does not describe (hicann/graph-autofusion linked
# `Ascend-cann-910_93-ops_8.5.0_...run` in such a folder; sweep-r34, judged false).
_DAILY_FOLDER = lazyre.compile(r"/(?:\d{8}(?:[_-][\w.-]*)?|[\w.-]*(?:newest|daily|nightly)[\w.-]*)/\Z", re.IGNORECASE)
# The CANN version a doc's line states for what it downloads: a download page's `cann=` parameter, a folder of
# CANN's download tree (`CANN 8.5.0/`, `CANN%208.5.0`), or prose (`CANN 8.5.0`, `CANN版本为8.5.0`).
_STATED = lazyre.compile(r"(?:[?&]cann=|CANN(?:%20|[ \t]+|/|[^\x00-\x7f]{1,8}))v?(\d+\.\d+\.[0-9A-Za-z.-]*[0-9A-Za-z])")
# A doc's definition of a file-name variable by an example value: "`${version}` is the CANN version, e.g. `8.5.0`",
# "`${version}`表示CANN包版本号，如8.5.0".
_DEFINED = lazyre.compile(
    r"\$\{(\w+)\}`?[^\n`$]{0,60}?(?:如|例如|比如|e\.g\.,?|for example,?|such as)[ \t:：]*`?"
    r"(\d+\.\d+\.[0-9A-Za-z.-]*[0-9A-Za-z])"
)


def _doc_definitions(text: str) -> dict[str, str]:
    """The variables a doc defines by one example value each (`${version}` ... e.g. 8.5.0)."""
    values: dict[str, set[str]] = {}
    for m in _DEFINED.finditer(text):
        values.setdefault(m.group(1), set()).add(m.group(2))
    return {k: next(iter(v)) for k, v in values.items() if len(v) == 1}


def _doc_version(found: CannFile, line: str, defined: dict[str, str]) -> tuple[CannFile, str]:
    """A doc's file name whose version is a variable (`Atlas-A3-cann-kernels_${version}_linux-${arch}.run`), read
    with the one CANN version its line states (the download page it links, `CANN 8.5.0`), else with the value the
    doc defines the variable by; unchanged (and "") when neither is one version. Which naming a release gives its
    packages does not depend on the rest of the version a reader fills in."""
    variable = found.version.strip("${}")
    stated = set(_STATED.findall(line))
    if len(stated) == 1:
        version, how = next(iter(stated)), "this line states"
    elif not stated and variable in defined:
        version, how = defined[variable], f"the doc gives as the example of `{found.version}`"
    else:
        return found, ""
    text = found.text.replace(f"_{found.version}_", f"_{version}_", 1)
    return CannFile(text, found.stem, version, found.arch), how


Resolver = Callable[[str, int], str]  # (text, line) -> the text with the variables the file sets substituted


def _resolved(found: CannFile, resolve: Resolver, line: int) -> CannFile | None:
    """The file name with the variables the file sets substituted (the same object when it has none)."""
    if "$" not in found.text:
        return found
    text = resolve(found.text, line)
    m = FILE_NAME.fullmatch(text)
    return None if m is None else CannFile(text, m.group(1), m.group(2), m.group(3))


def _text_resolver(text: str) -> Resolver:
    """A script's, workflow's or doc's literal assignments: a variable set to one value only is that value."""
    values: dict[str, set[str]] = {}
    for m in _ASSIGN.finditer(text):
        values.setdefault(m.group(1), set()).add(m.group(2))
    single = {k: next(iter(v)) for k, v in values.items() if len(v) == 1}

    def sub(m: re.Match[str]) -> str:
        var = m.group(1) or m.group(3)
        if var in single:
            return single[var]
        return m.group(2) if m.group(2) else m.group(0)

    return lambda name, _line: _VAR.sub(sub, name)


# Defaults that stand for "set by the build" (Algebraic-Programming/HiCR's `ARG ARCH=none`, which every build
# passes as amd64 or arm64; sweep-r32, judged false).
_PLACEHOLDERS = frozenset(
    {"", "none", "null", "nil", "unknown", "unset", "undefined", "placeholder", "changeme", "tbd"}
)


def _dockerfile_resolver(src: SourceFile, ctx: Context) -> Resolver:
    """A Dockerfile's ARG and ENV defaults of the stage the line is in (an ARG before FROM is not seen in it)."""
    from npu_review.checks.parsers.dockerfile import build_args, expand

    df = ctx.dockerfile(src)
    # A default that names nothing (`ARG ARCH=none`) is a placeholder every build overrides: the value stays unknown.
    defs = [d for d in build_args(df) if d[2].strip("\"'").lower() not in _PLACEHOLDERS]
    froms = [i.line for i in df.of("FROM")]

    def resolve(name: str, line: int) -> str:
        start = max((n for n in froms if n < line), default=0)
        return expand(name, [d for d in defs if d[0] > start], line)[0]

    return resolve
