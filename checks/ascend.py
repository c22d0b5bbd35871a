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
import re
from collections.abc import Iterable

from checks.facts.schema import AscendContent
from checks.parsers import dockerfile as dfp

# Words (lower case) every shipped script marker holds: only the lines with one of them are searched.
_SCRIPT_WORDS = ("npu", "ascend", "hccl", "nnal")


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


def _words_of(patterns: Iterable[str]) -> re.Pattern[str] | None:
    if all(any(w in p.lower() for w in _SCRIPT_WORDS) for p in patterns):
        return re.compile("|".join(_SCRIPT_WORDS))
    return None


def _marked(pattern: re.Pattern[str] | None, words: re.Pattern[str] | None, lowered: str) -> bool:
    """`pattern` (case-insensitive) found in the lower-cased text outside comments, searching only the lines
    that hold one of `words` when given."""
    return _search(pattern, _lines_with(lowered, words) if words is not None else _code(lowered))


@functools.lru_cache(maxsize=8)
def markers(facts: AscendContent) -> Markers:
    return Markers(facts)


def _search(pattern: re.Pattern[str] | None, text: str) -> bool:
    return pattern is not None and pattern.search(text) is not None


def _code(text: str) -> str:
    """The text without its comment lines (`#` first): a comment that names torch_npu makes nothing Ascend."""
    # `"#" not in line` first: the cheap test decides most lines.
    return "\n".join([line for line in text.splitlines() if "#" not in line or not line.lstrip().startswith("#")])


# -- Dockerfiles ---------------------------------------------------------------------------------------------


def is_ascend_image(ref: str, m: Markers) -> bool:
    """A base image reference (`quay.io/ascend/cann:8.5.0-910b-ubuntu22.04-py3.11`) names an Ascend image."""
    return "$" not in ref and _search(m.base_image, ref)


def dockerfile_is_ascend(df: dfp.Dockerfile, m: Markers) -> bool:
    """Some stage is built on an Ascend base image, or a RUN, ENV, COPY or ADD installs or sets up Ascend
    software."""
    for instr in df.instructions:
        if instr.keyword == "FROM" and instr.image is not None:
            image = instr.image
            if is_ascend_image(image.image + (f":{image.tag}" if image.tag else ""), m):
                return True
        elif instr.keyword in ("RUN", "ENV", "COPY", "ADD") and _search(m.install, instr.args):
            return True
    return False


# -- workflows and scripts -------------------------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z0-9][\w.-]*")
_REF = re.compile(r"[\w.-]+(?:/[\w.-]+)+(?::[\w.${}-]+)?")
# Keys whose values name runner labels (`runs-on`, a matrix `runner:`/`os:` list) or images.
_LABEL_KEY = re.compile(r"^(\s*)(?:-\s+)?(runs-on|labels|os|[\w-]*runner[\w-]*)\s*:(.*)$")
_IMAGE_KEY = re.compile(r"^\s*(?:-\s+)?(?:image|[\w-]*images?|container|tags|base[\w-]*)\s*:(.*)$", re.I)


_DOCKER = re.compile(r"\b(?:docker|podman|crane|skopeo)\s+(?:buildx\s+)?(?:pull|push|run|build|tag|create|copy|cp)\b")


_TOOLS = frozenset(("docker", "podman", "crane", "skopeo"))


def workflow_is_ascend(text: str, m: Markers) -> bool:
    """A job runs on an Ascend runner label, in an Ascend container image, uses Ascend devices or software,
    or the workflow pulls or pushes an Ascend image."""
    if _marked(m.workflow, m.workflow_words, text.lower()):
        return True
    code = _code(text)
    block: int | None = None  # indentation of a label key whose values follow as a list
    for line in code.splitlines():
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
            any(tool in line for tool in _TOOLS)
            and _TOOLS & set(line.split())
            and _DOCKER.search(line)
            and any(is_ascend_image(r, m) for r in _REF.findall(line))
        ):
            return True  # docker pull / run / build -t of an Ascend image
    return False


def _has_label(value: str, m: Markers) -> bool:
    return any(_search(m.runner, word) for word in _WORD.findall(value))


# A script that selects another device (a value `cuda`/`gpu`, a case arm `gpu)`, CUDA_VISIBLE_DEVICES) is one for
# several devices: its NPU parts are found by its branches. Key names (`n_gpus_per_node`, `gpu_memory_utilization`)
# do not count. Literal words first, their surroundings checked after: a regex with look-arounds over a whole long
# script costs several times more.
_DEVICE_WORD = re.compile(r"cuda|gpu|rocm|xpu|mlu|nvidia-smi|hip_visible|rocr_visible")  # on lower-cased text
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def _selects_other_device(code: str) -> bool:
    """`code`: lower-cased, without comments."""
    for hit in _DEVICE_WORD.finditer(code):
        word = hit.group(0)
        if word in ("nvidia-smi", "hip_visible", "rocr_visible"):
            return True
        if word == "cuda" and code.startswith("_visible_devices", hit.end()):
            return True
        before = code[hit.start() - 1] if hit.start() else " "
        after = code[hit.end()] if hit.end() < len(code) else " "
        if before not in _WORD_CHARS and after not in _WORD_CHARS:
            return True
    return False


def _lines_with(text: str, words: re.Pattern[str]) -> str:
    """The non-comment lines of `text` that hold a match of `words`."""
    out: list[str] = []
    end = -1
    for hit in words.finditer(text):
        if hit.start() <= end:
            continue
        start = text.rfind("\n", 0, hit.start()) + 1
        end = text.find("\n", hit.end())
        end = len(text) if end < 0 else end
        line = text[start:end]
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
        parts = path.split("/")
        if parts[-1] != "__init__.py":
            continue
        if len(parts) == 2:
            name = parts[0]
        elif len(parts) == 3 and parts[0] == "src":
            name = parts[1]
        else:
            continue
        if _search(m.package, name):
            return True
    return False


# -- other files (docs, YAML test configs, Python) ----------------------------------------------------------------


def has_script_marker(text: str, m: Markers) -> bool:
    """The text (outside comment lines) holds a script marker or an install marker of Ascend."""
    return _marked(m.script, m.script_words, text.lower())


def selects_other_device(text: str) -> bool:
    """The text (outside comment lines) selects a device other than the NPU (`cuda`, CUDA_VISIBLE_DEVICES...)."""
    return _selects_other_device(_code(text.lower()))
