"""Reading blobs from git: batched `cat-file` exchanges and the engine's read-ahead order."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from npu_review import gitsource
from npu_review.gitsource import Git, GitTree
from tests.test_cli import git, run_cli, write


@pytest.fixture
def tree_repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    for i in range(150):
        # Long names, so that 150 requests do not fit one pipe-safe group.
        write(r, f"dir/{'x' * 200}_{i:03d}.sh", f"echo {i}\n")
    write(r, "with space.txt", "spaced\n")
    write(r, "blob.bin", b"\x00\x01binary")
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "files")
    return r


def test_cat_many_answers_every_spec_in_order(tree_repo: Path) -> None:
    g = Git(tree_repo)
    names = [f"dir/{'x' * 200}_{i:03d}.sh" for i in range(150)]
    specs = ["HEAD:with space.txt", "HEAD:missing file", "HEAD:bad\nname", "HEAD:dir", *[f"HEAD:{n}" for n in names]]
    assert sum(len(s) + 1 for s in specs) > gitsource._PIPE_SAFE_BYTES  # more than one group
    got = g.cat_many(specs)
    assert got[:4] == [b"spaced\n", None, None, None]  # missing, unaskable (newline) and a tree: None
    assert got[4:] == [f"echo {i}\n".encode() for i in range(150)]
    # The long-lived process is still in step after all that.
    assert g.cat("HEAD:with space.txt") == b"spaced\n"
    g.close()


@pytest.fixture
def counted(tree_repo: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[GitTree, list[int]]]:
    """The repository's HEAD tree, and the size of every cat-file exchange it makes."""
    g = Git(tree_repo)
    tree = GitTree(g, g.resolve("HEAD"))
    calls: list[int] = []
    real = g.cat_many

    def counting(specs: list[str]) -> list[bytes | None]:
        calls.append(len(specs))
        return real(specs)

    monkeypatch.setattr(g, "cat_many", counting)
    yield tree, calls
    g.close()


def test_announced_order_is_read_ahead_in_batches(counted: tuple[GitTree, list[int]]) -> None:
    tree, calls = counted
    order = [p for p in tree.paths() if p.endswith(".sh")]
    tree.read_order(order)
    texts = []
    for i, path in enumerate(order):
        texts.append(tree.read(path))
        if i == 10:  # a read out of order in between (context) neither uses nor drops the read-ahead
            assert tree.read("with space.txt") == "spaced\n"
    assert texts == [f"echo {i}\n" for i in range(150)]
    assert calls == [64, 1, 64, 22]
    assert tree.read("blob.bin") is None  # binary
    assert tree.read("no/such/file") is None


def test_reads_outside_the_announced_order_are_read_ahead_by_extension(counted: tuple[GitTree, list[int]]) -> None:
    tree, calls = counted
    scripts = [p for p in tree.paths() if p.endswith(".sh")]  # what a rule indexing every script reads
    assert [tree.read(p) for p in scripts] == [f"echo {i}\n" for i in range(150)]
    assert tree.read("with space.txt") == "spaced\n"
    assert calls == [64, 64, 22, 1]  # the .sh files in three exchanges, then the only .txt file


@pytest.mark.parametrize("literal", [64, 0], ids=["paths-named-each", "paths-by-name"])
def test_paths_mentioning_through_git_grep_is_the_answer_of_reading_every_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, literal: int
) -> None:
    """`Context.paths_mentioning` on a git tree narrows with `git grep` first, naming a few paths each or covering
    more by their names; the paths it returns are those that reading every file gives (a MemoryTree of the same
    texts), whatever the folder, the bytes or the kind."""
    from npu_review.checks import context

    monkeypatch.setattr(context, "_LITERAL_SPECS", literal)
    from npu_review.checks.config import DEFAULT_CONFIG
    from npu_review.checks.context import Context, _name_pathspecs
    from npu_review.checks.kinds import KindMap
    from npu_review.checks.model import ChangeSet, MemoryTree
    from npu_review.gitsource import EMPTY_TREE_SHA, changeset_from_git

    r = tmp_path / "repo"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    files: dict[str, str | bytes] = {
        "ci/run.sh": "bash scripts/gen.sh\n",
        "scripts/gen.sh": "echo gen\n",
        "deep/a/b/call.sh": "sh ./gen.sh --x\n",
        "crlf.sh": "bash gen.sh\r\n",
        "latin1.sh": b"# caf\xe9\nsource gen.sh\n",
        "other.sh": "echo nothing here\n",
        ".github/workflows/ci.yml": "jobs:\n  a:\n    steps:\n      - run: bash gen.sh\n",
        "docs/x.md": "gen.sh in prose\n",
        "binary.sh": b"\x00gen.sh",
        # Names with no plain extension: narrowed by the part before the first dot (`*Dockerfile*`).
        "docker/Dockerfile.ascend_8.2.rc1_a2": "RUN bash /opt/gen.sh\n",
        "docker/Dockerfile.ascend_8.2.rc1_a3": "RUN echo a3\n",
        "docker/Dockerfile": "RUN sh gen.sh\n",
        "Makefile": "all:\n\tbash gen.sh\n",
    }
    for path, text in files.items():
        write(r, path, text)
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "files")
    config = DEFAULT_CONFIG
    on_git, _ = changeset_from_git(str(r), EMPTY_TREE_SHA)
    texts = {p: (t if isinstance(t, str) else None) for p, t in files.items()}
    texts["latin1.sh"] = gitsource.decode_blob(files["latin1.sh"])  # type: ignore[arg-type]
    texts["crlf.sh"] = gitsource.decode_blob(files["crlf.sh"].encode())  # type: ignore[union-attr]
    in_memory = ChangeSet(head=MemoryTree(texts), base=MemoryTree({}), changes={}, audit=True)
    shells = sorted(p for p in files if p.endswith(".sh"))
    answers = []
    for changeset in (on_git, in_memory):
        ctx = Context(changeset, config, KindMap(config.paths, config.facts.file_kinds))
        answers.append(
            (
                ctx.paths_mentioning(["gen.sh"], shells),
                ctx.paths_mentioning(["gen.sh", "nothing"], [*shells, ".github/workflows/ci.yml", "docs/x.md"]),
                ctx.paths_mentioning(["café"], shells),  # not ASCII: every file read, no narrowing
                ctx.paths_mentioning(["absent"], shells),
                ctx.paths_mentioning(["gen.sh"], [p for p in files if "Dockerfile" in p or p == "Makefile"]),
            )
        )
    assert answers[0] == answers[1]
    assert answers[0][0] == ["ci/run.sh", "crlf.sh", "deep/a/b/call.sh", "latin1.sh"]
    assert answers[0][1] == [
        "ci/run.sh",
        "crlf.sh",
        "deep/a/b/call.sh",
        "latin1.sh",
        "other.sh",
        ".github/workflows/ci.yml",
        "docs/x.md",
    ]
    assert answers[0][3] == []
    assert answers[0][4] == ["docker/Dockerfile.ascend_8.2.rc1_a2", "docker/Dockerfile", "Makefile"]
    # A few paths are named each (git reads those blobs alone); more are covered by their names.
    assert _name_pathspecs(["setup.py", "a/b.sh"], literal=64) == [":(literal)setup.py", ":(literal)a/b.sh"]
    specs = _name_pathspecs(
        ["docker/Dockerfile.ascend_8.2.rc1_a2", "docker/Dockerfile", "Makefile", "a/run.sh"], literal=0
    )
    assert specs == ["*.sh", "*Dockerfile*", "*Makefile*"]
    assert _name_pathspecs(["docker/.env"], literal=0) is None  # nothing before the dot: no plain pathspec
    # A numbered copy is no extension; nine extensions are too many, the names' first parts are few.
    assert _name_pathspecs(["d/Dockerfile.29006", "d/Dockerfile.29007"], literal=0) == ["*Dockerfile*"]
    many = [f"scripts/run.{ext}" for ext in ("sh", "bash", "py", "yml", "yaml", "md", "rst", "txt", "cfg")]
    assert _name_pathspecs(many, literal=0) == ["*run*"]
    grep = GitTree(Git(str(r)), git(r, "rev-parse", "HEAD").strip()).grep(["gen.sh"], ["*.sh"])
    assert grep is not None and {"ci/run.sh", "binary.sh", "scripts/gen.sh"} - grep == {"scripts/gen.sh"}


def test_a_base_listed_from_its_head_is_the_listing_of_its_commit(tmp_path: Path) -> None:
    """A change's base tree lists its blobs from the head's and the entries that differ (`git diff-tree`): the
    same paths and object ids as `git ls-tree` of the base, whatever the change does to an entry."""
    r = tmp_path / "repo"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    for path, text in {
        "keep.txt": "same\n",
        "edit.sh": "echo 1\n",
        "gone.md": "bye\n",
        "moved/from.py": "x = 1\n" * 20,
        "run.sh": "echo run\n",
        "link": "target\n",
        "was_dir/inner.txt": "inner\n",
        "was_file": "file\n",
        "caf\u00e9.md": "accent\n",
    }.items():
        write(r, path, text)
    git(r, "add", "-A")
    git(r, "update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},sub/old")  # a submodule the head drops
    git(r, "commit", "-q", "-m", "base")
    base = git(r, "rev-parse", "HEAD").strip()
    write(r, "edit.sh", "echo 2\n")
    (r / "gone.md").unlink()
    (r / "moved" / "from.py").rename(r / "moved" / "to.py")
    (r / "run.sh").chmod(0o755)
    (r / "link").unlink()
    (r / "link").symlink_to("keep.txt")
    (r / "was_dir" / "inner.txt").unlink()
    (r / "was_dir").rmdir()
    write(r, "was_dir", "now a file\n")
    (r / "was_file").unlink()
    write(r, "was_file/inner.txt", "now a folder\n")
    write(r, "new.yml", "on: push\n")
    write(r, b"raw\xff.txt".decode("utf-8", "surrogateescape"), "odd bytes\n")
    git(r, "add", "-A")
    git(r, "update-index", "--force-remove", "sub/old")
    git(r, "update-index", "--add", "--cacheinfo", f"160000,{'2' * 40},sub/new")  # a submodule the head adds
    git(r, "commit", "-q", "-m", "head")
    head = git(r, "rev-parse", "HEAD").strip()

    g = Git(r)
    for older, newer in ((base, head), (head, base)):
        near = GitTree(g, newer)
        tree = GitTree(g, older, near=near)
        assert tree._all() == g.ls_tree(older) and tree._all() is not near._all()
        assert list(tree.paths()) == sorted(g.ls_tree(older))
        assert [tree.read(p) for p in tree.paths()] == [GitTree(g, older).read(p) for p in tree.paths()]
    assert "sub/old" not in GitTree(g, base, near=GitTree(g, head))._all()  # a gitlink is no blob
    cs, _git = gitsource.changeset_from_git(str(r), base, head)
    assert cs.base._all() == g.ls_tree(base)  # type: ignore[attr-defined]
    assert cs.head._all() == g.ls_tree(head)  # type: ignore[attr-defined]
    g.close()
    _git.close()


def test_a_change_base_listing_is_kept_by_its_tree_and_serves_the_next_review(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With `keep` (the CLI's `check --base`) and a cache folder, the base's listing is kept by the id of its tree:
    the next review on that base lists nothing, and both trees' listings are git's. Four listings stay."""
    from npu_review.checks import diskcache

    monkeypatch.setattr(diskcache, "_folder", str(tmp_path / "cache"))
    r = tmp_path / "repo"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    commits = []
    for k in range(7):
        write(r, f"f{k}.sh", f"echo {k}\n")
        git(r, "add", "-A")
        git(r, "commit", "-q", "-m", str(k))
        commits.append(git(r, "rev-parse", "HEAD").strip())
    listed: list[str] = []
    ls_tree = gitsource.Git.ls_tree

    def counted(self: Git, rev: str) -> dict[str, str]:
        listed.append(rev)
        return ls_tree(self, rev)

    monkeypatch.setattr(gitsource.Git, "ls_tree", counted)
    for _ in range(2):
        cs, g = gitsource.changeset_from_git(str(r), commits[0], commits[1], keep=True)
        assert cs.base._all() == ls_tree(g, commits[0])  # type: ignore[attr-defined]
        assert cs.head._all() == ls_tree(g, commits[1])  # type: ignore[attr-defined]
        assert cs.base.tree_id() == git(r, "rev-parse", f"{commits[0]}^{{tree}}").strip()  # type: ignore[attr-defined]
        g.close()
    assert listed == [commits[0]]
    for base, head in itertools.pairwise(commits):
        cs, g = gitsource.changeset_from_git(str(r), base, head, keep=True)
        assert list(cs.head.paths()) == sorted(ls_tree(g, head))
        g.close()
    assert len(list((tmp_path / "cache").glob("tree-listing-*.pickle"))) == gitsource._KEPT_LISTINGS
    cs, g = gitsource.changeset_from_git(str(r), commits[0], commits[1])  # without `keep`: listed, not kept
    assert cs.base._all() == ls_tree(g, commits[0])  # type: ignore[attr-defined]
    g.close()
    assert listed[-1] == commits[0]


@pytest.mark.parametrize(
    ("remotes", "expected"),
    [
        ([("origin", "https://gitcode.com/Ascend/op-plugin.git")], "Ascend/op-plugin"),
        ([("origin", "git@gitee.com:ascend/pytorch.git")], "ascend/pytorch"),
        ([("origin", "https://gitlab.example.com/group/sub/kit.git")], "sub/kit"),
        # origin first, whichever host; without origin a github.com remote before the others
        ([("upstream", "https://github.com/acme/kit"), ("origin", "https://gitcode.com/me/kit.git")], "me/kit"),
        ([("mirror", "https://gitcode.com/me/kit.git"), ("upstream", "https://github.com/acme/kit")], "acme/kit"),
        ([("origin", "/srv/git/kit.git")], ""),
        ([], ""),
    ],
)
def test_remote_repository_is_owner_and_name_on_any_host(
    tree_repo: Path, remotes: list[tuple[str, str]], expected: str
) -> None:
    for name, url in remotes:
        git(tree_repo, "remote", "add", name, url)
    assert Git(str(tree_repo)).remote_repository() == expected


@pytest.fixture
def repo_missing_blob(tmp_path: Path) -> Path:
    """Two commits; the second's new blob of `docs/guide.md` is then removed from the object store, as a partial
    clone or a mirror that leaves large files out has it."""
    r = tmp_path / "partial"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    write(r, "Dockerfile", "FROM ubuntu:22.04\nRUN echo hi\n")
    write(r, "docs/guide.md", "# Guide\n")
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "one")
    write(
        r,
        "Dockerfile",
        "FROM ubuntu:22.04\nRUN apt-get update && apt-get install -y wget\n"
        "RUN wget --no-check-certificate https://example.com/Ascend-cann-toolkit.run\n",
    )
    write(r, "docs/guide.md", "# Guide on Ascend NPU\n")
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "two")
    blob = git(r, "rev-parse", "HEAD:docs/guide.md").strip()
    (r / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    return r


def test_a_change_with_a_missing_blob_is_reviewed_without_that_file(
    repo_missing_blob: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    g = Git(repo_missing_blob)
    with pytest.raises(gitsource.GitError, match="unable to read"):
        g.diff("HEAD~1", "HEAD")  # what git itself does with the whole change
    cs, _ = gitsource.changeset_from_git(str(repo_missing_blob), "HEAD~1", "HEAD", git=g)
    assert cs.unreadable == ("docs/guide.md",)
    assert cs.changes["docs/guide.md"].binary and cs.changes["docs/guide.md"].added_lines == frozenset()
    assert cs.changes["Dockerfile"].added_lines == frozenset({2, 3})
    g.close()

    code, out, err = run_cli(
        capsys, "check", "--repo", str(repo_missing_blob), "--base", "HEAD~1", "--format", "json", "--fail-on", "never"
    )
    doc = json.loads(out)
    assert code == 0
    assert [(f["rule"], f["path"], f["line"]) for f in doc["findings"]] == [("NPU301", "Dockerfile", 3)]
    assert doc["errors"] == [
        "docs/guide.md: not reviewed: its content is not in this repository (a partial clone or mirror leaves it out)"
    ]
    assert "Traceback" not in err


def test_replay_reviews_a_commit_with_a_missing_blob(
    repo_missing_blob: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_cli(capsys, "replay", "--repo", str(repo_missing_blob), "--since", "HEAD~1", "--format", "json")
    (commit,) = json.loads(out)["commits"]
    assert code == 0
    assert [(f["rule"], f["path"], f["line"]) for f in commit["findings"]] == [("NPU301", "Dockerfile", 3)]
    assert commit["errors"] == [
        "docs/guide.md: not reviewed: its content is not in this repository (a partial clone or mirror leaves it out)"
    ]


def test_a_missing_blob_that_rename_detection_would_read_leaves_the_rest_reviewed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """aigc-apps/VideoX-Fun e1e7145c: a commit that adds a video the mirror left out and deletes other files. Rename
    detection compares added and deleted blobs, so even `git diff --raw -M` fails on the missing one; the paths are
    listed without it first, and a real rename beside it is still a rename (rs-r39)."""
    r = tmp_path / "partial"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    write(r, "app.py", "print('old app')\n" * 20)
    write(r, "scripts/run.sh", "#!/bin/bash\necho run\n" * 10)
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "one")
    git(r, "rm", "-q", "app.py")
    git(r, "mv", "scripts/run.sh", "scripts/run_npu.sh")
    write(r, "docs/clip.mp4", "not really a video\n" * 20)
    write(
        r,
        "Dockerfile",
        "FROM ubuntu:22.04\nRUN apt-get update && apt-get install -y wget\n"
        "RUN wget --no-check-certificate https://example.com/Ascend-cann-toolkit.run\n",
    )
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "two")
    blob = git(r, "rev-parse", "HEAD:docs/clip.mp4").strip()
    (r / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    cs, g = gitsource.changeset_from_git(str(r), "HEAD~1", "HEAD")
    assert cs.unreadable == ("docs/clip.mp4",)
    assert {p: (c.status.value, c.old_path, c.binary) for p, c in cs.changes.items()} == {
        "Dockerfile": ("added", None, False),
        "app.py": ("deleted", None, False),
        "docs/clip.mp4": ("added", None, True),
        "scripts/run_npu.sh": ("renamed", "scripts/run.sh", False),
    }
    g.close()
    code, out, _ = run_cli(capsys, "replay", "--repo", str(r), "--since", "HEAD~1", "--format", "json")
    (commit,) = json.loads(out)["commits"]
    assert code == 0
    assert [(f["rule"], f["path"], f["line"]) for f in commit["findings"]] == [("NPU301", "Dockerfile", 3)]
    assert commit["errors"] == []  # (no rule reads a video: nothing of the review is lost, nothing to say)


def test_the_diff_is_read_as_its_hunks_with_the_same_changes_and_none_of_the_text(tmp_path: Path) -> None:
    """`Git.diff` keeps every header and hunk of `git diff -U0` and cuts each line the hunks hold to its mark: the
    parse gives the same files, statuses and added lines as the whole diff, lines that look like headers
    (`--- x`, `+++ y`, `@@ ...`) and a missing final newline included, and no line's text is held."""
    from npu_review.checks.diffing import parse_unified_diff

    r = tmp_path / "repo"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    write(r, "a.txt", "one\n--- a/fake\n+++ b/fake\ntwo\n")
    write(r, "gone.txt", "bye\n")
    write(r, "old/name.sh", "echo " + "long " * 50 + "\n" * 3)
    write(r, "blob.bin", b"\x00\x01")
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "base")
    write(r, "a.txt", "one\n+++ b/fake2\n@@ -1 +1 @@ still text\ntwo\nthree")
    (r / "gone.txt").unlink()
    (r / "old").rename(r / "new")
    write(r, "new/name.sh", "echo " + "long " * 50 + "\n" * 3 + "echo more\n")
    write(r, "blob.bin", b"\x00\x02")
    write(r, "added.md", "# new\n" + "x\n" * 5)
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "change")
    whole = git(r, "diff", "--no-color", "-U0", "-M", "HEAD~1", "HEAD")
    cut = Git(r).diff("HEAD~1", "HEAD")
    assert parse_unified_diff(cut) == parse_unified_diff(whole)
    assert set(parse_unified_diff(cut)) == {"a.txt", "gone.txt", "new/name.sh", "blob.bin", "added.md"}
    assert parse_unified_diff(cut)["a.txt"].added_lines == frozenset({2, 3, 5})
    assert "fake2" not in cut and "long" not in cut and "# new" not in cut


def test_a_diff_git_refuses_is_a_clear_error(tmp_path: Path) -> None:
    r = tmp_path / "repo"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    with pytest.raises(gitsource.GitError, match=r"^git diff failed: "):
        Git(r).diff("nope", "HEAD")
