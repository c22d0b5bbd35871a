"""NPU308: torch / torch_npu / torchvision pins that a later install re-resolves to other versions."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from npu_review.checks.analysis.installs import SELF_PATHS, Install
from npu_review.checks.analysis.stacks import (
    TORCH_FAMILY,
    Pin,
    Tables,
    cann_at,
    cann_versions,
    image_installs,
    image_pins,
    installed_pins,
    tables,
    torch_npu_build,
)
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.facts import Facts
from npu_review.checks.kinds import ASCEND_DOCKERFILE, DOCS, MARKUP, REQUIREMENTS
from npu_review.checks.model import Related, Severity
from npu_review.checks.parsers.dockerfile import Dockerfile
from npu_review.checks.parsers.pep440 import public_version, spec_allows, version_key
from npu_review.checks.rule import Hit, Rule


class TorchPinOverwritten(Rule):
    """A later install re-resolves torch, torch_npu or torchvision to other versions than the ones pinned.

    Why: pip keeps an installed package only while it satisfies every later requirement. When a step pins
    `torch==X torch_npu==X` and a later step (in the same RUN or a later one) installs a project with its
    dependencies (`pip install -e vllm-ascend` or `pip install -r requirements.txt` in vllm-ascend, `pip install
    -r requirements-npu.txt`, vllm's or sglang's own requirements), pip silently replaces the pins with what
    that project asks for. A torch pin without a torchvision pin is the classic case: the later install pulls
    the newest torchvision, which requires a newer torch (verl #4142/#4143: torchvision==0.20.1 in
    requirements-npu.txt downgraded torch 2.7.1 on the 8.3.rc1 image).

    The requirements of vllm-ascend releases are known data (the facts' `vllm_ascend_requirements`), and
    requirements-npu.txt is read from the repository: a pin they satisfy is not reported. The install is one
    resolution: a `torch==X` it requires constrains the torchvision it picks, so an unpinned torchvision next
    to a torch pin is only reported when the chosen torchvision needs another torch. Installs with `--no-deps`
    do not resolve dependencies, and a pin repeated after the install restores it.

    An Ascend install guide is read the same way, its commands in order: a guide that pins torch, torch_npu or
    torchvision and then runs `pip install -r` of a requirements file of this repository, in the same part of
    the guide, whose pins move them (a recipe's README installing torch_npu 2.1.0.post13 and then its
    `requirements.txt` with 2.1.0.post12) leaves the reader on the file's versions: the guide and the file
    disagree on the recipe's stack. A `pip install -r` before the pins, or in another section (another way to
    install), is left alone, and so is a file whose path depends on where the reader stands.

    Silent when the install's requirements are not known (vllm-ascend checked out at a commit sha, vllm,
    sglang: nothing to read them from here), and when the install moves torch_npu to the version the
    compatibility table lists for the image's CANN (that re-resolution is a fix, not a mistake). When the
    install needs other versions than the pins, the advice is to pin what it needs (or `--no-deps`), never to
    install the pins after it, which would break that install.

    Bad:
        # docker/ascend/Dockerfile.ascend_8.3.rc1_a2
        RUN pip install torch==2.7.1 torch_npu==2.7.1 && \\
            pip install -r requirements-npu.txt
        # requirements-npu.txt
        torchvision==0.20.1          # built for torch 2.5.1: pip replaces torch 2.7.1

    Good:
        # docker/ascend/Dockerfile.ascend_8.3.rc1_a2
        RUN pip install torch==2.7.1 torch_npu==2.7.1 torchvision==0.22.1 && \\
            pip install -r requirements-npu.txt
        # requirements-npu.txt
        torchvision==0.22.1

    Fix: pin torchvision together with torch, install the pins after the step that re-resolves them, or
    install that step with `--no-deps`.
    """

    id = "NPU308"
    name = "torch-pin-overwritten"
    severity = Severity.WARNING
    title = "torch / torch_npu pins re-resolved by a later install"
    kinds = frozenset({ASCEND_DOCKERFILE, DOCS, MARKUP})
    # requirements-npu.txt is read even when the change does not touch it.
    context_kinds = frozenset({REQUIREMENTS})

    @classmethod
    def context_paths(cls, facts: Facts) -> tuple[str, ...]:
        return SELF_PATHS

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if src.kinds & {DOCS, MARKUP} and not src.kinds & {ASCEND_DOCKERFILE} and "torch" in src.text:
            yield from _guide(src, ctx)

    def check_dockerfile(self, df: Dockerfile, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        later = image_installs(ctx, src)
        if not later:
            return
        written = image_pins(ctx, src)
        # The torch and torch_npu an earlier install brings at versions its requirements state (vllm-ascend at a
        # release) are pins too: a later install that moves them undoes that install's pairing.
        derived = [
            p
            for p in installed_pins(later, ("torch", "torch-npu"))
            if not any(w.package == p.package and w.index >= p.index for w in written)
        ]
        found = sorted([*written, *derived], key=lambda p: p.index)
        if not found:
            return
        # A torchvision an earlier install pins through its requirements (`-r requirements-npu.txt` with
        # `torchvision==0.22.1`) is installed when a later install's `torchvision>=0.19` is resolved: pip keeps it.
        visions = [p.index for p in installed_pins(later, ("torchvision",))]
        t = tables(ctx)
        canns = cann_versions(df)
        by_step: dict[int, list[Pin]] = {}
        for pin in found:
            by_step.setdefault(pin.index, []).append(pin)
        for index, group in sorted(by_step.items()):
            for inst in later:
                if inst.index <= index:
                    continue
                alive = [p for p in group if not any(q.package == p.package and q.index > inst.index for q in found)]
                if not alive:
                    continue
                cann = cann_at(canns, inst.index)
                vision_before = any(i < inst.index for i in visions)
                problems = _problems(alive, inst, found, t, cann.version if cann is not None else None, vision_before)
                if not problems:
                    continue
                first = alive[0]
                shown = " ".join(f"{p.package}=={p.version}" for p in alive)
                where = f"line {first.line}" if first.via is None else f"line {first.line}, from {first.via}"
                texts = [text for text, _ in problems]
                if all(kind == "vision-pin" for _, kind in problems):
                    advice = (
                        "Change that torchvision requirement to the one of the pinned torch, or install that step "
                        "with `--no-deps`."
                    )
                elif any(kind == "needs" for _, kind in problems):
                    # The later install needs other versions: pinning after it would break that install.
                    advice = (
                        "Install that step with `--no-deps` to keep the pins, or pin what it requires if that is "
                        "the right pairing for this CANN; installing the pins after it would break it."
                    )
                else:
                    advice = "Pin torchvision with torch, install the pins after that step, or run it with `--no-deps`."
                message = (
                    f"The pins `{shown}` ({where}) come before {inst.what} on line {inst.line}, which "
                    f"resolves its own requirements: {'; '.join(texts)}. {advice}"
                )
                line = first.line
                if first.via is not None or (
                    not ctx.is_added_line(src.path, line) and ctx.is_added_line(src.path, inst.line)
                ):
                    # Pins an earlier install brings are not written here: the install that moves them is where
                    # the fix goes (its requirement, or `--no-deps`).
                    line = inst.line
                other = inst.line if line == first.line else first.line
                yield Hit(src.path, line, message, related=(Related(src.path, other, ""),))
                break  # one finding per pin step: the first install that undoes it


def _problems(
    alive: list[Pin], inst: Install, found: list[Pin], t: Tables, cann: str | None, vision_before: bool = False
) -> list[tuple[str, str]]:
    """What the install does to the pins: (text, kind), kind "needs" (it requires other versions) or "vision"
    (an unpinned torchvision drags torch along). Empty when the pins survive or the result is the right one."""
    if inst.specs is None:
        return []  # requirements not known (a checkout by sha, vllm/sglang): stay silent rather than guess
    out: list[tuple[str, str]] = []
    for pin in alive:
        spec = inst.specs.get(pin.package)
        if not spec or spec_allows(spec, pin.version) is not False:
            continue
        want = ",".join(op + v for op, v in spec)
        exact = next((v for op, v in spec if op == "=="), None)
        if pin.package == "torch-npu" and exact is not None and cann is not None and _listed_for(t, cann, exact):
            continue  # it lands on the torch_npu the compatibility table lists for this CANN: a fix
        out.append((f"it requires {pin.package}{want}, which replaces {pin.version}", "needs"))
    torch = next((p for p in alive if p.package == "torch"), None)
    tv_spec = inst.specs.get("torchvision")
    tv_before = vision_before or any(p.package == "torchvision" and p.index < inst.index for p in found)
    if torch is not None and tv_spec is not None and not tv_before:
        torch_spec = inst.specs.get("torch")
        # One resolution: torchvision is chosen together with the torch this install allows.
        fits = [
            (tv_torch, tv)
            for tv_torch, tv in t.vision.items()
            if spec_allows(tv_spec, tv) and (not torch_spec or spec_allows(torch_spec, tv_torch) is not False)
        ]
        if fits:
            needs, chosen = max(fits, key=lambda pair: version_key(pair[1]) or ())
            if version_key(needs) != version_key(public_version(torch.version)):
                own = next((v for op, v in tv_spec if op == "=="), None)
                if own is not None:
                    # The install pins torchvision itself: the pin to change is that requirement.
                    fit = t.vision.get(public_version(torch.version))
                    instead = f"; torch {torch.version}'s is {fit}" if fit else ""
                    out.append(
                        (
                            f"it pins torchvision {own}, built for torch {needs}, which replaces torch "
                            f"{torch.version}{instead}",
                            "vision-pin",
                        )
                    )
                else:
                    which = f"torchvision {chosen}" if tv_spec else f"the newest torchvision ({chosen} or later)"
                    out.append(
                        (
                            f"torchvision is not pinned, so it installs {which}, built for torch {needs}, which "
                            f"replaces torch {torch.version}",
                            "vision",
                        )
                    )
    return out


def _listed_for(t: Tables, cann: str, torch_npu: str) -> bool:
    entry = t.for_generation(cann)
    return entry is not None and torch_npu_build(torch_npu) in t.cann.get(entry, [])


def _guide(src: SourceFile, ctx: Context) -> Iterator[Hit]:
    """An install guide's torch-family pins, then a `pip install -r` of a requirements file of this repository (in
    the same part of the guide) that pins another version: the reader who follows the guide ends on the file's
    versions, and the guide and the file disagree on the recipe's stack."""
    from npu_review.checks.analysis.guides import guide_stack
    from npu_review.checks.analysis.installs import stated_requirements
    from npu_review.checks.analysis.references import ascend_command_refs, exists

    guide = guide_stack(ctx, src)
    if guide is None:
        return
    said = [c for c in guide.commands if c.component in TORCH_FAMILY and not c.commented]
    if not said:
        return
    reqs = [r for r in ascend_command_refs(ctx, src) if r.how == "requirements"]
    if not reqs:
        return
    doc = ctx.document(src)
    if doc is None:
        return
    found = [Pin(c.component, c.shown, c.line, c.line, None) for c in said]
    t = tables(ctx)
    for ref in sorted(reqs, key=lambda r: r.command_line):
        there = [p for p in ref.candidates if exists(ctx, p)]
        if len(there) != 1:
            continue  # not in the repository, or which file is meant depends on where the reader stands
        stated = stated_requirements(ctx, there[0])
        if not stated:
            continue
        inst = Install(
            ref.command_line,
            ref.command_line,
            f"`pip install -r {ref.text}`",
            "repo",
            {k: v for k, (v, _n) in stated.items()},
            stated={k: (there[0], n) for k, (_v, n) in stated.items()},
            fixed=True,
        )
        part = doc.section(inst.line)
        before = [p for p in found if p.index < inst.index and _same_part(doc.section(p.line), part)]
        alive = [p for p in before if not any(q.package == p.package and inst.index < q.index for q in found)]
        if not alive:
            continue
        vision_before = any(p.package == "torchvision" for p in before)
        problems = _problems(alive, inst, found, t, None, vision_before)
        if not problems:
            continue
        # The pins the file moves (and torch, when its torchvision drags torch along), where the file says so.
        vision = any(kind.startswith("vision") for _, kind in problems)
        moved = [
            p
            for p in alive
            if (vision and p.package == "torch")
            or (spec_allows(inst.specs.get(p.package) or (), p.version) is False if inst.specs else False)
        ] or alive
        first = moved[0]
        shown = " ".join(f"{p.package}=={p.version}" for p in moved)
        packages = {p.package for p in moved if not (vision and p.package == "torch")} | (
            {"torchvision"} if vision else set()
        )
        lines = sorted({inst.stated[k][1] for k in packages if k in inst.stated})
        at = f"`{there[0]}` (line {', '.join(map(str, lines))})" if lines else f"`{there[0]}`"
        message = (
            f"This guide installs `{shown}` (line {first.line}), then {inst.what} on line {inst.line}, and {at} "
            f"pins other versions: {'; '.join(text for text, _ in problems)}. A reader who follows the guide ends "
            "on the file's versions: make the guide and the file agree on one stack."
        )
        line = first.line
        if not ctx.is_added_line(src.path, line) and ctx.is_added_line(src.path, inst.line):
            line = inst.line
        other = inst.line if line == first.line else first.line
        yield Hit(src.path, line, message, related=(Related(src.path, other, ""),))
        return  # one finding per guide: the first install that undoes its pins


def _same_part(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Two places of a guide are in the same part: one's headings are the start of the other's."""
    n = min(len(a), len(b))
    return a[:n] == b[:n]
