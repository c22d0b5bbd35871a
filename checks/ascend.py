"""Ascend by content: which Dockerfiles, workflows and scripts are Ascend ones, from what they hold.

Paths are a hint (the `ascend_*` / `npu_script` globs of checks.kinds); content decides for every other file of
the candidate kind: a Dockerfile is Ascend when its base image (ARG defaults substituted) is an Ascend image or a
RUN step installs Ascend software, a workflow when a job runs on an Ascend runner, in an Ascend container or
builds an Ascend image, a script when it sets Ascend variables, sources CANN's set_env.sh, uses torch_npu or
passes an NPU device. A repository whose own Python package is named like an Ascend one is Ascend everywhere.
The markers are facts (`ascend_content` in checks/facts/ascend.yml).
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from npu_review.checks import lazyre
from npu_review.checks.facts.schema import AscendContent

if TYPE_CHECKING:
    from npu_review.checks.parsers import dockerfile as dfp

# `re`'s own parser (private to `re`, there since Python 3.11): what a pattern asks of every match, for a cheap
# test before the search (see _needs). A Python without it gets no cheap tests: the searches alone decide.
sre_parse: Any
try:
    sre_parse = importlib.import_module("re._parser")
except ImportError:  # pragma: no cover
    sre_parse = None

# Words (lower case) every shipped script marker holds: only the lines with one of them are searched.
_SCRIPT_WORDS = ("npu", "ascend", "hccl", "nnal", "rank_table", "slog_")


class Markers:
    """The compiled `ascend_content` facts."""

    def __init__(self, facts: AscendContent) -> None:
        def one(patterns: Iterable[str]) -> re.Pattern[str] | None:
            parts = [f"(?:{p})" for p in patterns]
            return re.compile("|".join(parts), re.IGNORECASE) if parts else None

        self.base_image = one(facts.base_images)
        self.install = one(facts.install_markers)
        self.runner = one(facts.runner_labels)
        self.workflow = one((*facts.workflow_markers, *facts.install_markers))
        self.script = one((*facts.script_markers, *facts.install_markers))
        # Only the lines with one of these words need searching, while every marker holds one of them.
        self.script_words = _words_of((*facts.script_markers, *facts.install_markers))
        self.workflow_words = _words_of((*facts.workflow_markers, *facts.install_markers))
        self.package = one(facts.package_names)
        # What a match of the workflow markers needs in the text (see _needs): a few `in` tests that most
        # workflows fail, before the search of their whole code (they have no words to pick lines by). The script
        # markers do: their lines are picked first, which costs less than these tests.
        self.workflow_needs = _needs(self.workflow) if self.workflow_words is None else None
        # ... and of the install markers, searched in every RUN, ENV, COPY and ADD of a Dockerfile.
        self.install_needs = _needs(self.install)


def _words_of(patterns: Iterable[str]) -> tuple[str, ...] | None:
    if all(any(w in p.lower() for w in _SCRIPT_WORDS) for p in patterns):
        return _SCRIPT_WORDS
    return None


# What a pattern needs of a text, from _needs: for each alternative of the pattern, pieces that every match of it
# holds; a piece is one or more strings, and one of them is in the text.
Needs = tuple[tuple[tuple[str, ...], ...], ...]

# Non-ASCII characters that an ignore-case ASCII literal of `re` matches (`i` the dotless ı and İ, `s` the long
# ſ, `k` the Kelvin sign), as that letter: a probe text with them replaced holds every string such a match
# holds (tests/test_ascend_content.py asks `re` for every character).
_FOLDED = (("\u0131", "i"), ("\u0130", "i"), ("\u017f", "s"), ("\u212a", "k"))
# At most this many strings for one piece (`torch[-_]npu` is two).
_MAX_SPELLINGS = 16


def _needs(pattern: re.Pattern[str] | None) -> Needs | None:
    """For each alternative of `pattern`, what every match of it holds: pieces (lower case, ASCII, no line
    break; one of a piece's spellings is in the text). None when some alternative needs nothing, or the
    pattern is not understood: then the search alone decides.

    Read from the pattern's parse by `re` itself (its ops), sure steps only: consecutive literal characters
    (or small sets of them, `[-_]`) match consecutive characters of the text, so they make one piece; a group,
    or a repeat of at least one, needs what its body needs; any other op (a range or category, `.`, an
    assertion, an alternation inside) needs nothing and ends the piece. An (ignore-case) ASCII literal matches
    only itself, its other case and the characters of _FOLDED; a non-ASCII literal ends the piece. No piece
    holds a line break, so one found in lines cut out of a text and joined again (what _marked searches) is
    in the text itself."""
    if pattern is None or sre_parse is None:
        return None
    try:
        items = list(sre_parse.parse(pattern.pattern, pattern.flags))
        alternatives = items[0][1][1] if len(items) == 1 and items[0][0] is sre_parse.BRANCH else [items]
        needs = tuple(tuple(_needed(list(alt))) for alt in alternatives)
    except (AttributeError, IndexError, TypeError, ValueError, re.error):  # a parse not understood: no cheap test
        return None
    return needs if all(needs) else None


def _plain(code: int) -> str | None:
    """The lower-case character a literal of this code point stands for, None when it may stand for others."""
    ch = chr(code)
    return ch.lower() if ch.isascii() and ch not in "\r\n" else None


def _needed(items: list[tuple[Any, Any]]) -> list[tuple[str, ...]]:
    """The pieces every match of the op sequence `items` holds (see _needs)."""
    out: list[tuple[str, ...]] = []
    run = [""]  # the spellings of the piece being read
    for op, av in items:
        chars: list[str | None] = []
        if op is sre_parse.LITERAL:
            chars = [_plain(av)]
        elif op is sre_parse.IN and all(o is sre_parse.LITERAL for o, _ in av):
            chars = [_plain(a) for _, a in av]
        if chars and None not in chars and len(run) * len(chars) <= _MAX_SPELLINGS:
            run = [r + c for r in run for c in dict.fromkeys(c for c in chars if c is not None)]
            continue
        if run != [""]:
            out.append(tuple(run))
        run = [""]
        if op is sre_parse.SUBPATTERN:
            out.extend(_needed(list(av[3])))
        elif op in (sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT, sre_parse.POSSESSIVE_REPEAT) and av[0] >= 1:
            out.extend(_needed(list(av[2])))
        elif op is sre_parse.ATOMIC_GROUP:
            out.extend(_needed(list(av)))
    if run != [""]:
        out.append(tuple(run))
    return out


def _may_match(needs: Needs | None, lowered: str) -> bool:
    """False when the pattern of `needs` cannot match in the lower-cased text: a few `in` tests."""
    if needs is None:
        return True
    probe = lowered
    if not probe.isascii():
        for ch, letter in _FOLDED:
            if ch in probe:  # rare: replace() only then (str.translate would cost more than the search)
                probe = probe.replace(ch, letter)
    return any(all(any(s in probe for s in piece) for piece in alternative) for alternative in needs)


def _marked(
    pattern: re.Pattern[str] | None, words: tuple[str, ...] | None, lowered: str, needs: Needs | None = None
) -> bool:
    """`pattern` (case-insensitive) found in the lower-cased text outside comments, searching only the lines
    that hold one of `words` when given. `needs` (the pattern's, from _needs) rules most texts out first."""
    if not _may_match(needs, lowered):
        return False
    return _search(pattern, _lines_with(lowered, words) if words is not None else _code(lowered))


@functools.lru_cache(maxsize=8)
def markers(facts: AscendContent) -> Markers:
    return Markers(facts)


def _search(pattern: re.Pattern[str] | None, text: str) -> bool:
    return pattern is not None and pattern.search(text) is not None


def _code(text: str) -> str:
    """The text without its comment lines (`#` first): a comment that names torch_npu makes nothing Ascend."""
    return "\n".join(_code_lines(text))


without_comments = _code


def _code_lines(text: str) -> list[str]:
    """The lines of `_code(text)`."""
    # `"#" not in line` first: the cheap test decides most lines.
    return [line for line in text.splitlines() if "#" not in line or not line.lstrip().startswith("#")]


# -- Dockerfiles ---------------------------------------------------------------------------------------------


def is_ascend_image(ref: str, m: Markers) -> bool:
    """A base image reference (`quay.io/ascend/cann:8.5.0-910b-ubuntu22.04-py3.11`) names an Ascend image. A
    tag set by a build argument (`quay.io/ascend/cann:${CANN_VERSION}-910b-...`) leaves the repository to tell."""
    if "$" in ref:
        slash = ref.rfind("/")
        colon = ref.find(":", slash + 1)
        if colon < 0 or "$" in ref[:colon]:
            return False
        ref = ref[: colon + 1]
    return _search(m.base_image, ref)


def dockerfile_is_ascend(df: dfp.Dockerfile, m: Markers) -> bool:
    """Some stage is built on an Ascend base image, or a RUN, ENV, COPY or ADD installs or sets up Ascend
    software."""
    installing = [instr for instr in df.instructions if instr.keyword in ("RUN", "ENV", "COPY", "ADD")]
    # The cheap test once for all of them: a piece it looks for holds no line break, so one found in the joined
    # text is in one instruction; an ASCII text is read lower-cased (an ignore-case match stays one there).
    joined = "\n".join(instr.args for instr in installing)
    searched = not joined.isascii() or _may_match(m.install_needs, joined.lower())
    for instr in df.instructions:
        if instr.keyword == "FROM" and instr.image is not None:
            image = instr.image
            if is_ascend_image(image.image + (f":{image.tag}" if image.tag else ""), m):
                return True
        elif searched and instr.keyword in ("RUN", "ENV", "COPY", "ADD") and _search(m.install, instr.args):
            return True
    return False


# -- workflows and scripts -------------------------------------------------------------------------------

_WORD = lazyre.compile(r"[A-Za-z0-9][\w.-]*")
_REF = lazyre.compile(r"[\w.-]+(?:/[\w.-]+)+(?::[\w.${}-]+)?")
# Keys whose values name runner labels (`runs-on`, a matrix `runner:`/`os:` list) or images.
_LABEL_KEY = lazyre.compile(r"^(\s*)(?:-\s+)?(runs-on|labels|os|[\w-]*runner[\w-]*)\s*:(.*)$")
_IMAGE_KEY = lazyre.compile(r"^\s*(?:-\s+)?(?:image|[\w-]*images?|container|tags|base[\w-]*)\s*:(.*)$", re.I)


_DOCKER = lazyre.compile(
    r"\b(?:docker|podman|crane|skopeo)\s+(?:buildx\s+)?(?:pull|push|run|build|tag|create|copy|cp)\b"
)


_TOOLS = frozenset(("docker", "podman", "crane", "skopeo"))


def workflow_is_ascend(text: str, m: Markers) -> bool:
    """A job runs on an Ascend runner label, in an Ascend container image, uses Ascend devices or software,
    or the workflow pulls or pushes an Ascend image."""
    if _marked(m.workflow, m.workflow_words, text.lower(), m.workflow_needs):
        return True
    lines = _code_lines(text)
    # A tool in a line is in the code: most workflows name none, and their lines need no look for one.
    code = "\n".join(lines)
    tools = any(tool in code for tool in _TOOLS)
    block: int | None = None  # indentation of a label key whose values follow as a list
    for line in lines:
        keyed = ":" in line  # both key patterns need one: most lines of a workflow's scripts have none
        key = _LABEL_KEY.match(line) if keyed else None
        if key is not None:
            if _has_label(key.group(3), m):
                return True
            block = len(key.group(1)) if not key.group(3).strip() else None
        elif block is not None:
            stripped = line.lstrip()
            if stripped.startswith("- ") and len(line) - len(stripped) >= block:
                if _has_label(stripped[2:], m):
                    return True
            elif stripped:
                block = None
        image = _IMAGE_KEY.match(line) if keyed else None
        if image is not None and any(is_ascend_image(ref, m) for ref in _REF.findall(image.group(1))):
            return True
        if (
            tools
            and any(tool in line for tool in _TOOLS)
            and _TOOLS & set(line.split())
            and _DOCKER.search(line)
            and any(is_ascend_image(r, m) for r in _REF.findall(line))
        ):
            return True  # docker pull / run / build -t of an Ascend image
        if ("ascend" in line or "cann" in line) and any(
            ":" in r.rpartition("/")[2] and is_ascend_image(r, m) for r in _REF.findall(line)
        ):
            # A tagged Ascend image anywhere in the code: a build's `BASE_IMAGE=quay.io/ascend/cann:...` argument
            # or a tag it pushes under an Ascend organisation, in a block value no key above names (a path such
            # as `docker/ascend/**` has no tag).
            return True
    return False


def _has_label(value: str, m: Markers) -> bool:
    return any(_search(m.runner, word) for word in _WORD.findall(value))


# A script that selects another device (a value `cuda`/`gpu`, a case arm `gpu)`, CUDA_VISIBLE_DEVICES) is one for
# several devices: its NPU parts are found by its branches. Key names (`n_gpus_per_node`, `gpu_memory_utilization`)
# do not count. Literal words first, their surroundings checked after: a regex with look-arounds over a whole long
# script costs several times more.
# On lower-cased text: a word that selects another device wherever it stands, and those that do as a word.
_ALWAYS_OTHER = ("nvidia-smi", "hip_visible", "rocr_visible", "cuda_visible_devices")
_BARE_WORDS = ("cuda", "gpu", "rocm", "xpu", "mlu")
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def _selects_other_device(code: str) -> bool:
    """`code`: lower-cased, without comments.

    Each word found with `str.find` (one C scan a word, where the regex alternation tries every position): the
    same answer as walking the alternation's matches, since no word starts inside another's match but `mlu`
    after `rocm`, which its `c` disqualifies anyway."""
    if any(w in code for w in _ALWAYS_OTHER):
        return True
    for word in _BARE_WORDS:
        pos = code.find(word)
        while pos >= 0:
            end = pos + len(word)
            before = code[pos - 1] if pos else " "
            after = code[end] if end < len(code) else " "
            if before not in _WORD_CHARS and after not in _WORD_CHARS:
                return True
            pos = code.find(word, pos + 1)
    return False


def _lines_with(text: str, words: tuple[str, ...]) -> str:
    """The non-comment lines of `text` (cut at "\\n") that hold one of `words` (which hold no "\\n"), in order.

    Each word is found with `str.find`, skipping to the next line after a hit: one C scan per word (a regex
    alternation of the words tried every position that starts one, several times slower)."""
    starts: set[int] = set()
    for word in words:
        pos = text.find(word)
        while pos >= 0:
            starts.add(text.rfind("\n", 0, pos) + 1)
            end = text.find("\n", pos)
            pos = -1 if end < 0 else text.find(word, end)
    out: list[str] = []
    for start in sorted(starts):
        end = text.find("\n", start)
        line = text[start:] if end < 0 else text[start:end]
        if not line.lstrip().startswith("#"):
            out.append(line)
    return "\n".join(out)


def script_is_npu(text: str, m: Markers) -> bool:
    """An NPU-only script: it sets Ascend variables, sources CANN's set_env.sh, uses torch_npu or passes an NPU
    device, and selects no other device (a script for several devices keeps its NPU and GPU branches apart).
    The markers are case-insensitive, so the lower-cased text is searched (literal searches are faster on it)."""
    lowered = text.lower()
    return _marked(m.script, m.script_words, lowered) and not _selects_other_device(_code(lowered))


def requirements_is_npu(text: str, m: Markers) -> bool:
    """A requirements file that lists an Ascend package (torch_npu, triton-ascend) is an NPU one."""
    return _search(m.install, _code(text))


# -- the repository -------------------------------------------------------------------------------------------


def ascend_only(paths: Iterable[str], m: Markers) -> bool:
    """The repository's own Python package (a top-level folder with `__init__.py`, or one under `src/`) is
    named like an Ascend package (`vllm_ascend/`): the whole repository is about Ascend."""
    for path in paths:
        if not path.endswith("/__init__.py"):
            continue  # (the test before the split: this runs over every path of the tree)
        parts = path.split("/")
        if len(parts) == 2:
            name = parts[0]
        elif len(parts) == 3 and parts[0] == "src":
            name = parts[1]
        else:
            continue
        if is_ascend_package(name, m):
            return True
    return False


def is_ascend_package(name: str, m: Markers) -> bool:
    """A top-level Python package name (`vllm_ascend`, `torch_npu`) is an Ascend package's."""
    return _search(m.package, name)


# -- other files (docs, YAML test configs, Python) ----------------------------------------------------------------


def has_script_marker(text: str, m: Markers) -> bool:
    """The text (outside comment lines) holds a script marker or an install marker of Ascend."""
    return _marked(m.script, m.script_words, text.lower())


def selects_other_device(text: str) -> bool:
    """The text (outside comment lines) selects a device other than the NPU (`cuda`, CUDA_VISIBLE_DEVICES...)."""
    return _selects_other_device(_code(text.lower()))
