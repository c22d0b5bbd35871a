"""NPU124: an Ascend chip (SOC), tool or CANN install path misspelled: `ascedn910_93`, `npu-sim info`,
`ascend-toolkit/setenv.bash`."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Iterator, Mapping

from rapidfuzz.distance import OSA

from npu_review.checks import lazyre
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.facts.schema import AscendNames
from npu_review.checks.kinds import DOCKERFILE, DOCS, MARKUP, NPU_SCRIPT, SHELL, WORKFLOW
from npu_review.checks.model import Severity
from npu_review.checks.rule import Hit, Rule

# A SOC as builds write it: letters, then the chip's number (910, 310, 950), then its variant (`b1`, `_93`, `p3`).
_SOC = lazyre.compile(r"(?<![\w.-])([A-Za-z]{4,8})(910|310|950)([A-Za-z0-9_]{0,8})(?![\w-])")
# A word where a command is run: at the start of a line (after a prompt or `sudo`), or at the start of inline code.
# Two regular expressions that start with a line start or a backtick: what is found fast in a long text.
# The word: with Ascend's tools' `-` or `_` kept (`npu-sim`, `hccn_tol`), or `ms` kept (`msporf`, `msnpureprot`).
_TOOLISH = r"((?:[A-Za-z][A-Za-z0-9]*[-_][A-Za-z0-9_-]*|[Mm][Ss][A-Za-z0-9_-]+))(?![\w./-])"
_AT_LINE_START = lazyre.compile(r"(?m)^[ \t]*(?:\$ +|sudo +)?" + _TOOLISH)
_IN_CODE = lazyre.compile(r"`" + _TOOLISH)
_URL = lazyre.compile(r"https?://\S+")


class MisspelledAscendName(Rule):
    """An Ascend chip (SOC) name, an Ascend tool's name or a path of CANN's install tree is misspelled.

    Why: the SOC a build compiles for is a name (`--soc=ascend910_93`, `-DSOC_VERSION=Ascend910B1`,
    `ASCEND_COMPUTE_UNIT=ascend910b`) that the build compares letter by letter: `ascedn910_93` in a script's
    default or in the help text its readers copy stops the build at its SOC check, or builds for nothing. A guide's
    `npu-sim info` (for the driver's `npu-smi`) is "command not found" for every reader who checks their NPUs
    with it; several CANN operator repositories carried the same misspelled line in their install guides.

    A word is reported when it is not a name Ascend uses but is one of its names with letters swapped or replaced
    (one edit for a command, two for a SOC's six letters), the length, the digits and a tool's `-`, `_` or `ms`
    kept: a SOC whose letters are misspelled (`ascedn`, `acsend`) but whose number and variant are a real chip's,
    a command one edit from Ascend's (`npu-sim`). Not judged: words joined to a name (`xAscend910_93` of the
    `"x$soc" = "x..."` idiom, `msprof_20240101`), a `-`/`_` swap (`hccn-tool`), another number (another chip,
    maybe a new one). A command only where it is run: at the start of a line (after a prompt or `sudo`) or of
    inline code, and only in a file that speaks of Ascend (names Ascend, an NPU, CANN or HCCL): in another
    vendor's guide a command a letter from `npu-smi` is that vendor's own (T-Head's `ppu-smi`; the facts'
    `ascend_names.other_programs` list the known ones for every file). Names in URLs are left to the link checks.

    Paths into CANN's install tree are names too: CANN installs its toolkit under `ascend-toolkit` (a folder of the
    install root, `/usr/local/Ascend` or `~/Ascend`) and each package's environment script at the top of its
    folder as `set_env.sh` (`ascend-toolkit/set_env.sh`, `nnal/atb/set_env.sh`, `nnae/set_env.sh`; facts
    `ascend_names.env_scripts`, from CANN's guides; the toolkit's `setenv.bash` is under `latest/bin/`). A guide
    or script that sources `ascend-toolkit/setenv.bash`, or reaches into `Ascend/ascend_toolkit/`, names a file
    no install has: the source fails and nothing of CANN's environment is set (seven of an embodied-AI recipe
    collection's 310P guides, and CANN operator samples' quick starts). Reported: a folder right under `Ascend/`
    that is the toolkit's name with `-` for `_` or two letters off, and a file named like an environment script
    (`setenv.bash`, `set_env.bash`) right in one of those folders. Not judged: other folders and files, versioned
    layouts (`cann-<version>/`), a root other than `Ascend/` for the folder check.

    A file that installs a package itself says where it is: a CANN installer run without `--install-path`
    (`Ascend-cann-nnal_8.1.RC1_linux-aarch64.run --install`) puts the package's folder right under the default
    install root, `/usr/local/Ascend` (`~/Ascend` for a non-root user; facts `ascend_names.installer_folders`,
    from the toolkit, NNAL and NNAE install guides). An environment script the same file sources after that
    install from a folder between the root and the package's (`/usr/local/Ascend/rc1b0202/nnal/atb/set_env.sh`,
    a build machine's own layout copied into MindSpeed-RL's install guide, fixed in e91b96f) does not exist. Not
    judged there: a file that names `--install-path` anywhere, a versioned layout's folder (`cann/`,
    `cann-9.0.0/`), a package the file does not install, a line before the install.

    Bad:
        echo "usage: build.sh --soc=<soc>, e.g. A3 (--soc=ascedn910_93)"
        npu-sim info
        source /usr/local/Ascend/ascend-toolkit/setenv.bash

    Good:
        echo "usage: build.sh --soc=<soc>, e.g. A3 (--soc=ascend910_93)"
        npu-smi info
        source /usr/local/Ascend/ascend-toolkit/set_env.sh

    Fix: write the name as Ascend spells it (the message names it).
    """

    id = "NPU124"
    name = "misspelled-ascend-name"
    severity = Severity.WARNING
    title = "Misspelled Ascend chip (SOC), tool or CANN install path"
    kinds = frozenset({SHELL, NPU_SCRIPT, DOCS, MARKUP, WORKFLOW, DOCKERFILE})

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        socs, programs = _names(ctx)
        text = src.text
        seen: set[str] = set()
        found: list[tuple[int, Hit, str, str]] = []
        if "910" in text or "310" in text or "950" in text:
            found.extend(_soc_hits(src.path, text, socs))
        others = frozenset(p.lower() for p in ctx.facts.ascend_names.other_programs)
        commands = list(_program_hits(src.path, text, programs, others))
        if commands and (_NAMES_ASCEND.search(text) is not None or ctx.ascend_only()):
            # A command a letter from Ascend's in a file that never speaks of Ascend is another vendor's own tool
            # (T-Head's `ppu-smi` in MinerU's T-Head guide, a held-out clean commit), not a misspelling.
            found.extend(commands)
        if "/" in text:
            found.extend(_install_path_hits(src.path, text, ctx.facts.ascend_names.env_scripts))
            if ".run" in text:
                found.extend(_default_install_hits(src.path, text, ctx.facts.ascend_names))
        for offset, hit, word, meant in sorted(found, key=lambda f: f[0]):
            line = src.line(hit.line)
            start = text.rfind("\n", 0, offset) + 1
            if any(m.start() <= offset - start < m.end() for m in _URL.finditer(line)):
                continue  # a name in a URL: the link checks' business
            if hit.cause in seen:
                continue  # one finding per misspelled word and file (the same line of help, repeated)
            seen.add(hit.cause or "")
            if line.count(word) == 1:  # the line with the name as Ascend spells it
                hit = dataclasses.replace(hit, suggestion=line.replace(word, meant))
            yield hit


def _soc_hits(path: str, text: str, socs: frozenset[str]) -> Iterator[tuple[int, Hit, str, str]]:
    """The misspelled SOC names of the text: (offset, the finding, the word as written, the name meant)."""
    for m in _SOC.finditer(text):
        word = m.group(0)
        low = word.lower()
        letters = m.group(1).lower()
        if low in socs or len(letters) != len("ascend") or letters == "ascend":
            continue  # `xAscend910_93` (the `"x$v" = "x..."` idiom), `AscendA310`: joined words, not a misspelling
        meant = "ascend" + low[len(letters) :]
        if meant in socs and 0 < OSA.distance(letters, "ascend") <= 2:
            shown = ("Ascend" if word[0].isupper() else "ascend") + m.group(2) + m.group(3)
            hit = Hit(
                path,
                text.count("\n", 0, m.start()) + 1,
                f"`{word}` is no Ascend SOC name: `{shown}` is (the letters are misspelled), so a build or a "
                "check that compares SOC names does not recognise it.",
                cause=f"soc {low}",
            )
            yield m.start(), hit, word, shown


# The words by which a file speaks of Ascend's NPUs (a misspelled `npu-sim` counts: its `npu` is Ascend's).
_NAMES_ASCEND = lazyre.compile(r"(?i)ascend|npu|\bcann\b|hccl|davinci|昇腾")


def _program_hits(
    path: str, text: str, programs: frozenset[str], others: frozenset[str] = frozenset()
) -> Iterator[tuple[int, Hit, str, str]]:
    """The misspelled Ascend commands of the text, where a command is run; `others`: other accelerators' own
    commands (`xpu-smi`), real names a letter from Ascend's."""
    lengths = {len(p) for p in programs}
    for m in (*_AT_LINE_START.finditer(text), *(_IN_CODE.finditer(text) if "`" in text else ())):
        word = m.group(1)
        if len(word) not in lengths:
            continue
        low = word.lower()
        if low in programs or low in others:
            continue
        for program in programs:
            if len(program) < 6 or len(low) != len(program) or low.replace("_", "-") == program.replace("_", "-"):
                continue  # a letter swapped or replaced, not one added (`msprof_20240101`: a folder of its output)
            if OSA.distance(low, program) == 1:
                hit = Hit(
                    path,
                    text.count("\n", 0, m.start(1)) + 1,
                    f"`{word}` is no Ascend command: `{program}` is, so running this line gives "
                    f"`{word}: command not found`.",
                    cause=f"program {low}",
                )
                yield m.start(1), hit, word, program
                break


# A folder of CANN's install tree written as a path segment right under the install root
# (`Ascend/ascend_toolkit/`), and a file right in one of the folders whose environment script the facts give
# (`ascend-toolkit/setenv.bash`): a name that looks like an environment script (`set_env`, `setenv`, any case).
_SEGMENT = lazyre.compile(r"(?<![\w.-])(?i:ascend)/([A-Za-z][A-Za-z0-9_-]{7,})(?=/)")


def _segments(text: str) -> Iterator[re.Match[str]]:
    """`_SEGMENT`'s matches, looked for only where the text writes `scend/` (found by `str.find`, not by trying
    the pattern at every character)."""
    at = text.find("scend/")
    while at > 0:
        m = _SEGMENT.match(text, at - 1)
        if m is not None:
            yield m
        at = text.find("scend/", at + 6)


_ENV_FILE = r"((?i:set_?env)[A-Za-z0-9_.-]*)(?![\w/.-])"


def _install_path_hits(path: str, text: str, scripts: Mapping[str, str]) -> Iterator[tuple[int, Hit, str, str]]:
    """Paths into CANN's install tree that it does not install: a folder misspelled (`Ascend/ascend_toolkit/`, one
    of the long folder names the facts give, a `-`/`_` swap or two letters off) and a folder's environment script
    under another name (`ascend-toolkit/setenv.bash` for `set_env.sh`)."""
    folders, files = _install_patterns(scripts)
    for m in _segments(text):
        seg = m.group(1)
        low = seg.lower()
        if low in folders:
            continue
        for folder in folders:
            if low.replace("_", "-") == folder or (
                0 < OSA.distance(low, folder) <= 2 and abs(len(low) - len(folder)) <= 1
            ):
                hit = Hit(
                    path,
                    text.count("\n", 0, m.start(1)) + 1,
                    f"`{seg}` is no folder CANN installs: CANN installs that package under `{folder}`, so this "
                    "path does not exist.",
                    cause=f"folder {low}",
                )
                yield m.start(1), hit, f"/{seg}/", f"/{folder}/"
                break
    for folder, pattern in files:
        if folder not in text:
            continue
        for m in pattern.finditer(text):
            name = m.group(1).rstrip(".-")  # a sentence's full stop after the name
            script = scripts[folder]
            if name == script:
                continue
            hit = Hit(
                path,
                text.count("\n", 0, m.start(1)) + 1,
                f"CANN installs no `{folder}/{name}`: the environment script there is `{folder}/{script}`, so "
                "sourcing this fails and CANN's environment is not set.",
                cause=f"script {folder}/{name.lower()}",
            )
            yield m.start(1), hit, f"{folder}/{name}", f"{folder}/{script}"


# An installer of a CANN package run to install it (`bash Ascend-cann-nnal_8.1.RC1_linux-aarch64.run --install`):
# the package's name (group 1) and the rest of its line (group 2).
_INSTALLER = lazyre.compile(r"(?i)\bAscend-cann-([a-z]+)[\w.-]*\.run\b([^\n]*)")
# An environment script under an install root CANN's installers default to (`/usr/local/Ascend` for root,
# `~/Ascend` otherwise) with one folder between the root and a package's folder: the folder (group 1), then the
# package's path (group 2) and the script (group 3).
_ROOT_EXTRA = lazyre.compile(
    r"(?<![\w./-])(?:/usr/local|~|\$HOME|\$\{HOME\})/Ascend/([A-Za-z0-9_.-]+)/([a-z-]+(?:/[a-z]+)?)/" + _ENV_FILE
)
# A folder of a versioned layout (`cann/`, `cann-9.0.0/`): not judged.
_VERSIONED = lazyre.compile(r"(?i)cann(?:[-_].*)?\Z")


def _default_install_hits(path: str, text: str, names: AscendNames) -> Iterator[tuple[int, Hit, str, str]]:
    """An environment script sourced from a folder of the install root that the file's own install of the package
    does not make: the file runs the package's installer with the default install path (no `--install-path`
    anywhere in it), which puts the package's folder right under the root (`/usr/local/Ascend/nnal/`), and then
    names `/usr/local/Ascend/<other>/nnal/atb/set_env.sh`."""
    if "--install-path" in text:
        return  # a chosen install path: its folders are the file's own
    installed: dict[str, int] = {}  # the package's folder -> the line of its installer
    for m in _INSTALLER.finditer(text):
        folder = names.installer_folders.get(m.group(1).lower())
        if folder is not None and re.search(r"(?<![\w-])--(?:install|full)\b", m.group(2)):
            installed.setdefault(folder, text.count("\n", 0, m.start()) + 1)
    if not installed:
        return
    for m in _ROOT_EXTRA.finditer(text):
        extra, package, name = m.group(1), m.group(2), m.group(3).rstrip(".-")
        top = package.split("/", 1)[0]
        if (
            top not in installed
            or names.env_scripts.get(package) != name
            or _VERSIONED.match(extra)
            or extra.lower() in {f.split("/", 1)[0] for f in names.env_scripts}
        ):
            continue
        line = text.count("\n", 0, m.start()) + 1
        if line < installed[top]:
            continue
        hit = Hit(
            path,
            line,
            f"CANN installs no `Ascend/{extra}/{package}/{name}`: this file installs the package with its default "
            f"install path (line {installed[top]}, no `--install-path`), which puts it in `Ascend/{top}/` right "
            f"under the install root, so sourcing this fails and the package's environment is not set.",
            cause=f"extra folder {extra.lower()}/{package}",
        )
        yield m.start(1), hit, f"/{extra}/{package}/", f"/{package}/"


_PATTERNS: dict[tuple[tuple[str, str], ...], tuple[frozenset[str], tuple[tuple[str, re.Pattern[str]], ...]]] = {}


def _install_patterns(
    scripts: Mapping[str, str],
) -> tuple[frozenset[str], tuple[tuple[str, re.Pattern[str]], ...]]:
    """(the long folder names a misspelling is judged against, each folder with the pattern of an environment
    script's name in it), made once per facts."""
    key = tuple(sorted(scripts.items()))
    made = _PATTERNS.get(key)
    if made is None:
        folders = frozenset(f.split("/", 1)[0] for f in scripts if len(f.split("/", 1)[0]) >= 8)
        files = tuple((f, re.compile(r"(?<![\w.-])" + re.escape(f) + "/" + _ENV_FILE)) for f in scripts)
        made = _PATTERNS[key] = (folders, files)
    return made


def _names(ctx: Context) -> tuple[frozenset[str], frozenset[str]]:
    """(SOC names, program names) of the facts, lower case."""

    def make() -> tuple[frozenset[str], frozenset[str]]:
        from npu_review.checks.analysis.device import soc_names  # (imported on first use: not at rule import)

        socs = frozenset(s for s in soc_names(ctx) if s.startswith("ascend"))
        return socs, frozenset(p.lower() for p in ctx.facts.ascend_names.programs)

    return ctx.memo(("npu124-names", "", ""), make)
