"""The Ascend stack of each environment: which CANN, torch, torch_npu and torchvision a Dockerfile stage or a CI
job runs with, each value with the line that states it (ARG defaults substituted, requirements an image installs
followed), and the compatibility tables they are judged by."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from npu_review.checks.analysis.installs import Install, installs, project_requirements
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.facts.releases import Releases, generation, parse_version, releases
from npu_review.checks.parsers.dockerfile import Dockerfile, build_args, expand, resolve_dir, steps
from npu_review.checks.parsers.gha.values import WILD
from npu_review.checks.parsers.gha.workflow import Job, Workflow, legs
from npu_review.checks.parsers.pep440 import public_version
from npu_review.checks.parsers.pipcli import PipCall, pip_call
from npu_review.checks.parsers.requirements import normalize_name, parse_requirement, parse_requirements_file
from npu_review.checks.parsers.sh import Source, Word, commands

TORCH_FAMILY = ("torch", "torch-npu", "torchvision")


_WHEEL = re.compile(r"(?:^|/)(torch_npu|torch-npu|torch|torchvision)-(\d+(?:\.\d+)+(?:\.post\d+)?(?:\.dev\d+)?)-")


_CANN_VERSION = re.compile(r"\d+\.\d+\.(?:\d+|rc\d+)", re.I)
# A CANN image tag: `<cann>-<device>-<os>-py3.N[-suffix]` (`8.3.rc2-910b-ubuntu22.04-py3.11`,
# `9.0.0-a3-openeuler24.03-py3.12`), the one grammar every rule reads CANN, device, OS and Python from.
CANN_TAG = re.compile(
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


_CANN_RUN = re.compile(r"Ascend-cann-toolkit_(\d+\.\d+\.(?:\d+|rc\d+))_linux", re.I)


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


_TORCH_NPU_WORD = re.compile(r"torch[-_]npu", re.I)


def image_installs(ctx: Context, src: SourceFile) -> list[Install]:
    """The steps of a Dockerfile (at head) that install a project's or a file's requirements, once per run."""
    return ctx.memo(("image-installs", "head", src.path), lambda: installs(ctx.dockerfile(src), ctx))


def image_pins(ctx: Context, src: SourceFile) -> list[Pin]:
    """The exact torch-family versions a Dockerfile (at head) installs, once per run."""
    return ctx.memo(("image-pins", "head", src.path), lambda: pins(ctx.dockerfile(src)))


def installs_torch_npu(df: Dockerfile) -> bool:
    """A pip step names torch_npu itself (unpinned, or a wheel whose version is unknown): the image's torch_npu
    may not be the one the requirements it installs state, so those are not judged."""
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
