"""NPU319: an image, build script or install guide installs the project or its Ascend stack from a moving ref (or
from a URL that is a web page, not a repository)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from npu_review.checks import lazyre
from npu_review.checks.analysis.builds import IDENTITY_PATHS, CloneUse, Identity, about_ascend, identity, runs_of
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.facts import Facts
from npu_review.checks.kinds import ASCEND_DOCKERFILE, DOCKERFILE, DOCS, SHELL
from npu_review.checks.model import Severity
from npu_review.checks.rule import Hit, Rule

# A commit id as docs state one: 7 to 40 hex digits holding both a digit and a letter (not a number, not a word).
_COMMIT = lazyre.compile(r"(?<![\w.-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w-])(?!\.\w)")
# A Dockerfile named for a release (`Dockerfile.ascend_8.5.0_a2_v0.7.1`, `Dockerfile-v1.2`).
_RELEASE_FILE = lazyre.compile(r"[_.-]v\d+\.\d+(?:\.\d+)?(?:rc\d+)?(?=$|[_.-])")
# A release tag (`v0.13.0`, `v0.11.0rc1`, `2.3.0.post1`): a clone of it does not move.
_TAG = lazyre.compile(r"v?\d+(?:\.\d+)+(?:[-.]?(?:rc|a|b|post|dev)\.?\d*)*")
_GIT_REF_COMMAND = lazyre.compile(r"git\s+(?:-C\s+\S+\s+)?(?:checkout|reset|fetch|switch|cherry-pick)\b")


class InstallsFromMovingBranch(Rule):
    """An image, a build script or an install guide clones (or `pip install git+`s) the project itself or a
    part of its Ascend stack from a moving ref, while the same file states the commit it means; builds a fork's
    default branch instead of the repository being built; or clones a URL that is a web page.

    Why: a clone without `--branch` (or with a branch) followed by no `git checkout <commit>` installs whatever
    the branch holds on the day the image is built or the guide is followed, not the commit the guide's version
    table names and its patches were made for: the patches stop applying, or the stack silently changes under
    a release. MindSpeed-RL's DeepSeek-V3.2 guide listed vllm-ascend at commit `0f812dcc58514` and applied
    patches made for it, but cloned `releases/v0.13.0` without checking it out. A build script of the
    repository that clones the project from a fork (Mooncake's Ascend build script cloned
    `AscendTransport/Mooncake`) builds the fork's default branch, not the code it ships with. A URL such as
    `https://gitcode.com/Ascend/msit/tree/master` is a web page: `git clone` fails on it.

    Bad:
        | vllm-ascend | releases/v0.13.0 | commit 0f812dcc58514 |

        ```bash
        git clone https://github.com/vllm-project/vllm-ascend.git -b releases/v0.13.0
        cd vllm-ascend
        pip install -v -e .
        ```

    Good:
        | vllm-ascend | releases/v0.13.0 | commit 0f812dcc58514 |

        ```bash
        git clone https://github.com/vllm-project/vllm-ascend.git -b releases/v0.13.0
        cd vllm-ascend
        git checkout 0f812dcc58514
        pip install -v -e .
        ```

    Fix: check out the commit the file names (`git checkout <sha>` after the clone, `pip install
    git+URL@<sha>`); build the repository's own checkout (or its upstream) rather than a fork; clone the
    repository's URL (`https://gitcode.com/Ascend/msit.git`), not its web page.

    Not reported: clones followed by a checkout, reset or fetch of a commit in their directory (in a guide that
    starts from a placeholder directory, `cd <WORKSPACE>`, the latest clone's); a clone of a
    tag or commit; a repository the file states no commit or version for (a deliberate "latest" install);
    files that are not about Ascend (in a repository that is not Ascend-only); a fork cloned by a Dockerfile or a
    doc (the owner may be an old name the forge redirects); an image that clones the project itself from its
    default branch (a deliberate "latest" image), unless the Dockerfile is named for a release (a notice).
    """

    id = "NPU319"
    name = "installs-from-moving-branch"
    severity = Severity.WARNING
    title = "The project or its Ascend stack is installed from a moving ref"
    kinds = frozenset({DOCKERFILE, ASCEND_DOCKERFILE, SHELL, DOCS})
    needles = ("git clone", "git+")

    @classmethod
    def context_paths(cls, facts: Facts) -> tuple[str, ...]:
        return IDENTITY_PATHS  # who the repository is (its name and owners)

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if not about_ascend(ctx, src):
            return
        me = identity(ctx)
        # The cheap tests first: a web page URL, the project's own name, or a commit the file states.
        low = src.text.lower()
        # the project's own name matters in a build script (a fork) and in a release image (its default branch)
        named = SHELL in src.kinds or _RELEASE_FILE.search(src.path.rsplit("/", 1)[-1]) is not None
        own = named and me is not None and re.search(r"/" + re.escape(me.name) + r"(?:\.git)?\b", low) is not None
        if not own and _WEB_CLONE.search(low) is None and not _may_state(low):
            return
        runs = runs_of(ctx, src)
        if not runs.clones:
            return
        seen: set[int] = set()
        for clone in runs.clones:
            if clone.line in seen or not ctx.is_added_line(src.path, clone.line):
                continue
            hit = self._judge(ctx, src, clone, me)
            if hit is not None:
                seen.add(clone.line)
                yield hit

    def _judge(self, ctx: Context, src: SourceFile, clone: CloneUse, me: Identity | None) -> Hit | None:
        if clone.web_page is not None:
            return self._web_page(src, clone)
        if clone.pinned:
            return None
        own = me is not None and _norm(clone.name) == _norm(me.name)
        script = SHELL in src.kinds
        if own and me is not None and clone.owner.lower() not in me.owners and script:
            # (only in a build script: a guide or an image may name an old owner the forge redirects)
            owners = ", ".join(sorted(me.owners))
            return Hit(
                src.path,
                clone.line,
                f"This {_what(src)} builds `{clone.owner}/{clone.name}`, a fork of this repository ({owners}), "
                f"from its {_ref(clone)}: not the code this repository ships with, and it moves. Build the "
                "repository's own checkout (or clone it at the ref being built).",
            )
        stated = _stated(src, clone)
        if stated is not None and _moving(clone, stated):
            kind, value, line = stated
            return Hit(
                src.path,
                clone.line,
                f"`{clone.owner}/{clone.name}` is installed from its {_ref(clone)}, but this file names {kind} "
                f"`{value}` for it (line {line}): the branch moves on, so the install (and any patch made for that "
                f"{kind}) drifts. Check out `{value}` after the clone"
                + (" (`pip install git+URL@<ref>`)" if clone.via == "pip" else "")
                + ".",
            )
        release = _RELEASE_FILE.search(src.path.rsplit("/", 1)[-1])
        if own and release and (DOCKERFILE in src.kinds or ASCEND_DOCKERFILE in src.kinds) and clone.ref is None:
            # (a "latest" image that clones the default branch on purpose is not reported: only a release's)
            return Hit(
                src.path,
                clone.line,
                f"This release image (`{release.group(0).strip('_-.')}`) installs the project itself from the default "
                f"branch of `{clone.owner}/{clone.name}`, not from the release: it holds whatever the branch has on "
                "the day it is built. Clone the release's tag or branch (or COPY the build context).",
                severity=Severity.NOTICE,
            )
        return None

    def _web_page(self, src: SourceFile, clone: CloneUse) -> Hit:
        repo_url = f"https://{clone.host}/{clone.owner}/{clone.name}.git"
        line = src.line(clone.line)
        written = clone.url
        suggestion = line.replace(written, repo_url) if line.count(written) == 1 else None
        what = "`git clone`" if clone.via == "clone" else "`pip install git+`"
        return Hit(
            src.path,
            clone.line,
            f"`{written}` is a web page of the repository (`{clone.web_page}`), not the repository: {what} fails on "
            f"it. Use `{repo_url}`"
            + (" (and `-b <ref>` for the branch)" if "/tree/" in (clone.web_page or "") else "")
            + ".",
            suggestion=suggestion,
            severity=Severity.ERROR,
        )


_WEB_CLONE = lazyre.compile(r"(?:git\s+clone\b[^\n]*?|git\+\S*?)/(?:-/)?(?:tree|blob|src)/")
_CLONED = lazyre.compile(r"(?:git\s+clone\b[^\n]*?|git\+)\S*?/([\w.-]+?)(?:\.git)?(?=[\s@#\"']|$)", re.M)


def _may_state(low: str) -> bool:
    """Whether a line of the (lower-cased) text names a cloned repository and holds a commit id: the cheap
    test before the file is evaluated."""
    names = {m.group(1) for m in _CLONED.finditer(low)}
    if not names or _COMMIT.search(low) is None:
        return False
    return any(
        _COMMIT.search(line) and not _GIT_REF_COMMAND.search(line) and any(n in line for n in names)
        for line in low.splitlines()
    )


def _what(src: SourceFile) -> str:
    if SHELL in src.kinds:
        return "build script"
    if DOCS in src.kinds:
        return "guide"
    return "image"


def _ref(clone: CloneUse) -> str:
    return "default branch" if clone.ref is None else f"branch `{clone.ref}`"


def _norm(name: str) -> str:
    return re.sub(r"[-_.]", "", name.lower())


# A URL the match is part of (no blank, quote or bracket between its scheme and the match), and a git host's URL of
# a commit (`.../commit/<sha>`, `.../tree/<sha>`), which does name one.
_URL_BEFORE = lazyre.compile(r"[a-z][a-z0-9+.-]*://[^\s\"'<>()\[\]]*\Z")
_COMMIT_URL = lazyre.compile(r"/(?:-/)?(?:commit|commits|tree|blob)/\Z")


# Another project's release written with its name (`llvmorg-19.1.7`, `gcc-12.2.0`): the commit right after it is
# that release's, not the repository's.
_VERSION = lazyre.compile(r"(?<![\w.-])([a-z][a-z0-9_.]*)-v?\d+\.\d+(?:\.\d+)?\b")


def _stated(src: SourceFile, clone: CloneUse) -> tuple[str, str, int] | None:
    """A commit the file states for the cloned repository: on a line that names the repository (as a word)
    and is not a command that fetches another one. (kind, value, line)."""
    names = {clone.name.lower(), clone.name.lower().replace("-", "_"), clone.name.lower().replace("_", "-")}
    word = re.compile(r"(?<![\w-])(?:" + "|".join(re.escape(n) for n in names) + r")(?![\w-])", re.I)
    for n, text in enumerate(src.lines, start=1):
        if n == clone.line or not word.search(text):
            continue
        if "clone" in text and clone.name.lower() not in text.lower().split("clone", 1)[1]:
            continue
        if _GIT_REF_COMMAND.search(text):
            continue  # a command that checks out another clone, not a statement of which commit is meant
        low = text.lower()
        # On a line that lists several components with their commits, the repository's is the first after its
        # name (else the nearest before it).
        at = word.search(low)
        start = at.end() if at is not None else 0
        found = list(_COMMIT.finditer(low))
        for m in [m for m in found if m.start() >= start] + [m for m in reversed(found) if m.start() < start]:
            if m.start() >= start and any(
                _norm(v.group(1)) != _norm(clone.name) for v in _VERSION.finditer(low, start, m.start())
            ):
                # Another release stands between the name and the commit: the commit is that one's ("ptoas is
                # built on LLVM/MLIR (llvmorg-19.1.7) (Commit cd70...)", hw-native-sys/PTOAS, rs-r77, judged false).
                continue
            before = low[: m.start()]
            url = _URL_BEFORE.search(before)
            if url is not None and not _COMMIT_URL.search(before):
                continue  # an id in a link (`...competitioninfo?id=d65b849bc916...`), not a commit of the repository
            if before.endswith("/"):
                # in a path: the commit of the folder it is in (`patch/mindspeed/07056df535`)
                folder = before[:-1].rsplit("/", 1)[-1]
                if _norm(folder) != _norm(clone.name):
                    continue
            return "commit", m.group(0), n
    return None


def _moving(clone: CloneUse, stated: tuple[str, str, int]) -> bool:
    if clone.ref is None:
        return True
    ref = clone.ref.lower()
    # a release tag does not move; a ref that is the stated commit is no branch
    return not (_TAG.fullmatch(ref) or stated[1].startswith(ref) or ref.startswith(stated[1]))
