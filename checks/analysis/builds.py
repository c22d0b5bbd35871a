"""The image/build graph of a revision: every image build (workflows, run blocks, shell scripts, install docs),
the Dockerfile each build uses and the ARGs it declares, what each build passes, and which images are pushed and
pulled (CI `container:`/`services:`, `docker run`/`docker pull`, Dockerfile `FROM`, docs).

It needs no project profile: references are read as written and evaluated (checks.parsers.gha.evaluate for run
blocks, scripts and docs' shell blocks; docker/metadata-action rules for the tags it gives), with reusable
workflows evaluated once per call (the caller's matrix leg and `with:` values as `inputs`). What cannot be
evaluated is unknown (WILD), and the rules stay silent on it.

    g = graph(ctx)                       # memoised per run and revision
    g.builds                             # Build: file, args passed, tags, push, where it is written
    g.builds_of("docker/Dockerfile")     # the builds that use it, and whether every build of it is known
    g.pulls, g.pushed                    # pulled references; pushed repositories with the tags they can get
    g.sequences                          # per job leg / script / doc: its docker commands in order (NPU220)
    dockerfile_args(ctx, path)           # ARGs a Dockerfile declares, with defaults, and those it needs
"""

from __future__ import annotations

import posixpath
import re
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from npu_review.checks import globs, kinds, lazyre
from npu_review.checks.analysis.workflows import workflow, workflow_paths
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.parsers.codeblocks import SHELL_LANGUAGES, Block, console_commands, shell_blocks
from npu_review.checks.parsers.gha.values import MAX_ALTERNATIVES, WILD, Val, wild_regex
from npu_review.checks.parsers.imagetags import ImageRef, parse_ref

if TYPE_CHECKING:
    from npu_review.checks.parsers import dockerfile as dfp
    from npu_review.checks.parsers.dockercli import BuildArg, DockerOp, EWord
    from npu_review.checks.parsers.gha.evaluate import Called, Unit
    from npu_review.checks.parsers.gha.metadata_action import Events, Produced
    from npu_review.checks.parsers.gha.workflow import Workflow
    from npu_review.checks.parsers.yamlmarks import Node

# What the graph reads: workflows, shell scripts, docs and Dockerfiles (a rule asking for it declares these).
GRAPH_KINDS = frozenset(
    {kinds.WORKFLOW, kinds.ASCEND_WORKFLOW, kinds.SHELL, kinds.DOCS, kinds.DOCKERFILE, kinds.ASCEND_DOCKERFILE}
)
# Files that build images in ways the graph does not evaluate: a Dockerfile named in one of them may have builds
# nobody knows the arguments of.
OTHER_BUILDERS = ("Makefile", "*.mk", "docker-compose*.yml", "docker-compose*.yaml", "compose*.yml", "compose*.yaml")
OTHER_BUILDER_GLOBS = tuple(f"**/{g}" for g in OTHER_BUILDERS) + OTHER_BUILDERS + ("**/*.hcl", "*.hcl")
# Shell scripts named as image scripts are: the graph reads these (a rule asking declares them in its
# context_paths) when it does not read every shell script (an NPU launch script builds no image).
IMAGE_SCRIPT_GLOBS = (
    *(
        f"{prefix}{name}"
        for prefix in ("", "**/")
        for name in ("*docker*.sh", "*image*.sh", "*build*.sh", "*push*.sh", "*release*.sh", "*publish*.sh")
    ),
    "docker/**/*.sh",
    "**/docker/**/*.sh",
)


# -- the graph ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Build:
    """One image build as written: where, with which Dockerfile (None: not known), what it passes."""

    path: str
    line: int
    end_line: int
    origin: str  # "workflow", "script", "doc"
    dockerfile: str | None  # repository path of the Dockerfile, when known and present
    maybe: re.Pattern[str] | None  # when `dockerfile` is None: the paths it may be (None: any)
    file_line: int
    args: tuple[BuildArg, ...]
    args_known: bool
    tags: tuple[Val, ...]
    push: bool
    platforms: tuple[str, ...] | None
    job: str | None = None
    leg: dict[str, str] | None = None
    runner: tuple[str, ...] = ()  # the job's runner labels (a workflow build)

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def may_be_x86(self) -> bool:
        """Built for x86_64: its platforms name amd64, or it gives none and runs on a GitHub-hosted x86 runner."""
        if self.platforms is not None:
            return any("amd64" in p or "x86_64" in p or p == "?" for p in self.platforms)
        return any(re.fullmatch(r"ubuntu-(?:latest|\d\d\.\d\d)", r) for r in self.runner)

    def passes(self, name: str) -> bool:
        return any(a.name == name for a in self.args)


@dataclass(frozen=True)
class Pull:
    """An image reference pulled (a container, a `docker run`/`pull`, a `FROM`, a doc), known text only."""

    path: str
    line: int
    ref: ImageRef  # its tag None when not known (a doc's `|version|`, `${TAG}`) or not written
    via: str  # "container", "services", "docker", "from", "doc"


@dataclass(frozen=True)
class Pushed:
    """A tag a build can push to a repository: `pattern` matches every tag it can be; `unknown`: any tag."""

    repository: str  # normalised (see `repository`)
    pattern: re.Pattern[str]
    shown: str
    path: str
    line: int
    exact: str | None = None

    @property
    def unknown(self) -> bool:
        return self.pattern.pattern in (".*", ".+")


@dataclass
class Sequence:
    """The docker commands of one job leg, script or doc, in order (NPU220 reads what each push had before)."""

    path: str
    label: str  # "job build [arch=amd64]", "" for a script or doc
    ops: list[DockerOp]


@dataclass(frozen=True)
class CallLeg:
    """One matrix leg of a job that calls a local reusable workflow: where the leg is written in the caller."""

    caller: str  # the caller workflow's path
    job: str
    line: int  # the leg's line (its matrix entry), else the `uses:` line
    label: str  # "name=310P Ubuntu" for a reader


@dataclass
class LegTags:
    """The tags the called workflow's metadata-action steps give (and a later step pushes) for one call leg."""

    leg: CallLeg
    callee: str
    job: str  # the callee's job
    produced: tuple[Produced, ...]


@dataclass
class Graph:
    builds: list[Build] = field(default_factory=list)
    pulls: list[Pull] = field(default_factory=list)
    pushed: dict[str, list[Pushed]] = field(default_factory=dict)
    unknown_pushes: list[tuple[re.Pattern[str], str, int]] = field(default_factory=list)  # repository unknown
    sequences: list[Sequence] = field(default_factory=list)
    leg_tags: list[LegTags] = field(default_factory=list)  # per call leg of a reusable image workflow
    # Scripts and docs the graph did not read (the asking rule does not read them): builds may hide there.
    unread: int = 0
    # Evaluates the files whose docker commands only pull or run images (see `judged_pulls`).
    _later: Callable[[Callable[[str], bool]], None] | None = None
    _branches: list[re.Pattern[str]] | None = None
    _read_branches: Callable[[], list[re.Pattern[str]]] | None = None

    @property
    def branches(self) -> list[re.Pattern[str]]:
        """The tags the repository's branches become (every workflow's branch names), read on first use: only a
        pulled tag no build pushes is weighed against them."""
        if self._branches is None:
            self._branches = self._read_branches() if self._read_branches is not None else []
            self._read_branches = None
        return self._branches

    def _copy(self) -> Graph:
        """A graph that goes on from this one (its lists its own; the items, which are not changed, shared)."""
        return Graph(
            list(self.builds),
            list(self.pulls),
            {repo: list(items) for repo, items in self.pushed.items()},
            list(self.unknown_pushes),
            list(self.sequences),
            list(self.leg_tags),
            self.unread,
            self._later,
            self._branches,
            self._read_branches,
        )

    def judged_pulls(self, judged: Callable[[str], bool]) -> list[Pull]:
        """Every pull, the files that only pull read for the pushed repositories `judged` accepts (a rule that
        judges some images only spares the others' files; the first asking rule decides which)."""
        if self._later is not None:
            later, self._later = self._later, None
            later(judged)
        return self.pulls

    def builds_of(self, path: str, others: list[tuple[str, str]] = ()) -> tuple[list[Build], bool]:  # type: ignore[assignment]
        """The builds that use the Dockerfile `path`, and whether every build that may use it is known (its
        file and its arguments; none of `others`, the texts of builders the graph does not read, names it)."""
        mine = [b for b in self.builds if b.dockerfile == path]
        known = not self.unread and all(b.args_known for b in mine)
        for b in self.builds:
            if b.dockerfile is None and (b.maybe is None or b.maybe.fullmatch(path)):
                known = False
        base = posixpath.basename(path)
        if any(base in text for _p, text in others):
            known = False
        folder = posixpath.dirname(path)
        if base == "Dockerfile" and any(
            posixpath.dirname(p) == folder and ("docker build" in text or "buildx build" in text) for p, text in others
        ):
            known = False  # a Makefile next to it that runs `docker build .`: docker's default file is this one
        return mine, known

    def tags_of(self, repository: str) -> list[Pushed] | None:
        """What the builds push to `repository` (None when it is not pushed, as far as known)."""
        found = list(self.pushed.get(repository, ()))
        for pattern, path, line in self.unknown_pushes:
            if pattern.fullmatch(repository):
                found.append(Pushed(repository, re.compile(".*"), "?", path, line))
        return found or None

    def pushed_namespaces(self) -> dict[str, list[str]]:
        """`host/namespace` -> the pushed repositories under it (`quay.io/ascend` -> [quay.io/ascend/vllm-ascend])."""
        out: dict[str, list[str]] = {}
        for repo in self.pushed:
            if "/" in repo:
                out.setdefault(repo.rsplit("/", 1)[0], []).append(repo)
        return out


def repository(ref: ImageRef) -> str:
    """The repository of a reference, normalised: lower case, Docker Hub's implicit `docker.io/library/` and
    `index.docker.io` written out the same way (`ubuntu` -> `docker.io/library/ubuntu`)."""
    repo = ref.repository.lower()
    parts = repo.split("/")
    if len(parts) == 1 or not ("." in parts[0] or ":" in parts[0] or parts[0] == "localhost"):
        parts = ["docker.io", *(["library"] if len(parts) == 1 else []), *parts]
    if parts[0] in ("index.docker.io", "registry-1.docker.io"):
        parts[0] = "docker.io"
    return "/".join(parts)


def other_builders(ctx: Context, rev: str = "head") -> list[tuple[str, str]]:
    """(path, text) of the Makefiles, compose and bake files that mention docker or builds: builders the graph
    does not evaluate (a rule asking declares OTHER_BUILDER_GLOBS in its context_paths)."""

    def find() -> list[tuple[str, str]]:
        out = []
        for path in ctx.paths_at(rev):
            base = path.rsplit("/", 1)[-1]
            if (
                base == "Makefile"
                or base.endswith((".mk", ".hcl"))
                or ("compose" in base and base.endswith((".yml", ".yaml")))
            ):
                text = ctx.text(path, rev)
                if text is not None and ("docker" in text or "build" in text):
                    out.append((path, text))
        return out

    return ctx.memo(("other-builders", rev, ""), find)


def change_mentions(ctx: Context, needles: tuple[str, ...], of_kinds: frozenset[str] = GRAPH_KINDS) -> bool:
    """Whether the change touches a file of these kinds whose text (at head or base) holds one of `needles`
    (always true in an audit): the cheap test before a rule builds the graph on a change."""
    if ctx.audit:
        return True
    for change in ctx.changeset.changes.values():
        for path, rev in ((change.path, "head"), (change.old_path or change.path, "base")):
            if not ctx.kindmap.candidates(path) & of_kinds:
                continue
            text = ctx.text(path, rev)
            if text is not None and any(n in text for n in needles):
                return True
    return False


# What a line that the graph reports a pull on holds (see `_Builder._pull_vals` and `_written`): a container's,
# a service's or a step's `image:`/`container:` key or `docker://`, a docker command (docker, podman, nerdctl,
# buildah), a FROM, or the image reference itself as a value: a word with a `/` (`quay.io/ascend/verl`) or a
# tag (`postgres:14`).
_PULL_LINE = lazyre.compile(
    r"(?i)\b(?:docker|podman|nerdctl|buildah)\b|\b(?:image|container)\s*:|^\s*from\s|[\w.-]/[\w.$-]|[\w.-]:[\w.${]"
)


def change_adds_pull_lines(ctx: Context, of_kinds: frozenset[str] = GRAPH_KINDS) -> bool:
    """Whether a line the change adds to a file of these kinds can be a line the graph reports a pull on (always
    true in an audit): when none can, no pull of the change is on an added line, whatever the graph holds."""
    if ctx.audit:
        return True
    for change in ctx.changeset.changes.values():
        if not change.added_lines or not ctx.kindmap.candidates(change.path) & of_kinds:
            continue
        src = ctx.source(change.path)
        if src is None:
            return True  # not read: say it may
        if any(_PULL_LINE.search(src.line(n)) for n in change.added_lines):
            return True
    return False


def graph(ctx: Context, rev: str = "head", reads: frozenset[str] = GRAPH_KINDS) -> Graph:
    """The image/build graph of the revision (memoised per run), from the files of the kinds `reads` (what the
    asking rule declares it reads) and the files the change touches."""
    if ctx.audit:
        reads = GRAPH_KINDS  # every file is read anyway: one graph serves every rule
    key = ",".join(sorted(reads))
    return ctx.memo(("build-graph", rev, key), lambda: _Builder(ctx, rev, reads).build())


@dataclass(frozen=True)
class Unpushed:
    """A pulled reference no build of the repository pushes: its tag (`kind` "tag"), or a repository that is a
    namespace of pushed ones (`kind` "namespace", `quay.io/ascend` for `quay.io/ascend/vllm-ascend`)."""

    pull: Pull
    kind: str
    repository: str
    pushed: tuple[Pushed, ...]


def unpushed(g: Graph, pull: Pull) -> Unpushed | None:
    """Whether the pulled reference names something the repository's builds push, as far as that is known."""
    repo = repository(pull.ref)
    tags = g.tags_of(repo)
    if tags is None:
        under = g.pushed_namespaces().get(repo)
        if under and not any(p.fullmatch(repo) for p, _path, _line in g.unknown_pushes):
            return Unpushed(pull, "namespace", repo, tuple(x for r in under for x in g.pushed[r]))
        return None
    tag = pull.ref.tag
    if tag is None or pull.ref.digest:
        return None
    # A tag a build of the repository makes (`docker build -t <it>` in a script that pushes by hand, or runs it
    # right after) is the repository's own image, whoever pushes it (alibaba/heterogeneity-aware-lowering-and-
    # optimization's build scripts; sweep-r36, judged false).
    wanted = f"{repo}:{tag}"
    if any(v.known and v.text.strip() == wanted for b in g.builds for v in b.tags):
        return None
    # Mirrors of one image (`quay.io/org/app` and `swr.example.com/.../app`) hold each other's tags.
    name = repo.rsplit("/", 1)[-1]
    mirrored = [t for r, items in g.pushed.items() if r != repo and r.rsplit("/", 1)[-1] == name for t in items]
    if any(t.unknown or t.pattern.fullmatch(tag) for t in (*tags, *mirrored)):
        return None
    if any(b.fullmatch(tag) for b in g.branches):
        return None  # may be another branch's own tag, pushed by that branch's copy of the build
    # A floating name (`nightly-cpu`, `main`) may be kept by hand beside what the builds push: only a version tag
    # (`v0.13.0-dev`), which releases make, is judged.
    if not _VERSIONED.search(tag):
        return None
    return Unpushed(pull, "tag", repo, tuple(tags))


_VERSIONED = lazyre.compile(r"\d+\.\d+")


# -- Dockerfiles ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ArgDecl:
    name: str
    line: int
    default: str | None
    global_: bool  # before the first FROM


@dataclass(frozen=True)
class DockerfileArgs:
    declared: dict[str, list[ArgDecl]]
    # ARGs without a default whose empty value breaks the build: name -> (line of the use, what it is used in)
    needed: dict[str, tuple[int, str]]
    # ARG names a FROM uses, with the FROM's line
    from_args: dict[str, int]


# Predefined build arguments (docker docs, "Predefined ARGs" and BuildKit's built-in ones): passing them needs no
# `ARG` (https://docs.docker.com/reference/dockerfile/#predefined-args).
PREDEFINED_ARGS = frozenset(
    {"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "FTP_PROXY", "ftp_proxy", "NO_PROXY", "no_proxy"}
    | {"ALL_PROXY", "all_proxy", "SOURCE_DATE_EPOCH", "BUILDKIT_CACHE_MOUNT_NS", "BUILDKIT_CONTEXT_KEEP_GIT_DIR"}
    | {"BUILDKIT_INLINE_CACHE", "BUILDKIT_MULTI_PLATFORM", "BUILDKIT_SANDBOX_HOSTNAME", "BUILDKIT_SYNTAX"}
    | {"BUILDKIT_HISTORY_PROVENANCE_V1"}
)
_USE = r"\$(?:\{NAME(?:[^}]*)\}|NAME(?![\w]))"


def dockerfile_args(ctx: Context, path: str, rev: str = "head") -> DockerfileArgs | None:
    src = ctx.source(path, rev)
    if src is None:
        return None
    return ctx.memo(("dockerfile-args", rev, path), lambda: _dockerfile_args(ctx.dockerfile(src, rev)))


def _dockerfile_args(df: dfp.Dockerfile) -> DockerfileArgs:
    declared: dict[str, list[ArgDecl]] = {}
    seen_from = False
    for instr in df.instructions:
        if instr.keyword == "FROM":
            seen_from = True
        elif instr.keyword == "ARG":
            for pair in instr.pairs:
                declared.setdefault(pair.name, []).append(ArgDecl(pair.name, pair.line, pair.value, not seen_from))
    needed: dict[str, tuple[int, str]] = {}
    from_args: dict[str, int] = {}
    optional: set[str] = set()
    for instr in df.instructions:
        text = instr.args
        if "$" not in text:
            continue
        for name in declared:
            if name not in text:
                continue
            if re.search(r"\$\{" + re.escape(name) + r":?[-+=?]", text):
                optional.add(name)
            if re.search(r"\[\[?\s+(?:-[nz]\s+)?\"?\$\{?" + re.escape(name) + r"\b", text):
                optional.add(name)  # tested before use: meant to be optional
            if not re.search(_USE.replace("NAME", re.escape(name)), text):
                continue
            if instr.keyword == "FROM":
                from_args.setdefault(name, instr.line)
                needed.setdefault(name, (instr.line, "FROM"))
            elif instr.keyword in ("RUN", "COPY", "ADD", "WORKDIR", "ENV") and _breaks_empty(text, name):
                needed.setdefault(name, (instr.line, instr.keyword))
    for name in list(needed):
        decls = declared.get(name, [])
        # `ARG X=""` gives nothing more than `ARG X`
        if name in optional or any(d.default not in (None, "", '""', "''") for d in decls):
            del needed[name]
    return DockerfileArgs(declared, needed, from_args)


def _breaks_empty(text: str, name: str) -> bool:
    """Whether an empty value of `name` breaks the text: it is part of a download URL, a file name, a version
    pin or a clone's branch (text around it on the same word), not a word of its own."""
    use = _USE.replace("NAME", re.escape(name))
    for m in re.finditer(r"[^\s\"'|;&()]*" + use + r"[^\s\"'|;&()]*", text):
        word = m.group(0)
        bare = re.sub(use, "", word, count=1)
        if not bare:
            before = text[: m.start()].rstrip()
            if re.search(r"(?:--branch|-b|checkout|==|--index-url|-i|--extra-index-url)\s*$", before):
                return True
            continue
        if "://" in word or re.search(r"==|\.whl|\.run|\.tar|\.zip|\.deb|\.rpm|-cp\d", word) or word.endswith("-"):
            return True
    return False


# -- building the graph ---------------------------------------------------------------------------------------


_PLACEHOLDER_TAGS = frozenset({"tag", "version", "xxx", "x.y.z", "x.x.x", "<tag>", "<version>", "latest-tag"})
_MAKES_IMAGES = lazyre.compile(r"docker\s+(?:buildx\s+|image\s+)?(?:build|push|tag)\b|imagetools|manifest\s+create")
_DOCKER_FOCUS = ("docker",)  # the graph needs the docker commands (and what sets their variables) only
_PUSHES = lazyre.compile(r"docker\s+(?:image\s+)?push|imagetools|manifest\s+(?:create|push)|--push\b")


_WORKFLOW_KINDS = frozenset({kinds.WORKFLOW, kinds.ASCEND_WORKFLOW})
# The kinds of file the graph reads besides workflows: scripts, docs and Dockerfiles.
_FILE_KINDS = frozenset({kinds.SHELL, kinds.DOCS, kinds.DOCKERFILE, kinds.ASCEND_DOCKERFILE})


if TYPE_CHECKING:
    # A workflow whose docker commands only pull: one evaluation of it (its index, inputs, events, call leg).
    _PullingWorkflow = tuple[Workflow, int, dict[str, list[Val]] | None, Events | None, "CallLeg | None"]


class _Builder:
    def __init__(self, ctx: Context, rev: str, reads: frozenset[str]) -> None:
        self.ctx = ctx
        self.rev = rev
        self.reads = reads
        self.g = Graph()
        self._pulling_workflows: list[_PullingWorkflow] = []
        # The pulls of g.pulls as a set, for the test before adding one (a list scan made a large tree quadratic):
        # the first `_seen_upto` of them, the rest added at the next test.
        self._seen: set[Pull] = set()
        self._seen_upto = 0

    def wanted(self, path: str, kind: str) -> bool:
        """Read `path` as a `kind` file: a kind the asking rule reads, a file the change touches, or (for shell
        scripts) one named as an image script."""
        if kind in self.reads or self.ctx.touched(path):
            return True
        return kind == kinds.SHELL and globs.match_any(path, IMAGE_SCRIPT_GLOBS)

    def exists(self, path: str) -> bool:
        tree = self.ctx.changeset.head if self.rev == "head" else self.ctx.changeset.base
        return tree.exists(path)

    def read(self, path: str) -> str | None:
        return self.ctx.text(path, self.rev)

    def build(self) -> Graph:
        ctx = self.ctx
        if ctx.audit:  # one graph per revision (see `graph`)
            self._workflows()
        else:
            # On a change, the rules ask for graphs that read different files, but every `reads` that names
            # workflows gives them the same part: it is made once, and each graph goes on from a copy of it.
            key = "workflows" if self.reads & _WORKFLOW_KINDS else "touched"
            g, pulling_workflows = ctx.memo(("build-graph-workflows", self.rev, key), self._workflows_part)
            self.g = g._copy()
            self._pulling_workflows = list(pulling_workflows)
        self._files()
        return self.g

    def _workflows_part(self) -> tuple[Graph, list[_PullingWorkflow]]:
        """What the workflows give the graph (and the workflows that only pull), on a builder of its own."""
        builder = _Builder(self.ctx, self.rev, self.reads)
        builder._workflows()
        return builder.g, builder._pulling_workflows

    def _workflows(self) -> None:
        ctx = self.ctx
        wanted = [
            p
            for p in workflow_paths(ctx, self.rev)
            if self.wanted(p, kinds.WORKFLOW) or self.wanted(p, kinds.ASCEND_WORKFLOW)
        ]
        models: dict[str, Workflow] = {}
        for path in wanted:
            # On a change, a workflow it does not touch gives the graph only its builds and pushes, its calls of
            # local reusable workflows (their inputs) and its branch names (read on first need, below); its own
            # pulls are never judged (see `_workflow`). One that names no docker build, push or tag, no
            # metadata-action (`_workflow`'s `makes`) and calls no local workflow (`./` and `workflows` in the
            # `uses:`) gives none of the first two: it is not parsed.
            if not ctx.audit and not ctx.touched(path):
                text = self.read(path) or ""
                if not _makes_images(text) and not ("./" in text and "workflows" in text):
                    continue
            wf = _workflow(ctx, path, self.rev)
            if wf is not None:
                models[path] = wf
        callers = _call_sites(models)
        for path, wf in models.items():
            self._workflow(wf, callers.get(path, []))
        self.g._read_branches = partial(_branches_of, ctx, self.rev, wanted)

    def _files(self) -> None:
        ctx = self.ctx
        pulling: list[tuple[str, str]] = []  # (path, "script"/"doc") whose docker commands only pull or run
        for path in ctx.candidate_paths(_FILE_KINDS, self.rev):  # the paths the tests below can accept
            kinds_of = ctx.kindmap.candidates(path)
            if kinds.SHELL in kinds_of:
                if self.wanted(path, kinds.SHELL):
                    self._file(path, "script", pulling)
                else:
                    self.g.unread += 1
            elif kinds.DOCS in kinds_of:
                if self.wanted(path, kinds.DOCS):
                    self._file(path, "doc", pulling)
                else:
                    self.g.unread += 1
            # A Dockerfile gives the graph its FROM pulls alone: on a change, only those it touches are judged.
            if (
                (kinds.DOCKERFILE in kinds_of and self.wanted(path, kinds.DOCKERFILE))
                or (kinds.ASCEND_DOCKERFILE in kinds_of and self.wanted(path, kinds.ASCEND_DOCKERFILE))
            ) and (ctx.audit or ctx.touched(path)):
                self._dockerfile(path)
        self.g._later = lambda judged: self._pulling(pulling, judged)

    def _pulling(self, pulling: list[tuple[str, str]], judged: Callable[[str], bool]) -> None:
        """Evaluate the files that only pull (or run) images: one matters when it names an image the builds push
        (or its namespace) that the asking rule judges; the others pull images this repository does not build."""
        names = self._pushed_names(judged)
        if not names:
            return
        for wf, k, inputs, events, leg in self._pulling_workflows:
            if any(n in (self.read(wf.path) or "") for n in names):
                for unit in self._units(wf, k, inputs, events):
                    self._unit(wf, unit, leg)
        for path, origin in pulling:
            src = self.ctx.source(path, self.rev)
            if src is not None and any(n in src.text for n in names):
                self._evaluated(path, _file_ops(self.ctx, src, origin), origin)

    def _pushed_names(self, judged: Callable[[str], bool]) -> set[str]:
        """How a pushed repository (or its namespace) is written in a file that pulls it."""
        names: set[str] = set()
        for repo in self.g.pushed:
            if not judged(repo):
                continue
            parts = repo.split("/")
            if parts[0] == "docker.io":
                parts = parts[2:] if parts[1:2] == ["library"] else parts[1:]
            names.add("/".join(parts[-2:]))
            if len(parts) >= 2:
                names.add("/".join(parts[:-1]))
        return {n for n in names if n}

    # -- workflows -------------------------------------------------------------------------------------------
    def _workflow(self, wf: Workflow, sites: list[_Call]) -> None:
        contexts: list[tuple[dict[str, list[Val]] | None, Events | None, CallLeg | None]] = []
        own = set(wf.triggers) - {"workflow_call"}
        if own or not sites:
            contexts.append((None, None, None))
        for site in sites:
            contexts.extend(site.contexts)
        text = self.read(wf.path) or ""
        # Its docker commands are evaluated when it builds or pushes (or pulls, where pulls are judged and it
        # names an image the builds push: see `build`).
        makes = _makes_images(text)
        mine = self.ctx.audit or self.ctx.touched(wf.path)
        pulls = not makes and "docker" in text and mine
        for k, (inputs, events, leg) in enumerate(contexts[:MAX_CONTEXTS]):
            if mine:  # a pull is judged on a line the change adds (NPU202): the others' pulls are left out
                self._pulls_of(wf, inputs)
            if makes:
                for unit in self._units(wf, k, inputs, events):
                    self._unit(wf, unit, leg)
            elif pulls:
                self._pulling_workflows.append((wf, k, inputs, events, leg))

    def _units(self, wf: Workflow, k: int, inputs: dict[str, list[Val]] | None, events: Events | None) -> list[Unit]:
        """The job legs of one evaluation of a workflow (kept for the run: every graph of the run asks)."""
        from npu_review.checks.parsers.gha.evaluate import WorkflowEval

        def evaluate() -> list[Unit]:
            ev = WorkflowEval(wf, self.read, inputs=inputs, events=events, objects=True)
            for job_id in wf.jobs:
                ev._job(job_id)
            return ev.units

        src = self.ctx.source(wf.path, self.rev)
        rev = src.rev if src is not None else self.rev
        given = "" if inputs is None else repr(sorted((n, tuple(v.text for v in vs)) for n, vs in inputs.items()))
        return self.ctx.memo(("build-units", rev, f"{wf.path}#{given}#{events!r}"), evaluate)

    def _pulls_of(self, wf: Workflow, inputs: dict[str, list[Val]] | None) -> None:
        from npu_review.checks.parsers.gha.workflow import legs

        for job in wf.jobs.values():
            for scope in legs(wf, job, True, inputs):
                container = job.node.get("container")
                if container is not None:
                    node = container if container.is_scalar else container.get("image")
                    if node is not None and node.is_scalar:
                        self._pull_vals(wf.path, node.line, scope.resolve(node), "container")
                services = job.node.get("services")
                for _name, _k, svc in services.entries() if services is not None and services.is_map else ():
                    node = svc if svc.is_scalar else svc.get("image")
                    if node is not None and node.is_scalar:
                        self._pull_vals(wf.path, node.line, scope.resolve(node), "services")
                for step in job.steps:
                    if step.uses and step.uses.startswith("docker://"):
                        self._pull_vals(wf.path, step.line, [Val(step.uses[len("docker://") :])], "docker")

    def _pull_vals(self, path: str, line: int, vals: list[Val], via: str) -> None:
        for v in vals:
            text = v.text.strip()
            repo_part, colon, tag = text.rpartition(":")
            if not colon or "/" in tag:
                repo_part, tag = text, ""
            if not repo_part or WILD in repo_part:
                continue
            ref = parse_ref(repo_part + (f":{tag}" if tag and _valid_tag(tag) else ""))
            if ref is None:
                continue
            pull = Pull(path, self._written(path, line, v, repo_part), ref, via)
            pulls = self.g.pulls
            if self._seen_upto < len(pulls):
                self._seen.update(pulls[self._seen_upto :])
                self._seen_upto = len(pulls)
            if pull not in self._seen:
                pulls.append(pull)

    def _written(self, path: str, line: int, v: Val, repo: str) -> int:
        """The line that spells the reference (`export IMAGE=quay.io/x/y:1` before `docker run $IMAGE`)."""
        src = self.ctx.source(path, self.rev)
        if src is None or repo in src.line(line):
            return line
        for p, n in sorted(v.origins):
            if p == path and n > 0 and repo in src.line(n):
                return n
        return line

    def _unit(self, wf: Workflow, unit: Unit, call: CallLeg | None) -> None:
        leg = ", ".join(f"{k}={v}" for k, v in (unit.combo or {}).items() if not k.endswith(".") and v)
        label = f" (called by {call.caller} job {call.job} [{call.label}])" if call is not None else ""
        seq = Sequence(wf.path, f"job {unit.job}" + (f" [{leg}]" if leg else "") + label, [])
        meta = {p.line: p for _step, produced in unit.meta for p in produced or ()}
        unknown_meta = any(produced is None for _s, produced in unit.meta)
        for _index, op in unit.ops:
            seq.ops.append(op)
            self._op(wf.path, op, "workflow", unit.job, unit.combo, meta, unknown_meta, unit.runs_on)
        # A metadata-action step whose tags a later step pushes (build-push-action, imagetools) is a producer.
        if unit.meta and any(op.push for _i, op in unit.ops):
            for _step, produced in unit.meta:
                for p in produced or ():
                    self._pushed_produced(wf.path, p)
                if call is not None and produced is not None:
                    self.g.leg_tags.append(LegTags(call, wf.path, unit.job, tuple(produced)))
        self.g.sequences.append(seq)

    def _pushed_produced(self, path: str, p: Produced) -> None:
        ref = parse_ref(p.image + ":x")
        if ref is None:
            return
        repo = repository(ref)
        item = Pushed(repo, p.pattern, p.shown, path, p.line, p.exact)
        bucket = self.g.pushed.setdefault(repo, [])
        if item not in bucket:
            bucket.append(item)

    # -- one docker command -------------------------------------------------------------------------------------
    def _op(
        self,
        path: str,
        op: DockerOp,
        origin: str,
        job: str | None,
        leg: dict[str, str] | None,
        meta: dict[int, Produced],
        unknown_meta: bool,
        runner: tuple[str, ...] = (),
    ) -> None:
        if op.kind == "build":
            for b in self._builds(path, op, origin, job, leg, runner):
                self.g.builds.append(b)
        if op.kind in ("run", "pull"):
            self._pull_vals(path, op.line, list(op.sources), "doc" if origin == "doc" else "docker")
        pushed: list[Val] = []
        if op.kind == "push":
            pushed = list(op.sources)
        elif op.kind == "imagetools" or (op.kind == "build" and op.push):
            pushed = list(op.targets)
            if op.kind == "build" and op.push and "push-by-digest=true" in op.extra.get("outputs", ""):
                pushed = []
        for v in pushed:
            metas = [meta[line] for p, line in v.origins if p == path and line in meta]
            if metas:
                for p in metas:
                    self._pushed_produced(path, p)
                continue
            self._push_val(path, op.line, v)

    def _push_val(self, path: str, line: int, v: Val) -> None:
        text = v.text.strip()
        if not text:
            return
        ref = parse_ref(text) if WILD not in text.split(":")[0] else None
        if ref is None:
            repo_text = text.rsplit(":", 1)[0] if text.count(":") and "/" in text.rsplit(":", 1)[0] else text
            self.g.unknown_pushes.append((wild_regex(repo_text.lower()), path, line))
            return
        repo = repository(ref)
        if WILD in repo:
            self.g.unknown_pushes.append((wild_regex(repo), path, line))
            return
        tag = ref.tag or "latest"
        item = Pushed(repo, wild_regex(tag), tag.replace(WILD, "<?>"), path, line, tag if WILD not in tag else None)
        bucket = self.g.pushed.setdefault(repo, [])
        if item not in bucket:
            bucket.append(item)

    def _builds(
        self,
        path: str,
        op: DockerOp,
        origin: str,
        job: str | None,
        leg: dict[str, str] | None,
        runner: tuple[str, ...] = (),
    ) -> Iterator[Build]:
        files: list[tuple[str | None, re.Pattern[str] | None]] = []
        cwd = op.extra.get("cwd")
        cwd_known = "cwd" in op.extra and cwd != WILD and not (cwd or "").startswith("/")
        rel = op.extra.get("cwd_rel")  # a relative `cd` from an unknown start: from the doc's folder or the root
        if op.via == "build-push-action":
            cwd, cwd_known, rel = "", True, None
        if op.file is not None:
            for v in op.file:
                files.append(self._resolve_file(path, v, cwd if cwd_known else None, origin, rel))
        else:
            contexts = op.context if op.context is not None else ((Val("."),) if op.via != "run" else (Val(WILD),))
            if op.via == "build-push-action" and op.context is None:
                contexts = (Val("."),)
            for c in contexts:
                text = c.text.rstrip("/") or "."
                if "://" in text:
                    files.append((None, re.compile(r"\A\Z")))  # a remote context: none of ours
                    continue
                files.append(
                    self._resolve_file(
                        path,
                        Val(posixpath.join(text, "Dockerfile"), c.origins),
                        cwd if cwd_known else None,
                        origin,
                        rel,
                    )
                )
        for dockerfile, maybe in files[:MAX_ALTERNATIVES]:
            yield Build(
                path,
                op.line,
                op.end_line,
                origin,
                dockerfile,
                maybe,
                op.file_line or op.line,
                op.args,
                op.args_known,
                op.targets,
                op.push,
                op.platforms,
                job,
                leg,
                runner,
            )

    def _resolve_file(
        self, here: str, v: Val, cwd: str | None, origin: str, rel: str | None = None
    ) -> tuple[str | None, re.Pattern[str] | None]:
        text = v.text.strip()
        if not text or text == "-":
            return None, re.compile(r"\A\Z")
        if text.startswith("/"):
            return None, re.compile(r"\A\Z")  # outside the repository (a path in a container)
        folder = here.rsplit("/", 1)[0] if "/" in here else ""
        bases = [cwd] if cwd is not None else ([folder, ""] if origin != "workflow" else [""])
        if cwd is None and rel:
            # After `cd docker/base` from where the reader (or the caller) starts: that folder from each start.
            bases = [b for b in (posixpath.normpath(posixpath.join(s, rel)) for s in bases) if not b.startswith("..")]
            bases = [("" if b == "." else b) for b in bases]
            if not bases:
                return None, re.compile(r"\A\Z")  # out of the repository from every start
        if WILD in text:
            pats = []
            for b in bases:
                joined = posixpath.join(b, text) if b else text
                pats.append(wild_regex(posixpath.normpath(joined.replace(WILD, "\x00"))).pattern)
            return None, re.compile("|".join(f"(?:{p})" for p in pats))
        found = []
        for b in bases:
            joined = posixpath.normpath(posixpath.join(b, text) if b else text)
            if joined.startswith(".."):
                continue
            if self.exists(joined) and joined not in found:
                found.append(joined)
        if len(found) == 1:
            return found[0], None
        if not found:
            return None, re.compile(r"\A\Z")  # names no file of the repository
        return None, re.compile("|".join(re.escape(f) for f in found))

    # -- scripts and docs -------------------------------------------------------------------------------------
    def _file(self, path: str, origin: str, pulling: list[tuple[str, str]]) -> None:
        """A script or doc: evaluated now when it builds or pushes; kept for later when it only pulls (its pulls
        matter only where they are judged: a touched file, every file in an audit)."""
        src = self.ctx.source(path, self.rev)
        if src is None or ("docker" if origin == "script" else "docker ") not in src.text:
            return
        if _MAKES_IMAGES.search(src.text) is not None:
            self._evaluated(path, _file_ops(self.ctx, src, origin), origin)
        elif self.ctx.audit or self.ctx.touched(path):
            pulling.append((path, origin))

    def _evaluated(self, path: str, ops: list[DockerOp], origin: str) -> None:
        seq = Sequence(path, "", [])
        for op in ops:
            seq.ops.append(op)
            self._op(path, op, origin, None, None, {}, False)
        if seq.ops:
            self.g.sequences.append(seq)

    def _dockerfile(self, path: str) -> None:
        src = self.ctx.source(path, self.rev)
        if src is None or "FROM" not in src.text.upper():
            return
        df = self.ctx.dockerfile(src, self.rev)
        stages = set()
        for instr in df.of("FROM"):
            image = instr.image
            if image is None:
                continue
            if image.stage:
                stages.add(image.stage.lower())
            if image.args or "$" in image.raw or image.image.lower() in stages:
                continue  # set by build arguments (unknown), or an earlier stage
            text = image.image + (f":{image.tag}" if image.tag else "")
            ref = parse_ref(text)
            if ref is not None and ref.tag is not None and _valid_tag(ref.tag):
                self.g.pulls.append(Pull(path, instr.line, ref, "from"))


def _makes_images(text: str) -> bool:
    """A workflow's text names a docker build, push or tag, or a metadata-action: its docker commands are
    evaluated for the graph."""
    return _MAKES_IMAGES.search(text) is not None or "build-push-action" in text or "metadata-action" in text


def _branches_of(ctx: Context, rev: str, paths: list[str]) -> list[re.Pattern[str]]:
    """The branch names the workflows at `paths` name literally (push and pull-request filters without a glob,
    checkout refs), as the tags they become: another branch's copy of the build may push a tag that is its name
    (`releases/v0.13.0` -> `releases-v0.13.0`, `releases-v0.13.0-a3`), which this tree cannot show."""
    from npu_review.checks.parsers.gha.workflow import trigger_filters

    out: list[re.Pattern[str]] = []
    for path in paths:
        wf = _workflow(ctx, path, rev)
        if wf is None:
            continue
        names: set[str] = set()
        for _event, node in trigger_filters(wf, "branches"):
            names.add(node.value)
        for job in wf.jobs.values():
            for step in job.steps:
                ref = step.with_.get("ref")
                if ref is not None and ref.is_scalar and "${{" not in ref.value:
                    names.add(ref.value)
        for name in names:
            name = name.removeprefix("refs/heads/")
            if not name or any(c in name for c in "*?[!") or name in ("main", "master"):
                continue
            sanitized = re.sub(r"[^a-zA-Z0-9._-]+", "-", name)
            out.append(re.compile(re.escape(sanitized) + r"(?:-.*)?"))
    return out


def _file_ops(ctx: Context, src: SourceFile, origin: str) -> list[DockerOp]:
    """The docker commands of a script or a doc's code blocks, evaluated once per text (the base of an untouched
    file is its head)."""
    from npu_review.checks.parsers.gha.evaluate import RunEvaluator

    def evaluate() -> list[DockerOp]:
        ev = RunEvaluator(src.path, None, {}, lambda p: ctx.text(p), cwd=None, focus=_DOCKER_FOCUS)
        if origin == "script":
            ev.run_lines(list(enumerate(src.text.splitlines(), start=1)))
        else:
            for block in doc_blocks(src.text, src.path):
                ev.run_lines([(n, _desub(t)) for n, t in block.lines])
                ev._frames.clear()
        return ev.ops

    return ctx.memo(("build-file-ops", src.rev, src.path), evaluate)


def _valid_tag(tag: str) -> bool:
    """A tag a registry can hold, not a placeholder of a doc (`<version>`, `|release|`, `tag`)."""
    return (
        re.fullmatch(r"[\w][\w.-]{0,127}", tag) is not None and tag.lower() not in _PLACEHOLDER_TAGS and WILD not in tag
    )


def _desub(text: str) -> str:
    """A doc's substitutions (`|version|`, `{{ version }}`, `<version>`, `<镜像名:版本>`) as unknown values. An angle
    bracket placeholder holds no blank at either end, which a redirection (`<in.txt >out`) does."""
    if "|" in text or "{{" in text or "<" in text:
        text = _DOC_SUBSTITUTION.sub("${__DOC_SUBSTITUTION__}", text)
    return text


_DOC_SUBSTITUTION = lazyre.compile(
    r"\|[A-Za-z_][\w-]*\||\{\{\s*[\w.]+\s*\}\}|<[A-Za-z_][\w .-]*>|<(?=[^\s<>&|;()$`'\"])[^<>\n]*?(?<=[^\s<>])>"
)


_OTHER_LANGUAGES = frozenset({"python", "py", "yaml", "yml", "json", "toml", "ini", "cpp", "c", "java", "go", "rust"})


def doc_blocks(text: str, path: str) -> list[Block]:
    """The code blocks of a doc that hold shell commands: shell and console blocks (prompts removed), and
    unlabeled ones; in blocks of another language only lines that start with a command a reader would run."""
    flavor = "rst" if path.endswith(".rst") else "md"
    out: list[Block] = []
    everything = frozenset({"", "console", "text", "dockerfile", "docker", *SHELL_LANGUAGES, *_OTHER_LANGUAGES})
    for block in shell_blocks(text, flavor, everything):  # type: ignore[arg-type]
        if block.language == "console":
            out.append(console_commands(block))
        elif block.language in _OTHER_LANGUAGES or block.language in ("text", "dockerfile", "docker"):
            kept = tuple(
                (n, t if re.match(r"\s*(?:sudo\s+)?(?:docker|pip3?|python3?\s+-m\s+pip|git)\s", t) else "")
                for n, t in block.lines
            )
            out.append(Block(block.language, kept))
        else:
            out.append(block)
    return out


# -- reusable workflows: one evaluation per call ------------------------------------------------------------------


@dataclass
class _Call:
    contexts: list[tuple[dict[str, list[Val]] | None, Events | None, CallLeg | None]]


MAX_CONTEXTS = 64  # evaluations of one reusable workflow (its call legs); past this the rest is not evaluated


def _workflow(ctx: Context, path: str, rev: str) -> Workflow | None:
    if rev == "head":
        return workflow(ctx, path)
    from npu_review.checks.analysis.workflows import workflow_at

    return workflow_at(ctx, path, rev)


def _call_sites(models: dict[str, Workflow]) -> dict[str, list[_Call]]:
    """For each local reusable workflow: the inputs and events of every caller job leg that calls it."""
    if not models:  # (no workflow: the workflow parsers are not imported)
        return {}
    from npu_review.checks.parsers.gha.calls import calls, is_reusable
    from npu_review.checks.parsers.gha.evaluate import workflow_events
    from npu_review.checks.parsers.gha.workflow import legs

    out: dict[str, list[_Call]] = {}
    for caller in models.values():
        for call in calls(caller):
            target = models.get(call.target)
            if target is None or not is_reusable(target):
                continue
            events = workflow_events(caller)
            defaults = _input_defaults(target)
            contexts: list[tuple[dict[str, list[Val]] | None, Events | None, CallLeg | None]] = []
            for scope in legs(caller, call.job, True):
                inputs = dict(defaults)
                for name, node in call.with_.items():
                    inputs[name] = scope.resolve(node) if node.is_scalar else [Val(WILD)]
                combo = scope.combo or {}
                label = ", ".join(f"{k}={v}" for k, v in combo.items() if not k.endswith(".") and v)
                line = _leg_line(call.job.matrix_node, combo) or call.line
                contexts.append((inputs, events, CallLeg(caller.path, call.job.id, line, label)))
            out.setdefault(call.target, []).append(_Call(contexts))
    return out


def _leg_line(matrix: Node | None, combo: dict[str, str]) -> int | None:
    """The line of the matrix entry a leg comes from (the last axis that has one), None when not found."""
    if matrix is None or not matrix.is_map or not combo:
        return None
    found = None
    for key, _k, value in matrix.entries():
        if not value.is_seq:
            continue
        for item in value.items:
            if key in ("include", "exclude"):
                if (
                    key == "include"
                    and item.is_map
                    and all(combo.get(k) == v.value for k, _kk, v in item.entries() if v.is_scalar)
                ):
                    found = item.line
                continue
            scalar = item.is_scalar and combo.get(key) == item.value
            mapping = (
                item.is_map
                and combo.get(f"{key}.") is not None
                and all(combo.get(f"{key}.{k}") == v.value for k, _kk, v in item.entries() if v.is_scalar)
            )
            if scalar or mapping:
                found = item.line
    return found


def _input_defaults(wf: Workflow) -> dict[str, list[Val]]:
    on = wf.root.get("on")
    spec = on.get("workflow_call") if on is not None and on.is_map else None
    block = spec.get("inputs") if spec is not None and spec.is_map else None
    out: dict[str, list[Val]] = {}
    for name, _key, value in block.entries() if block is not None else ():
        default = value.get("default") if value.is_map else None
        kind = value.scalar("type") if value.is_map else None
        if default is not None and default.is_scalar and "${{" not in default.value:
            out[name] = [Val(default.value)]
        elif default is None:
            out[name] = [Val("false" if kind == "boolean" else "0" if kind == "number" else "")]
        else:
            out[name] = [Val(WILD)]
    return out


# -- one file's docker commands, in order (NPU220) ------------------------------------------------------------


def sequences_of(ctx: Context, src: SourceFile) -> list[Sequence]:
    """The docker commands of one file, per job leg (a workflow), or for the whole file (a script, a doc),
    evaluated on their own (a reusable workflow's inputs unknown). Memoised per run."""
    return ctx.memo(("build-sequences", src.rev, src.path), lambda: _sequences(ctx, src))


def _sequences(ctx: Context, src: SourceFile) -> list[Sequence]:
    from npu_review.checks.parsers.gha.evaluate import RunEvaluator, WorkflowEval

    if "docker" not in src.text:
        return []
    out: list[Sequence] = []
    if src.kinds & {kinds.WORKFLOW, kinds.ASCEND_WORKFLOW}:
        wf = workflow(ctx, src.path)
        if wf is None:
            return []
        wev = WorkflowEval(wf, lambda p: ctx.text(p), objects=True)
        for job_id in wf.jobs:
            wev._job(job_id)
        for unit in wev.units:
            leg = ", ".join(f"{k}={v}" for k, v in (unit.combo or {}).items() if not k.endswith(".") and v)
            out.append(
                Sequence(src.path, f"job `{unit.job}`" + (f" [{leg}]" if leg else ""), [op for _i, op in unit.ops])
            )
        return out
    # Every command is read where a push follows (a command that may make images, `make image`, matters);
    # elsewhere only the docker lines (the `-t` words are judged).
    pushes = _PUSHES.search(src.text) is not None
    ev = RunEvaluator(src.path, None, {}, lambda p: ctx.text(p), cwd=None, focus=() if pushes else _DOCKER_FOCUS)
    if kinds.SHELL in src.kinds:
        ev.run_lines(list(enumerate(src.text.splitlines(), start=1)))
        return [Sequence(src.path, "", list(ev.ops))]
    if kinds.DOCS in src.kinds:
        for block in doc_blocks(src.text, src.path):
            ev.run_lines([(n, _desub(t)) for n, t in block.lines])
            ev._frames.clear()
        return [Sequence(src.path, "", list(ev.ops))]
    return out


# -- what a file runs: clones and pip installs (NPU319, NPU506) -----------------------------------------------


@dataclass(frozen=True)
class CloneUse:
    """A `git clone` (or `pip install git+URL`) with what follows it in the same file."""

    path: str
    line: int
    url: str
    host: str  # github.com, gitcode.com, ... ("" when the URL is not a forge's)
    owner: str
    name: str  # the repository's name as written (without `.git`)
    ref: str | None  # `--branch`/`-b`, or the `@ref` of a pip URL
    pinned: bool  # a later checkout / reset / switch in its directory, or a ref that is a commit
    web_page: str | None  # `/tree/<ref>`, `/blob/...`: the URL is a web page, not a repository
    via: str  # "clone" or "pip"


@dataclass(frozen=True)
class PipUse:
    """A `pip install` with its words expanded, the index settings in effect before it, and its arch branch."""

    path: str
    line: int
    end_line: int
    words: tuple[EWord, ...]
    configured: tuple[str, ...]  # index URLs set before it in the file (pip config, PIP_*_INDEX_URL, ENV)
    cwd: str | None


@dataclass
class Runs:
    clones: list[CloneUse] = field(default_factory=list)
    pips: list[PipUse] = field(default_factory=list)


_FORGES = ("github.com", "gitcode.com", "gitee.com", "gitlab.com", "codeup.aliyun.com")
_FORGE_URL = lazyre.compile(
    r"(?:https?://|git@|ssh://git@)(?:www\.)?(?P<host>[\w.-]+)[/:](?P<owner>[\w.-]+)/(?P<name>[\w.-]+?)(?:\.git)?"
    r"(?P<rest>/[^\s@#]*)?(?:@(?P<ref>[^\s#]+))?(?:#.*)?\Z"
)
_RECORD_RUNS = frozenset({"git", "pip", "pip3", "python", "python3", "uv", "sudo", "export"})
_FOCUS = {"clones": ("git ", "git+"), "pips": ("pip", "uv ")}
_HEX = lazyre.compile(r"\A[0-9a-f]{7,40}\Z")


def runs_of(ctx: Context, src: SourceFile, what: str = "clones") -> Runs:
    """The clones (`what` "clones") or the pip installs ("pips") of a shell script, a doc's code blocks or a
    Dockerfile's RUNs (memoised with the file's parses, let go of with them: only the rules checking the file
    ask). Each reads only the lines that may hold what it looks for."""
    return ctx.parsed("file-runs-" + what, src, lambda _text: _runs(ctx, src, _FOCUS[what]))


def _runs(ctx: Context, src: SourceFile, focus: tuple[str, ...]) -> Runs:
    from npu_review.checks.parsers import dockerfile as dfp
    from npu_review.checks.parsers.gha.evaluate import RunEvaluator

    text = src.text
    if not any(f in text for f in focus):
        return Runs()
    read = lambda p: ctx.text(p)  # noqa: E731
    calls: list[tuple[Called, tuple[str, ...]]] = []
    if src.kinds & {kinds.DOCKERFILE, kinds.ASCEND_DOCKERFILE}:
        df = ctx.dockerfile(src, src.rev)
        defs = dfp.build_args(df)
        workdir = "/"
        configured: list[str] = []
        for instr in df.instructions:
            if instr.keyword == "FROM":
                workdir, configured = "/", []
            elif instr.keyword == "WORKDIR":
                target = instr.args.strip().strip("\"'")
                workdir = posixpath.normpath(posixpath.join(workdir, target)) if "$" not in target else "/?"
            elif instr.keyword == "ENV":
                configured.extend(p.value or "" for p in instr.pairs if "INDEX_URL" in p.name or "FIND_LINKS" in p.name)
            elif instr.keyword == "RUN":
                env = {name: [Val(value)] for line, name, value in defs if line < instr.line}
                ev = RunEvaluator(src.path, None, env, read, cwd=workdir, record=_RECORD_RUNS, focus=focus)
                segs = instr.segments
                ev.run_lines(
                    [(seg.line, seg.text + (" \\" if k < len(segs) - 1 else "")) for k, seg in enumerate(segs)]
                )
                for c in ev.called:
                    calls.append((c, tuple(configured)))
                    configured.extend(_configured(c))
        return _collect(src.path, calls)
    ev = RunEvaluator(src.path, None, {}, read, cwd="", record=_RECORD_RUNS, focus=focus)
    if kinds.SHELL in src.kinds:
        ev.run_lines(list(enumerate(text.splitlines(), start=1)))
    elif kinds.DOCS in src.kinds:
        for block in doc_blocks(text, src.path):
            ev.run_lines([(n, _desub(t)) for n, t in block.lines])
            ev._frames.clear()
    else:
        return Runs()
    configured2: list[str] = []
    for c in ev.called:
        calls.append((c, tuple(configured2)))
        configured2.extend(_configured(c))
    return _collect(src.path, calls)


def _argv(c: Called) -> list[str]:
    words = [w.text if w.text else (w.vals[0].text if w.vals else w.raw) for w in c.words]
    while words and words[0] == "sudo":
        words = words[1:]
    return words


def _configured(c: Called) -> list[str]:
    """Index URLs a command sets for later pip runs: `pip config set global.index-url URL`, `export PIP_...`."""
    argv = _argv(c)
    setting = len(argv) >= 4 and argv[0].startswith("pip") and argv[1:3] == ["config", "set"]
    if setting and ("index-url" in argv[3] or "find-links" in argv[3]):
        return argv[4:5] or [WILD]
    if argv and argv[0] == "export":
        return [a.partition("=")[2] for a in argv[1:] if "INDEX_URL" in a or "FIND_LINKS" in a]
    return []


def _collect(path: str, calls: list[tuple[Called, tuple[str, ...]]]) -> Runs:
    out = Runs()
    clones: list[tuple[CloneUse, str | None]] = []  # with the directory it made
    for c, configured in calls:
        argv = _argv(c)
        if not argv:
            continue
        prog = argv[0].rsplit("/", 1)[-1]
        if prog == "git":
            _git(path, c, argv, clones)
        elif _is_pip_install(argv):
            out.pips.append(PipUse(path, c.line, c.end_line, c.words, configured, c.cwd))
            for w in c.words:
                t = w.text
                if t.startswith("git+"):
                    m = _FORGE_URL.match(t[4:].split("#", 1)[0])
                    if m is not None:
                        out.clones.append(_clone_use(path, w.line, t[4:], m, m.group("ref"), "pip"))
    out.clones.extend(c for c, _d in clones)
    return out


def _is_pip_install(argv: list[str]) -> bool:
    prog = argv[0].rsplit("/", 1)[-1]
    if re.fullmatch(r"pip(?:3(?:\.\d+)?)?", prog):
        return len(argv) > 1 and argv[1] == "install"
    if re.fullmatch(r"python(?:3(?:\.\d+)?)?", prog):
        return argv[1:4] == ["-m", "pip", "install"]
    return prog == "uv" and argv[1:3] == ["pip", "install"]


def _clone_use(path: str, line: int, url: str, m: re.Match[str], ref: str | None, via: str) -> CloneUse:
    host = m.group("host").lower()
    rest = m.group("rest") or ""
    web = None
    if host in _FORGES and re.match(r"/(?:-/)?(?:tree|blob|src|commits?)(?:/|\Z)", rest):
        web = rest
    return CloneUse(
        path,
        line,
        url,
        host if host in _FORGES else "",
        m.group("owner"),
        m.group("name"),
        ref,
        ref is not None and _HEX.match(ref) is not None,
        web,
        via,
    )


_CLONE_VALUE = frozenset(
    {"--depth", "-b", "--branch", "-o", "--origin", "-c", "--config", "--reference", "-j", "--jobs"}
)
_CLONE_VALUE |= frozenset({"--filter", "--template", "--separate-git-dir", "--shallow-since", "--shallow-exclude"})


def _git(path: str, c: Called, argv: list[str], clones: list[tuple[CloneUse, str | None]]) -> None:
    i = 1
    directory = c.cwd
    while i < len(argv) and argv[i].startswith("-"):
        if argv[i] == "-C" and i + 1 < len(argv):
            directory = _join(directory, argv[i + 1])
            i += 2
        elif argv[i] in ("-c", "--git-dir", "--work-tree"):
            i += 2
        else:
            i += 1
    if i >= len(argv):
        return
    sub, args = argv[i], argv[i + 1 :]
    if sub == "clone":
        ref = None
        pos: list[str] = []
        k = 0
        while k < len(args):
            a = args[k]
            if a.startswith("-"):
                name, eq, value = a.partition("=")
                if not eq and name in _CLONE_VALUE and k + 1 < len(args):
                    value = args[k + 1]
                    k += 1
                if name in ("-b", "--branch"):
                    ref = value
            else:
                pos.append(a)
            k += 1
        if not pos or WILD in pos[0]:
            return
        m = _FORGE_URL.match(pos[0])
        if m is None:
            return
        target = pos[1] if len(pos) > 1 else m.group("name")
        clones.append((_clone_use(path, c.line, pos[0], m, ref, "clone"), _join(directory, target)))
    elif sub in ("checkout", "switch", "reset", "fetch"):
        if sub == "fetch" and not any(_HEX.match(a) for a in args):
            return
        # Where neither directory is known (`cd <WORKSPACE>` in a guide), the checkout is taken to be the latest
        # such clone's: a guide's `git clone URL && cd name` then `git checkout <sha>` pins what it cloned.
        unknown = [k for k, (clone, made) in enumerate(clones) if made is None and not clone.pinned]
        for k, (clone, made) in enumerate(clones):
            here = made is not None and made == directory and not clone.pinned
            if here or (directory is None and unknown and k == unknown[-1]):
                clones[k] = (
                    CloneUse(
                        clone.path,
                        clone.line,
                        clone.url,
                        clone.host,
                        clone.owner,
                        clone.name,
                        clone.ref,
                        True,
                        clone.web_page,
                        clone.via,
                    ),
                    made,
                )


def _join(cwd: str | None, target: str) -> str | None:
    if WILD in target or cwd is None:
        return None if not target.startswith("/") else posixpath.normpath(target)
    return posixpath.normpath(posixpath.join(cwd, target))


# -- who the repository is --------------------------------------------------------------------------------------


# The files `identity` reads (a rule asking declares them in its context_paths).
IDENTITY_PATHS = ("README.md", "CMakeLists.txt", "setup.py", "pyproject.toml")


@dataclass(frozen=True)
class Identity:
    """The project under review: its name (lower case) and the owners its own README links it under."""

    name: str
    owners: frozenset[str]


def identity(ctx: Context) -> Identity | None:
    """From the review's repository ("owner/name"), else from the README's links to a forge repository whose
    name is the project's own (its CMake `project()`, its Python package, its README title). None: unknown."""
    return ctx.memo(("project-identity", "", ""), lambda: _identity(ctx))


def _norm(name: str) -> str:
    return re.sub(r"[-_.]", "", name.lower())


def _identity(ctx: Context) -> Identity | None:
    repo = ctx.changeset.repository
    if "/" in repo:
        owner, name = repo.split("/", 1)
        return Identity(name.lower(), frozenset({owner.lower()}))
    readme = ctx.text("README.md") or ""
    names: set[str] = set()
    for path, pattern in (
        ("CMakeLists.txt", r"^\s*project\s*\(\s*([\w.-]+)"),
        ("setup.py", r"(?:^|\s|\()(?:name|__package_name|package_name|PACKAGE_NAME)\s*=\s*[\"']([\w.-]+)[\"']"),
    ):
        text = ctx.text(path) or ""
        m = re.search(pattern, text, re.M | re.I)
        if m:
            names.add(_norm(m.group(1)))
    try:
        project = tomllib.loads(ctx.text("pyproject.toml") or "").get("project")
    except (tomllib.TOMLDecodeError, UnicodeError):
        project = None
    if isinstance(project, dict) and isinstance(project.get("name"), str):
        names.add(_norm(project["name"]))
    title = re.search(r"^#\s+(.+)$", readme, re.M)
    words = {_norm(w) for w in re.findall(r"[\w.-]+", title.group(1))} if title else set()
    links: dict[str, set[str]] = {}
    for _host, owner, name in re.findall(r"(github\.com|gitcode\.com|gitee\.com)/([\w.-]+)/([\w.-]+)", readme):
        name = name.removesuffix(".git")
        links.setdefault(name.lower(), set()).add(owner.lower())
    found = [n for n in links if _norm(n) in names or _norm(n) in words]
    if len(found) != 1:
        return None
    return Identity(found[0], frozenset(links[found[0]]))


# -- which files are about Ascend (NPU319, NPU506) ----------------------------------------------------------------

_ASCEND_WORDS = lazyre.compile(r"Ascend|NPU|CANN|torch_npu|昇腾")


def about_ascend(ctx: Context, src: SourceFile) -> bool:
    """The file is Ascend material: the repository is Ascend-only, the file is of an Ascend kind or names
    ascend/npu in its path, or it is a doc that speaks of Ascend (a GPU guide of a multi-device project is not)."""
    if ctx.ascend_only() or src.kinds & {kinds.ASCEND_DOCKERFILE, kinds.NPU_SCRIPT, kinds.ASCEND_WORKFLOW}:
        return True
    low = src.path.lower()
    if "ascend" in low or "npu" in low:
        return True
    return kinds.DOCS in src.kinds and _ASCEND_WORDS.search(src.text) is not None
