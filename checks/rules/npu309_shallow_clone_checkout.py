"""NPU309: `git clone --depth 1` followed by `git checkout <sha>` of a commit the shallow clone does not have."""

from __future__ import annotations

from collections.abc import Iterable

from npu_review.checks import lazyre
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import ASCEND_DOCKERFILE
from npu_review.checks.model import Related, Severity
from npu_review.checks.parsers.dockerfile import Command, Dockerfile, resolve_dir, steps
from npu_review.checks.parsers.gitcli import Clone, clone_of, git_call
from npu_review.checks.rule import Hit, Rule

_SHA = lazyre.compile(r"[0-9a-f]{7,40}")
_TAG = lazyre.compile(r"v?\d+(?:\.\d+)+(?:[.-]?(?:rc|post|a|b)\d+)?")
# `git checkout` options that take a value; the first other word is the ref.
_CHECKOUT_VALUE_OPTS = frozenset({"-b", "-B", "--orphan", "--conflict", "--pathspec-from-file", "-c", "--create"})


class ShallowCloneCheckout(Rule):
    """A shallow clone (`git clone --depth 1`) is followed by a checkout of a commit it did not fetch.

    Why: `--depth 1` fetches only the tip of one branch (the default branch, or `--branch X`). `git checkout
    <sha>` of any other commit then fails with "reference is not a tree" (or "pathspec did not match"), and
    a pinned sha that is the tip today fails as soon as the branch moves on. A release tag checked out after
    a default-branch shallow clone fails the same way. verl's 8.3.rc1 images cloned MindSpeed with
    `--depth 1` and checked out `f2b0977e` (#4137, fixed in #4140).

    Not reported: a `git fetch` in the clone between the two (`git fetch --depth 1 origin <sha> && git
    checkout <sha>` is the correct idiom, with the commit's full 40-character id: a server gives a commit by
    its full id only, and `git fetch origin f2b0977e` fails with "couldn't find remote ref"), `--branch <ref>`
    naming the checked-out ref, and branch names (which may be the default branch).

    Bad:
        git clone --depth 1 https://gitcode.com/Ascend/MindSpeed.git && \\
        cd MindSpeed && git checkout f2b0977e && cd ..

    Good:
        git clone --depth 1 https://github.com/NVIDIA-NeMo/Megatron-Bridge.git && \\
        cd Megatron-Bridge && git fetch --depth 1 origin de93536e0bd2d7a8a3b5c2e8f1d0c9b7a6e5f4d3 && \\
        git checkout de93536e0bd2d7a8a3b5c2e8f1d0c9b7a6e5f4d3 && cd ..

    Fix: fetch the commit by its full id first (for a full id the suggestion inserts `git fetch --depth 1
    origin <sha> && `), clone with `--branch <tag>` for a tag, or clone without `--depth`.
    """

    id = "NPU309"
    name = "shallow-clone-checkout"
    severity = Severity.ERROR
    title = "Checkout of a commit that a shallow clone did not fetch"
    kinds = frozenset({ASCEND_DOCKERFILE})

    def check_dockerfile(self, df: Dockerfile, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        shallow: dict[str, Clone] = {}  # clone path -> the shallow clone not yet deepened by a fetch
        for step in steps(df):
            git = git_call(step.cmd)
            if git is None:
                continue
            clone = clone_of(git, step.cwd)
            if clone is not None:
                if clone.path is not None:
                    shallow.pop(clone.path, None)
                    if clone.depth is not None:
                        shallow[clone.path] = clone
                continue
            where = resolve_dir(step.cwd, git.directory) if git.directory else step.cwd
            if where is None or where not in shallow:
                continue
            if git.sub in ("fetch", "pull"):
                del shallow[where]  # any fetch may bring the commit: not judged
                continue
            if git.sub not in ("checkout", "switch", "reset"):
                continue
            ref = _ref(git.sub, [w.unquoted for w in git.args])
            if ref is None:
                continue
            clone = shallow[where]
            if clone.branch is not None and ref == clone.branch:
                continue
            is_sha = bool(_SHA.fullmatch(ref)) and any(c.isdigit() for c in ref)
            if not is_sha and not (_TAG.fullmatch(ref) and clone.branch is None):
                continue
            what = f"commit `{ref}`" if is_sha else f"tag `{ref}`"
            fetched = f"the tip of `{clone.branch}`" if clone.branch else "the tip of the default branch"
            full = is_sha and len(ref) == 40
            if full:
                fix = f"Fetch it first: `git fetch --depth 1 origin {ref} && git {git.sub} {ref}`"
            elif is_sha:
                # A server gives a commit by its full id only: `git fetch origin <short sha>` asks for a ref of that
                # name and fails ("couldn't find remote ref"; replay-r9, the advice judged false).
                fix = f"Fetch it first by its full 40-character id (`git fetch` cannot fetch `{ref}` by a short id)"
            else:
                fix = f"Clone with `--branch {ref}`"
            message = (
                f"`git clone --depth {clone.depth}` on line {clone.line} fetched only {fetched} of {clone.url}, "
                f"so `git {git.sub} {ref}` cannot find {what}. {fix}, or clone without `--depth`."
            )
            line = git.cmd.words[git.cmd.start].line
            yield Hit(
                src.path,
                line,
                message,
                suggestion=_suggest(src, git.cmd, ref) if full else None,
                related=(Related(src.path, clone.line, "the shallow clone"),) if clone.line != line else (),
            )


def _ref(sub: str, args: list[str]) -> str | None:
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            return None  # paths follow: a file checkout
        if a.startswith("-"):
            if a in _CHECKOUT_VALUE_OPTS:
                if sub == "checkout" and a in ("-b", "-B", "--orphan") and i + 2 < len(args):
                    return args[i + 2]  # `git checkout -b name <start-point>`
                return None
            i += 1
            continue
        return a
    return None


def _suggest(src: SourceFile, cmd: Command, ref: str) -> str | None:
    """The checkout line with `git fetch --depth 1 origin <sha> && ` inserted before the checkout."""
    words = cmd.words[cmd.start :]
    if len({w.line for w in words}) != 1:
        return None
    line = src.line(words[0].line)
    text = " ".join(w.raw for w in words)
    if line.count(text) != 1:
        return None
    sub_at = next((i for i, w in enumerate(words) if w.unquoted in ("checkout", "switch", "reset")), None)
    if sub_at is None:
        return None
    prefix = " ".join(w.raw for w in words[:sub_at])
    return line.replace(text, f"{prefix} fetch --depth 1 origin {ref} && {text}")
