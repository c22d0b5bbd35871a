"""The pip steps of an image that install a project's or a file's requirements (not only the packages they name):
vllm-ascend at a known release, the repository's own files copied into the image, vllm or sglang clones."""

from __future__ import annotations

import posixpath
import re
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from npu_review.checks import lazyre
from npu_review.checks.context import Context
from npu_review.checks.parsers.gitcli import Clone, GitCall, clone_of, git_call
from npu_review.checks.parsers.requirements import parse_requirement, parse_requirements_file

if TYPE_CHECKING:
    from npu_review.checks.parsers.dockerfile import Copy, Dockerfile
    from npu_review.checks.parsers.pipcli import PipCall

Specs = tuple[tuple[str, str], ...]
_TAG = lazyre.compile(r"v?\d+\.\d+\.\d+(?:rc\d+)?")
_REF_VERSION = lazyre.compile(r"(?:^|[/_-]|\bv)v?(\d+\.\d+\.\d+(?:rc\d+)?)$")


@dataclass(frozen=True)
class Install:
    """A pip step that installs the requirements of a project or file (not only the packages it names)."""

    index: int  # Step.index
    line: int
    what: str  # for messages: "`pip install -r requirements.txt` of vllm-ascend v0.18.0"
    origin: str  # "vllm-ascend", "repo" (the repository's own requirements file), or a repository name
    specs: dict[str, Specs] | None  # normalised name -> specifiers; None: not known
    version: str | None = None  # vllm-ascend version when known
    # Where the repository states each requirement, for the repository's own files: name -> (path, line).
    stated: dict[str, tuple[str, int]] = field(default_factory=dict)
    # The requirements are those of one fixed revision: the repository's own files, a release tag or an
    # exact pin. A release *branch* (`releases/v0.18.0`) moves on after the tag the facts describe.
    fixed: bool = False


def tag_version(ref: str | None) -> str | None:
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
    stated = stated_requirements(ctx, name)
    return None if stated is None else {k: v for k, (v, _line) in stated.items()}


def stated_requirements(ctx: Context, path: str) -> dict[str, tuple[Specs, int]] | None:
    """A requirements file of the repository: name -> (specifiers, line); None when it is not there."""
    src = ctx.source(path)
    if src is None:
        return None
    return {req.name: (req.specs, line) for line, req in parse_requirements_file(src.text)}


# The files that say what `pip install <a project of this repository>` installs (at the root or one folder
# down; requirements files are of kind `requirements` anyway): what rules reading installs declare.
SELF_PATHS = ("pyproject.toml", "setup.py", "*/pyproject.toml", "*/setup.py")


def project_requirements(ctx: Context, folder: str) -> tuple[dict[str, tuple[Specs, int]], str] | None:
    """What `pip install <folder of this repository>` installs: the static `[project] dependencies` of its
    pyproject.toml, or the requirements.txt its setup.py reads. (requirements, the file they are read from);
    None when the folder holds no such project or its requirements are dynamic in another way (unknown)."""
    base = f"{folder}/" if folder else ""
    pyproject = ctx.source(base + "pyproject.toml")
    if pyproject is not None:
        try:
            data = tomllib.loads(pyproject.text)
        except (tomllib.TOMLDecodeError, UnicodeError):
            data = {}
        project = data.get("project")
        if isinstance(project, dict) and "dependencies" not in (project.get("dynamic") or ()):
            deps = project.get("dependencies")
            if isinstance(deps, list) and all(isinstance(d, str) for d in deps):
                out: dict[str, tuple[Specs, int]] = {}
                for dep in deps:
                    req = parse_requirement(dep)
                    if req is not None:
                        out[req.name] = (req.specs, _line_of(pyproject.lines, dep))
                return out, pyproject.path
    setup = ctx.source(base + "setup.py")
    if setup is not None and "requirements.txt" in setup.text:
        stated = stated_requirements(ctx, base + "requirements.txt")
        if stated is not None:
            return stated, base + "requirements.txt"
    return None


def _line_of(lines: list[str], text: str) -> int:
    """The 1-based line that holds `text` quoted (a pyproject dependency), 0 when not found."""
    for n, line in enumerate(lines, start=1):
        if f'"{text}"' in line or f"'{text}'" in line:
            return n
    return 0


def in_context(copied: list[Copy], stage: int, line: int, path: str | None) -> str | None:
    """The build-context path (the repository, when it is the context) that an absolute path of the image
    holds, through the COPY/ADD instructions of the stage before `line`; None when it holds none.
    `COPY . /w/x/` puts the repository's root at /w/x (""); `COPY requirements.txt /w/` puts that file at
    /w/requirements.txt."""
    if path is None:
        return None
    for c in reversed(copied):
        if c.stage != stage or c.line >= line:
            continue
        for source in c.sources:
            src = posixpath.normpath(source).lstrip("/")
            src = "" if src == "." else src
            target = posixpath.join(c.dest, posixpath.basename(src)) if c.into_dir and src else c.dest
            if path == target:
                return src
            if path.startswith(target.rstrip("/") + "/"):
                rest = path[len(target.rstrip("/")) + 1 :]
                return posixpath.join(src, rest) if src else rest
    return None


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
        self.copied: list[Copy] = []
        self.stage = 0  # of the step being walked
        self.line = 0  # its RUN line

    def copied_from(self, path: str | None) -> str | None:
        """The repository path a COPY put at this image path (see in_context)."""
        return in_context(self.copied, self.stage, self.line, path)

    def own(self, index: int, line: int, what: str, folder: str) -> Install | None:
        """`pip install <folder>` of the repository's own project copied into the image."""
        found = project_requirements(self.ctx, folder)
        if found is None:
            return None
        stated, path = found
        specs = {name: spec for name, (spec, _n) in stated.items()}
        where = {name: (path, n) for name, (_spec, n) in stated.items() if n}
        return Install(index, line, f"{what} of this repository", "repo", specs, stated=where, fixed=True)

    def clone_at(self, path: str | None, inside: bool) -> Clone | None:
        if path is None:
            return None
        for c in reversed(self.clones):
            if c.path == path or (inside and c.path is not None and path.startswith(c.path + "/")):
                return c
        return None

    def version_of(self, clone: Clone) -> str | None:
        return tag_version(self.refs.get(clone.path or "", clone.branch))

    def is_tag(self, clone: Clone) -> bool:
        ref = self.refs.get(clone.path or "", clone.branch)
        return ref is not None and _TAG.fullmatch(ref) is not None

    def vllm_ascend(self, index: int, line: int, what: str, version: str | None, fixed: bool) -> Install:
        label = f"vllm-ascend v{version}" if version else "vllm-ascend (version unknown)"
        specs = vllm_ascend_specs(self.ctx, version)
        return Install(index, line, f"{what} of {label}", "vllm-ascend", specs, version, fixed=fixed)

    def walk(self, df: Dockerfile) -> list[Install]:
        from npu_review.checks.parsers.dockerfile import copies, steps

        exported: dict[int, dict[str, str]] = {}  # RUN line -> variables exported so far in it
        out: list[Install] = []
        self.copied = copies(df)
        froms = [i.line for i in df.of("FROM")]
        for step in steps(df):
            self.stage = max(sum(1 for n in froms if n < step.instr.line) - 1, 0)
            self.line = step.instr.line
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
            call = step.pip
            if call is not None and call.verb == "install":
                local_env = {**env, **{name: value for name, value, _ in step.cmd.assignments()}}
                out.extend(self._pip(call, step.index, step.cwd, local_env))
        return out

    def _git(self, git: GitCall, cwd: str | None) -> None:
        from npu_review.checks.parsers.dockerfile import resolve_dir

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
        from npu_review.checks.parsers.dockerfile import resolve_dir

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
                copied = self.copied_from(path)
                stated = stated_requirements(self.ctx, copied) if copied else None
                if copied and stated is not None:
                    yield Install(
                        index,
                        f.line,
                        f"`pip install -r {f.unquoted}`",
                        "repo",
                        {name: spec for name, (spec, _n) in stated.items()},
                        stated={name: (copied, n) for name, (_spec, n) in stated.items()},
                        fixed=True,
                    )
                continue
            what = f"`pip install -r {f.unquoted}`"
            if clone.repo in self.va_repos and posixpath.relpath(path, clone.path) == "requirements.txt":
                yield self.vllm_ascend(index, f.line, what, self.version_of(clone), self.is_tag(clone))
            elif clone.repo in self.other_repos:
                yield Install(index, f.line, f"{what} of {clone.repo}", clone.repo, None)
        if call.no_deps:
            return  # the named projects come without their requirements
        targets = [*call.editables, *(w for w in call.others if _is_path(w.unquoted) or w.unquoted == ".")]
        for t in targets:
            where = resolve_dir(cwd, re.sub(r"\[[^\]]*\]$", "", t.unquoted))
            clone = self.clone_at(where, inside=False)
            what = f"`pip install {_show(call, t.unquoted)}`"
            if clone is None:
                folder = self.copied_from(where)
                own = self.own(index, line, what, folder) if folder is not None else None
                if own is not None:
                    yield own
                continue
            if clone.repo in self.va_repos:
                yield self.vllm_ascend(index, line, what, self.version_of(clone), self.is_tag(clone))
            elif clone.repo in self.other_repos:
                quiet = self.no_torch_env.get(clone.repo)
                if quiet and all(env.get(k) == v for k, v in quiet.items()):
                    continue  # e.g. VLLM_TARGET_DEVICE=empty: no torch requirement
                yield Install(index, line, f"{what} of {clone.repo}", clone.repo, None)
        for req, word in call.packages:
            if req.name in self.va_repos:
                yield self.vllm_ascend(index, word.line, f"`pip install {word.unquoted}`", req.pinned, True)


def _is_path(text: str) -> bool:
    return text.startswith((".", "/")) or ("/" in text and "://" not in text and not text.endswith(".whl"))


def _show(call: PipCall, target: str) -> str:
    editable = any(w.unquoted == target for w in call.editables)
    return f"-e {target}" if editable else target
