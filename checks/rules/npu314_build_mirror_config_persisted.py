"""NPU314: a build-time mirror or proxy (from a build argument) written into the image's pip, git or apt config."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from npu_review.checks import lazyre
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import ASCEND_DOCKERFILE, ASCEND_WORKFLOW, DOCKERFILE, SHELL, WORKFLOW
from npu_review.checks.model import Severity
from npu_review.checks.parsers import dockerfile as dfp
from npu_review.checks.parsers.dockerfile import Dockerfile
from npu_review.checks.parsers.gha.values import WILD
from npu_review.checks.parsers.sh import Command
from npu_review.checks.rule import Hit, Rule

_VAR = lazyre.compile(r"\$(?:\{([A-Za-z_]\w*)[^}]*\}|([A-Za-z_]\w*))")
# Hosts no user of the image can reach: private addresses, cluster-local and internal names.
_INTERNAL = lazyre.compile(
    r"(?:^|[/@.])(?:10\.\d+\.\d+\.\d+|192\.168\.\d+\.\d+|172\.(?:1[6-9]|2\d|3[01])\.\d+\.\d+|localhost|127\.0\.0\.1)"
    r"|\.(?:local|internal|lan|intranet|corp|svc)(?:[:/]|$)|cluster\.local",
    re.I,
)
_HOST = lazyre.compile(
    r"(?:[a-z][\w+.-]*://)?(?:[^@/\s'\"]+@)?([A-Za-z0-9][\w.-]*\.[\w.-]*[A-Za-z0-9]|localhost)(?::\d+)?"
)
_CONFIG_FILES = lazyre.compile(
    r"(?:^|/)(?:pip\.conf|pip\.ini|sources\.list(?:\.d/\S*)?|\.gitconfig|gitconfig|\.npmrc)$"
)
# The pip settings that send a later `pip install` somewhere (`trusted-host` only relaxes checks for a host: it
# redirects nothing, and NPU301 says what it costs).
_PIP_KEYS = lazyre.compile(r"(?:index-url|extra-index-url|proxy|find-links)$", re.I)
_GIT_KEYS = lazyre.compile(r"^url\..*\.(?:insteadof|pushinsteadof)$|^https?\.(?:[^.]+\.)*proxy$", re.I)


@dataclass(frozen=True)
class _Write:
    line: int
    what: str  # "pip config set global.index-url", "git config --global url.….insteadOf", "/etc/apt/sources.list"
    target: str  # the config it lands in: pip, git or a file path
    args: tuple[str, ...]  # the build arguments the value comes from
    literal: str | None  # an internal host written literally


class BuildMirrorConfigPersisted(Rule):
    """A Dockerfile writes a build-time mirror or proxy into the image's pip, git or apt configuration.

    Why: a CI that builds images behind a firewall passes its package mirror, pip cache or git proxy as build
    arguments (`--build-arg PIP_INDEX_URL=http://10.0.0.5/…`, `GIT_PROXY=…`). Used for one command, that is
    fine; written with `pip config set`, `git config --global url.….insteadOf`, or into `/etc/pip.conf` or
    `/etc/apt/sources.list`, it stays in the published image, and every user's `pip install`, `git clone` or
    `apt-get` then goes to a host they cannot reach (or trust). vllm-ascend's Dockerfiles configure pip, git
    and apt from `PIP_TRUSTED_HOST`, `GIT_PROXY` and `APTMIRROR` build arguments and never reset them.

    Bad:
        ARG GIT_PROXY=""
        RUN git config --global url."${GIT_PROXY}https://github.com/".insteadOf https://github.com/ && \\
            git clone https://github.com/org/kernels.git /opt/kernels

    Good:
        ARG GIT_PROXY=""
        RUN git config --global url."${GIT_PROXY}https://github.com/".insteadOf https://github.com/ && \\
            git clone https://github.com/org/kernels.git /opt/kernels && \\
            git config --global --unset url."${GIT_PROXY}https://github.com/".insteadOf

    Fix: pass the mirror for the command only (`pip install --index-url "$PIP_INDEX_URL"`, `git -c
    url.….insteadOf=… clone`, `PIP_INDEX_URL=… pip install`), or undo the setting in the same RUN.

    A build argument no workflow of the repository sets (`build-args:`, `--build-arg`) is a notice: the image
    carries the setting only when someone builds it with that argument (a build a doc shows, `--build-arg
    APT_MIRROR=<a mirror near you>`, is such a user's own).

    One cause, one comment: the same tool configured from the same build arguments in several Dockerfiles of a
    change (the twins of one mirror decision) is said once.

    Not reported: values that are literal public hosts, build arguments whose default is a public host and
    that no workflow replaces (a mirror chosen for the image's users on purpose; a workflow that passes its own
    value builds the published image with the build's mirror), build arguments that every build of the image
    passes as a public host written out (`APT_MIRROR="https://mirrors.example.com"` in its build script),
    settings undone later in the stage (`pip config unset`, `git config --unset`, `rm` of the file, a restored
    backup), and stages the final image is not built from. A build whose Dockerfile may be any file (`-f
    $DOCKERFILE` from an option) is not taken for a build of a dev container's Dockerfile (`.devcontainer/`), which
    the editor builds.
    """

    id = "NPU314"
    name = "build-mirror-config-persisted"
    severity = Severity.WARNING
    title = "Build-time mirror or proxy written into the image's pip, git or apt configuration"
    kinds = frozenset({DOCKERFILE, ASCEND_DOCKERFILE})
    # The workflows and build scripts say which build arguments the builds set, and to what (a warning then; a
    # notice when none does; nothing when every build passes a public host).
    context_kinds = frozenset({WORKFLOW, SHELL})

    needles = ("pip config", "pip3 config", "git config", "pip.conf", "sources.list")

    def check_dockerfile(self, df: Dockerfile, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        globals_: dict[str, str | None] = {}
        for instr in df.instructions:
            if instr.keyword == "FROM":
                break
            if instr.keyword == "ARG":
                globals_.update((p.name, p.value) for p in instr.pairs)
        passed, public = _passed_to(ctx, src.path)
        for stage in _shipped_stages(df):
            for hit, write in _stage_hits(src.path, stage, globals_, passed, public):
                if write.args and not set(write.args) & passed:
                    shown = ", ".join(f"`{a}`" for a in write.args)
                    yield Hit(
                        hit.path,
                        hit.line,
                        hit.message + f" (No workflow here sets {shown}: this holds for images built with it.)",
                        severity=Severity.NOTICE,
                        cause=hit.cause,
                    )
                else:
                    yield hit


def _stages(df: dfp.Dockerfile) -> list[tuple[dfp.Instruction, list[dfp.Instruction]]]:
    out: list[tuple[dfp.Instruction, list[dfp.Instruction]]] = []
    for instr in df.instructions:
        if instr.keyword == "FROM":
            out.append((instr, []))
        elif out:
            out[-1][1].append(instr)
    return out


def _shipped_stages(df: dfp.Dockerfile) -> list[list[dfp.Instruction]]:
    """The final stage and the stages it is built FROM (a builder stage's config does not ship)."""
    stages = _stages(df)
    if not stages:
        return []
    names = {(s[0].image.stage or "").lower(): i for i, s in enumerate(stages) if s[0].image and s[0].image.stage}
    chain: list[list[dfp.Instruction]] = []
    i: int | None = len(stages) - 1
    seen: set[int] = set()
    while i is not None and i not in seen:
        seen.add(i)
        head, body = stages[i]
        chain.append(body)
        base = (head.image.image if head.image else "").lower()
        i = names.get(base)
    return chain


_SETS_ARG = lazyre.compile(r"--build-arg[ =]['\"]?([A-Za-z_]\w*)=|^\s*-?\s*['\"]?([A-Za-z_]\w*)=\S", re.M)


# What the rule reads of the build graph: the files it declares (on a change; an audit reads every file). The
# same set as NPU221's, so that a change both rules review builds that graph once (graph() memoises per set).
_GRAPH_READS = frozenset({DOCKERFILE, ASCEND_DOCKERFILE, WORKFLOW, ASCEND_WORKFLOW, SHELL})


def _passed_build_args(ctx: Context) -> tuple[frozenset[str], frozenset[str]]:
    """Names the workflows set as build arguments (`build-args:` lines, `--build-arg NAME=`), and those of them
    every workflow that sets them sets to a public host written out."""

    def find() -> tuple[frozenset[str], frozenset[str]]:
        texts = []
        for path in ctx.paths_of_kind(WORKFLOW):
            text = ctx.text(path)
            if text is not None and ("build-arg" in text or "build_arg" in text):
                texts.append(text)
        return _set_args(texts)

    return ctx.memo(("npu314-build-args", "head", ""), find)


def _set_args(texts: list[str]) -> tuple[frozenset[str], frozenset[str]]:
    """The build arguments these workflow texts set, and those they all set to a public host written out
    (`PIP_INDEX=https://pypi.org/simple` in `build-args:`): a value that puts nothing in the image its users
    cannot reach."""
    values: dict[str, list[str]] = {}
    for text in texts:
        for m in _SETS_ARG.finditer(text):
            arg = m.group(1) or m.group(2)
            # the value starts after the `=` (the line form's pattern has taken its first character already)
            values.setdefault(arg, []).append(_value_at(text, m.end() - (1 if m.group(2) else 0)))
    public = frozenset(arg for arg, found in values.items() if all(_public_host(v) for v in found))
    return frozenset(values), public


# A path no Dockerfile pattern of a build names unless the pattern takes any path; a dev container's folder.
_ANY_PATH = "no/such/folder/nothing-of-this-name.none"
_DEV_CONTAINER = lazyre.compile(r"(?:^|/)\.devcontainer/")


def _passed_to(ctx: Context, path: str) -> tuple[frozenset[str], frozenset[str]]:
    """The build arguments the builds of this Dockerfile pass (the image/build graph); when no build of it is
    known, the names any workflow passes (`build-args:`, `--build-arg NAME=`). Second, those of them that every
    build passes as a public host written out (`PPA_SOURCE="https://mirrors.example.com"` in the build script):
    a mirror every user can reach."""
    from npu_review.checks.analysis.builds import graph

    # A build a doc shows (`docker build --build-arg APT_MIRROR=<a public mirror>` for users far from the
    # default one) is the user's own choice, not what the project's images are built with.
    # A build whose Dockerfile may be any file at all (`-f "$DOCKERFILE"` from an option, `file: ${{ inputs.x }}`: its
    # pattern takes any path) builds the project's images (vllm-ascend's reusable image workflow builds every one of
    # its Dockerfiles so), never a dev container's, which the editor builds from `devcontainer.json`
    # (eosphoros-ai/DB-GPT's build script and its `.devcontainer/Dockerfile.dev`; sweep-r27, judged false).
    mine = [
        b
        for b in graph(ctx, reads=_GRAPH_READS).builds
        if b.origin != "doc"
        and (
            b.dockerfile == path
            or (
                b.dockerfile is None
                and b.maybe is not None
                and b.maybe.search(path)
                and not (b.maybe.fullmatch(_ANY_PATH) and _DEV_CONTAINER.search(path))
            )
        )
    ]
    if mine and all(b.args_known for b in mine):
        names = frozenset(a.name for b in mine for a in b.args)
        public = frozenset(
            name
            for name in names
            if all(a.value is not None and _public_host(a.value.text) for b in mine for a in b.args if a.name == name)
        )
        return names, public
    # The builds of this Dockerfile cannot be read (`docker build "${ARGS[@]}"`): the names the workflows that
    # name it (`Dockerfile.nightly.a2`, or `Dockerfile.nightly.${{ inputs.target }}`) pass; with none, any's.
    name = path.rsplit("/", 1)[-1]
    stem = name.rsplit(".", 1)[0] + "." if "." in name.lstrip(".") else name
    texts = []
    for wf in ctx.paths_of_kind(WORKFLOW):
        text = ctx.text(wf)
        if text is not None and (name in text or stem in text):
            texts.append(text)
    return _set_args(texts) if texts else _passed_build_args(ctx)


def _value_at(text: str, start: int) -> str:
    """The word that starts at `start` (a `--build-arg NAME=` value), quotes kept for _public_host to strip."""
    m = _WORD_AT.match(text, start)
    return m.group() if m else ""


_WORD_AT = lazyre.compile(r"\S+")


def _public_host(value: str) -> bool:
    """The value is written out (no variable, no expression left) and names a host that is not internal."""
    if WILD in value or "$" in value:
        return False
    text = value.strip().strip("\"'")
    m = _HOST.match(text)
    rest = "" if m is None else text[m.end() :]
    if m is None or (rest and (not rest.startswith("/") or any(c.isspace() for c in rest))):
        return False  # (a path after the host is fine: `https://pypi.org/simple`)
    return not _INTERNAL.search("/" + m.group(1) + "/")


def _stage_hits(
    path: str,
    body: list[dfp.Instruction],
    globals_: dict[str, str | None],
    passed: frozenset[str] = frozenset(),
    public: frozenset[str] = frozenset(),
) -> Iterator[tuple[Hit, _Write]]:
    args: dict[str, str | None] = {}
    runs: list[tuple[dfp.Instruction, list[Command]]] = []
    for instr in body:
        if instr.keyword == "ARG":
            for pair in instr.pairs:
                # a global ARG re-declared without a value keeps the global default
                args[pair.name] = pair.value if pair.value is not None else globals_.get(pair.name)
        elif instr.keyword == "RUN":
            runs.append((instr, list(instr.commands)))
    flat = [c for _, cmds in runs for c in cmds]
    for k, cmd in enumerate(flat):
        write = _write(cmd, args, passed, public)
        if write is None or any(_undoes(c, write) for c in flat[k + 1 :]):
            continue
        source = (
            "build argument" + ("s " if len(write.args) > 1 else " ") + ", ".join(f"`{a}`" for a in write.args)
            if write.args
            else f"the internal host `{write.literal}`"
        )
        # An internal host is out of every user's reach; a build argument's host is the build's choice, which a
        # user of the image may not reach or trust (a public proxy the CI passes: vllm-ascend's GIT_PROXY, whose
        # "cannot reach" two blind reviewers could not confirm, all-r9a and all-r10).
        reach = "which they cannot reach" if not write.args else "which they may not reach or trust"
        message = (
            f"{write.what} with {source} stays in the image: every user's {_tool(write.target)} then goes to the "
            f"build's mirror or proxy, {reach}. Pass it for the command only, or undo it in the same RUN."
        )
        # One cause: the build's mirror for one tool from the same build arguments (one decision, whether it is
        # written in one Dockerfile or in all the twins of a change).
        cause = _tool(write.target)  # e.g. `pip install`: its index and proxy settings are one mirror decision
        yield Hit(path, write.line, message, cause=cause), write


def _tool(target: str) -> str:
    if target == "pip" or "pip" in target:
        return "`pip install`"
    if target == "git" or "git" in target:
        return "`git clone`"
    if "sources.list" in target:
        return "`apt-get`"
    return "package install"


def _from_build(
    value: str,
    args: dict[str, str | None],
    passed: frozenset[str] = frozenset(),
    public: frozenset[str] = frozenset(),
) -> tuple[tuple[str, ...], str | None]:
    """The build arguments a value takes from (without a public default, or with one that the project's
    workflows replace when they build the image, unless every build passes a public host), or an internal host
    it names."""
    names = []
    for m in _VAR.finditer(value):
        name = m.group(1) or m.group(2)
        if name not in args:
            continue
        if name in public and "proxy" not in name.lower():
            continue  # every build of the image passes a public mirror, written out: one its users reach too
        default = args[name]
        if default and not _INTERNAL.search(default) and "proxy" not in name.lower() and name not in passed:
            continue  # a public mirror chosen as the default, and the image is built with it: on purpose
        names.append(name)
    literal = None
    if not names:
        for m in _HOST.finditer(_VAR.sub("", value)):
            if _INTERNAL.search("/" + m.group(1) + "/"):
                literal = m.group(1)
                break
    return tuple(dict.fromkeys(names)), literal


def _write(
    cmd: Command,
    args: dict[str, str | None],
    passed: frozenset[str] = frozenset(),
    public: frozenset[str] = frozenset(),
) -> _Write | None:
    argv = cmd.argv
    if not argv:
        return None
    raw = [w.raw for w in cmd.words[cmd.start :]]
    line = cmd.words[cmd.start].line
    name = argv[0].rsplit("/", 1)[-1]
    # pip config set KEY VALUE (pip, pip3, python -m pip)
    rest = list(argv[1:])
    raw_rest = raw[1:]
    if name.startswith("python") and rest[:2] == ["-m", "pip"]:
        rest, raw_rest, name = rest[2:], raw_rest[2:], "pip"
    if re.fullmatch(r"pip3?(?:\.\d+)?", name):
        opts = [a for a in rest if not a.startswith("-")]
        if opts[:2] == ["config", "set"] and len(opts) >= 4 and _PIP_KEYS.search(opts[2]):
            value = " ".join(w for w in raw_rest if not w.startswith("-"))
            names, literal = _from_build(value, args, passed, public)
            if names or literal:
                return _Write(line, f"`pip config set {opts[2]}`", "pip", names, literal)
        return None
    if name == "git" and "config" in rest:
        scope = [a for a in rest if a in ("--global", "--system")]
        if not scope or any(a.startswith("--unset") or a == "--remove-section" for a in rest):
            return None
        i = rest.index("config")
        keys = [a for a in rest[i + 1 :] if not a.startswith("-")]
        if len(keys) >= 2 and _GIT_KEYS.search(keys[0]):
            value = " ".join(raw_rest[i + 1 :])
            names, literal = _from_build(value, args, passed, public)
            if names or literal:
                short = re.sub(r"^url\..*\.", "url.….", keys[0], flags=re.I)
                return _Write(line, f"`git config {scope[0]} {short}`", "git", names, literal)
        return None
    # writes into a config file: `sed -i … FILE`, `echo … > FILE`, `tee FILE`
    targets = [r.target.unquoted for r in cmd.redirects if r.op in (">", ">>") and r.target is not None]
    in_place = any(re.fullmatch(r"-[A-Za-z]*i\S*", a) or a.startswith("--in-place") for a in rest)
    if name == "tee" or (name == "sed" and in_place):
        targets += [a for a in rest if not a.startswith("-")]
    for target in targets:
        if _CONFIG_FILES.search(target):
            names, literal = _from_build(" ".join(raw), args, passed, public)
            if names or literal:
                return _Write(line, f"writing `{target}`", target, names, literal)
    return None


def _undoes(cmd: Command, write: _Write) -> bool:
    argv = cmd.argv
    if not argv:
        return False
    name = argv[0].rsplit("/", 1)[-1]
    text = " ".join(argv)
    if write.target == "pip":
        return bool(re.search(r"\bconfig\s+(?:unset|--\S+\s+unset)\b", text)) or (
            name == "rm" and any("pip.conf" in a or a.endswith("/pip") for a in argv[1:])
        )
    if write.target == "git":
        return (name == "git" and any(a.startswith("--unset") or a == "--remove-section" for a in argv)) or (
            name == "rm" and any("gitconfig" in a for a in argv[1:])
        )
    leaf = write.target.rsplit("/", 1)[-1]
    if name == "rm" and any(a.endswith(leaf) for a in argv[1:]):
        return True
    return name in ("mv", "cp") and len(argv) >= 3 and argv[-1].endswith(leaf)
