"""Device context: where a file, a branch of a script or a CI job runs (on NPU or not), and which Ascend device a
file, an image or a setting is for (A2 / A3 by file name, FROM tag, SOC_VERSION), from the facts' vocabulary.

Each of these is decided here once: a rule asks `npu_reading` for the NPU reading of a script, `ascend_jobs`
for the NPU jobs of a workflow, `devices` for the device vocabulary; it never re-derives them."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from npu_review.checks import ascend, kinds, lazyre
from npu_review.checks.analysis.workflows import workflow
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.facts.schema import DockerfileNames, SocVersions
from npu_review.checks.parsers.shell import View, npu_view

if TYPE_CHECKING:
    from npu_review.checks.parsers.gha.workflow import Job, Workflow


@dataclass(frozen=True)
class Devices:
    """The device vocabulary of the facts' `soc_versions` and `dockerfile_names`."""

    soc: dict[str, frozenset[str]]
    default: dict[str, str]
    from_tokens: dict[str, frozenset[str]]
    file_tokens: dict[str, frozenset[str]]
    ops: dict[str, str]

    @classmethod
    def load(cls, soc: SocVersions, names: DockerfileNames) -> Devices:
        def lower_set(value: Iterable[str]) -> frozenset[str]:
            return frozenset(v.lower() for v in value)

        return cls(
            soc={"a2": lower_set(soc.a2), "a3": lower_set(soc.a3)},
            default=dict(soc.default),
            from_tokens={d: lower_set(soc.from_tokens.get(d, ())) for d in ("a2", "a3")},
            file_tokens={d: lower_set(names.device_tokens.get(d, ())) for d in ("a2", "a3")},
            ops=dict(soc.ops_packages),
        )

    def of_file(self, path: str) -> str | None:
        """The device a file name declares (`Dockerfile.ascend_9.1.0_a3` -> a3); None when none or both."""
        tokens = set(re.split(r"[._-]", posixpath.basename(path).lower()))
        found = {d for d, toks in self.file_tokens.items() if tokens & toks}
        return found.pop() if len(found) == 1 else None

    def of_tag(self, tag: str) -> str | None:
        tokens = set(tag.lower().split("-"))
        found = {d for d, toks in self.from_tokens.items() if tokens & toks}
        return found.pop() if len(found) == 1 else None

    def of_soc(self, value: str) -> str | None:
        found = {d for d, vals in self.soc.items() if value.lower() in vals}
        return found.pop() if len(found) == 1 else None


def devices(ctx: Context) -> Devices:
    facts = ctx.facts
    return ctx.memo(("facts", "devices", ""), lambda: Devices.load(facts.soc_versions, facts.dockerfile_names))


def dockerfile_device(ctx: Context, path: str, dev: Devices) -> str | None:
    """The one device of the file's FROM tags (ARG defaults substituted); None when none or several."""
    src = ctx.source(path)
    if src is None:
        return None
    found = set()
    for instr in ctx.dockerfile(src).of("FROM"):
        tag = instr.image.tag if instr.image is not None else None
        device = dev.of_tag(tag) if tag else None
        if device is not None:
            found.add(device)
    return found.pop() if len(found) == 1 else None


def npu_reading(ctx: Context, src: SourceFile, rev: str = "head", assume_npu: bool = False) -> View | None:
    """The script as it runs on NPU (arms for another device left out), None when it never runs there: a script
    of kind `npu_script` (by its path or its content) is NPU throughout; another one only when it selects the NPU
    itself (a device variable or override set to npu). `assume_npu`: the script is run by an NPU script."""
    kinds_ = src.kinds | {kinds.NPU_SCRIPT} if assume_npu else src.kinds
    return npu_view(ctx.shell(src, rev), kinds_, ctx.facts.ascend_values.device_key, ctx.facts.launchers)


# A branch for the NPU in a script for several devices: a `case` arm whose pattern names it (`custom_npu)`,
# `npu|ascend)`), or a test that compares a value with it (`[ "$containerfile" = "cann" ]`). The device word stands
# apart from letters and digits (`custom_npu`, `npu-a2`; not `input`, `cannot`).
_NPU_WORD = r"(?<![A-Za-z0-9])(?:npu|ascend|cann)(?![A-Za-z0-9])"
_NPU_BRANCH = lazyre.compile(
    rf"(?im)^[ \t]*\(?[^\s()#;$`]*{_NPU_WORD}[^\s()#;$`]*\)"
    rf"|[!=]=?[ \t]*[\"']?[\w.+*-]*{_NPU_WORD}[\w.+*-]*[\"']?[ \t]*\]"
)


def npu_somewhere(ctx: Context, src: SourceFile) -> bool:
    """The script runs on NPU on some path, if not on all: it names Ascend outside its comments (a CANN
    `set_env.sh`, `torch_npu`, a PYTORCH_NPU_ALLOC_CONF it sets), or it has a branch for the NPU (_NPU_BRANCH)
    among other devices'. What breaks the whole script (the shell rejecting it) breaks that path too."""
    if ascend.has_script_marker(src.text, ascend.markers(ctx.facts.ascend_content)):
        return True
    # torch_npu's allocator variable (facts npu_alloc_conf): only torch on the NPU reads it, whatever else the
    # script may launch (a training script that exports PYTORCH_NPU_ALLOC_CONF before `accelerate launch`).
    alloc = ctx.facts.npu_alloc_conf.variables
    if any(v in src.text for v in alloc) and re.search(
        rf"(?m)^[ \t]*(?:export[ \t]+)?(?:{'|'.join(map(re.escape, alloc))})=", ascend.without_comments(src.text)
    ):
        return True
    low = src.text.lower()  # (the branch names one of these words: most scripts hold none)
    if "npu" not in low and "ascend" not in low and "cann" not in low:
        return False
    return _NPU_BRANCH.search(ascend.without_comments(src.text)) is not None


def ascend_jobs(ctx: Context, path: str, rev: str = "head") -> frozenset[str] | None:
    """The jobs of an Ascend workflow that are Ascend jobs themselves, None for all of them: a workflow Ascend by
    its path (or in an Ascend-only repository) is Ascend throughout; in one found by content (a `ci.yml` with
    one NPU job among CPU jobs), only the jobs whose own text shows it, or all when none does (the workflow
    level did)."""
    return ctx.memo(("ascend-jobs-of", rev, path), lambda: _ascend_jobs(ctx, path, rev))


def _ascend_jobs(ctx: Context, path: str, rev: str) -> frozenset[str] | None:
    if ctx.kindmap.has(path, kinds.ASCEND_WORKFLOW) or ctx.ascend_only():
        return None
    wf = workflow(ctx, path, rev)
    src = ctx.source(path, rev)
    if wf is None or src is None:
        return None
    m = ascend.markers(ctx.facts.ascend_content)
    found = frozenset(
        job.id
        for job in wf.jobs.values()
        if ascend.workflow_is_ascend("\n".join(src.line(n) for n in range(job.node.line, job.node.end_line + 1)), m)
    )
    return found or None


def npu_requirements(ctx: Context, src: SourceFile) -> bool:
    """The requirements file is an NPU one: named for NPU (facts npu_unsupported_packages.requirement_file_pattern),
    listing an Ascend package, or any in a repository that is about Ascend (npu_project)."""
    if re.search(ctx.facts.npu_unsupported_packages.requirement_file_pattern, src.path):
        return True
    return npu_project(ctx) or ascend.requirements_is_npu(src.text, ascend.markers(ctx.facts.ascend_content))


def npu_project(ctx: Context) -> bool:
    """The repository is about Ascend as a whole: Ascend-only by its package's name (`vllm_ascend/`), or its own
    top-level package is an Ascend package by the install markers (`torch_npu/` of Ascend/pytorch)."""

    def decide() -> bool:
        if ctx.ascend_only():
            return True
        m = ascend.markers(ctx.facts.ascend_content)
        if m.install is None:
            return False
        for path in ctx.head_paths():
            if not path.endswith("/__init__.py"):
                continue
            parts = path.split("/")
            top = len(parts) == 2 or (len(parts) == 3 and parts[0] == "src")
            if top and m.install.fullmatch(parts[-2]):
                return True
        return False

    return ctx.memo(("npu-project", "head", ""), decide)


# A path's part that names Ascend (`ascend310_infer/`, `run_eval_ascend.sh`; not `ascending`), MindX SDK's MxBase
# (`infer/mxbase/`: Ascend's inference SDK), or an Ascend offline model (`*.om`, what ATC writes).
_ASCEND_PART = lazyre.compile(r"(?<![a-z])ascend(?![a-z])|\Amxbase\Z|\.om\Z")
# The file-name words of another device's Dockerfile (`Dockerfile.gpu`, `Dockerfile-cuda12`).
_OTHER_DEVICE_NAME = lazyre.compile(r"(?<![a-z])(?:cuda|gpu|rocm|xpu|mlu|nvidia)(?![a-z])")


def ascend_folders(ctx: Context) -> frozenset[str]:
    """The folders (below the repository root) that hold Ascend material by its paths: a file or a folder named
    for Ascend (`ascend310_infer/`, `scripts/run_train_ascend.sh`), an NPU script by its path (the profile's
    `npu_script` globs), MindX SDK's `mxbase/`, an offline model (`*.om`). Decided from the head's paths alone."""

    def build() -> frozenset[str]:
        out: set[str] = set()
        for path in ctx.head_paths():
            parts = path.lower().split("/")
            if not any(_ASCEND_PART.search(p) for p in parts) and not (
                path.endswith((".sh", ".bash")) and ctx.kindmap.has(path, kinds.NPU_SCRIPT)
            ):
                continue
            for k in range(1, len(parts)):
                out.add("/".join(path.split("/")[:k]))
        return frozenset(out)

    return ctx.memo(("ascend-folders", "head", ""), build)


def ascend_dockerfile_scope(ctx: Context, src: SourceFile) -> bool:
    """The Dockerfile builds for Ascend or belongs with Ascend material: an Ascend Dockerfile (by its path or its
    content), or, unless its text or name says another device (a CUDA base image, `Dockerfile.gpu`), any
    Dockerfile of a repository about Ascend (npu_project) or one whose folder holds Ascend material by its paths
    (ascend_folders: MindSpore's model folders keep a MindX SDK `infer/Dockerfile` built `FROM ${FROM_IMAGE_NAME}`
    next to `infer/mxbase/` and `ascend310_infer/`)."""
    if kinds.ASCEND_DOCKERFILE in src.kinds:
        return True
    if _OTHER_DEVICE_NAME.search(posixpath.basename(src.path).lower()) or ascend.selects_other_device(src.text):
        return False
    folder = posixpath.dirname(src.path)
    return npu_project(ctx) or (folder != "" and folder in ascend_folders(ctx))


# -- which device a part of a document is about --------------------------------------------------------------------

_TAB_OPEN = lazyre.compile(r"^\s*(:{3,}|`{3,})\s*\{tab-item\}\s*(.*?)\s*$")
_RST_TAB = lazyre.compile(r"^(\s*)\.\.\s+(?:tab-item|tab)::\s*(.*?)\s*$")
_BOLD_LABEL = lazyre.compile(r"^\s*\*\*([^*]{1,60})\*\*\s*:?\s*$")
# A doc's own statement of the products it is for (CANN samples' `## 支持的产品型号` / `## 产品支持情况` heading,
# `## Supported Products`), and every product token such a section may name: one device alone makes the whole doc
# that device's.
_SUPPORTED = lazyre.compile(r"支持的产品|产品支持|支持产品|supported (?:products|hardware|devices)", re.IGNORECASE)
_PRODUCT_TOKEN = lazyre.compile(
    r"(?<![A-Za-z0-9])(?:a[235]|910[bc]?|910_93|310[pb]?|950(?:pr|dt)?|300i)(?![A-Za-z0-9])"
)
_MKDOCS_TAB = lazyre.compile(r"^(\s*)===\s+\"([^\"]*)\"\s*$")


def device_named(ctx: Context, text: str) -> str | None:
    """The one device a title names (`A3 series`, `Atlas 800 A2 (64G*8)`), None when it names none or several."""
    patterns = ctx.memo(("device-name-patterns", "", ""), lambda: _name_patterns(ctx))
    low = text.lower()
    found = {device for device, pattern in patterns if pattern.search(low)}
    return found.pop() if len(found) == 1 else None


def _name_patterns(ctx: Context) -> list[tuple[str, re.Pattern[str]]]:
    out = []
    for device, names in ctx.facts.ascend_devices.doc_names.items():
        alternation = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
        # ASCII bounds: a Chinese title runs the name into its words (`在昇腾310P上`), which `\w` would take in
        out.append((device, re.compile(rf"(?<![A-Za-z0-9_.-])(?:{alternation})(?![A-Za-z0-9_.-])")))
    return out


def doc_regions(ctx: Context, src: SourceFile) -> list[tuple[int, int, str]]:
    """(first line, last line, device) of the parts of a Markdown or reST document that are about one device:
    tab items (`::::{tab-item} A2 series`, `.. tab-item:: A3`, mkdocs' `=== "A3 series"`), headings and bold
    labels on a line of their own (`**A3 series**`, up to the next heading or label) that name exactly one
    device. Innermost last."""

    def build() -> list[tuple[int, int, str]]:
        lines = src.lines
        doc = ctx.document(src)
        out: list[tuple[int, int, str]] = []
        heading_lines: list[int] = []
        if doc is not None:
            heads = doc.headings
            heading_lines = [h.line for h in heads]
            for k, h in enumerate(heads):
                device = device_named(ctx, h.title)
                if device is None:
                    if _SUPPORTED.search(h.title):
                        end = next((x.line - 1 for x in heads[k + 1 :]), len(lines))
                        only = _only_product(ctx, lines[h.line : end])
                        if only is not None:
                            out.append((h.line, len(lines), only))
                    continue
                end = next((x.line - 1 for x in heads[k + 1 :] if x.level <= h.level), len(lines))
                out.append((h.line, end, device))
        labels = [n for n, line in enumerate(lines, 1) if "**" in line and _BOLD_LABEL.match(line)]
        for i, n in enumerate(labels):
            m = _BOLD_LABEL.match(lines[n - 1])
            device = device_named(ctx, m.group(1)) if m else None
            if device is None:
                continue
            stops = [x for x in heading_lines if x > n] + labels[i + 1 : i + 2]
            out.append((n, (min(stops) - 1) if stops else len(lines), device))
        for n, line in enumerate(lines, 1):
            if not ("tab" in line or "===" in line):
                continue
            m = _TAB_OPEN.match(line)
            if m:
                fence = m.group(1)
                end = next((k for k in range(n + 1, len(lines) + 1) if lines[k - 1].strip() == fence), len(lines))
                device = device_named(ctx, m.group(2))
                if device is not None:
                    out.append((n, end, device))
                continue
            r = _RST_TAB.match(line) or _MKDOCS_TAB.match(line)
            if r and (device := device_named(ctx, r.group(2))) is not None:
                indent = len(r.group(1))
                end = next(
                    (
                        k - 1
                        for k in range(n + 1, len(lines) + 1)
                        if lines[k - 1].strip() and len(lines[k - 1]) - len(lines[k - 1].lstrip()) <= indent
                    ),
                    len(lines),
                )
                out.append((n, end, device))
        # innermost last: a tab inside a section, a label inside a tab
        return sorted(out, key=lambda r: (-(r[1] - r[0]), r[0]))

    return ctx.parsed("doc-regions", src, lambda _text: build())


def _only_product(ctx: Context, body: list[str]) -> str | None:
    """The one device a doc's supported-products section names (`<term>Atlas A3 系列产品</term>`), None when it
    names several products, is a table (rows marked supported or not), or is longer than a short list."""
    text = [t for t in body if t.strip()]
    if not text or len(text) > 4 or any("|" in t for t in text):
        return None
    joined = " ".join(text)
    device = device_named(ctx, joined)
    if device is None:
        return None
    tokens = {t.lower() for t in ctx.facts.ascend_devices.tag_tokens.get(device, ())} | {device}
    named = {m.group(0) for m in _PRODUCT_TOKEN.finditer(joined.lower())}
    return device if named <= tokens else None


# What a heading or a label names when it speaks for one family of devices (`## Ascend NPU`, `For CUDA users:`).
_NPU_FAMILY = lazyre.compile(r"(?<![a-z0-9])(?:npus?|ascend|cann|atlas|torch[_-]npu)(?![a-z0-9])|昇腾")
_GPU_FAMILY = lazyre.compile(r"(?<![a-z0-9])(?:cuda|gpus?|nvidia|rocm)(?![a-z0-9])")
# A short line of its own that introduces what follows (`For CUDA users:`, `**Ascend NPU**`).
_INTRO_LINE = lazyre.compile(r"^\s*(?:\*\*[^*]{1,60}\*\*\s*[:：]?|[^\s#|>`*-][^`|]{0,60}[:：])\s*$")


def _family(text: str) -> str | None:
    low = text.lower()
    npu, gpu = _NPU_FAMILY.search(low) is not None, _GPU_FAMILY.search(low) is not None
    return "npu" if npu and not gpu else "gpu" if gpu and not npu else None


def doc_family_regions(ctx: Context, src: SourceFile) -> list[tuple[int, int, str]]:
    """(first line, last line, "npu" or "gpu") of the parts of a doc a heading or an introducing line (a bold
    label, `For CUDA users:`) gives to one family of devices, innermost last."""

    def build() -> list[tuple[int, int, str]]:
        lines = src.lines
        doc = ctx.document(src)
        heads = doc.headings if doc is not None else []
        heading_lines = [h.line for h in heads]
        out: list[tuple[int, int, str]] = []
        for k, h in enumerate(heads):
            family = _family(h.title)
            if family is not None:
                end = next((x.line - 1 for x in heads[k + 1 :] if x.level <= h.level), len(lines))
                out.append((h.line, end, family))
        intros = [n for n, line in enumerate(lines, 1) if (":" in line or "：" in line or "**" in line)]
        intros = [n for n in intros if _INTRO_LINE.match(lines[n - 1]) and n not in heading_lines]
        for i, n in enumerate(intros):
            family = _family(lines[n - 1])
            if family is None:
                continue
            stops = [x for x in heading_lines if x > n] + intros[i + 1 : i + 2]
            out.append((n, (min(stops) - 1) if stops else len(lines), family))
        return sorted(out, key=lambda r: (-(r[1] - r[0]), r[0]))

    return ctx.parsed("doc-family-regions", src, lambda _text: build())


def doc_block_family(ctx: Context, src: SourceFile, line: int, code: str) -> str | None:
    """Where a doc's code block (at `line`, its text `code`) runs: "npu", "gpu" or None (the doc does not say).

    The part of the doc it is in decides first (a heading or an introducing line naming one family); then a doc
    that is Ascend's throughout (an Ascend-only repository, a file in a folder or with a name for Ascend or the
    NPU) is NPU; then the block itself (an Ascend marker, or a selected CUDA device: CUDA_VISIBLE_DEVICES,
    nvidia-smi); then a doc that never names a GPU is NPU. A doc for several devices leaves its other blocks
    undecided: a CUDA habit there is no claim to make."""
    region = device_at(doc_family_regions(ctx, src), line)
    if region is not None:
        return region
    words = {t for part in src.path.lower().split("/") for t in re.split(r"[._-]", part)}
    if ctx.ascend_only() or "npu" in words or any("ascend" in w for w in words):
        return "npu"
    m = ascend.markers(ctx.facts.ascend_content)
    if ascend.has_script_marker(code, m):
        return "npu"
    if ascend.selects_other_device(code):
        return "gpu"
    gpu_named = ctx.parsed("doc-names-gpu", src, lambda text: _GPU_FAMILY.search(text.lower()) is not None)
    return None if gpu_named else "npu"


def device_at(regions: list[tuple[int, int, str]], line: int) -> str | None:
    """The device of the innermost region holding `line`."""
    found = None
    for first, last, device in regions:
        if first <= line <= last:
            found = device
    return found


def soc_names(ctx: Context) -> frozenset[str]:
    """Every SOC name the facts know, lower case: the chip names (`ascend_names.socs`), the A2 and A3 SOC_VERSIONs
    and the compute units of each device (`soc_versions`)."""

    def make() -> frozenset[str]:
        facts = ctx.facts
        names = {s.lower() for s in (*facts.ascend_names.socs, *facts.soc_versions.a2, *facts.soc_versions.a3)}
        names |= {u.lower() for units in facts.soc_versions.compute_units.values() for u in units}
        return frozenset(names)

    return ctx.memo(("soc-names", "", ""), make)


def value_device(ctx: Context, value: str) -> str | None:
    """The one device a whole value names (a CI matrix entry): an image tag token (`910b`, `a3`), a SOC_VERSION
    (`ascend910b1`), an ops build's SOC (`ascend910_93`), a device family's SOC prefix (`ascend310p3`) or its
    name (`910c`, `atlas a2`); None for none or several."""
    low = value.strip().lower()
    if not low:
        return None
    facts = ctx.facts
    found = {d for d, toks in facts.ascend_devices.tag_tokens.items() if low in {t.lower() for t in toks}}
    found |= {d for d, names in facts.ascend_devices.doc_names.items() if low in {n.lower() for n in names}}
    found |= {d for d, units in facts.soc_versions.compute_units.items() if low in {u.lower() for u in units}}
    found |= {d for d, m in facts.device_packages.markers.items() if any(low.startswith(p) for p in m.soc_prefixes)}
    soc = devices(ctx).of_soc(low)
    if soc is not None:
        found.add(soc)
    return found.pop() if len(found) == 1 else None


def image_device(ctx: Context, tag: str) -> str | None:
    """The one device an image tag names by a token (`v0.11.0rc0-a3-deepseek` -> a3), None for none or several."""
    tokens = set(tag.lower().split("-"))
    found = {d for d, toks in ctx.facts.ascend_devices.tag_tokens.items() if tokens & {t.lower() for t in toks}}
    return found.pop() if len(found) == 1 else None


_DAVINCI = lazyre.compile(r"/dev/davinci(\d+)\Z")


def docker_npus(argv: tuple[str, ...]) -> int | None:
    """How many NPUs a `docker run` maps (`--device /dev/davinciN` each); None when it is not one, 0 when it
    maps none or in a way that cannot be counted (`--privileged`, a variable, a glob, the Ascend runtime's
    ASCEND_VISIBLE_DEVICES, a `...` that leaves devices out for the reader to list)."""
    if len(argv) < 2 or argv[0] not in ("docker", "podman", "nerdctl") or argv[1] not in ("run", "create"):
        return None
    found: set[str] = set()
    for i, a in enumerate(argv):
        if a.startswith("--privileged") or "ASCEND_VISIBLE_DEVICES" in a or (a and a.strip(".…") == ""):
            return 0
        value = a[9:] if a.startswith("--device=") else None
        if a == "--device" and i + 1 < len(argv):
            value = argv[i + 1]
        if value is None:
            continue
        path = value.split(":", 1)[0]
        m = _DAVINCI.match(path)
        if m:
            found.add(m.group(1))
        elif path.startswith("/dev/davinci") and path[12:] not in ("_manager",):
            return 0  # `/dev/davinci$i`, `/dev/davinci[0-7]`: not countable
    return len(found)


# -- the device a script builds for when it is given no argument, and the device a CI job runs on ---------------

# A SOC name as a build takes it (`Ascend910_9382`, `ascend910b1`, `ascend910_93`, `Ascend310P3`).
_SOC_WORD = lazyre.compile(r"(?i)(?<![\w])ascend\d{3}[\w-]*")
# An assignment whose value names a SOC (`SOC_VERSION="${1:-Ascend910_9382}"`), or a loop over SOC names.
_SOC_ASSIGN = lazyre.compile(r"(?:^|[\s;&|({])([A-Za-z_]\w*)\+?=([^\s;&|]*)|\bfor\s+([A-Za-z_]\w*)\s+in\s+([^;\n]*)")


@dataclass(frozen=True)
class DefaultSoc:
    """The SOC a script builds for when it is run with no arguments."""

    device: str  # a2, a3, 310p, ...
    name: str  # the variable that holds it
    value: str  # one of its values, as the script writes it
    line: int  # the assignment that sets it there


def script_default_soc(ctx: Context, path: str) -> DefaultSoc | None:
    """The device of the SOC the script at `path` builds for when it is run with no arguments, worked out from its
    literal assignments only (checks.analysis.scripts.no_argument_state); None when it cannot be told: a SOC
    read from the caller's environment, a command's output or a function, a test on something unknown whose
    branches name different devices, several SOC variables of different devices, or no SOC at all."""
    return ctx.memo(("script-default-soc", "head", path), lambda: _script_default_soc(ctx, path))


def _script_default_soc(ctx: Context, path: str) -> DefaultSoc | None:
    from npu_review.checks.analysis.scripts import no_argument_state

    src = ctx.source(path)
    if src is None or _SOC_WORD.search(src.text) is None:
        return None
    text = src.text
    names: set[str] = set()
    for m in _SOC_ASSIGN.finditer(ascend.without_comments(text)):
        name, value = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        if any(value_device(ctx, s) for s in _SOC_WORD.findall(value)):
            names.add(name)
    if not names:
        return None
    state, in_functions = no_argument_state(text, partial(_sourced_sets, ctx, path))
    if state is None or "*" in in_functions or names & in_functions:
        return None
    found: set[str] = set()
    first: DefaultSoc | None = None
    for name in sorted(names):
        values = state.vals.get(name)
        if not values or re.search(rf"\$\{{?{name}\b", text) is None:
            return None  # unknown, or never read: not what the build takes
        for value in sorted(values):
            device = value_device(ctx, value) if _SOC_WORD.fullmatch(value) else None
            if device is None:
                return None
            found.add(device)
            if first is None:
                first = DefaultSoc(device, name, value, state.lines.get(name, 0))
    return first if len(found) == 1 else None


def _sourced_sets(ctx: Context, path: str, raw: str) -> frozenset[str] | None:
    """The variables a script's `source <raw>` may set: the CANN toolkit's set_env.sh sets its own (the facts'
    cann_shell.toolkit_env_sets); any other file, a repository one above all, may set anything (None)."""
    from npu_review.checks.analysis.scripts import resolve_script
    from npu_review.checks.parsers.sh import unquote

    word = unquote(raw)
    if resolve_script(ctx, path, raw) is not None:
        return None
    env_scripts = set(ctx.facts.ascend_names.env_scripts.values())
    if word.rsplit("/", 1)[-1] not in env_scripts or not re.search(r"(?i)toolkit|cann|ascend", word):
        return None
    if re.search(r"(?i)nnal|atb|nnae", word):
        return None  # another package's script: not the one whose variables the facts list
    return frozenset(ctx.facts.cann_shell.toolkit_env_sets)


def job_device(ctx: Context, wf: Workflow, job: Job) -> tuple[str, str] | None:
    """(device, what says it) of a job that runs on one Ascend device in every leg: its runner (a label the
    runner catalog knows the device of) and its CANN container image (`cann:8.5.0-910b-...`) agree, and at least
    one of them names it; None otherwise (a matrix over devices, an unknown label, a runner group)."""
    from npu_review.checks.analysis.runners import runner_catalog
    from npu_review.checks.analysis.stacks import job_legs
    from npu_review.checks.parsers.gha.runners import runner_label_sets

    found: dict[str, str] = {}
    catalog = runner_catalog(ctx)
    for labels in runner_label_sets(wf, job):
        if labels is None:
            return None
        runner = catalog.of(labels)
        if runner is not None:
            device = value_device(ctx, runner.device) if runner.device else None
            if device is None:
                return None
            found.setdefault(device, f"runner `{runner.label}`")
    for leg in job_legs(ctx, wf, job):
        for stated in leg.image:
            if stated.dim == "device":
                device = value_device(ctx, stated.value)
                if device is None:
                    return None
                found.setdefault(device, f"container image's `{stated.value}`")
    if len(found) != 1:
        return None
    return next(iter(found.items()))


# -- the device a script's option or literal names ----------------------------------------------------------------


def ascend_device_value(ctx: Context, value: str) -> bool:
    """The whole value names the Ascend device of one of the facts' `device_defaults.families` (`"Ascend"`,
    `"npu:0"`, `"hccl"`)."""
    return any(ascend_ for _, ascend_ in device_values(ctx, value))


def device_values(ctx: Context, value: str) -> tuple[tuple[str, bool], ...]:
    """Every (family, is Ascend's) a whole device value belongs to (`"Ascend"` -> mindspore's Ascend value,
    `"cpu"` -> mindspore's and torch's other values), from the facts' `device_defaults.families`."""
    patterns = ctx.memo(("device-value-patterns", "", ""), lambda: _device_patterns(ctx))
    text = value.strip()
    return tuple((family, ascend_) for family, ascend_, p in patterns if p.fullmatch(text))


def _device_patterns(ctx: Context) -> list[tuple[str, bool, re.Pattern[str]]]:
    out = []
    for family, values in ctx.facts.device_defaults.families.items():
        for ascend_, patterns in ((True, values.ascend), (False, values.other)):
            out += [(family, ascend_, re.compile(p, re.IGNORECASE)) for p in patterns]
    return out


def leaves_ascend(ctx: Context, old: str, new: str) -> bool:
    """The value `old` names the Ascend device of a family and `new` another device of the same family
    (`Ascend` -> `GPU`, `npu` -> `cuda`, `hccl` -> `nccl`): a default that moves a script off the NPU."""
    was = {family for family, ascend_ in device_values(ctx, old) if ascend_}
    now = {family for family, ascend_ in device_values(ctx, new) if not ascend_}
    return bool(was & now)
