"""ChangeSets from a git repository (bare ones too): content is read from git objects, never the work tree.

Git runs as a subprocess with fixed arguments; nothing from the repository under review is executed
(no hooks, no external diff drivers, no textconv).
"""

from __future__ import annotations

import bisect
import os
import subprocess
import threading
import weakref
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO

from npu_review.checks import lazyre
from npu_review.checks.model import ChangeSet, ChangeStatus, FileChange, MemoryTree, Tree
from npu_review.checks.textio import decode_blob

# Git must not consult the user's or the repository's pager, external diff or text conversion.
_GIT_ENV = {"GIT_PAGER": "cat", "GIT_EXTERNAL_DIFF": "", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
# A remote URL on github.com: https://github.com/o/n(.git), git@github.com:o/n.git, ssh://git@github.com/o/n.
# A remote's URL on any host (GitHub, GitCode, Gitee, a GitLab group): the last two segments of its path are the
# repository's owner and name (`https://gitcode.com/Ascend/op-plugin.git`, `git@github.com:owner/name`).
_REMOTE_URL = lazyre.compile(
    r"(?:[a-z+]+://(?:[^@/]+@)?[^/]+/|[^@/:]+@[^:/]+:)(?:[^/]+/)*?(?P<owner>[A-Za-z0-9][A-Za-z0-9_.-]*)/"
    r"(?P<name>[A-Za-z0-9._-]+?)(?:\.git)?/?$"
)
# A hunk header of `git diff`: the counts of the lines it removes and adds (absent: 1).
_HUNK = lazyre.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")
_SAFE = ["-c", "core.quotePath=false", "-c", "diff.noprefix=false", "-c", "core.hooksPath=/dev/null"]


# Bytes of `cat-file --batch` requests written before their answers are read: well under a pipe's buffer.
_PIPE_SAFE_BYTES = 16 * 1024
# Blobs fetched together when the engine reads in the order it announced.
_READ_AHEAD = 64
# The paths after a read outside the announced order looked at for the next ones of its extension to fetch.
_SCAN_AHEAD = 4096
# Listings of base trees kept in the cache folder (GitTree's `keep`): ~3 MB each at 40,000 paths.
_KEPT_LISTINGS = 4


class GitError(RuntimeError):
    """A repository or revision problem; the message is one line for the user."""


def _failed(args: list[str], stderr: bytes, code: int) -> GitError:
    """The error of a git command that failed: its last line on stderr, else its exit status."""
    msg = stderr.decode("utf-8", "replace").strip().splitlines()
    return GitError(f"git {args[0]} failed: {msg[-1] if msg else 'exit ' + str(code)}")


class Git:
    def __init__(self, repo: str | Path) -> None:
        self.repo = str(repo)
        if not Path(self.repo).exists():
            raise GitError(f"{self.repo}: no such directory")
        out = self._run(["rev-parse", "--git-dir"], check=False)
        if out is None:
            raise GitError(f"{self.repo}: not a git repository")
        self._batch: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._remote_repository: str | None = None
        _OPEN.add(self)

    def _after_fork(self) -> None:
        """In a forked child: the parent's `cat-file` pipes are the parent's; let go of our copies and start
        our own on first use."""
        if self._batch is not None:
            for pipe in (self._batch.stdin, self._batch.stdout):
                if pipe is not None:
                    pipe.close()
        self._batch = None
        self._lock = threading.Lock()

    def _run(
        self, args: list[str], check: bool = True, stdin: bytes | None = None, ok: tuple[int, ...] = (0,)
    ) -> bytes | None:
        env = {**os.environ, **_GIT_ENV}
        try:
            proc = subprocess.run(
                ["git", *_SAFE, "-C", self.repo, *args],
                input=stdin,
                capture_output=True,
                env=env,
                check=False,
            )
        except FileNotFoundError:
            raise GitError("git is not installed (needed to read the repository)") from None
        if proc.returncode not in ok:
            if not check:
                return None
            raise _failed(args, proc.stderr, proc.returncode)
        return proc.stdout

    def resolve(self, rev: str) -> str:
        out = self._run(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"], check=False)
        if not out:
            raise GitError(f"unknown revision {rev!r} in {self.repo}")
        return out.decode().strip()

    def has_commits(self) -> bool:
        return self._run(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], check=False) is not None

    def remote_repository(self) -> str:
        """ "owner/name" of the repository a remote points at (`origin` first, then a github.com remote, then any),
        "" when there is none. Read once from the repository's config. A clone from GitCode or Gitee has its name
        there too: rules know the repository's own name by it (a doc's `cd op-plugin` after cloning it)."""
        if self._remote_repository is None:
            out = self._run(["config", "--get-regexp", r"^remote\..*\.url$"], check=False) or b""
            found: list[tuple[bool, bool, str]] = []
            for line in out.decode("utf-8", "replace").splitlines():
                key, _, url = line.partition(" ")
                m = _REMOTE_URL.match(url.strip())
                if m is not None:
                    github = "github.com" in url
                    found.append((key != "remote.origin.url", not github, f"{m.group('owner')}/{m.group('name')}"))
            self._remote_repository = min(found)[2] if found else ""
        return self._remote_repository

    def is_bare(self) -> bool:
        out = self._run(["rev-parse", "--is-bare-repository"], check=False)
        return out is not None and out.strip() == b"true"

    def toplevel(self) -> str:
        out = self._run(["rev-parse", "--show-toplevel"])
        assert out is not None
        return out.decode().strip()

    def ls_tree(self, rev: str) -> dict[str, str]:
        """Every blob of the revision: path -> object id (submodules, which are commits, left out)."""
        out = self._run(["ls-tree", "-r", "-z", "--full-tree", rev])
        assert out is not None
        blobs = {}
        for entry in out.split(b"\0"):
            if not entry:
                continue
            meta, _, path = entry.partition(b"\t")
            _mode, kind, sha = meta.split(b" ")
            if kind == b"blob":
                blobs[path.decode("utf-8", "surrogateescape")] = sha.decode()
        return blobs

    def tree_changes(self, old: str, new: str) -> list[tuple[str, str, str, str, str]] | None:
        """(old mode, new mode, old object id, new object id, path) of every path whose entry differs between the
        commits `old` and `new` (plumbing: no rename detection, no configured diff options); None when git cannot
        tell."""
        out = self._run(["diff-tree", "-r", "-z", "--no-renames", old, new], check=False)
        if out is None:
            return None
        fields = out.split(b"\0")
        found = []
        for i in range(0, len(fields) - 1, 2):
            meta = fields[i].decode()
            if not meta.startswith(":"):
                return None
            old_mode, new_mode, old_id, new_id, _status = meta[1:].split(" ")
            found.append((old_mode, new_mode, old_id, new_id, fields[i + 1].decode("utf-8", "surrogateescape")))
        return found

    def ls_index(self) -> dict[str, str]:
        """Every file staged in the index: path -> object id (stage 0, or the first stage of a conflict)."""
        out = self._run(["ls-files", "-z", "--cached", "--stage"])
        assert out is not None
        blobs: dict[str, str] = {}
        for entry in out.split(b"\0"):
            if not entry:
                continue
            meta, _, path = entry.partition(b"\t")
            mode, sha, _stage = meta.split(b" ")
            if mode != b"160000":  # a submodule
                blobs.setdefault(path.decode("utf-8", "surrogateescape"), sha.decode())
        return blobs

    def grep_files(self, rev: str, needles: Sequence[str], pathspecs: Sequence[str]) -> set[str] | None:
        """The paths (at `rev`, or in the index for "") among `pathspecs` whose blob holds one of the fixed strings
        `needles`, binary files included; None when git cannot tell (then the caller reads the files itself)."""
        if not needles or not pathspecs:
            return set()
        args = ["grep", "-l", "-z", "-a", "-F", "--no-color", "--full-name"]
        for needle in needles:
            args += ["-e", needle]
        args += ["--cached"] if not rev else [rev]
        try:
            out = self._run([*args, "--", *pathspecs], check=False, ok=(0, 1))  # 1: no match
        except (GitError, OSError):
            return None
        if out is None:
            return None
        prefix = f"{rev}:".encode() if rev else b""
        found = set()
        for entry in out.split(b"\0"):
            if entry:
                found.add(entry.removeprefix(prefix).decode("utf-8", "surrogateescape"))
        return found

    def cat(self, spec: str) -> bytes | None:
        """Blob content for an object id (or `REV:path`) via one long-lived `cat-file --batch`."""
        return self.cat_many([spec])[0]

    def cat_many(self, specs: Sequence[str]) -> list[bytes | None]:
        """Several blobs in one exchange: the requests are written together, then the answers read in order,
        so git works while we wait once instead of once per blob. Requests go in groups small enough for the
        pipe (git may block writing answers while we are still writing questions otherwise)."""
        out: list[bytes | None] = [None] * len(specs)  # a spec with a newline cannot be asked: None
        asked = [
            (i, spec.encode("utf-8", "surrogateescape") + b"\n") for i, spec in enumerate(specs) if "\n" not in spec
        ]
        with self._lock:
            proc = self._batch_process()
            assert proc.stdin is not None and proc.stdout is not None
            start = 0
            while start < len(asked):
                end, size = start, 0
                while end < len(asked) and (end == start or size + len(asked[end][1]) <= _PIPE_SAFE_BYTES):
                    size += len(asked[end][1])
                    end += 1
                proc.stdin.write(b"".join(line for _, line in asked[start:end]))
                proc.stdin.flush()
                for i, _ in asked[start:end]:
                    out[i] = self._answer(proc.stdout)
                start = end
        return out

    def _batch_process(self) -> subprocess.Popen[bytes]:
        if self._batch is None:
            self._batch = subprocess.Popen(
                ["git", *_SAFE, "-C", self.repo, "cat-file", "--batch"],
                bufsize=1 << 16,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env={**os.environ, **_GIT_ENV},
            )
        return self._batch

    def tree_id(self, rev: str) -> str | None:
        """The id of the tree of commit `rev` (None when git cannot tell), asked of the `cat-file --batch` process:
        what a listing or a search of the commit is a function of."""
        if "\n" in rev:
            return None
        with self._lock:
            proc = self._batch_process()
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(f"{rev}^{{tree}}\n".encode("utf-8", "surrogateescape"))
            proc.stdin.flush()
            header = proc.stdout.readline().split()
            if len(header) != 3 or not header[2].isdigit():
                return None
            proc.stdout.read(int(header[2]) + 1)  # the tree's entries and the newline after them
        return header[0].decode() if header[1] == b"tree" else None

    @staticmethod
    def _answer(stdout: IO[bytes]) -> bytes | None:
        header = stdout.readline().split()
        if len(header) != 3 or not header[2].isdigit():
            return None  # "<spec> missing" or "ambiguous" (a spec may hold spaces)
        data = stdout.read(int(header[2]))
        stdout.read(1)  # the newline after the content
        return data if header[1] == b"blob" else None

    def diff(self, base: str, head: str | None, cached: bool = False, leave_out: Sequence[str] = ()) -> str:
        """The change as a patch with no context lines; `leave_out`: paths not to diff (exact paths)."""
        args = [
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "-U0",
            "-M",
            "--src-prefix=a/",
            "--dst-prefix=b/",
        ]
        args += ["--cached", base] if cached else [base, head or "HEAD"]
        if leave_out:
            args += ["--", ".", *(f":(exclude,literal){p}" for p in leave_out)]
        return self._headers_of_diff(args)

    def _headers_of_diff(self, args: list[str]) -> str:
        """`git diff -U0` read as it comes, each line the hunks hold cut to its mark (`+`, `-`): the added lines
        are the hunk headers' ranges, and a parse of the result sees the same files, hunks and line counts. The
        text itself is never held: a 3,730-file change of regenerated pages wrote 406 MB of diff, held twice
        over (bytes, then a 806 MiB str) before this."""
        env = {**os.environ, **_GIT_ENV}
        try:
            proc = subprocess.Popen(
                ["git", *_SAFE, "-C", self.repo, *args],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
            )
        except FileNotFoundError:
            raise GitError("git is not installed (needed to read the repository)") from None
        stdout, stderr = proc.stdout, proc.stderr
        assert stdout is not None and stderr is not None
        # stderr drained beside stdout, so that git never blocks on a full pipe of warnings
        errors: list[bytes] = []
        drain = threading.Thread(target=lambda: errors.append(stderr.read()), daemon=True)
        drain.start()
        out: list[str] = []
        left = 0  # lines of the current hunk still to come
        for raw in stdout:
            if left > 0 and raw[:1] in (b"+", b"-"):
                left -= 1
                out.append(chr(raw[0]) + "\n")
                continue
            line = raw.decode("utf-8", "surrogateescape")
            m = _HUNK.match(line)
            if m is not None:
                left = int(m.group(1) or 1) + int(m.group(2) or 1)  # removed + added (a count left out is 1)
                line = m.group(0) + "\n"  # without the text git adds after it (the enclosing function's line)
            elif not line.startswith("\\"):
                left = 0  # a file header: the hunk is over
            out.append(line)
        code = proc.wait()
        drain.join()
        if code != 0:
            raise _failed(args, b"".join(errors), code)
        return "".join(out)

    def changes(
        self, base: str, head: str | None, cached: bool = False
    ) -> tuple[list[tuple[str, str, str | None]], str, tuple[str, ...]]:
        """`raw_changes` and `diff`, and the paths left out of both because their content is missing here
        (`missing_blobs`): a commit with one file git cannot read is reviewed without that file instead of not at
        all. Rename detection reads the blobs too, so the missing paths are listed by their status alone."""
        try:
            return self.raw_changes(base, head, cached), self.diff(base, head, cached), ()
        except GitError:
            missing = self._missing(base, head, cached)
            if not missing:
                raise
            paths = tuple(p for _letter, p in missing)
            raw = self.raw_changes(base, head, cached, leave_out=paths)
            raw += [(letter, path, None) for letter, path in missing]
            return raw, self.diff(base, head, cached, leave_out=paths), paths

    def missing_blobs(self, base: str, head: str | None, cached: bool = False) -> tuple[str, ...]:
        """The paths of the change whose old or new blob this repository does not hold (a partial clone, a mirror
        that leaves large files out): git cannot diff them, and nothing can read them. Listed without rename
        detection, which reads the blobs."""
        return tuple(path for _letter, path in self._missing(base, head, cached))

    def _missing(self, base: str, head: str | None, cached: bool) -> list[tuple[str, str]]:
        """(status letter, path) of each path of `missing_blobs`."""
        args = ["diff", "--raw", "-z", "--no-renames", "--no-abbrev", "--no-ext-diff"]
        args += ["--cached", base] if cached else [base, head or "HEAD"]
        out = self._run(args, check=False)
        if not out:
            return []
        fields = out.split(b"\0")
        blobs: dict[str, list[str]] = {}
        letters: dict[str, str] = {}
        i = 0
        while i < len(fields) - 1:
            meta = fields[i].decode()
            if not meta.startswith(":"):
                i += 1
                continue
            parts = meta.split()
            path = fields[i + 1].decode("utf-8", "surrogateescape")
            letters[path] = parts[-1][0]
            for blob in parts[2:4]:
                if blob.strip("0") and parts[0][1:3] != "16" and parts[1][:2] != "16":  # not a submodule's commit
                    blobs.setdefault(blob, []).append(path)
            i += 2
        if not blobs:
            return []
        answer = self._run(["cat-file", "--batch-check"], check=False, stdin="".join(f"{b}\n" for b in blobs).encode())
        missing = [line.split()[0] for line in (answer or b"").decode().splitlines() if line.endswith(" missing")]
        return sorted({(letters[p], p) for b in missing for p in blobs.get(b, ())}, key=lambda lp: lp[1])

    def raw_changes(
        self, base: str, head: str | None, cached: bool = False, leave_out: Sequence[str] = ()
    ) -> list[tuple[str, str, str | None]]:
        """(status letter, head path, old path) from `git diff --raw -z -M`: exact paths, whatever their bytes;
        `leave_out`: paths not to list (exact paths)."""
        args = ["diff", "--raw", "-z", "-M", "--no-ext-diff"]
        args += ["--cached", base] if cached else [base, head or "HEAD"]
        if leave_out:
            args += ["--", ".", *(f":(exclude,literal){p}" for p in leave_out)]
        out = self._run(args)
        assert out is not None
        fields = out.split(b"\0")
        result: list[tuple[str, str, str | None]] = []
        i = 0
        while i < len(fields) - 1:
            meta = fields[i].decode()
            if not meta.startswith(":"):
                i += 1
                continue
            status = meta.split()[-1][0]
            if status in "RC":
                old, new = fields[i + 1], fields[i + 2]
                result.append((status, new.decode("utf-8", "surrogateescape"), old.decode("utf-8", "surrogateescape")))
                i += 3
            else:
                result.append((status, fields[i + 1].decode("utf-8", "surrogateescape"), None))
                i += 2
        return result

    def close(self) -> None:
        """End the `cat-file` child and reap it (killed when it does not end within 5 s of its input closing)."""
        batch, self._batch = self._batch, None
        if batch is not None:
            if batch.stdin:
                batch.stdin.close()
            try:
                batch.wait(timeout=5)
            except subprocess.TimeoutExpired:
                batch.kill()
                batch.wait()
            if batch.stdout:
                batch.stdout.close()


_OPEN: weakref.WeakSet[Git] = weakref.WeakSet()


def close_all() -> None:
    """Close every Git of this process: a program that ends with os._exit (the CLI) leaves no child unreaped."""
    for git in list(_OPEN):
        git.close()


def _reset_after_fork() -> None:
    for git in list(_OPEN):
        git._after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


class _Stream:
    """Paths likely read in this order, and the blobs fetched ahead of the reader (at most one window)."""

    def __init__(self, order: list[str]) -> None:
        self.order = order
        self.position = {p: i for i, p in enumerate(order)}
        self.ahead: dict[str, bytes | None] = {}


class GitTree:
    """A revision's files (or the index, with rev=""), read lazily from git objects.

    Texts are not kept: the engine's context holds what the rules are still using. Blobs are fetched 64 at a
    time, in one `cat-file` exchange, ahead of the reader: along the order the engine announces
    (`read_order`), and for any other read along the sorted paths with the same extension (what a rule that
    indexes every Python file or every doc reads next). A read-ahead that is not used costs ~30 us a blob.
    """

    def __init__(self, git: Git, rev: str, near: GitTree | None = None, keep: bool = False) -> None:
        self.git = git
        self.rev = rev
        # A tree of another commit whose listing this one's is made from, by the paths that differ (a change's
        # head beside its base: a few entries instead of a second listing of the whole tree).
        self._near = near if near is not None and near.rev and rev else None
        # The listing of a commit is kept in the cache folder (checks.diskcache) by its tree's id: a change's base,
        # which the next review of a change on it (or of the same change) lists again.
        self._keep = keep and bool(rev)
        self._tree_id: str | None = None
        self._blobs: dict[str, str] | None = None
        self._announced = _Stream([])
        # By extension: the blobs fetched ahead of a read outside the announced order (at most one window each).
        self._ahead: dict[str, dict[str, bytes | None]] = {}
        self._sorted: tuple[str, ...] | None = None

    def _all(self) -> dict[str, str]:
        if self._blobs is None:
            blobs = self._from_near() if self._near is not None else None
            if blobs is None:
                blobs = self._listing() if self.rev else self.git.ls_index()
            self._blobs = blobs
        return self._blobs

    def _listing(self) -> dict[str, str]:
        from npu_review.checks import diskcache

        tree = self.tree_id() if self._keep and diskcache.folder() is not None else None
        if tree is None:
            return self.git.ls_tree(self.rev)
        return diskcache.cached(
            "tree-listing",
            tree,
            lambda: self.git.ls_tree(self.rev),
            lambda found: isinstance(found, dict),
            _KEPT_LISTINGS,
        )

    def tree_id(self) -> str | None:
        """The id of the commit's tree (None for the index, or when git cannot tell)."""
        if self._tree_id is None and self.rev:
            self._tree_id = self.git.tree_id(self.rev)
        return self._tree_id

    def _from_near(self) -> dict[str, str] | None:
        """The blobs of `near` with the entries that differ in this commit: what `ls_tree` gives (a gitlink, a
        submodule, is no blob there either); None when git cannot tell what differs."""
        assert self._near is not None
        changes = self.git.tree_changes(self._near.rev, self.rev)
        if changes is None:
            return None
        blobs = dict(self._near._all())
        for near_mode, mode, _near_id, blob, path in changes:
            if _is_blob(near_mode):
                blobs.pop(path, None)
            if _is_blob(mode):
                blobs[path] = blob
        return blobs

    def paths(self) -> Iterable[str]:
        return self._sorted_paths()

    def _sorted_paths(self) -> tuple[str, ...]:
        if self._sorted is None:
            self._sorted = tuple(sorted(self._all()))
        return self._sorted

    def exists(self, path: str) -> bool:
        return path in self._all()

    def blob_id(self, path: str) -> str | None:
        """The file's git object id at this revision, None when absent: what its text is, without reading it."""
        return self._all().get(path)

    def read_order(self, paths: Sequence[str]) -> None:
        """A hint: the caller will read these paths in this order (other reads may come in between)."""
        self._announced = _Stream([p for p in paths if self.exists(p)])

    def _next_of_extension(self, path: str, extension: str) -> list[str]:
        """`path` and the paths after it in path order that have its extension: at most _READ_AHEAD of them, among
        the next _SCAN_AHEAD paths (a range of the sorted paths from `path`'s place, not a pass over the tree per
        extension: a change's review reads a few files of each off its announced order)."""
        paths = self._sorted_paths()
        i = bisect.bisect_left(paths, path)
        batch = [path]
        # `extension` is part of every path that has it: the test on the text first, _extension on those.
        for p in paths[i + 1 : i + _SCAN_AHEAD]:
            if extension in p and _extension(p) == extension:
                batch.append(p)
                if len(batch) == _READ_AHEAD:
                    break
        return batch

    def read(self, path: str) -> str | None:
        blobs = self._all()
        if path not in blobs:
            return None
        stream = self._announced
        if path in stream.position:
            ahead = stream.ahead
            extension = None
        else:
            extension = _extension(path)
            ahead = self._ahead.get(extension, {})
        if path in ahead:
            data = ahead.pop(path)
        else:
            # The next stretch in one exchange; what is left of the last one goes. Blobs are asked for by object
            # id: git finds those directly, where `rev:path` walks the trees.
            if extension is None:
                start = stream.position[path]
                batch = stream.order[start : start + _READ_AHEAD]
            else:
                batch = self._next_of_extension(path, extension)
            answers = self.git.cat_many([blobs[p] for p in batch])
            ahead = dict(zip(batch[1:], answers[1:], strict=True))
            if extension is None:
                stream.ahead = ahead
            else:
                self._ahead[extension] = ahead
            data = answers[0]
        return None if data is None else decode_blob(data)

    def grep(self, needles: Sequence[str], pathspecs: Sequence[str]) -> set[str] | None:
        """The paths among `pathspecs` (git pathspecs) whose blob holds one of the fixed strings `needles`, found
        by git without reading the blobs here; None when git cannot tell."""
        return self.git.grep_files(self.rev, needles, pathspecs)

    def read_bytes(self, path: str) -> bytes | None:
        """The file's bytes as stored (for what must not be decoded leniently: the repo config)."""
        blob = self._all().get(path)
        return None if blob is None else self.git.cat(blob)


def _is_blob(mode: str) -> bool:
    """A tree entry's mode is a file's or a symbolic link's (not a gitlink's, 160000, nor absent, 000000)."""
    return mode.startswith(("10", "12"))


def _extension(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    if name.startswith("Dockerfile"):  # Dockerfile, Dockerfile.ascend_9.1.0_a2
        return "Dockerfile"
    return name.rsplit(".", 1)[-1] if "." in name else name


class WorkTree:
    """Files of a work tree on disk (for `--diff`): the tracked and untracked-but-not-ignored files."""

    def __init__(self, git: Git) -> None:
        self.root = Path(git.toplevel())
        out = git._run(["ls-files", "-z", "--cached", "--others", "--exclude-standard"])
        assert out is not None
        self._paths = frozenset(p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p)

    def paths(self) -> Iterator[str]:
        yield from sorted(self._paths)

    def exists(self, path: str) -> bool:
        return path in self._paths and (self.root / path).is_file()

    def read(self, path: str) -> str | None:
        p = self.root / path
        try:
            if not p.is_file() or p.is_symlink():
                return None
            return decode_blob(p.read_bytes())
        except OSError:
            return None


_STATUS = {
    "A": ChangeStatus.ADDED,
    "M": ChangeStatus.MODIFIED,
    "D": ChangeStatus.DELETED,
    "T": ChangeStatus.MODIFIED,
}


def _merge_changes(
    raw: list[tuple[str, str, str | None]], patch_text: str, head: Tree, unreadable: Sequence[str] = ()
) -> dict[str, FileChange]:
    """Statuses and exact paths from --raw, added lines from the patch (unidiff). A path of `unreadable` (its
    content is missing here) has no lines to check: it is kept as a binary change."""
    from npu_review.checks.diffing import DiffError, parse_unified_diff  # unidiff: imported by a change's review

    try:
        patched = parse_unified_diff(patch_text)
    except DiffError:
        patched = {}
    out: dict[str, FileChange] = {}
    for letter, path, old in raw:
        status = ChangeStatus.RENAMED if letter in "RC" else _STATUS.get(letter, ChangeStatus.MODIFIED)
        info = patched.get(path)
        added = info.added_lines if info is not None else frozenset()
        binary = info.binary if info is not None else False
        if path in unreadable:
            binary = True
        elif info is None and status in (ChangeStatus.ADDED, ChangeStatus.MODIFIED, ChangeStatus.RENAMED):
            # A path unidiff could not key (odd bytes in the name): fall back to the whole file as added.
            text = head.read(path)
            binary = text is None
            if status == ChangeStatus.ADDED and text is not None:
                added = frozenset(range(1, len(text.splitlines()) + 1))
        out[path] = FileChange(path, status, old if status == ChangeStatus.RENAMED else None, added, binary)
    return out


EMPTY_TREE_SHA = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's well-known empty tree


def changeset_from_git(
    repo: str, base: str, head: str = "HEAD", title: str = "", git: Git | None = None, keep: bool = False
) -> tuple[ChangeSet, Git]:
    git = git or Git(repo)
    base_sha = EMPTY_TREE_SHA if base == EMPTY_TREE_SHA else git.resolve(base)
    head_sha = git.resolve(head)
    # The base is listed (kept in the cache folder with `keep`: the next review on the same base finds it), the
    # head made from it by the paths that differ.
    base_tree: Tree = GitTree(git, base_sha, keep=keep) if base_sha != EMPTY_TREE_SHA else MemoryTree({})
    head_tree = GitTree(git, head_sha, near=base_tree if isinstance(base_tree, GitTree) else None)
    raw, patch, unreadable = git.changes(base_sha, head_sha)
    changes = _merge_changes(raw, patch, head_tree, unreadable)
    about = git._run(["log", "-1", "--format=%cd%n%s", "--date=format:%Y-%m-%d", head_sha], check=False)
    when, _, subject = (about.decode("utf-8", "replace") if about else "").partition("\n")
    title = title or subject.strip()
    return ChangeSet(
        head=head_tree,
        base=base_tree,
        changes=changes,
        title=title,
        repository=git.remote_repository(),
        when=when.strip(),
        unreadable=unreadable,
    ), git


def changeset_staged(repo: str) -> tuple[ChangeSet, Git]:
    """The staged change (index against HEAD), as pre-commit sees it."""
    git = Git(repo)
    base_sha = git.resolve("HEAD") if git.has_commits() else None
    head_tree = GitTree(git, "")
    if base_sha is None:
        # The first commit: everything staged is added.
        changes = {
            p: FileChange(
                p,
                ChangeStatus.ADDED,
                None,
                frozenset(range(1, len((head_tree.read(p) or "").splitlines()) + 1)),
            )
            for p in head_tree.paths()
        }
        return ChangeSet(head=head_tree, changes=changes, repository=git.remote_repository()), git
    raw, patch, unreadable = git.changes(base_sha, None, cached=True)
    changes = _merge_changes(raw, patch, head_tree, unreadable)
    return (
        ChangeSet(
            head=head_tree,
            base=GitTree(git, base_sha),
            changes=changes,
            repository=git.remote_repository(),
            unreadable=unreadable,
        ),
        git,
    )


def changeset_audit(repo: str, head: str = "HEAD") -> tuple[ChangeSet, Git]:
    git = Git(repo)
    return ChangeSet(head=GitTree(git, git.resolve(head)), audit=True, repository=git.remote_repository()), git


def changeset_work_tree(repo: str) -> tuple[ChangeSet, Git]:
    """Every file of the work tree as it is (tracked and untracked-but-not-ignored), audited; HEAD is the base
    (where the config is read)."""
    git = Git(repo)
    if git.is_bare():
        raise GitError(f"{repo}: PATHs are read from the work tree, and this repository has none")
    base: Tree = GitTree(git, git.resolve("HEAD")) if git.has_commits() else MemoryTree({})
    return ChangeSet(head=WorkTree(git), base=base, audit=True, repository=git.remote_repository()), git


def changeset_from_diff(repo: str, diff_text: str) -> tuple[ChangeSet, Git]:
    """A unified diff applied to the work tree of `repo`: new content comes from the work tree."""
    git = Git(repo)
    if git.is_bare():
        raise GitError(f"{repo}: --diff reads new content from the work tree, and this repository has none")
    from npu_review.checks.diffing import parse_unified_diff

    changes = parse_unified_diff(diff_text)
    base: Tree = GitTree(git, git.resolve("HEAD")) if git.has_commits() else MemoryTree({})
    return ChangeSet(head=WorkTree(git), base=base, changes=changes, repository=git.remote_repository()), git
