"""NPU307: torch_npu built for another CANN than the image's, or torch / torch_npu / torchvision pins that disagree."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from npu_review.checks.analysis.change import adds_text
from npu_review.checks.analysis.installs import SELF_PATHS
from npu_review.checks.analysis.stacks import (
    Cann,
    Pin,
    Tables,
    cann_at,
    cann_versions,
    generation,
    image_installs,
    image_pins,
    installed_pins,
    installs_torch_npu,
    job_cann,
    job_pins,
    nearest,
    pins,
    tables,
    torch_npu_base,
)
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.facts import Facts
from npu_review.checks.kinds import ASCEND_DOCKERFILE, ASCEND_WORKFLOW, REQUIREMENTS
from npu_review.checks.model import Severity
from npu_review.checks.parsers.dockerfile import Dockerfile
from npu_review.checks.parsers.pep440 import public_version, version_key
from npu_review.checks.rule import Hit, Rule

if TYPE_CHECKING:
    from npu_review.checks.parsers.gha.workflow import Job, Workflow


class CannTorchNpuIncompatible(Rule):
    """torch_npu is built for another CANN than the image's, or torch, torch_npu and torchvision pins disagree.

    Why: each torch_npu release is built against one CANN generation (the Ascend/pytorch compatibility table;
    the `.postN` suffix encodes it: on CANN 8.5.0 torch 2.7.1 is `torch_npu==2.7.1.post2`, on 8.3.RC1 it is
    `2.7.1`), and Ascend's table says which to use together. A torch_npu of a torch line the image's CANN has no
    release of (torch_npu 2.9.0 on CANN 8.3.RC1) is built on operators that CANN lacks: an error. A later build of
    a line the CANN does have (`2.7.1.post2` on 8.3.RC1) is not the tested pairing, but torch_npu itself only
    warns at import and projects ship such images (verl's sglang images on 8.3.rc1, MindSpeed-MM's
    `2.7.1.post8` on CANN 9.0.0): a warning, naming the build the table gives. An *older* pairing usually runs
    (verl's images shipped torch_npu 2.5.1 on CANN 8.2.rc1 and 2.8.0 on 8.5.0 for months) but is not the tested
    one: a notice only, never an inline comment by default. torch_npu must also match the torch version it
    extends, and torchvision must be the release paired with torch (2.7.1 with 0.22.1, …), else pip replaces
    torch to satisfy torchvision.

    The releases are facts read from Ascend/pytorch (`torch_npu_releases`: its compatibility table, and the
    version.txt of its release tags and branches), so a `post` build the table does not list is judged by the
    release that published it (2.9.0.post4 is TorchNPU 26.0.1's, for CANN 9.0.0). A release candidate of the
    adapter (`2.6.0rc1`) extends the final torch 2.6.0 and is not a mismatch; which CANN it was built for, like
    that of a build newer than the data or of a `.devN` nightly (built before its release, on the CANN of its
    day), is unknown: not judged.

    The CANN version is read from the `…/cann:<version>-…` FROM tag (ARG defaults substituted: `ARG
    BASE_IMAGE=…` + `FROM ${BASE_IMAGE}`) and from CANN toolkit `.run` installers run later
    (`Ascend-cann-toolkit_8.5.2_linux-…run --install`); pins from `pip install torch==…`, `torch_npu==…`,
    `torchvision==…` (`+cpu` builds included, a version from an ARG or ENV of the stage pointed at where it
    is set) and torch_npu wheel names.

    Where the image gets torch_npu from requirements instead, the version stated there is judged against the
    same image's CANN: a requirements file COPY'd into the image and `pip install -r`'d, the repository's own
    project COPY'd and `pip install`'d (the static `[project] dependencies` of its pyproject.toml, or the
    requirements.txt its setup.py reads), or vllm-ascend cloned at a release tag (its requirements are
    facts). Only when no pip step names torch_npu itself, and never from a release branch (it moves on
    after its tag), a dynamic dependency list or a checkout by sha: unknown stays silent. A change to such a
    requirement line is reported on that line, against the unchanged Dockerfile that installs it.

    A CI job is one environment too: a workflow job whose `container:` image is a CANN image (every matrix
    leg resolving to the same version) is checked against the torch_npu its `run:` steps pin, or else the
    one the repository's own requirements state when a step installs them in the checkout (`pip install -e
    .`, `pip install -r requirements.txt`; not when the checkout is moved or a working directory is set).
    Versions the tables do not list are not judged. A pairing the project already ships is a notice: the
    change that writes the pin or the CANN it meets (the base image, the job's container) gets the error, an
    audit and a change elsewhere in the file get a notice (a pairing shipped for months ran).

    Bad (on `FROM .../cann:8.3.rc1-910b-ubuntu22.04-py3.11`):
        pip install torch==2.9.0 torch_npu==2.9.0 torchvision==0.24.0     # error: no torch 2.9 for 8.3.RC1
        pip install torch==2.7.1 torch_npu==2.7.1.post2 torchvision==0.22.1  # warning: the 8.5.0 build

    Good:
        pip install torch==2.7.1 torch_npu==2.7.1 torchvision==0.22.1

    Fix: pin the torch_npu listed for the image's CANN (the suggestion replaces the version), or move the
    image to the CANN the torch_npu was built for; pin the torchvision paired with torch.
    """

    id = "NPU307"
    name = "cann-torch-npu-incompatible"
    severity = Severity.ERROR
    title = "torch_npu / CANN / torch / torchvision versions do not belong together"
    kinds = frozenset({ASCEND_DOCKERFILE, ASCEND_WORKFLOW})
    # The requirements a Dockerfile installs are read with it; a change to them is checked against the
    # Dockerfiles that install them.
    context_kinds = frozenset({ASCEND_DOCKERFILE, REQUIREMENTS})

    def check_job(self, job: Job, wf: Workflow, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        """A job that runs in a CANN container and installs torch_npu in its steps (a pin, or the repository's
        own requirements): the two are used together."""
        if ASCEND_WORKFLOW not in src.kinds:
            return
        cann = job_cann(wf, job)
        if cann is None:
            return
        t = tables(ctx)
        for pin in job_pins(ctx, job):
            for hit in self._torch_npu(src, pin, [], cann, t):
                yield hit.unless_introduced(ctx, [(src.path, cann.line)])

    def check_dockerfile(self, df: Dockerfile, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if ASCEND_DOCKERFILE not in src.kinds:
            return
        stated = [c.line for c in cann_versions(df)]
        for hit in self._pairs(df, src, ctx):
            # A pairing the project already ships is a notice: only the change that writes the pin or the CANN it
            # meets introduces it (a pairing shipped for months ran, whatever the table says).
            yield hit.unless_introduced(ctx, [(src.path, n) for n in stated])

    def _pairs(self, df: Dockerfile, src: SourceFile, ctx: Context) -> Iterator[Hit]:
        found = image_pins(ctx, src)
        derived: list[Pin] = []
        if not any(p.package == "torch-npu" for p in found) and not installs_torch_npu(df):
            derived = installed_pins(image_installs(ctx, src))
        if not found and not derived:
            return
        t = tables(ctx)
        canns = cann_versions(df)
        for pin in found:
            if pin.package == "torch-npu":
                yield from self._torch_npu(src, pin, found, cann_at(canns, pin.index), t)
            elif pin.package == "torchvision":
                yield from self._torchvision(src, pin, found, t)
        for pin in derived:
            yield from self._torch_npu(src, pin, [], cann_at(canns, pin.index), t)

    def check_project(self, ctx: Context) -> Iterable[Hit]:
        """A change to the repository's requirements that an unchanged Dockerfile installs: reported on the
        changed requirement line (check_file reports on the Dockerfiles the change touches)."""
        # A finding here is on an added line that states torch-npu (`torch_npu`, `Torch-NPU`, ...): a change that
        # adds none needs no Dockerfile read.
        if ctx.audit or not adds_text(ctx, "torch"):
            return
        t: Tables | None = None
        for path in ctx.paths_of_kind(ASCEND_DOCKERFILE):
            if ctx.touched(path):
                continue
            src = ctx.source(path)
            if src is None:
                continue
            df = ctx.dockerfile(src)
            if any(p.package == "torch-npu" for p in pins(df)) or installs_torch_npu(df):
                continue
            for inst in image_installs(ctx, src):
                stated = inst.stated.get("torch-npu")
                if stated is None or not ctx.is_added_line(*stated):
                    continue
                t = t or tables(ctx)
                canns = cann_versions(df)
                for pin in installed_pins([inst]):
                    for hit in self._torch_npu(src, pin, [], cann_at(canns, pin.index), t):
                        yield Hit(
                            stated[0],
                            stated[1],
                            f"{path} line {hit.line}: {hit.message}",
                            severity=hit.severity,
                            caused_by_change=False,
                        )

    @classmethod
    def context_paths(cls, facts: Facts) -> tuple[str, ...]:
        return SELF_PATHS

    def _torch_npu(self, src: SourceFile, pin: Pin, found: list[Pin], cann: Cann | None, t: Tables) -> Iterator[Hit]:
        # The torch the adapter extends: a release candidate `2.6.0rc1` is the adapter's, for the final torch 2.6.0.
        base = t.rel.torch_of(pin.version) or torch_npu_base(pin.version)
        torch = nearest(found, "torch", pin)
        subject = f"torch_npu {pin.version}"
        if pin.via is not None:
            subject = f"{pin.via} installs torch_npu {pin.version}{pin.stated}, which"
        if torch is not None and version_key(public_version(torch.version)) != version_key(base):
            yield Hit(
                src.path,
                pin.line,
                f"torch_npu {pin.version} extends torch {base}, but line {torch.line} installs torch "
                f"{torch.version}: pin the torch_npu built for torch {public_version(torch.version)}.",
                severity=Severity.WARNING,
            )
        if cann is None:
            return
        built = t.built_for(pin.version)
        assert cann.version is not None
        built_gen, have_gen = (generation(built) if built else None), generation(cann.version)
        if built is None or built_gen is None or have_gen is None or built_gen == have_gen:
            return
        fit = t.rel.for_cann(cann.version, base)
        suggestion = None
        fix = ""
        if fit:
            fix = f" For CANN {cann.version} and torch {base}, use torch_npu {fit[0]}."
            line = src.line(pin.line)
            if pin.old is not None and line.count(pin.old) == 1:
                suggestion = line.replace(pin.old, pin.old.replace(pin.version, fit[0]))
        where = f"the {cann.how} (line {cann.line})"
        if built_gen > have_gen and fit:
            # A later build of a torch line this CANN has a release of: Ascend's table pairs another build, and
            # torch_npu only warns at import; operators newer than the image's CANN fail when called.
            yield Hit(
                src.path,
                pin.line,
                f"{subject} is built for CANN {built}, newer than CANN {cann.version} of {where}: not a pairing "
                f"Ascend tests (torch_npu warns at import, and an operator this CANN lacks fails when called).{fix}",
                suggestion=suggestion,
                severity=Severity.WARNING,
            )
        elif built_gen > have_gen:
            yield Hit(
                src.path,
                pin.line,
                f"{subject} is built for CANN {built}, newer than CANN {cann.version} of {where}, which has no "
                f"torch_npu for torch {base}: it needs operators this CANN does not have.{fix}",
                suggestion=suggestion,
            )
        else:
            yield Hit(
                src.path,
                pin.line,
                f"{subject} is built for CANN {built}, older than CANN {cann.version} of {where}: "
                f"an older pairing that usually runs, but not the one Ascend tests for this CANN.{fix}",
                suggestion=suggestion,
                severity=Severity.NOTICE,
            )

    def _torchvision(self, src: SourceFile, pin: Pin, found: list[Pin], t: Tables) -> Iterator[Hit]:
        torch = nearest(found, "torch", pin)
        if torch is None:
            return
        want = t.vision.get(public_version(torch.version))
        if want is None or version_key(public_version(pin.version)) == version_key(want):
            return
        yield Hit(
            src.path,
            pin.line,
            f"torchvision {pin.version} does not belong to torch {torch.version} (line {torch.line}), whose "
            f"torchvision is {want}: pip replaces torch with the one this torchvision requires.",
            severity=Severity.WARNING,
        )
