"""`git` command lines: the subcommand, `git -C` directories and what a `git clone` creates."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from npu_review.checks.parsers.sh import Command, Word

# git options that take a value, globally (`git -C dir …`) and for `git clone`.
_GIT_GLOBAL_VALUE_OPTS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"})
_CLONE_VALUE_OPTS = frozenset(
    {"--depth", "-b", "--branch", "-o", "--origin", "-c", "--config", "--reference", "--reference-if-able"}
    | {"--separate-git-dir", "--shallow-since", "--shallow-exclude", "-j", "--jobs", "--filter", "--template"}
    | {"-u", "--upload-pack", "--server-option", "--bundle-uri", "--ref-format"}
)


@dataclass(frozen=True)
class GitCall:
    sub: str  # clone, checkout, fetch, …
    args: tuple[Word, ...]  # after the subcommand
    directory: str | None  # `git -C dir`: the directory it runs in (as written), else None
    cmd: Command


def git_call(cmd: Command) -> GitCall | None:
    argv = cmd.argv
    words = cmd.words[cmd.start :]
    if not argv or argv[0].rsplit("/", 1)[-1] != "git":
        return None
    i = 1
    directory = None
    while i < len(argv) and argv[i].startswith("-"):
        opt = argv[i]
        if opt in _GIT_GLOBAL_VALUE_OPTS and i + 1 < len(argv):
            if opt == "-C":
                directory = argv[i + 1] if directory is None else posixpath.join(directory, argv[i + 1])
            i += 2
        else:
            i += 1
    if i >= len(argv):
        return None
    return GitCall(argv[i], tuple(words[i + 1 :]), directory, cmd)


@dataclass(frozen=True)
class Clone:
    """A `git clone` with what later steps need to know about it."""

    url: str
    repo: str  # the URL's last path segment without `.git`, lower case (`vllm-ascend`)
    path: str | None  # the directory it creates, absolute and normalised; None when unknown
    depth: str | None  # `--depth` value (a shallow clone)
    branch: str | None  # `--branch`/`-b`
    line: int


def clone_operands(args: list[str]) -> tuple[str, str, dict[str, str]] | None:
    """The arguments after `git clone` (unquoted): its URL, the folder it creates as written (the URL's last
    segment without `.git` when none is given) and its options; None without a URL. An option's value is no
    operand (`--branch master URL`)."""
    opts: dict[str, str] = {}
    positional: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a.startswith("-") and len(a) > 1:
            name, eq, value = a.partition("=")
            if not eq and name in _CLONE_VALUE_OPTS and i + 1 < len(args):
                value = args[i + 1]
                i += 1
            opts[name] = value
        else:
            positional.append(a)
        i += 1
    if not positional:
        return None
    url = positional[0]
    return url, positional[1] if len(positional) > 1 else repo_name(url), opts


def repo_name(url: str) -> str:
    """The repository a clone URL names, as the folder `git clone` makes (`vllm-ascend` for
    `https://github.com/vllm-project/vllm-ascend.git` or `git@host:vllm-ascend.git`)."""
    return url.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1].removesuffix(".git")


def clone_of(call: GitCall, cwd: str | None) -> Clone | None:
    from npu_review.checks.parsers.dockerfile import resolve_dir

    if call.sub != "clone":
        return None
    found = clone_operands([w.unquoted for w in call.args])
    if found is None:
        return None
    url, target, opts = found
    repo = repo_name(url).lower()
    base = cwd
    if call.directory is not None:
        base = resolve_dir(cwd, call.directory)
    path = resolve_dir(base, target)
    branch = opts.get("--branch", opts.get("-b"))
    return Clone(url, repo, path, opts.get("--depth"), branch, call.cmd.line)
