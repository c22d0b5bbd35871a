"""NPU124: an Ascend chip (SOC) or tool name misspelled: `ascedn910_93`, `npu-sim info`."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Iterator

from rapidfuzz.distance import OSA

from npu_review.checks.context import Context, SourceFile
from npu_review.checks.facts import Facts
from npu_review.checks.kinds import DOCKERFILE, DOCS, MARKUP, NPU_SCRIPT, SHELL, WORKFLOW
from npu_review.checks.model import Severity
from npu_review.checks.rule import Hit, Rule

# A SOC as builds write it: letters, then the chip's number (910, 310, 950), then its variant (`b1`, `_93`, `p3`).
_SOC = re.compile(r"(?<![\w.-])([A-Za-z]{4,8})(910|310|950)([A-Za-z0-9_]{0,8})(?![\w-])")
# A word that may be a command: letters, digits, `-` and `_`.
_WORD = re.compile(r"(?<![\w./$-])([A-Za-z][A-Za-z0-9_-]{4,14})(?![\w./-])")
# What comes before a command on its line: nothing, a prompt, a backtick, a pipe, `;`, `&&`, `$(`, `sudo`, `watch`.
_COMMAND_BEFORE = re.compile(r"(?:^|[`|;(]|&&|\$ |\bsudo |\bwatch (?:-n ?\d+ )?)[ \t]*\Z")
_URL = re.compile(r"https?://\S+")


class MisspelledAscendName(Rule):
    """An Ascend chip (SOC) name or an Ascend tool's name is misspelled.

    Why: the SOC a build compiles for is a name (`--soc=ascend910_93`, `-DSOC_VERSION=Ascend910B1`,
    `ASCEND_COMPUTE_UNIT=ascend910b`) that the build compares letter by letter: `ascedn910_93` in a script's
    default or in the help text its readers copy stops the build at its SOC check, or builds for nothing. A guide's
    `npu-sim info` (for the driver's `npu-smi`) is "command not found" for every reader who checks their NPUs
    with it; several CANN operator repositories carried the same misspelled line in their install guides.

    A word is reported when it is not a name Ascend uses but is one of its names with letters swapped or replaced
    (one edit for a command, two for a SOC's six letters), the length and the digits kept: a SOC whose letters are
    misspelled (`ascedn`, `acsend`) but whose number and variant are a real chip's, a command one edit from
    Ascend's (`npu-sim`). Not judged: words joined to a name (`"x$soc" = "xAscend910_93"`, `msprof_20240101`), a
    `-`/`_` swap (`hccn-tool`), another number (another chip, maybe a new one). A command only where it is run: at
    the start of a line or of a shell command, after a prompt or a backtick. Names in URLs are left to the link
    checks.

    Bad:
        echo "usage: build.sh --soc=<soc>, e.g. A3 (--soc=ascedn910_93)"
        npu-sim info

    Good:
        echo "usage: build.sh --soc=<soc>, e.g. A3 (--soc=ascend910_93)"
        npu-smi info

    Fix: write the name as Ascend spells it (the message names it).
    """

    id = "NPU124"
    name = "misspelled-ascend-name"
    severity = Severity.WARNING
    title = "Misspelled Ascend chip (SOC) or tool name"
    kinds = frozenset({SHELL, NPU_SCRIPT, DOCS, MARKUP, WORKFLOW, DOCKERFILE})

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        socs, programs = _names(ctx.facts)
        seen: set[str] = set()
        for n, line in enumerate(src.lines, 1):
            if "910" not in line and "310" not in line and "950" not in line and not _may_name_a_tool(line):
                continue
            bare = _URL.sub(" ", line)
            for hit, word, meant in _line_hits(src.path, n, bare, socs, programs):
                if hit.cause in seen:
                    continue  # one finding per misspelled word and file (the same line of help, repeated)
                seen.add(hit.cause or "")
                if line.count(word) == 1:  # the line with the name as Ascend spells it
                    hit = dataclasses.replace(hit, suggestion=line.replace(word, meant))
                yield hit


def _may_name_a_tool(line: str) -> bool:
    low = line.lower()
    return "npu" in low or "hccn" in low or "msprof" in low or "dmi" in low or "msnpu" in low


def _line_hits(
    path: str, n: int, line: str, socs: frozenset[str], programs: frozenset[str]
) -> Iterator[tuple[Hit, str, str]]:
    """The line's misspelled names: (the finding, the word as written, the name meant)."""
    for m in _SOC.finditer(line):
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
                n,
                f"`{word}` is no Ascend SOC name: `{shown}` is (the letters are misspelled), so a build or a "
                "check that compares SOC names does not recognise it.",
                cause=f"soc {low}",
            )
            yield hit, word, shown
    for m in _WORD.finditer(line):
        word = m.group(1)
        low = word.lower()
        if low in programs or not _COMMAND_BEFORE.search(line, 0, m.start()):
            continue
        for program in programs:
            if len(program) < 6 or len(low) != len(program) or low.replace("_", "-") == program.replace("_", "-"):
                continue  # a letter swapped or replaced, not one added (`msprof_20240101`: a folder of its output)
            if OSA.distance(low, program) == 1:
                hit = Hit(
                    path,
                    n,
                    f"`{word}` is no Ascend command: `{program}` is, so running this line gives "
                    f"`{word}: command not found`.",
                    cause=f"program {low}",
                )
                yield hit, word, program
                break


_NAMES: dict[int, tuple[Facts, tuple[frozenset[str], frozenset[str]]]] = {}


def _names(facts: Facts) -> tuple[frozenset[str], frozenset[str]]:
    """(SOC names, program names) of the facts, lower case."""
    hit = _NAMES.get(id(facts))
    if hit is not None and hit[0] is facts:
        return hit[1]
    names = facts.ascend_names
    socs = {s.lower() for s in (*names.socs, *facts.soc_versions.a2, *facts.soc_versions.a3)}
    socs |= {u.lower() for units in facts.soc_versions.compute_units.values() for u in units}
    made = (frozenset(s for s in socs if s.startswith("ascend")), frozenset(p.lower() for p in names.programs))
    _NAMES[id(facts)] = (facts, made)
    return made
