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
        self.package = one(facts.package_names)


@functools.lru_cache(maxsize=8)
def markers(facts: AscendContent) -> Markers:
    return Markers(facts)


def _search(pattern: re.Pattern[str] | None, text: str) -> bool:
    return pattern is not None and pattern.search(text) is not None


def _code(text: str) -> str:
    """The text without its comment lines (`#` first): a comment that names torch_npu makes nothing Ascend."""
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


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


def workflow_is_ascend(text: str, m: Markers) -> bool:
    """A job runs on an Ascend runner label, in an Ascend container image, uses Ascend devices or software,
    or the workflow pulls or pushes an Ascend image."""
    code = _code(text)
    if _search(m.workflow, code):
        return True
    block: int | None = None  # indentation of a label key whose values follow as a list
    for line in code.splitlines():
        key = _LABEL_KEY.match(line)
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
        image = _IMAGE_KEY.match(line)
        if image is not None and any(is_ascend_image(ref, m) for ref in _REF.findall(image.group(1))):
            return True
        if _DOCKER.search(line) and any(is_ascend_image(ref, m) for ref in _REF.findall(line)):
            return True  # docker pull / run / build -t of an Ascend image
    return False


def _has_label(value: str, m: Markers) -> bool:
    return any(_search(m.runner, word) for word in _WORD.findall(value))


# A script that names another device is one for several devices (its NPU parts are found by its branches).
# `CUDA_VISIBLE_DEVICES` counts; `n_gpus_per_node` (a key NPU scripts set too) does not.
_OTHER_DEVICE = re.compile(r"(?<![A-Za-z0-9])(?:cuda|gpu|nvidia|rocm|xpu|mlu)(?![A-Za-z])", re.IGNORECASE)


def script_is_npu(text: str, m: Markers) -> bool:
    """An NPU-only script: it sets Ascend variables, sources CANN's set_env.sh, uses torch_npu or passes an NPU
    device, and names no other device (a script for several devices keeps its NPU and GPU branches apart)."""
    code = _code(text)
    return _search(m.script, code) and not _OTHER_DEVICE.search(code)


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
