"""The Ascend stack of each environment: which CANN, torch, torch_npu and torchvision a Dockerfile stage or a CI
job runs with, each value with the line that states it (ARG defaults substituted, requirements an image installs
followed), and the compatibility tables they are judged by.

What one environment states about itself in several places (analysis for NPU227):
    job_legs(ctx, wf, job)        # per matrix leg: the container's CANN, device, OS, Python (image_stack), the
                                  # CANN its cache keys, artifact names and env values name, the Pythons its
                                  # commands address
    builds(ctx)                   # each workflow build of a Dockerfile with the platforms it targets
    arch_files(df)                # the single-architecture installers, wheels and archives a Dockerfile names
    moved_commits(ctx, kinds)     # commit pins a change moved in some files and left in others
Install guides' stacks are analysis.guides'."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from npu_review.checks import lazyre
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.facts.releases import Releases, generation, parse_version, releases
from npu_review.checks.model import ChangeStatus
from npu_review.checks.parsers.gha.values import WILD, Val
from npu_review.checks.parsers.pep440 import public_version
from npu_review.checks.parsers.requirements import normalize_name, parse_requirement, parse_requirements_file
from npu_review.checks.parsers.sh import Source, Word, commands

if TYPE_CHECKING:
    from npu_review.checks.analysis.installs import Install
    from npu_review.checks.parsers.dockerfile import Dockerfile
    from npu_review.checks.parsers.gha.workflow import Job, Step, Workflow
    from npu_review.checks.parsers.pipcli import PipCall
    from npu_review.checks.parsers.yamlmarks import Node

TORCH_FAMILY = ("torch", "torch-npu", "torchvision")


_WHEEL = lazyre.compile(r"(?:^|/)(torch_npu|torch-npu|torch|torchvision)-(\d+(?:\.\d+)+(?:\.post\d+)?(?:\.dev\d+)?)-")


_CANN_VERSION = lazyre.compile(r"\d+\.\d+\.(?:\d+|rc\d+)", re.I)
# A CANN image tag: `<cann>-<device>-<os>-py3.N[-suffix]` (`8.3.rc2-910b-ubuntu22.04-py3.11`,
# `9.0.0-a3-openeuler24.03-py3.12`), the one grammar every rule reads CANN, device, OS and Python from.
CANN_TAG = lazyre.compile(
    r"(?<![\w.])(?P<cann>\d+\.\d+(?:\.\d+)?(?:\.?(?:rc|alpha|beta|RC)\d+)?(?:\.\d+)?)"
    r"-(?P<dev>910b|a2|a3|310p|950|a5)-(?P<os>ubuntu\d+(?:\.\d+)?|openeuler\d+(?:\.\d+)?(?:-sp\d+)?)"
    r"-py(?P<py>3\.\d+)(?![\d])(?P<post>(?:-[A-Za-z0-9][\w.]*)*)",
    re.I,
)


@dataclass(frozen=True)
class CannImage:
    """What a CANN base image's reference says about the stack it brings."""

    cann: str  # lower case: 8.3.rc1, 9.1.0
    device: str | None = None  # as the tag writes it: 910b, a3, 310p, ...
    os: str | None = None  # ubuntu22.04, openeuler24.03
    python: str | None = None  # 3.11


def is_cann_repository(image: str) -> bool:
    """A CANN image repository: `…/cann`, `…/cann-toolkit`, `ascendai/cann` (its last path part names CANN)."""
    return "cann" in image.rsplit("/", 1)[-1].lower()


def cann_image(ref: str) -> CannImage | None:
    """The stack a CANN image reference states (`quay.io/ascend/cann:8.5.0-910b-ubuntu22.04-py3.11`); None for
    another image, or a tag that does not start with a CANN version."""
    image, _, tag = ref.strip().partition("@")[0].rpartition(":") if ":" in ref.rsplit("/", 1)[-1] else ("", "", "")
    if not tag or not is_cann_repository(image):
        return None
    m = CANN_TAG.match(tag)
    if m is not None:
        return CannImage(m.group("cann").lower(), m.group("dev").lower(), m.group("os").lower(), m.group("py"))
    first = tag.split("-", 1)[0]
    return CannImage(first.lower()) if _CANN_VERSION.fullmatch(first) else None


# A CANN image's tag starts with its release, pre-releases of the image builds included (`8.2.rc1.alpha003-a3-...`,
# `8.3.rc1.alpha002-910b-...`, `9.1.0-beta.1-...`: Ascend/cann-container-image's tags).
_CANN_TAG_START = lazyre.compile(r"\d+\.\d+\.(?:\d+|rc\d+)(?:\.(?:alpha|beta)\d+|-beta\.\d+)?(?:-|\Z)", re.I)


def is_cann_image_tag(image: str, tag: str | None) -> bool:
    """A CANN image by its repository and a tag that starts with a CANN release (pre-release builds included):
    what an image is, where `cann_image` would also read its stack from the tag."""
    return bool(tag) and is_cann_repository(image) and _CANN_TAG_START.match(tag or "") is not None


_CANN_RUN = lazyre.compile(r"Ascend-cann-toolkit_(\d+\.\d+\.(?:\d+|rc\d+))_linux", re.I)


_RUNNERS = frozenset({"bash", "sh", "source", "."})


@dataclass(frozen=True)
class Pin:
    """An exact version of torch, torch-npu or torchvision that a step installs."""

    package: str  # normalised name
    version: str  # as written (may carry `+cpu`)
    line: int  # where the version is written (the pip word, or the ARG that holds a wheel name)
    index: int  # order of the step (Step.index)
    old: str | None  # exact text on `line` that holds the version (for a suggestion)
    # For a version the image gets from requirements a step installs (not written in the Dockerfile): that
    # step, and where the repository states the version ("requirements.txt line 34").
    via: str | None = None
    stated: str = ""  # " (requirements.txt line 34)"


@dataclass(frozen=True)
class Cann:
    version: str | None  # lower case: 8.3.rc1, 9.1.0; None: a stage on another base (CANN unknown)
    line: int
    start: int  # the first step index it applies to
    how: str  # "base image" or "CANN installer"
    tag: str = ""  # the base image's tag (ARG defaults substituted), for messages


def pins(df: Dockerfile) -> list[Pin]:
    """Every exact torch-family version installed by a pip command, in file order (wheel names included)."""
    from npu_review.checks.parsers.dockerfile import build_args, expand, steps

    out: list[Pin] = []
    defs = build_args(df)
    froms = [i.line for i in df.of("FROM")]
    for step in steps(df):
        call = step.pip
        if call is None or call.verb != "install":
            continue
        # A RUN sees the ARG and ENV values of its own stage only (an ARG before FROM must be declared again).
        start = max((n for n in froms if n < step.instr.line), default=0)
        stage_defs = [d for d in defs if d[0] > start]
        for req, word in call.packages:
            if req.name in TORCH_FAMILY and req.pinned:
                out.append(Pin(req.name, req.pinned, word.line, step.index, word.raw))
        for word in call.others:
            text, used = expand(word.unquoted, defs, word.line)
            staged, staged_used = expand(word.unquoted, stage_defs, word.line) if "$" in word.unquoted else (text, {})
            expanded = parse_requirement(staged) if staged_used and "$" not in staged else None
            if expanded is not None and expanded.name in TORCH_FAMILY and expanded.pinned:
                # `torch_npu==${TORCH_NPU_VERSION}`: the version is the ARG's default; point at the ARG.
                def_line = max(staged_used.values())
                old = next((v for n, _name, v in defs if n == def_line and expanded.pinned in v), None)
                out.append(Pin(expanded.name, expanded.pinned, def_line, step.index, old))
                continue
            m = _WHEEL.search(text)
            if not m:
                continue
            version = m.group(2)
            # A wheel is a file: another version is another download, so no exact fix is offered.
            line = word.line
            if version not in word.raw:  # the name comes from an ARG/ENV: point at its definition
                for def_line, name, value in defs:
                    if used.get(name) == def_line and version in value:
                        line = def_line
            out.append(Pin(normalize_name(m.group(1)), version, line, step.index, None))
    return out


_TORCH_NPU_WORD = lazyre.compile(r"torch[-_]npu", re.I)


def image_installs(ctx: Context, src: SourceFile) -> list[Install]:
    """The steps of a Dockerfile (at head) that install a project's or a file's requirements, once per run."""
    from npu_review.checks.analysis.installs import installs

    return ctx.memo(("image-installs", "head", src.path), lambda: installs(ctx.dockerfile(src), ctx))


def image_pins(ctx: Context, src: SourceFile) -> list[Pin]:
    """The exact torch-family versions a Dockerfile (at head) installs, once per run."""
    return ctx.memo(("image-pins", "head", src.path), lambda: pins(ctx.dockerfile(src)))


def installs_torch_npu(df: Dockerfile) -> bool:
    """A pip step names torch_npu itself (unpinned, or a wheel whose version is unknown): the image's torch_npu
    may not be the one the requirements it installs state, so those are not judged."""
    from npu_review.checks.parsers.dockerfile import steps

    for step in steps(df):
        call = step.pip
        if call is not None and call.verb in ("install", "download", "wheel"):
            if any(req.name == "torch-npu" for req, _ in call.packages):
                return True
            if any(_TORCH_NPU_WORD.search(w.unquoted) for w in call.others):
                return True
    return False


def installed_pins(found: list[Install], packages: tuple[str, ...] = ("torch-npu",)) -> list[Pin]:
    """The exact versions of `packages` (torch_npu by default; any of TORCH_FAMILY) that install steps bring
    through requirements the facts or the repository state (vllm-ascend at a release tag, the repository's own
    requirements copied into the image): the image stack as those steps leave it. Not from a release branch: it
    moves on after its tag (verl's `releases/v0.18.0` clone pins another torch_npu than the v0.18.0 tag)."""
    out: list[Pin] = []
    for inst in found:
        if not inst.fixed:
            continue
        for package in packages:
            spec = (inst.specs or {}).get(package)
            exact = next((v for op, v in spec or () if op == "=="), None)
            if exact is None or "*" in exact:
                continue
            stated = inst.stated.get(package)
            where = f" ({stated[0]} line {stated[1]})" if stated else ""
            out.append(Pin(package, exact, inst.line, inst.index, None, via=inst.what, stated=where))
    return out


def _cann_of(ref: str) -> str | None:
    """`quay.io/ascend/cann:8.5.0-910b-ubuntu22.04-py3.11` -> `8.5.0`; None for any other image."""
    image = cann_image(ref)
    return None if image is None else image.cann


def job_cann(wf: Workflow, job: Job) -> Cann | None:
    """The CANN of the job's container image (`container: …/cann:<version>-…`), when every matrix leg resolves
    to the same one."""
    from npu_review.checks.parsers.gha.workflow import legs

    node = job.field("container")
    if node is not None and not node.is_scalar:
        node = node.get("image")
    if node is None or not node.is_scalar:
        return None
    seen: set[str | None] = set()
    for scope in legs(wf, job):
        for val in scope.resolve(node):
            seen.add(None if WILD in val.text else _cann_of(val.text))
    if len(seen) != 1:
        return None
    version = seen.pop()
    return None if version is None else Cann(version, node.line, 0, "job's container image")


def job_pins(ctx: Context, job: Job) -> list[Pin]:
    """The torch_npu a job's `run:` steps install: exact pins, or else the repository's own requirements
    (`pip install -e .`, `pip install -r requirements.txt` in the checkout). Nothing when a step names
    torch_npu without an exact version, or when the checkout is moved (`path:`, another `repository:`,
    `working-directory:`)."""
    from npu_review.checks.parsers.dockerfile import resolve_dir
    from npu_review.checks.parsers.pipcli import pip_call

    explicit: list[Pin] = []
    derived: list[Pin] = []
    named = False
    moved = job.field("defaults") is not None
    for step in job.steps:
        if (
            step.uses
            and step.uses.split("@", 1)[0] == "actions/checkout"
            and ("path" in step.with_ or "repository" in step.with_)
        ):
            moved = True
        if step.run is None or step.node.get("working-directory") is not None:
            continue
        cwd: str | None = "/"  # the checkout's root
        for cmd in commands(Source.lines(step.run.text_lines()), heredoc_bodies=True):
            argv = cmd.argv
            if argv and argv[0] == "cd":
                cwd = resolve_dir(cwd, argv[1]) if len(argv) > 1 else None
                continue
            call = pip_call(cmd)
            if call is None or call.verb != "install":
                continue
            for req, word in call.packages:
                if req.name == "torch-npu":
                    named = True
                    if req.pinned:
                        explicit.append(Pin(req.name, req.pinned, word.line, 0, word.raw))
            if any(_TORCH_NPU_WORD.search(w.unquoted) for w in call.others):
                named = True
            if moved or cwd is None or call.no_deps:
                continue
            derived.extend(_own_pins(ctx, call, cwd))
    if explicit:
        return explicit
    return [] if named else derived


def _own_pins(ctx: Context, call: PipCall, cwd: str) -> Iterator[Pin]:
    """torch_npu from the repository's own files a job step installs in its checkout."""
    from npu_review.checks.analysis.installs import project_requirements
    from npu_review.checks.parsers.dockerfile import resolve_dir

    line = call.cmd.words[call.cmd.start].line
    for f in call.files:
        path = resolve_dir(cwd, f.unquoted)
        rel = path.lstrip("/") if path else ""
        req = ctx.source(rel) if rel else None
        if req is None:
            continue
        for n, r in parse_requirements_file(req.text):
            exact = next((v for op, v in r.specs if op == "=="), None)
            if r.name == "torch-npu" and exact:
                yield Pin(
                    r.name, exact, f.line, 0, None, via=f"`pip install -r {f.unquoted}`", stated=f" ({rel} line {n})"
                )
    for t in [*call.editables, *(w for w in call.others if w.unquoted.startswith((".", "/")))]:
        where = resolve_dir(cwd, re.sub(r"\[[^\]]*\]$", "", t.unquoted))
        if where is None:
            continue
        found = project_requirements(ctx, where.lstrip("/"))
        if found is None:
            continue
        stated, path = found
        spec, n = stated.get("torch-npu", ((), 0))
        exact = next((v for op, v in spec if op == "=="), None)
        if exact:
            at = f" ({path} line {n})" if n else ""
            yield Pin(
                "torch-npu", exact, line, 0, None, via=f"`pip install {_shown(call, t)}` of this repository", stated=at
            )


def _shown(call: PipCall, target: Word) -> str:
    return f"-e {target.unquoted}" if target in call.editables else target.unquoted


def cann_versions(df: Dockerfile) -> list[Cann]:
    """The CANN version each stage starts with (a `…/cann:<version>-…` FROM; other bases: unknown), then the
    toolkit installers run later (`Ascend-cann-toolkit_8.5.2_linux-….run --install`), in file order."""
    from npu_review.checks.parsers.dockerfile import build_args, expand, steps

    out: list[Cann] = []
    defs = build_args(df)
    all_steps = steps(df)
    for instr in df.of("FROM"):
        start = sum(1 for st in all_steps if st.instr.line < instr.line)
        version = None
        image = instr.image
        if image is not None and image.tag is not None and is_cann_repository(image.image):
            tag, _ = expand(image.tag, defs, instr.line)
            found = cann_image(f"{image.image}:{tag}")
            version = found.cann if found is not None else None
            out.append(Cann(version, instr.line, start, "base image", tag))
        else:
            out.append(Cann(None, instr.line, start, "base image"))
    for step in all_steps:
        argv = step.cmd.argv
        if not argv or not any(a in ("--install", "--upgrade", "--full") for a in argv):
            continue
        if not (argv[0] in _RUNNERS or argv[0].startswith("./") or argv[0].endswith(".run")):
            continue
        for word in step.cmd.words[step.cmd.start :]:
            m = _CANN_RUN.search(word.unquoted)
            if m:
                out.append(Cann(m.group(1).lower(), word.line, step.index + 1, "CANN installer"))
                break
    return sorted(out, key=lambda c: c.start)


def cann_at(canns: list[Cann], index: int) -> Cann | None:
    """The CANN in effect for the step with this index (None when unknown)."""
    found = None
    for c in canns:
        if c.start <= index:
            found = c
    return found if found is not None and found.version is not None else None


def torch_npu_base(version: str) -> str:
    """`2.7.1.post2` -> `2.7.1`, `2.6.0rc1` -> `2.6.0`: the torch it is built for (releases.torch_of says so from
    the facts; these are its release numbers)."""
    v = parse_version(version)
    return v.base_version if v is not None else public_version(version)


def torch_npu_build(version: str) -> str:
    """`2.5.1.post1.dev20250619` -> `2.5.1.post1` (what the CANN table lists)."""
    return re.sub(r"\.dev\d+$", "", public_version(version))


@dataclass(frozen=True)
class Tables:
    """The release facts as the stack rules read them (checks/facts/releases.py answers)."""

    cann: dict[str, list[str]]  # CANN version -> torch_npu versions built for it (the mapping table's first)
    vision: dict[str, str]  # torch -> torchvision
    rel: Releases

    def built_for(self, torch_npu: str) -> str | None:
        return self.rel.built_for(torch_npu)

    def for_generation(self, cann: str) -> str | None:
        """The table's entry for this CANN, else one of the same generation (8.5.2 -> 8.5.0)."""
        if cann.lower() in self.cann:
            return cann.lower()
        gen = generation(cann)
        return next((c for c in self.cann if generation(c) == gen), None)


def tables(ctx: Context) -> Tables:
    def load() -> Tables:
        rel = releases(ctx.facts)
        return Tables(rel.cann_table(), dict(ctx.facts.torch_torchvision.table), rel)

    return ctx.memo(("facts", "torch_tables", ""), load)


def nearest(pins_: list[Pin], package: str, pin: Pin) -> Pin | None:
    """The pin of `package` that goes with `pin`: same step, else the last one before it, else the first after."""
    same = [p for p in pins_ if p.package == package and p.index == pin.index]
    if same:
        return same[0]
    before = [p for p in pins_ if p.package == package and p.index < pin.index]
    if before:
        return before[-1]
    after = [p for p in pins_ if p.package == package and p.index > pin.index]
    return after[0] if after else None


def image_canns(ctx: Context, path: str) -> list[Cann]:
    """`cann_versions` of the Dockerfile at `path` (head), once per run; [] when it is not there."""

    def load() -> list[Cann]:
        src = ctx.source(path)
        return [] if src is None else cann_versions(ctx.dockerfile(src))

    return ctx.memo(("image-canns", "head", path), load)


def base_cann(ctx: Context, path: str) -> str | None:
    """The CANN version of the first CANN base image of the Dockerfile at `path` (head), None when unknown."""
    return next((c.version for c in image_canns(ctx, path) if c.how == "base image" and c.version), None)


# -- the stack of an environment, each value with the place that states it ----------------------------------------
# One environment (a CI job leg, an image build) states its stack in several places: the container image's tag,
# the cache keys and artifact names its steps compute, the Python its commands address, the platforms a build
# targets and the installers it downloads. Rules compare what one environment says in two places.


@dataclass(frozen=True)
class Stated:
    """One value of one stack dimension, with where it is stated."""

    dim: str  # cann, device, os, python, arch
    value: str  # lower case for cann/device/os; `3.11` for python; `aarch64`/`x86_64` for arch
    path: str
    line: int
    how: str  # what states it, for messages: "container image", "cache key", "`pip3.10`", ...


def image_stack(ref: str) -> dict[str, str]:
    """The dimensions an image reference states through the CANN tag grammar, for CANN base images and for
    project images tagged after them (`verl-sglang-8.5.0-a3-ubuntu22.04-py3.11-latest`): cann, device, os,
    python. Empty for any other reference."""
    tag = ref.strip().partition("@")[0]
    last = tag.rsplit("/", 1)[-1]
    if ":" not in last:
        return {}
    tag = last.rsplit(":", 1)[1]
    found = list(CANN_TAG.finditer(tag))
    if len(found) != 1:
        return {}
    m = found[0]
    return {
        "cann": m.group("cann").lower(),
        "device": m.group("dev").lower(),
        "os": m.group("os").lower(),
        "python": m.group("py"),
    }


# `cann8.5.0`, `cann-9.0.0`, `CANN_8.3.RC1` inside a key, an artifact name or an env value.
_CANN_NAMED = lazyre.compile(r"(?<![A-Za-z0-9\x00])cann[-_]?(\d+\.\d+(?:\.(?:\d+|rc\d+))?)(?![\d.]*[\d\x00])", re.I)
# Actions whose `with:` values name what a job produced or restores (so a CANN in them is the job's).
_NAMING_ACTIONS = ("actions/cache", "runs-on/cache", "actions/upload-artifact", "actions/download-artifact")
_NAMING_KEYS = ("key", "restore-keys", "name")
# A Python the command addresses by its name: `python3.10`, `pip3.12`.
_VERSIONED_PY = lazyre.compile(r"(?:python|pip)(3\.\d+)")
_PY_MENTION = lazyre.compile(r"(?:python|pip)3\.\d|--python-version")
# Steps that install or select another Python for the job (then a versioned command may be that one).
_PY_SETUP = lazyre.compile(
    r"actions/setup-python|\buv\s+(?:venv|python\s+install)\b|\bconda\b|\bpyenv\b|\bdeadsnakes\b|"
    r"\bapt(?:-get)?\s+install\b[^\n]*\bpython3\.\d+|\bvirtualenv\b[^\n]*-p|\bmamba\b"
)


@dataclass(frozen=True)
class JobLeg:
    """What one matrix leg of a job states about its stack."""

    combo: dict[str, str] | None
    image: tuple[Stated, ...]  # the container image's tag
    named: tuple[Stated, ...]  # CANN versions in cache keys, artifact names and env values
    pythons: tuple[Stated, ...]  # Python minors that its run steps address


def job_legs(ctx: Context, wf: Workflow, job: Job) -> list[JobLeg]:
    """The stack each leg of `job` states (memoised per workflow and job)."""
    return ctx.memo(("job-stack", "head", f"{wf.path}#{job.id}"), lambda: _job_legs(wf, job))


def _job_legs(wf: Workflow, job: Job) -> list[JobLeg]:
    from npu_review.checks.parsers.gha.workflow import legs

    container = job.field("container")
    if container is not None and not container.is_scalar:
        container = container.get("image")
    pythons = tuple(_job_pythons(wf, job))
    out: list[JobLeg] = []
    for scope in legs(wf, job):
        image: list[Stated] = []
        if container is not None and container.is_scalar:
            vals = scope.resolve(container)
            if len(vals) == 1 and vals[0].known:
                for dim, value in image_stack(vals[0].text).items():
                    image.append(Stated(dim, value, wf.path, container.line, "container image"))
        named: list[Stated] = []
        for node, how in _naming_nodes(job):
            for val in scope.resolve(node):
                # The literal parts of a value are known even where an expression is not (`${{ runner.os }}`).
                for m in _CANN_NAMED.finditer(val.text):
                    named.append(Stated("cann", m.group(1).lower(), wf.path, node.line, how))
        out.append(JobLeg(scope.combo, tuple(image), tuple(dict.fromkeys(named)), pythons))
    return out


def _naming_nodes(job: Job) -> Iterator[tuple[Node, str]]:
    """Scalar values that name what the job builds, restores or uploads: `with:` keys of cache and artifact
    actions, and the job's and steps' `env:` values."""
    for key, node in job.env.items():
        if node.is_scalar:
            yield node, f"env `{key}`"
    for step in job.steps:
        for key, node in step.env.items():
            if node.is_scalar:
                yield node, f"env `{key}`"
        action = (step.uses or "").split("@", 1)[0]
        if action in _NAMING_ACTIONS:
            for key in _NAMING_KEYS:
                value = step.with_.get(key)
                if value is not None and value.is_scalar:
                    yield value, "cache key" if "cache" in action and key != "name" else f"artifact `{key}`"


def _job_pythons(wf: Workflow, job: Job) -> Iterator[Stated]:
    """Python minors the job's commands address: `--python-version X` of a `pip install` (without `--target`),
    `python3.X` / `pip3.X` as a command's name. None when the job sets up another Python itself."""
    from npu_review.checks.parsers.pipcli import pip_call

    found: list[Stated] = []
    for step in job.steps:
        if step.uses and _PY_SETUP.search(step.uses):
            return
        if step.run is None:
            continue
        if _PY_SETUP.search(step.run.value):
            return
        if not _PY_MENTION.search(step.run.value):
            continue  # the quick no: nothing here names a Python version
        for cmd in commands(Source.lines(step.run.text_lines()), heredoc_bodies=True):
            words = cmd.words[cmd.start :]
            if not words:
                continue
            prog = words[0].unquoted.rsplit("/", 1)[-1]
            m = _VERSIONED_PY.fullmatch(prog)
            if m:
                found.append(Stated("python", m.group(1), wf.path, words[0].line, f"`{prog}`"))
            call = pip_call(cmd)
            if call is None or call.verb != "install":
                continue
            if any(o in ("-t", "--target", "--prefix", "--root") for o, _, _ in call.options):
                continue
            for opt, value, word in call.options:
                if opt == "--python-version" and value and re.fullmatch(r"3\.\d+", value):
                    found.append(Stated("python", value, wf.path, word.line, f"`--python-version {value}`"))
    yield from found


# -- the CPU architectures of an image build --------------------------------------------------------------------

_PLATFORM_ARCH = {"linux/amd64": "x86_64", "linux/arm64": "aarch64", "linux/arm64/v8": "aarch64"}
_ARCH_WORDS = {"aarch64": "aarch64", "arm64": "aarch64", "x86_64": "x86_64", "amd64": "x86_64"}


@dataclass(frozen=True)
class PlatformBuild:
    """A workflow step that builds a Dockerfile for a set of platforms."""

    dockerfile: str  # repository path
    archs: frozenset[str]  # aarch64, x86_64
    platforms: str  # as written (resolved), for messages
    path: str  # the workflow
    line: int  # the `platforms:` / `--platform` line


def builds(ctx: Context) -> list[PlatformBuild]:
    """Every multi-or-single platform build of a repository Dockerfile that a workflow at head runs with known
    platforms: docker/build-push-action with `platforms:` and `file:` (or `context:` + `Dockerfile`), and
    `docker buildx build --platform … -f …` in run steps. Memoised per run."""
    from npu_review.checks.analysis.workflows import workflow_paths

    def collect() -> list[PlatformBuild]:
        out: list[PlatformBuild] = []
        exists = ctx.changeset.head.exists
        for path in workflow_paths(ctx, "head"):
            # Kept between the runs of change reviews by the workflow's blob (ctx.kept); the Dockerfiles it names
            # are looked up each time.
            found = ctx.kept("image-builds", path, "head", partial(_workflow_builds, ctx, path))
            out.extend(b for b in found if exists(b.dockerfile))
        return out

    return ctx.memo(("image-builds", "head", ""), collect)


def _workflow_builds(ctx: Context, path: str) -> tuple[tuple[PlatformBuild, ...], tuple[str, ...]]:
    """The workflow's builds of the Dockerfiles it names (present or not); it reads no other file."""
    from npu_review.checks.analysis.workflows import workflow

    # `_may_build`'s test on the text first: a workflow that never says `platform` is not parsed.
    src = ctx.source(path)
    if src is None or "platform" not in src.text:
        return (), ()
    wf = workflow(ctx, path)  # kept for the run: the file is not read again
    if wf is None or not any(_may_build(step) for job in wf.jobs.values() for step in job.steps):
        return (), ()
    return tuple(_builds_of(wf)), ()


def _may_build(step: Step) -> bool:
    """The quick no: a step that names platforms (build-push-action's `platforms:`, `--platform`)."""
    return "platforms" in step.with_ or (step.run is not None and "--platform" in step.run.value)


def _archs(text: str) -> frozenset[str] | None:
    found = set()
    for part in re.split(r"[\s,]+", text.strip()):
        if not part:
            continue
        arch = _PLATFORM_ARCH.get(part.lower())
        if arch is None:
            return None  # another platform, or an unknown one: the set is not known
        found.add(arch)
    return frozenset(found) if found else None


def _builds_of(wf: Workflow) -> Iterator[PlatformBuild]:
    """The builds the workflow runs, of the Dockerfiles it names whether they exist or not."""
    from npu_review.checks.parsers.gha.workflow import legs

    seen: set[tuple[str, frozenset[str], int]] = set()
    for job in wf.jobs.values():
        for scope in legs(wf, job):
            for step in job.steps:
                action = (step.uses or "").split("@", 1)[0]
                if action.endswith("docker/build-push-action"):
                    plat = step.with_.get("platforms")
                    if plat is None or not plat.is_scalar:
                        continue
                    vals = scope.resolve(plat)
                    file_node = step.with_.get("file")
                    context_node = step.with_.get("context")
                    if file_node is not None and file_node.is_scalar:
                        files = scope.resolve(file_node)
                    elif context_node is not None and context_node.is_scalar:
                        dirs = scope.resolve(context_node)
                        files = [Val(v.text.rstrip("/") + "/Dockerfile", v.origins) for v in dirs]
                    else:
                        files = [Val("Dockerfile")]
                    for pv in vals:
                        archs = _archs(pv.text) if pv.known else None
                        for fv in files:
                            name = re.sub(r"^(\./)+", "", fv.text.strip()) if fv.known else ""
                            if archs and name:
                                key = (name, archs, plat.line)
                                if key not in seen:
                                    seen.add(key)
                                    yield PlatformBuild(name, archs, pv.text.strip(), wf.path, plat.line)
                elif step.run is not None and "--platform" in step.run.value:
                    for val in scope.resolve(step.run):
                        if not val.known:
                            continue
                        yield from _buildx_runs(wf.path, step.run, val.text, seen)


def _buildx_runs(
    path: str, node: Node, text: str, seen: set[tuple[str, frozenset[str], int]]
) -> Iterator[PlatformBuild]:
    lines = node.text_lines()
    source = Source.lines([(n, t) for (n, _), t in zip(lines, text.split("\n"), strict=False)])
    for cmd in commands(source):
        argv = cmd.argv
        if len(argv) < 3 or argv[0] != "docker" or "build" not in argv[1:3]:
            continue
        platform = dockerfile = None
        line = cmd.line
        for i, a in enumerate(argv):
            nxt = argv[i + 1] if i + 1 < len(argv) else None
            if a.startswith("--platform="):
                platform = a.split("=", 1)[1]
            elif a == "--platform" and nxt is not None:
                platform = nxt
            elif a.startswith("--file="):
                dockerfile = a.split("=", 1)[1]
            elif a in ("-f", "--file") and nxt is not None:
                dockerfile = nxt
        if platform is None or dockerfile is None or "$" in dockerfile:
            continue
        archs = _archs(platform.replace(",", " "))
        name = re.sub(r"^(\./)+", "", dockerfile)
        if archs and (name, archs, line) not in seen:
            seen.add((name, archs, line))
            yield PlatformBuild(name, archs, platform, path, line)


# A file for one CPU architecture: an installer, archive or wheel whose name says which.
_ARCH_FILE = lazyre.compile(
    r"(?<![A-Za-z0-9])(aarch64|x86_64|arm64|amd64)(?![A-Za-z0-9])[\w.+-]*\.(?:run|whl|tar\.gz|tgz|zip|rpm|deb|sh)$"
)
# A RUN instruction that picks the architecture itself (then its file names may be one branch of several).
_ARCH_AWARE = lazyre.compile(r"uname|ARCH|arch\b|dpkg\s+--print-architecture|PLATFORM")


_NOT_INSTALLING = frozenset({"rm", "echo", "ls", "mv", "test", "["})


@dataclass(frozen=True)
class ArchFile:
    arch: str  # aarch64 or x86_64
    name: str  # the file name as written (last path part)
    line: int


def arch_files(df: Dockerfile) -> list[ArchFile]:
    """Installers, wheels and archives for one CPU architecture that a Dockerfile's RUN instructions name
    literally, in instructions that do not choose the architecture themselves (`$(uname -m)`, `$TARGETARCH`, an
    `if`/`case` on an ARCH variable), in stages not pinned to a platform (`FROM --platform=…`)."""
    from npu_review.checks.parsers.dockerfile import steps

    out: list[ArchFile] = []
    pinned: dict[int, bool] = {}  # RUN line -> its stage is pinned to a platform
    stage_pinned = False
    for instr in df.instructions:
        if instr.keyword == "FROM":
            stage_pinned = instr.image is not None and instr.image.platform is not None
        elif instr.keyword == "RUN":
            pinned[instr.line] = stage_pinned or bool(_ARCH_AWARE.search(instr.args))
    for step in steps(df):
        if pinned.get(step.instr.line, True) or (step.cmd.argv[:1] and step.cmd.argv[0] in _NOT_INSTALLING):
            continue
        for word in step.cmd.words:
            text = word.unquoted.split("?", 1)[0]
            if "$" in text:
                continue
            name = text.rsplit("/", 1)[-1]
            m = _ARCH_FILE.search(name)
            if m:
                out.append(ArchFile(_ARCH_WORDS[m.group(1)], name, word.line))
    return out


# -- a pinned commit the change moves in some places and not in others ------------------------------------------

_SHA = lazyre.compile(r"(?<![0-9a-fA-F])[0-9a-f]{12,40}(?![0-9a-fA-F])")


@dataclass(frozen=True)
class Moved:
    """A commit pin the change replaced (`old` -> `new`) on some lines, while other lines at head keep `old`."""

    old: str
    new: str
    moved: tuple[tuple[str, int], ...]  # added lines at head that hold `new` where `old` was
    kept: tuple[tuple[str, int], ...]  # untouched lines at head that still hold `old`


def moved_commits(ctx: Context, kinds: frozenset[str]) -> list[Moved]:
    """Commit pins (hex shas of 12+ digits) that the change replaced in some files of `kinds` and left in
    others: for each changed file, a sha its base text holds and its head text does not, paired with the one
    new sha of the same length the change added to that file; then every other line at head (files of `kinds`,
    lines the change did not add) that still holds the old one. Empty in an audit."""
    if ctx.audit:
        return []

    def collect() -> list[Moved]:
        pairs: dict[tuple[str, str], list[tuple[str, int]]] = {}
        for path in sorted(_changed(ctx)):
            if not any(ctx.has_kind(path, k) for k in kinds):
                continue
            head, base = ctx.source(path), ctx.source(path, "base")
            if head is None or base is None:
                continue
            old = set(_SHA.findall(base.text)) - set(_SHA.findall(head.text))
            if not old:
                continue
            added = ctx.added_lines(path)
            new_at: dict[str, list[int]] = {}
            for n in sorted(added):
                for sha in _SHA.findall(head.line(n)):
                    if sha not in base.text:
                        new_at.setdefault(sha, []).append(n)
            for o in old:
                # The same component: the new pin written where the old one was (`actions/setup-python@<sha>`,
                # `ARG VLLM_COMMIT=<sha>`, `git checkout <sha>`), not another action's pin the change also wrote.
                shapes = {_shape(line, o) for line in base.lines if o in line}
                if any(prev.endswith("uses:") for prev, _ in shapes):
                    continue  # an action's pin (`uses: owner/action@<sha>`): CI's tooling, bumped workflow by workflow
                same = [s for s in new_at if len(s) == len(o) and shapes & {_shape(head.line(n), s) for n in new_at[s]}]
                if len(same) == 1:
                    pairs.setdefault((o, same[0]), []).extend((path, n) for n in new_at[same[0]])
        out: list[Moved] = []
        for (o, new), moved in sorted(pairs.items()):
            kept = [
                (p, n)
                for p in ctx.head_paths()
                if any(ctx.has_kind(p, k) for k in kinds)
                for n in _lines_with(ctx, p, o)
                if not ctx.is_added_line(p, n)
            ]
            if kept:
                out.append(Moved(o, new, tuple(moved), tuple(kept)))
        return out

    return ctx.memo(("moved-commits", "head", ",".join(sorted(kinds))), collect)


def _shape(line: str, sha: str) -> tuple[str, str]:
    """What a pin's line says around it: the word before the sha's word and that word with the sha left out
    (`("uses:", "actions/setup-python@")`, `("ARG", "VLLM_COMMIT=")`, `("checkout", "")`)."""
    before = line[: line.find(sha)]
    words = before.split()
    if before and not before[-1].isspace():  # the sha ends a word (`actions/setup-python@<sha>`)
        return (words[-2] if len(words) > 1 else ""), words[-1]
    return (words[-1] if words else ""), ""


def _changed(ctx: Context) -> list[str]:
    return [p for p, c in ctx.changeset.changes.items() if c.status != ChangeStatus.DELETED]


def _lines_with(ctx: Context, path: str, sha: str) -> list[int]:
    src = ctx.source(path)
    if src is None or sha not in src.text:
        return []
    return [n for n, line in enumerate(src.lines, 1) if sha in line and not line.lstrip().startswith("#")]
