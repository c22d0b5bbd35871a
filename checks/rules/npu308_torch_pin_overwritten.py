"""NPU308: torch / torch_npu / torchvision pins that a later install re-resolves to other versions."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from checks.context import Context, SourceFile
from checks.kinds import ASCEND_DOCKERFILE, REQUIREMENTS
from checks.model import Severity
from checks.parsers.dockerfile import Dockerfile, parse, resolve_dir, steps
from checks.parsers.gitcli import Clone, GitCall, clone_of, git_call
from checks.parsers.pep440 import public_version, spec_allows, version_key
from checks.parsers.pipcli import PipCall, pip_call
from checks.parsers.requirements import parse_requirement, parse_requirements_file
from checks.rule import Hit, Rule
from checks.rules.npu307_cann_torch_npu_incompatible import (
    Pin,
    Tables,
    cann_at,
    cann_versions,
    pins,
    tables,
    torch_npu_build,
)

Specs = tuple[tuple[str, str], ...]
_REF_VERSION = re.compile(r"(?:^|[/_-]|\bv)v?(\d+\.\d+\.\d+(?:rc\d+)?)$")


@dataclass(frozen=True)
class Install:
    """A pip step that installs the requirements of a project or file (not only the packages it names)."""

    index: int  # Step.index
    line: int
    what: str  # for messages: "`pip install -r requirements.txt` of vllm-ascend v0.18.0"
    origin: str  # "vllm-ascend", "repo" (the repository's own requirements file), or a repository name
    specs: dict[str, Specs] | None  # normalised name -> specifiers; None: not known
    version: str | None = None  # vllm-ascend version when known


def ref_version(ref: str | None) -> str | None:
    """`releases/v0.18.0` -> `0.18.0`, `v0.11.0rc1` -> `0.11.0rc1`; None for a sha, a branch or nothing."""
    if not ref:
        return None
    m = _REF_VERSION.search(ref)
    return m.group(1) if m else None


def _specs_of(table: Mapping[str, str]) -> dict[str, Specs]:
    out: dict[str, Specs] = {}
    for name, spec in table.items():
        req = parse_requirement(f"{name}{spec or ''}")
        if req is not None:
            out[req.name] = req.specs
    return out


def vllm_ascend_specs(ctx: Context, version: str | None) -> dict[str, Specs] | None:
    if version is None:
        return None
    table = ctx.facts.vllm_ascend_requirements.versions.get(version)
    return _specs_of(table) if table is not None else None


def _repo_requirements(ctx: Context, name: str) -> dict[str, Specs] | None:
    src = ctx.source(name)
    if src is None:
        return None
    out: dict[str, Specs] = {}
    for _line, req in parse_requirements_file(src.text):
        out[req.name] = req.specs
    return out


def installs(df: Dockerfile, ctx: Context) -> list[Install]:
    """The steps that install a project's or a file's requirements, with those requirements when known."""
    return _Installs(ctx).walk(df)


class _Installs:
    """Follows clones, checkouts and exports through the RUN steps and classifies each pip install."""

    def __init__(self, ctx: Context) -> None:
        facts = ctx.facts
        self.ctx = ctx
        self.va_repos = {r.lower() for r in facts.vllm_ascend_requirements.repos}
        self.other_repos = {r.lower() for r in facts.torch_resolvers.repos}
        self.repo_files = set(facts.project.requirement_files)
        self.no_torch_env: dict[str, dict[str, str]] = {
            repo.lower(): dict(env) for repo, env in facts.torch_resolvers.no_torch_env.items()
        }
        self.clones: list[Clone] = []
        self.refs: dict[str, str] = {}  # clone path -> the ref checked out in it

    def clone_at(self, path: str | None, inside: bool) -> Clone | None:
        if path is None:
            return None
        for c in reversed(self.clones):
            if c.path == path or (inside and c.path is not None and path.startswith(c.path + "/")):
                return c
        return None

    def version_of(self, clone: Clone) -> str | None:
        return ref_version(self.refs.get(clone.path or "", clone.branch))

    def vllm_ascend(self, index: int, line: int, what: str, version: str | None) -> Install:
        label = f"vllm-ascend v{version}" if version else "vllm-ascend (version unknown)"
        return Install(index, line, f"{what} of {label}", "vllm-ascend", vllm_ascend_specs(self.ctx, version), version)

    def walk(self, df: Dockerfile) -> list[Install]:
        exported: dict[int, dict[str, str]] = {}  # RUN line -> variables exported so far in it
        out: list[Install] = []
        for step in steps(df):
            env = exported.setdefault(step.instr.line, {})
            argv = step.cmd.argv
            if argv and argv[0] == "export":
                for a in argv[1:]:
                    name, eq, value = a.partition("=")
                    if eq:
                        env[name] = value
            git = git_call(step.cmd)
            if git is not None:
                self._git(git, step.cwd)
                continue
            call = pip_call(step.cmd)
            if call is not None and call.verb == "install":
                local_env = {**env, **{name: value for name, value, _ in step.cmd.assignments()}}
                out.extend(self._pip(call, step.index, step.cwd, local_env))
        return out

    def _git(self, git: GitCall, cwd: str | None) -> None:
        clone = clone_of(git, cwd)
        if clone is not None and clone.path is not None:
            self.clones = [c for c in self.clones if c.path != clone.path] + [clone]
            self.refs.pop(clone.path, None)
        elif git.sub in ("checkout", "switch"):
            where = resolve_dir(cwd, git.directory) if git.directory else cwd
            ref = next((w.unquoted for w in git.args if not w.unquoted.startswith("-")), None)
            if where is not None and ref is not None:
                self.refs[where] = ref

    def _pip(self, call: PipCall, index: int, cwd: str | None, env: dict[str, str]) -> Iterator[Install]:
        line = call.cmd.words[call.cmd.start].line
        for f in call.files:
            base = posixpath.basename(f.unquoted)
            if base in self.repo_files:
                specs = _repo_requirements(self.ctx, base)
                if specs is not None:
                    yield Install(index, f.line, f"`pip install -r {f.unquoted}`", "repo", specs)
                continue
            path = resolve_dir(cwd, f.unquoted)
            clone = self.clone_at(path, inside=True)
            if clone is None or clone.path is None or path is None:
                continue
            what = f"`pip install -r {f.unquoted}`"
            if clone.repo in self.va_repos and posixpath.relpath(path, clone.path) == "requirements.txt":
                yield self.vllm_ascend(index, f.line, what, self.version_of(clone))
            elif clone.repo in self.other_repos:
                yield Install(index, f.line, f"{what} of {clone.repo}", clone.repo, None)
        if call.no_deps:
            return  # the named projects come without their requirements
        for t in [*call.editables, *(w for w in call.others if _is_path(w.unquoted))]:
            clone = self.clone_at(resolve_dir(cwd, re.sub(r"\[[^\]]*\]$", "", t.unquoted)), inside=False)
            if clone is None:
                continue
            what = f"`pip install {_show(call, t.unquoted)}`"
            if clone.repo in self.va_repos:
                yield self.vllm_ascend(index, line, what, self.version_of(clone))
            elif clone.repo in self.other_repos:
                quiet = self.no_torch_env.get(clone.repo)
                if quiet and all(env.get(k) == v for k, v in quiet.items()):
                    continue  # e.g. VLLM_TARGET_DEVICE=empty: no torch requirement
                yield Install(index, line, f"{what} of {clone.repo}", clone.repo, None)
        for req, word in call.packages:
            if req.name in self.va_repos:
                yield self.vllm_ascend(index, word.line, f"`pip install {word.unquoted}`", req.pinned)


def _is_path(text: str) -> bool:
    return text.startswith((".", "/")) or ("/" in text and "://" not in text and not text.endswith(".whl"))


def _show(call: PipCall, target: str) -> str:
    editable = any(w.unquoted == target for w in call.editables)
    return f"-e {target}" if editable else target


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

    Silent when the install's requirements are not known (vllm-ascend checked out at a commit sha, vllm,
    sglang: nothing to read them from here), and when the install moves torch_npu to the version the
    compatibility table lists for the image's CANN (that re-resolution is a fix, not a mistake). When the
    install needs other versions than the pins, the advice is to pin what it needs (or `--no-deps`), never to
    install the pins after it, which would break that install.

    Bad:
        pip install torch==2.7.1 torch_npu==2.7.1 && \\
        cd vllm-ascend && pip install -v -e . && cd ..        # v0.11.0 pulls the newest torchvision

    Good:
        pip install torch==2.7.1 torch_npu==2.7.1 torchvision==0.22.1 && \\
        cd vllm-ascend && pip install -v -e . && cd ..

    Fix: pin torchvision together with torch, install the pins after the step that re-resolves them, or
    install that step with `--no-deps`.
    """

    id = "NPU308"
    name = "torch-pin-overwritten"
    severity = Severity.WARNING
    title = "torch / torch_npu pins re-resolved by a later install"
    kinds = frozenset({ASCEND_DOCKERFILE})
    # requirements-npu.txt is read even when the change does not touch it.
    context_kinds = frozenset({REQUIREMENTS})

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        df = ctx.parsed("dockerfile", src, parse)
        found = ctx.memo(("npu3xx-pins", "head", src.path), lambda: pins(df))
        if not found:
            return
        later = ctx.memo(("npu3xx-installs", "head", src.path), lambda: installs(df, ctx))
        if not later:
            return
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
                problems = _problems(alive, inst, found, t, cann.version if cann is not None else None)
                if not problems:
                    continue
                first = alive[0]
                shown = " ".join(f"{p.package}=={p.version}" for p in alive)
                texts = [text for text, _ in problems]
                if any(kind == "needs" for _, kind in problems):
                    # The later install needs other versions: pinning after it would break that install.
                    advice = (
                        "Install that step with `--no-deps` to keep the pins, or pin what it requires if that is "
                        "the right pairing for this CANN; installing the pins after it would break it."
                    )
                else:
                    advice = "Pin torchvision with torch, install the pins after that step, or run it with `--no-deps`."
                message = (
                    f"The pins `{shown}` (line {first.line}) come before {inst.what} on line {inst.line}, which "
                    f"resolves its own requirements: {'; '.join(texts)}. {advice}"
                )
                line = first.line
                if not ctx.is_added_line(src.path, line) and ctx.is_added_line(src.path, inst.line):
                    line = inst.line
                yield Hit(src.path, line, message)
                break  # one finding per pin step: the first install that undoes it


def _problems(alive: list[Pin], inst: Install, found: list[Pin], t: Tables, cann: str | None) -> list[tuple[str, str]]:
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
    tv_before = any(p.package == "torchvision" and p.index < inst.index for p in found)
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
