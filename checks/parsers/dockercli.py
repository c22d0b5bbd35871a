"""`docker` command lines (build, buildx build, tag, push, pull, run, imagetools/manifest create, load) with their
operands sorted out, read from words a shell evaluator has already expanded.

    op = docker_op(words)            # words: EWord (raw text, alternative values, line)
    op.kind                           # "build", "tag", "push", "pull", "run", "imagetools", "manifest", ...
    op.targets, op.sources            # image references the command makes / reads (alternatives, WILD where unknown)

Unknown stays unknown: a word the evaluator could not expand (`$ARGS`, `"${EXTRA[@]}"`) that may hold options
makes what it could hold unknown (`args_known` false), never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from npu_review.checks.fastinit import fast_init
from npu_review.checks.parsers.gha.values import WILD, Val


@fast_init
@dataclass(frozen=True)
class EWord:
    """A shell word as written (`raw`), its expanded alternatives, and its physical line. `spread`: an unquoted
    expansion whose value is unknown, which may stand for any number of words (options included)."""

    raw: str
    vals: tuple[Val, ...]
    line: int
    spread: bool = False

    @property
    def known(self) -> bool:
        return not self.spread and all(v.known for v in self.vals) and bool(self.vals)

    @property
    def text(self) -> str:
        """The single known value, else "" (several alternatives or unknown parts)."""
        return self.vals[0].text if len(self.vals) == 1 and self.vals[0].known and not self.spread else ""


@dataclass(frozen=True)
class BuildArg:
    name: str
    value: Val | None  # None: `--build-arg NAME`, taken from the environment
    line: int


@dataclass(frozen=True)
class DockerOp:
    """One docker command: what it makes (`targets`) and reads (`sources`), for builds their Dockerfile, context,
    build arguments and platforms."""

    kind: str  # build, tag, push, pull, run, imagetools, manifest, manifest-push, load, commit, import
    line: int
    end_line: int
    targets: tuple[Val, ...] = ()
    sources: tuple[Val, ...] = ()
    tag_words: tuple[tuple[str, int], ...] = ()  # `-t` values as written, with their lines
    args: tuple[BuildArg, ...] = ()
    args_known: bool = True  # False: an unexpanded word may hold more `--build-arg`s
    file: tuple[Val, ...] | None = None  # `-f` alternatives; None: not given (the context's Dockerfile)
    file_line: int = 0
    context: tuple[Val, ...] | None = None
    platforms: tuple[str, ...] | None = None  # None: not given (the builder's own platform)
    push: bool = False
    load: bool = False
    via: str = "run"  # "run" (a shell command) or "build-push-action"
    extra: dict[str, str] = field(default_factory=dict, compare=False)


# Flags that take no value, per command family (every other option takes one unless written `--opt=value`).
_BUILD_BOOL = frozenset(
    {"--push", "--load", "--no-cache", "--pull", "-q", "--quiet", "--rm", "--force-rm", "--squash", "--compress"}
    | {"--disable-content-trust", "--check", "--debug"}
)
_RUN_BOOL = frozenset(
    {"-d", "--detach", "-i", "--interactive", "-t", "--tty", "--rm", "--privileged", "--init", "-P"}
    | {"--publish-all", "--read-only", "--no-healthcheck", "--oom-kill-disable", "-q", "--quiet", "--sig-proxy"}
    | {"--disable-content-trust", "--use-api-socket"}
)
_PULL_PUSH_BOOL = frozenset({"-a", "--all-tags", "-q", "--quiet", "--disable-content-trust"})
_IMAGETOOLS_BOOL = frozenset({"--append", "--dry-run", "--prefer-index"})
_MANIFEST_BOOL = frozenset({"-a", "--amend", "--insecure", "--purge"})


def _is_bool(flag: str, bools: frozenset[str]) -> bool:
    if flag in bools:
        return True
    # `-it`, `-dit`: clusters of one-letter boolean flags
    if len(flag) > 2 and flag[0] == "-" and flag[1] != "-":
        return all(f"-{c}" in bools for c in flag[1:])
    return False


def _options(
    words: list[EWord], bools: frozenset[str]
) -> tuple[list[tuple[str, EWord | None, EWord]], list[EWord], bool]:
    """(option, value word, option word) pairs, positional words, and whether every word was understood."""
    opts: list[tuple[str, EWord | None, EWord]] = []
    positional: list[EWord] = []
    known = True
    i = 0
    while i < len(words):
        w = words[i]
        if w.spread:
            known = False
            i += 1
            continue
        t = w.text
        if t.startswith("-") and len(t) > 1 and t != "-":
            if t == "--":
                positional.extend(words[i + 1 :])
                break
            name, eq, value = t.partition("=")
            if eq:
                opts.append(
                    (name, EWord(value, tuple(Val(v.text.partition("=")[2], v.origins) for v in w.vals), w.line), w)
                )
            elif _is_bool(name, bools):
                opts.append((name, None, w))
            elif i + 1 < len(words):
                opts.append((name, words[i + 1], w))
                i += 1
            i += 1
            continue
        if not t and any(v.text.startswith("-") for v in w.vals):
            known = False  # an option whose name we cannot read
            i += 1
            continue
        positional.append(w)
        i += 1
    return opts, positional, known


def _vals(w: EWord | None) -> tuple[Val, ...]:
    if w is None:
        return ()
    if w.spread or not w.vals:
        return (Val(WILD),)
    return w.vals


def docker_op(words: list[EWord]) -> DockerOp | None:
    """The docker command of `words` (its program first: `docker`, after `sudo` and assignments); None for
    anything else."""
    i = 0
    while i < len(words) and words[i].text in ("sudo", "exec", "command"):
        i += 1
    if i >= len(words) or words[i].text.rsplit("/", 1)[-1] != "docker":
        return None
    rest = words[i + 1 :]
    # global options of docker itself (`docker --config x build`, `docker -H host run`)
    while rest and rest[0].text.startswith("-"):
        flag = rest[0].text
        rest = rest[2:] if "=" not in flag and flag not in ("-D", "--debug", "--tls", "--tlsverify") else rest[1:]
    if not rest:
        return None
    sub = rest[0].text
    args = rest[1:]
    if sub in ("image", "container", "builder") and args:
        sub, args = args[0].text, args[1:]
    elif sub == "buildx" and args:
        sub2 = args[0].text
        if sub2 in ("build", "b"):
            sub, args = "build", args[1:]
        elif sub2 == "imagetools" and len(args) > 1 and args[1].text == "create":
            sub, args = "imagetools", args[2:]
        else:
            return None
    elif sub == "manifest" and args:
        sub2 = args[0].text
        if sub2 == "create":
            sub, args = "manifest", args[1:]
        elif sub2 == "push":
            sub, args = "manifest-push", args[1:]
        else:
            return None
    line = words[i].line
    end = max(w.line for w in words)
    if sub == "build":
        return _build(args, line, end)
    if sub == "tag":
        opts, pos, known = _options(args, frozenset())
        if len(pos) < 2 or not known:
            return DockerOp("tag", line, end, targets=(Val(WILD),), sources=(Val(WILD),))
        return DockerOp("tag", line, end, targets=_vals(pos[1]), sources=_vals(pos[0]))
    if sub in ("push", "manifest-push"):
        opts, pos, known = _options(args, _PULL_PUSH_BOOL | _MANIFEST_BOOL)
        ref = _vals(pos[0]) if pos and known else (Val(WILD),)
        return DockerOp("push", line, end, sources=ref, push=True, extra={"form": sub})
    if sub == "pull":
        opts, pos, known = _options(args, _PULL_PUSH_BOOL)
        ref = _vals(pos[0]) if pos and known else (Val(WILD),)
        return DockerOp("pull", line, end, targets=ref, sources=ref)
    if sub in ("run", "create"):
        opts, pos, known = _options(args, _RUN_BOOL)
        if not known or not pos:
            return DockerOp("run", line, end, sources=(Val(WILD),))
        return DockerOp("run", line, end, sources=_vals(pos[0]))
    if sub == "imagetools":
        opts, pos, known = _options(args, _IMAGETOOLS_BOOL)
        targets = tuple(v for name, value, _ in opts if name in ("-t", "--tag") for v in _vals(value))
        tag_words = tuple((value.raw, value.line) for name, value, _ in opts if name in ("-t", "--tag") and value)
        sources = tuple(v for w in pos for v in _vals(w)) if known else (Val(WILD),)
        if any(name in ("-f", "--file") for name, _, _ in opts):
            sources = (Val(WILD),)
        return DockerOp("imagetools", line, end, targets=targets, sources=sources, tag_words=tag_words, push=True)
    if sub == "manifest":
        opts, pos, known = _options(args, _MANIFEST_BOOL)
        if not pos or not known:
            return DockerOp("manifest", line, end, targets=(Val(WILD),), sources=(Val(WILD),))
        return DockerOp(
            "manifest",
            line,
            end,
            targets=_vals(pos[0]),
            sources=tuple(v for w in pos[1:] for v in _vals(w)),
            tag_words=((pos[0].raw, pos[0].line),),
        )
    if sub in ("load", "import", "commit"):
        opts, pos, known = _options(args, frozenset({"-q", "--quiet", "-p", "--pause"}))
        if sub == "load":
            return DockerOp("load", line, end, targets=(Val(WILD),))
        target = _vals(pos[-1]) if len(pos) >= 2 and known else (Val(WILD),)
        return DockerOp(sub, line, end, targets=target)
    return None


def _build(args: list[EWord], line: int, end: int) -> DockerOp:
    opts, pos, known = _options(args, _BUILD_BOOL)
    tags: list[Val] = []
    tag_words: list[tuple[str, int]] = []
    bargs: list[BuildArg] = []
    args_known = known
    file: tuple[Val, ...] | None = None
    file_line = 0
    platforms: list[str] | None = None
    push = load = False
    for name, value, _word in opts:
        if name in ("-t", "--tag") and value is not None:
            tags.extend(_vals(value))
            tag_words.append((value.raw, value.line))
        elif name == "--build-arg" and value is not None:
            if value.spread or len(value.vals) != 1:
                keys = {v.text.partition("=")[0] for v in value.vals}
                key = next(iter(keys)) if len(keys) == 1 and not value.spread else ""
                if key and WILD not in key:
                    bargs.append(BuildArg(key, Val(WILD), value.line))  # one name, values not known
                else:
                    args_known = False
                continue
            v = value.vals[0]
            key, eq, val = v.text.partition("=")
            if WILD in key or not key:
                args_known = False
                continue
            bargs.append(BuildArg(key, Val(val, v.origins) if eq else None, value.line))
        elif name in ("-f", "--file") and value is not None:
            file = _vals(value)
            file_line = value.line
        elif name == "--platform" and value is not None:
            text = value.text
            platforms = [p.strip() for p in text.split(",") if p.strip()] if text else None
            if not text:
                platforms = ["?"]
        elif name == "--push":
            push = True
        elif name == "--load":
            load = True
        elif name in ("-o", "--output") and value is not None:
            text = value.text
            if "push=true" in text or text.startswith("type=registry"):
                push = True
            elif not text:
                push = True  # unknown output: it may push
    context = _vals(pos[0]) if pos and known else None
    return DockerOp(
        "build",
        line,
        end,
        targets=tuple(tags),
        tag_words=tuple(tag_words),
        args=tuple(bargs),
        args_known=args_known,
        file=file,
        file_line=file_line,
        context=context,
        platforms=tuple(platforms) if platforms is not None else None,
        push=push,
        load=load,
        # More than one context operand: no command docker runs (a docs sentence with placeholders in it:
        # `docker build -t Image name_OS architecture: Image tag .`).
        extra={"operands": str(len(pos))} if len(pos) > 1 else {},
    )
