"""NPU208: an Ascend CI job clones or installs Megatron-LM, MindSpeed, Megatron-Bridge, vllm or vllm-ascend at a
different ref than the Dockerfile of the image it runs in."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from npu_review.checks import lazyre
from npu_review.checks.analysis.images import dockerfiles_of, grammar
from npu_review.checks.analysis.workflows import workflow, workflow_paths
from npu_review.checks.context import Context
from npu_review.checks.facts.schema import FrameworkPins
from npu_review.checks.kinds import ASCEND_DOCKERFILE, ASCEND_WORKFLOW, DOCKERFILE, WORKFLOW
from npu_review.checks.model import Severity
from npu_review.checks.parsers import dockerfile as dfp
from npu_review.checks.parsers.gha.workflow import Job, Step, Workflow, legs
from npu_review.checks.parsers.gitcli import clone_of, git_call
from npu_review.checks.parsers.imagetags import parse_ref
from npu_review.checks.parsers.pipcli import pip_call
from npu_review.checks.parsers.requirements import normalize_name
from npu_review.checks.parsers.sh import Source, commands
from npu_review.checks.rule import Hit, Rule

_GIT_URL = lazyre.compile(r"git\+(?P<url>[^@\s]+?)(?:\.git)?@(?P<ref>[^\s#]+)")
_SHA = lazyre.compile(r"[0-9a-f]{7,40}\Z")


@dataclass(frozen=True)
class Pin:
    framework: str
    ref: str
    path: str
    line: int
    how: str  # "git clone --branch", "git checkout", "pip install @", "pip install =="


class Frameworks:
    def __init__(self, section: FrameworkPins) -> None:
        self.by_repo: dict[str, str] = {}
        self.by_package: dict[str, str] = {}
        for name, spec in section.frameworks.items():
            for repo in spec.repos:
                self.by_repo[repo.lower()] = name
            for pkg in spec.packages:
                self.by_package[normalize_name(pkg)] = name
        self.canary = [w.lower() for w in section.canary_words]

    def of_url(self, url: str) -> str | None:
        name = url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git").lower()
        return self.by_repo.get(name)


def _norm(ref: str) -> str:
    r = ref.strip().strip("\"'").lower()
    for prefix in ("refs/heads/", "refs/tags/", "origin/", "releases/", "release/"):
        r = r.removeprefix(prefix)
    return r.removeprefix("v")


def same_ref(a: str, b: str) -> bool:
    x, y = _norm(a), _norm(b)
    if x == y:
        return True
    if _SHA.match(x) and _SHA.match(y):
        return x.startswith(y) or y.startswith(x)
    return False


def pins_in(commands: Iterable[tuple[dfp.Command, str | None]], fw: Frameworks, path: str) -> list[Pin]:
    """Refs of the frameworks that these commands clone, check out or pip-install, in order.

    `commands` pairs each command with the directory it runs in (None when unknown)."""
    out: list[Pin] = []
    clones: dict[str, str] = {}  # clone directory -> framework
    for cmd, cwd in commands:
        git = git_call(cmd)
        if git is not None and git.sub == "clone":
            clone = clone_of(git, cwd)
            name = fw.of_url(clone.url) if clone is not None else None
            if clone is not None and name is not None:
                if clone.path is not None:
                    clones[clone.path] = name
                if clone.branch:
                    out.append(Pin(name, clone.branch, path, cmd.line, "git clone --branch"))
            continue
        if git is not None and git.sub == "checkout":
            where = dfp.resolve_dir(cwd, git.directory) if git.directory else cwd
            args = [a.unquoted for a in git.args if not a.unquoted.startswith("-")]
            if where in clones and args:
                out.append(Pin(clones[where], args[0], path, cmd.line, "git checkout"))
            continue
        pip = pip_call(cmd)
        if pip is None or pip.verb != "install":
            continue
        for word in (*pip.others, *(w for _, w in pip.packages), *pip.editables):
            m = _GIT_URL.search(word.unquoted)
            if m is not None and (name := fw.of_url(m.group("url"))) is not None:
                out.append(Pin(name, m.group("ref"), path, word.line, "pip install @"))
        for req, word in pip.packages:
            name = fw.by_package.get(normalize_name(req.name))
            version = req.pinned
            if name is not None and version:
                out.append(Pin(name, version, path, word.line, "pip install =="))
    return out


def dockerfile_pins(ctx: Context, path: str, fw: Frameworks, rev: str = "head") -> dict[str, Pin]:
    """The last pin of each framework in a Dockerfile (ARG/ENV values substituted)."""
    src = ctx.source(path, rev)
    if src is None:
        return {}
    df = ctx.dockerfile(src, rev=rev)
    defs = dfp.build_args(df)
    out: dict[str, Pin] = {}
    for pin in pins_in(((s.cmd, s.cwd) for s in dfp.steps(df)), fw, path):
        ref = dfp.expand(pin.ref, defs, pin.line)[0] if "$" in pin.ref else pin.ref
        if "$" in ref:
            out.pop(pin.framework, None)  # unknown
            continue
        out[pin.framework] = Pin(pin.framework, ref, pin.path, pin.line, pin.how)
    return out


# What line joining and quote removal take out of a run block's text: a command's words, unquoted, are what is left.
_NOT_IN_WORDS = str.maketrans("", "", "\\'\"\n\r")


def _may_pin(run: str) -> bool:
    """Whether a run block can hold the `git` or `pip` command `pins_in` looks for (`python -m pip` and `uv pip`
    included): not when its text, less the characters above, holds neither name. Most blocks do not."""
    flat = run.translate(_NOT_IN_WORDS)
    return "git" in flat or "pip" in flat


def run_commands(step: Step) -> list[tuple[dfp.Command, str | None]]:
    """The commands of a `run:` block with the directory each runs in (absolute `cd` targets only)."""
    assert step.run is not None
    out: list[tuple[dfp.Command, str | None]] = []
    cwd: str | None = None
    for cmd in commands(Source.lines(step.run.text_lines()), heredoc_bodies=True):
        out.append((cmd, cwd))
        argv = cmd.argv
        if argv and argv[0] == "cd":
            cwd = dfp.resolve_dir(cwd, argv[1]) if len(argv) > 1 else None
        elif argv and argv[0] in ("pushd", "popd"):
            cwd = None
    return out


class CiOverridesImagePin(Rule):
    """An Ascend CI job installs a framework at another version than the image it runs in was built with.

    Why: the Ascend images pair Megatron-LM with the MindSpeed release made for it (core_r0.16.0 with
    core_r0.16.0), and vllm with the matching vllm-ascend. A CI step that clones or pip-installs one of them
    at another ref tests a combination no user gets from the image, and breaks when the pair does not match:
    #7345 cloned Megatron-LM and MindSpeed `core_r0.18.0` over an image pinning `core_r0.16.0`, and #7492
    had to revert it. The pin is read from the Dockerfile that builds the pulled tag (tag -> build workflow
    -> `file:` -> `git clone --branch`, `git checkout`, `pip install ...@REF` or `==` in that Dockerfile).

    Not reported: jobs whose image is not built in this repository, frameworks the Dockerfile does not pin,
    and deliberate canary jobs that say so (a comment, step name or job name with "canary", "deliberately",
    "intentionally", ...).

    Bad (the image's Dockerfile clones MindSpeed at core_r0.16.0):
        container:
          image: quay.io/ascend/verl:latest-sglang-a3-ubuntu
        steps:
          - run: git clone --depth 1 --branch core_r0.18.0 https://gitcode.com/ascend/MindSpeed.git /MindSpeed

    Good:
        container:
          image: quay.io/ascend/verl:latest-sglang-a3-ubuntu
        steps:
          - run: git clone --depth 1 --branch core_r0.16.0 https://gitcode.com/ascend/MindSpeed.git /MindSpeed

    Good (a canary job that says so):
        container:
          image: quay.io/ascend/verl:latest-sglang-a3-ubuntu
        steps:
          - name: "canary: MindSpeed core_r0.18.0 ahead of the image bump"
            run: git clone --depth 1 --branch core_r0.18.0 https://gitcode.com/ascend/MindSpeed.git /MindSpeed

    Fix: use the image's version (or drop the step), bump the Dockerfile in the same PR, or mark the job as a
    canary in a comment.
    """

    id = "NPU208"
    name = "ci-overrides-image-pin"
    severity = Severity.WARNING
    title = "Ascend CI step installs a framework at another version than its image"
    kinds = frozenset({ASCEND_WORKFLOW})
    context_kinds = frozenset({ASCEND_WORKFLOW, WORKFLOW, ASCEND_DOCKERFILE})

    def check_project(self, ctx: Context) -> Iterable[Hit]:
        fw = Frameworks(ctx.facts.framework_pins)
        if not fw.by_repo:
            return
        # On a change, a finding is on a pin line it adds to a workflow, or on a workflow's pin that a pin line it
        # adds to a Dockerfile moves away from (`_pin_changed`): without such a Dockerfile line, the workflows it
        # does not touch are not read.
        pinned = ctx.audit or any(
            ctx.is_added_line(path, pin.line)
            for path, change in ctx.changeset.changes.items()
            if change.added_lines and ctx.kindmap.has(path, DOCKERFILE)  # (not every file parsed as a Dockerfile)
            for pin in dockerfile_pins(ctx, path, fw).values()
        )
        for path in workflow_paths(ctx, "head"):
            if not (pinned or ctx.touched(path)) or not ctx.has_kind(path, ASCEND_WORKFLOW):
                continue
            wf = workflow(ctx, path)
            if wf is None:
                continue
            for job in wf.jobs.values():
                yield from self._job(ctx, wf, job, fw)

    def _job(self, ctx: Context, wf: Workflow, job: Job, fw: Frameworks) -> Iterator[Hit]:
        ci_pins = [
            (step, pin)
            for step in job.steps
            if step.run is not None and _may_pin(step.run.value)
            for pin in pins_in(run_commands(step), fw, wf.path)
        ]
        if not ci_pins:
            return
        tag = _container_tag(ctx, wf, job)
        if tag is None:
            return
        g = grammar(ctx)
        files, exact = dockerfiles_of(ctx, tag, g.classify(tag))
        if not files:
            return
        image: dict[str, Pin] = {}
        for f in sorted(files):
            pins = dockerfile_pins(ctx, f, fw)
            for name, pin in pins.items():
                if name in image and not same_ref(image[name].ref, pin.ref):
                    image[name] = Pin(name, "", "", 0, "")  # the Dockerfiles disagree: unknown
                else:
                    image.setdefault(name, pin)
        src = ctx.source(wf.path)
        # One step, one cause: the frameworks it installs over the image's pins go in one finding.
        per_step: dict[int, list[tuple[Pin, Pin, bool]]] = {}
        for step, pin in ci_pins:
            want = image.get(pin.framework)
            if want is None or not want.ref or same_ref(want.ref, pin.ref):
                continue
            if _canary(ctx, wf, job, step, fw):
                continue
            caused = False
            if not ctx.is_added_line(wf.path, pin.line):
                if not exact or not self._pin_changed(ctx, want, pin, fw):
                    continue
                caused = True
            per_step.setdefault(id(step), []).append((pin, want, caused))
        via = "" if exact else " (the build for its device and backend; the tag itself is no longer pushed)"
        for group in per_step.values():
            pin, want, caused = group[0]
            text = src.line(pin.line) if src is not None else ""
            suggestion = (
                text.replace(pin.ref, want.ref)
                if len(group) == 1 and text.count(pin.ref) == 1 and not _SHA.match(pin.ref)
                else None
            )
            if caused:
                message = (
                    f"This change pins {pin.framework} `{want.ref}` in {want.path}:{want.line}, the image job "
                    f"`{job.id}` runs in (`{tag}`), but this step still installs `{pin.ref}` over it: CI keeps "
                    f"testing the old version. Update the step (or drop it) in the same PR."
                )
            else:
                parts = [
                    f"{p.framework} `{w.ref}` ({w.path}:{w.line}); this step installs `{p.ref}` over it"
                    + (f" (line {p.line})" if len(group) > 1 else "")
                    for p, w, _ in group
                ]
                wants = ", ".join(dict.fromkeys(f"`{w.ref}`" for _, w, _ in group))
                message = (
                    f"Job `{job.id}` runs in `{tag}`, built from {want.path}{via}, which pins "
                    f"{'; and '.join(parts)}, so CI tests a combination the image does not ship. Use {wants}, bump "
                    "the Dockerfile in the same PR, or say in a comment that this is a deliberate canary."
                )
            yield Hit(
                wf.path,
                pin.line,
                message,
                suggestion=suggestion,
                caused_by_change=caused,
                # The same versions installed over the same pins are one cause, whichever jobs do it (a step pasted
                # into a second job of the workflow: replay-r9, its own comment judged a duplicate).
                cause=" ".join(sorted(f"{p.framework}={p.ref}/{w.ref}" for p, w, _ in group)),
            )

    def _pin_changed(self, ctx: Context, want: Pin, ci: Pin, fw: Frameworks) -> bool:
        """The change moved the Dockerfile's pin away from a CI ref that matched it before."""
        if ctx.audit or not ctx.is_added_line(want.path, want.line):
            return False
        before = dockerfile_pins(ctx, want.path, fw, rev="base").get(want.framework)
        return before is not None and same_ref(before.ref, ci.ref)


def _container_tag(ctx: Context, wf: Workflow, job: Job) -> str | None:
    container = job.node.get("container")
    node = (
        container
        if container is not None and container.is_scalar
        else (container.get("image") if container is not None else None)
    )
    if node is None or not node.is_scalar:
        return None
    g = grammar(ctx)
    tags: set[str] = set()
    for scope in legs(wf, job):
        for val in scope.resolve(node):
            ref = parse_ref(val.text) if val.known else None
            if ref is None or ref.tag is None or g.family(ref) is None:
                return None
            tags.add(ref.tag)
    return tags.pop() if len(tags) == 1 else None


def _canary(ctx: Context, wf: Workflow, job: Job, step: Step, fw: Frameworks) -> bool:
    """The job or step says it overrides on purpose (name or a comment inside the job)."""
    names = [job.node.scalar("name") or job.id, step.name or ""]
    src = ctx.source(wf.path)
    comments: list[str] = []
    if src is not None:
        top = job.node.line - 1  # the job's key line; then the comment block right above it
        while top > 1 and src.line(top - 1).lstrip().startswith("#"):
            top -= 1
        for n in range(top, job.node.end_line + 1):
            text = src.line(n)
            if "#" in text:
                comments.append(text[text.index("#") :])
    blob = " ".join(names + comments).lower()
    return any(w in blob for w in fw.canary)
