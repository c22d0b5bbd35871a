"""NPU312: flash-attn, CUDA runtime wheels or CUDA builds of torch in NPU requirements and Ascend images."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from npu_review.checks import lazyre
from npu_review.checks.analysis.device import npu_requirements
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.facts.schema import DevicePackages
from npu_review.checks.kinds import ASCEND_DOCKERFILE, REQUIREMENTS
from npu_review.checks.model import Severity
from npu_review.checks.parsers.dockerfile import Dockerfile, build_args, expand, steps
from npu_review.checks.parsers.requirements import normalize_name, parse_requirements_file
from npu_review.checks.rule import Hit, Rule

_WHEEL_NAME = lazyre.compile(r"(?:^|/)([A-Za-z0-9_.]+)-(\d[^-/]*)-[^/]*\.whl$")
_INDEX_OPTS = ("-i", "--index-url", "--extra-index-url", "-f", "--find-links")


@dataclass(frozen=True)
class Policy:
    names: dict[str, str]
    cuda_wheel: re.Pattern[str]
    cuda_local: re.Pattern[str]
    cuda_index: re.Pattern[str]
    allowed: frozenset[str]

    def reason(self, name: str, version: str | None) -> str | None:
        """Why a distribution (normalised name, optional exact version) does not belong on NPU; None if it does."""
        if name in self.allowed:
            return None
        if name in self.names:
            return self.names[name]
        if self.cuda_wheel.search(name):
            return f"{name} is a CUDA runtime wheel; NPU images use CANN instead"
        if version and "+" in version and self.cuda_local.search(version.split("+", 1)[1]):
            return f"{name} {version} is a CUDA build; NPU images need the CPU build (`+cpu`) or the plain wheel"
        return None


def policy(ctx: Context) -> Policy:
    def load() -> Policy:
        s = ctx.facts.npu_unsupported_packages
        return Policy(
            names={normalize_name(k): v for k, v in s.names.items()},
            cuda_wheel=re.compile(s.cuda_wheel_pattern),
            cuda_local=re.compile(s.cuda_local_pattern),
            cuda_index=re.compile(s.cuda_index_pattern),
            allowed=frozenset(normalize_name(n) for n in s.allowed),
        )

    return ctx.memo(("facts", "npu_unsupported_packages", ""), load)


class UnsupportedPackageOnNpu(Rule):
    """An NPU requirements file or Ascend Dockerfile installs a package that only works with CUDA.

    Why: `flash-attn` builds CUDA kernels and is not supported on Ascend (flash attention reaches NPU through
    transformers and torch_npu, see the install guide's appendix); the CUDA runtime wheels `nvidia-*-cu12`
    and CUDA builds of torch (`torch==2.7.1+cu126`, the `download.pytorch.org/whl/cu126` index) are gigabytes
    of libraries the NPU never loads, and a CUDA torch replaces the one torch_npu extends.

    Not reported: `flash-linear-attention` (FLA, Triton kernels that run through triton-ascend), and the
    nvidia-* packages that are not CUDA runtimes and are installed on NPU on purpose: `nvidia-modelopt`,
    `nvidia-ml-py` (the NVML binding, pure Python), `nvidia-resiliency-ext` (Megatron fault tolerance).
    Per device: an image built for a device family (a FROM tag token such as `310p`, or its SOC_VERSION) must
    not `pip install` what that family lacks (the facts' `device_packages`: 310P has no Triton backend, so
    triton and triton-ascend break `import torch_npu` there, vllm-ascend #9249). Uninstalling them is fine.
    Only NPU requirement files are read: named for NPU (`requirements-npu.txt`), listing an Ascend package
    (torch_npu, triton-ascend), or any in an Ascend-only repository; `requirements-cuda.txt` is fine.

    Bad (`requirements-npu.txt`):
        flash-attn==2.7.4.post1
        nvidia-cudnn-cu12

    Good:
        flash-linear-attention==0.5.0
        nvidia-modelopt[torch]>=0.37.0

    Fix: remove the package (the suggestion deletes the requirement line), or install the CPU build of torch.
    """

    id = "NPU312"
    name = "unsupported-package-on-npu"
    severity = Severity.ERROR
    title = "CUDA-only package (or one the image's device lacks) in an NPU requirements file or Ascend image"
    kinds = frozenset({ASCEND_DOCKERFILE, REQUIREMENTS})

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        pol = policy(ctx)
        if ASCEND_DOCKERFILE in src.kinds:
            yield from self._dockerfile(src, ctx, pol)
        elif npu_requirements(ctx, src):
            yield from self._requirements(src, pol)

    def _requirements(self, src: SourceFile, pol: Policy) -> Iterator[Hit]:
        for line, req in parse_requirements_file(src.text):
            why = pol.reason(req.name, req.pinned)
            if why is not None:
                body = re.sub(r"(^|[ \t])#.*$", "", src.line(line)).strip()
                # Deleting the line is the fix for a package that has no place on NPU (not for a CUDA build of
                # torch, which wants the CPU build instead).
                delete = _lone_requirement(body) and pol.reason(req.name, None) is not None
                yield Hit(src.path, line, f"`{body}`: {why}.", suggestion="" if delete else None)
        for n, raw in enumerate(src.lines, start=1):
            m = re.match(r"\s*(--index-url|--extra-index-url|-i|-f|--find-links)[\s=]+(\S+)", raw)
            if m and pol.cuda_index.search(m.group(2)):
                yield Hit(src.path, n, f"`{m.group(2)}` is a CUDA wheel index: torch from it is a CUDA build.")

    def _dockerfile(self, src: SourceFile, ctx: Context, pol: Policy) -> Iterator[Hit]:
        df = ctx.dockerfile(src)
        defs = build_args(df)
        device = image_device(df, ctx.facts.device_packages)
        lacks = ctx.facts.device_packages.unsupported.get(device, {}) if device else {}
        for step in steps(df):
            call = step.pip
            if call is None or call.verb not in ("install", "download", "wheel"):
                continue
            for req, word in call.packages:
                why = pol.reason(req.name, req.pinned)
                if why is None and req.name in lacks and call.verb == "install":
                    why = lacks[req.name]
                if why is not None:
                    yield Hit(src.path, word.line, f"`pip install {word.unquoted or req.spelled}`: {why}.")
            for word in call.others:
                text, _ = expand(word.unquoted, defs, word.line)
                m = _WHEEL_NAME.search(text.split("#", 1)[0])
                if m:
                    why = pol.reason(normalize_name(m.group(1)), m.group(2))
                    if why is not None:
                        yield Hit(src.path, word.line, f"`{text.rsplit('/', 1)[-1]}`: {why}.")
            for opt, value, word in call.options:
                if opt in _INDEX_OPTS and value and pol.cuda_index.search(value):
                    yield Hit(
                        src.path, word.line, f"`{opt} {value}` is a CUDA wheel index: torch from it is a CUDA build."
                    )


def image_device(df: Dockerfile, facts: DevicePackages) -> str | None:
    """The device family an image is built for, when the facts know what that family lacks: a token of a FROM
    tag (`cann:9.0.0-310p-ubuntu22.04-py3.11`, ARG defaults substituted) or a SOC_VERSION default. None when
    unknown or when the file names two families."""
    found: set[str] = set()
    for family, marks in facts.markers.items():
        tokens = {t.lower() for t in marks.from_tokens}
        for instr in df.of("FROM"):
            tag = instr.image.tag if instr.image is not None else None
            if tag and tokens & set(tag.lower().split("-")):
                found.add(family)
        for _line, name, value in build_args(df):
            if name == "SOC_VERSION" and value.strip("\"'").lower().startswith(tuple(marks.soc_prefixes)):
                found.add(family)
    return next(iter(found)) if len(found) == 1 else None


def _lone_requirement(body: str) -> bool:
    """True when a requirement line (comment removed) holds one requirement only: deleting it is the fix."""
    return bool(body) and not body.startswith("-") and " " not in body.split(";", 1)[0].strip()
