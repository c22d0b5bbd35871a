"""What a change review keeps between runs in the cache folder (checks.diskcache): a file's derived value by its
path and blob id, with the blob ids of the files it read (Context.kept), and the kinds of the tree's paths. A kept
value serves the next review only while every blob it was made from is the same; the findings of a review are
the same with the cache cold, warm, or made by another change."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from npu_review import cli
from npu_review.checks import diskcache, globs
from npu_review.checks.config import DEFAULT_CONFIG
from npu_review.checks.context import Context
from npu_review.checks.kinds import KindMap
from npu_review.gitsource import changeset_audit, changeset_from_git
from tests.test_cli import git

FIXTURE = Path(__file__).parent / "fixtures" / "NPU202" / "bad_dockerfile_from_change"


def _commit(repo: Path, files: dict[str, str], message: str) -> str:
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    return repo


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setattr(diskcache, "_folder", str(cache))
    monkeypatch.setattr(diskcache, "_stores", {})
    return cache


def _context(repo: Path, base: str, head: str) -> Context:
    cs, _git = changeset_from_git(str(repo), base, head)
    return Context(cs, DEFAULT_CONFIG, KindMap())


def test_a_kept_value_serves_while_the_blobs_it_read_are_the_same(tmp_path: Path, folder: Path) -> None:
    repo = _repo(tmp_path)
    first = _commit(repo, {"ci/a.yml": "a\n", "ci/tag.txt": "1\n", "README.md": "x\n"}, "one")
    second = _commit(repo, {"README.md": "y\n"}, "readme")
    third = _commit(repo, {"ci/tag.txt": "2\n"}, "tag")
    made: list[str] = []

    def derive(ctx: Context) -> str:
        def make() -> tuple[str, list[str]]:
            made.append(ctx.changeset.head.rev)  # type: ignore[attr-defined]
            return f"{ctx.text('ci/a.yml')}+{ctx.text('ci/tag.txt')}", ["ci/tag.txt", "ci/missing.txt"]

        value = ctx.kept("test-derived", "ci/a.yml", "head", make)
        diskcache.flush()
        return value

    assert derive(_context(repo, first, second)) == "a\n+1\n"
    diskcache._stores.clear()  # a new process: the value comes from the folder
    assert derive(_context(repo, first, second)) == "a\n+1\n"
    assert made == [second]
    # The file it read changed: made anew, and kept for that blob.
    assert derive(_context(repo, second, third)) == "a\n+2\n"
    assert derive(_context(repo, second, third)) == "a\n+2\n"
    assert made == [second, third]
    # A file it found absent appears: made anew.
    fourth = _commit(repo, {"ci/missing.txt": "now\n"}, "add")
    assert derive(_context(repo, third, fourth)) == "a\n+2\n"
    assert made == [second, third, fourth]
    # An audit keeps nothing.
    cs, _git = changeset_audit(str(repo))
    audit = Context(cs, DEFAULT_CONFIG, KindMap())
    assert audit.kept("test-derived", "ci/a.yml", "head", lambda: ("fresh", [])) == "fresh"


def test_nothing_is_kept_without_a_folder_or_for_a_file_that_cannot_be_read(
    tmp_path: Path, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repo(tmp_path)
    first = _commit(repo, {"a.yml": "a\n"}, "one")
    (repo / "blob.bin").write_bytes(b"\x00\x01binary")
    second = _commit(repo, {}, "binary")
    ctx = _context(repo, first, second)
    assert ctx.kept("test-binary", "blob.bin", "head", lambda: ("made", [])) == "made"
    assert ctx.kept("test-binary", "blob.bin", "head", lambda: ("again", [])) == "again"
    assert ctx.kept("test-readable", "a.yml", "head", lambda: ("made", [])) == "made"
    assert ctx.kept("test-readable", "a.yml", "head", lambda: ("again", [])) == "made"
    monkeypatch.setattr(diskcache, "_folder", None)
    ctx = _context(repo, first, second)
    assert ctx.store("test-readable") is None
    assert ctx.kept("test-readable", "a.yml", "head", lambda: ("again", [])) == "again"


def _findings(repo: Path, base: str, head: str, capsys: pytest.CaptureFixture[str]) -> list[tuple[str, str, int, str]]:
    cli.main(["check", "--repo", str(repo), "--base", base, "--head", head, "--format", "json", "--fail-on", "never"])
    found = json.loads(capsys.readouterr().out)["findings"]
    return [(f["rule"], f["path"], f["line"], f["message"]) for f in found]


def test_a_review_finds_the_same_with_the_cache_cold_warm_or_made_by_another_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """NPU202's producer derives its tag from the Dockerfile the change edits; the workflow itself is the same blob
    at base and head. A cache made by reviewing the base (the workflow with the old Dockerfile) must not give the
    head the old tag."""
    monkeypatch.setenv("NPU_REVIEW_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(diskcache, "_stores", {})
    repo = _repo(tmp_path)
    empty = _commit(repo, {"README.md": "x\n"}, "start")
    shutil.copytree(FIXTURE / "base", repo, dirs_exist_ok=True)
    base = _commit(repo, {}, "base")
    shutil.copytree(FIXTURE / "head", repo, dirs_exist_ok=True)
    head = _commit(repo, {}, "head")
    message = (FIXTURE / "expected.txt").read_text().strip().split(": NPU202 warning: ", 1)[1]
    expected = [("NPU202", "docker/ascend/Dockerfile.ascend_a2", 2, message)]

    assert _findings(repo, empty, base, capsys) == []  # warms the cache with the base's products
    assert list((tmp_path / "cache").glob("image-products-*.pickle"))
    assert _findings(repo, base, head, capsys) == expected
    assert _findings(repo, base, head, capsys) == expected  # warm
    monkeypatch.setenv("NPU_REVIEW_CACHE_DIR", "")
    assert _findings(repo, base, head, capsys) == expected  # no cache at all


def test_the_kinds_of_a_trees_paths_are_kept_and_give_the_same_groups(tmp_path: Path, folder: Path) -> None:
    from npu_review.checks.engine import run

    repo = _repo(tmp_path)
    files = {
        ".github/workflows/npu.yml": "on: push\n",
        "docker/ascend/Dockerfile.a2": "FROM x\n",
        "scripts/run_npu.sh": "echo\n",
        "docs/x.md": "x\n",
    }
    first = _commit(repo, files, "one")
    second = _commit(repo, {"docs/y.md": "y\n"}, "two")
    cs, _git = changeset_from_git(str(repo), first, second)
    run(cs)
    (kept,) = folder.glob("path-kinds-*.pickle")
    fresh = KindMap()
    adopted = KindMap()
    adopted.adopt(diskcache.Store("path-kinds", kept.name[len("path-kinds-") : -len(".pickle")], 10).get("paths"))  # type: ignore[arg-type]
    paths = sorted([*files, "docs/y.md", "new/Dockerfile"])
    assert set(adopted.known) == {*files, "docs/y.md"}
    assert adopted.group(paths) == fresh.group(paths)
    assert {p: adopted.candidates(p) for p in paths} == {p: fresh.candidates(p) for p in paths}


def test_a_store_keeps_the_newest_keys_files_alone(tmp_path: Path, folder: Path) -> None:
    import os
    import time

    folder.mkdir()
    for k in range(5):
        (folder / f"image-products-{k:024x}.pickle").write_bytes(b"old")
        os.utime(folder / f"image-products-{k:024x}.pickle", (time.time() - 100 + k, time.time() - 100 + k))
    (folder / "image-builds-000000000000000000000009.pickle").write_bytes(b"another store")
    store = diskcache.store("image-products", "f" * 24)
    assert store is not None and store.get("x") is None
    store.put("x", 1)
    store.put("y", 2)
    diskcache.flush()
    kept = sorted(p.name for p in folder.iterdir())
    assert kept == [
        "image-builds-000000000000000000000009.pickle",
        f"image-products-{3:024x}.pickle",
        f"image-products-{4:024x}.pickle",
        f"image-products-{'f' * 24}.pickle",
    ]
    diskcache._stores.clear()
    again = diskcache.store("image-products", "f" * 24, limit=1)
    assert again is not None and again.get("y") == 2 and again.get("x") == 1
    again.put("z", 3)  # over the limit of 1: the least recently used go
    assert again.get("x") is None and again.get("y") is None and again.get("z") == 3


def _fixture_tree(side: str) -> tuple[dict[str, str], dict[str, str]]:
    import hashlib

    files = {
        str(p.relative_to(FIXTURE / side)): p.read_text() for p in sorted((FIXTURE / side).rglob("*")) if p.is_file()
    }
    # git's object ids: what the App has from GitHub's tree listing
    ids = {p: hashlib.sha1(b"blob %d\0" % len(t.encode()) + t.encode()).hexdigest() for p, t in files.items()}
    return files, ids


def test_a_review_process_keeps_derived_values_in_memory_by_the_trees_object_ids(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The App's review processes keep no folder: `keep_in_memory` keeps the stores in the process, keyed by the
    object ids GitHub's tree listing gives (MemoryTree's blob_ids). The second review of the same base evaluates no
    workflow again; a review whose Dockerfile differs (the producer reads it) evaluates that producer anew; the
    findings are those of a review that keeps nothing."""
    from npu_review.checks.analysis import images
    from npu_review.checks.engine import run
    from npu_review.checks.model import ChangeSet, ChangeStatus, FileChange, MemoryTree

    monkeypatch.setattr(diskcache, "_folder", None)
    monkeypatch.setattr(diskcache, "_stores", {})
    evaluated: list[str] = []
    real = images._producer_of

    def counting(ctx: Context, g: object, path: str, rev: str) -> object:
        evaluated.append(f"{rev}:{path}")
        return real(ctx, g, path, rev)  # type: ignore[arg-type]

    monkeypatch.setattr(images, "_producer_of", counting)
    base, base_ids = _fixture_tree("base")
    head, head_ids = _fixture_tree("head")
    dockerfile = "docker/ascend/Dockerfile.ascend_a2"
    change = {dockerfile: FileChange(dockerfile, ChangeStatus.MODIFIED, None, frozenset({2}))}

    def review(keep: bool) -> list[tuple[str, str, int, str]]:
        diskcache.keep_in_memory(20_000 if keep else 0)
        cs = ChangeSet(head=MemoryTree(head, (), head_ids), base=MemoryTree(base, (), base_ids), changes=dict(change))
        return [(f.rule, f.path, f.line, f.message) for f in run(cs).findings if f.rule == "NPU202"]

    try:
        plain = review(keep=False)
        assert [f[:3] for f in plain] == [("NPU202", dockerfile, 2)]
        evaluated.clear()
        assert review(keep=True) == plain
        first = sorted(evaluated)
        # The base's vllm_ascend.yml is the head's blob and reads nothing the change touched: one evaluation serves
        # both. The builder reads the Dockerfile the change edits: evaluated at each.
        wf = ".github/workflows/"
        assert first == [
            f"base:{wf}docker-build-ascend-a2.yml",
            f"head:{wf}docker-build-ascend-a2.yml",
            f"head:{wf}vllm_ascend.yml",
        ]
        evaluated.clear()
        assert review(keep=True) == plain
        assert evaluated == []  # every workflow's part kept, the Dockerfile's ids unchanged
        head[dockerfile] = head[dockerfile].replace("9.0.0", "9.1.0")
        head_ids[dockerfile] = "0" * 40
        found = review(keep=True)
        assert evaluated == ["head:.github/workflows/docker-build-ascend-a2.yml"]  # it reads the Dockerfile
        assert [f[:3] for f in found] == [("NPU202", dockerfile, 2)] and "verl-9.1.0-910b" in found[0][3]
    finally:
        diskcache.keep_in_memory(0)


def test_paths_mentioning_at_base_reads_the_touched_files_at_base_and_the_others_at_head(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    base = _commit(repo, {"a.yml": "needle\n", "b.yml": "hay\n", "c.yml": "needle too\n", "d.yml": "x\n"}, "one")
    head = _commit(repo, {"a.yml": "hay\n", "b.yml": "needle\n"}, "two")
    ctx = _context(repo, base, head)
    paths = ["a.yml", "b.yml", "c.yml", "d.yml"]
    assert ctx.paths_mentioning(["needle"], paths) == ["b.yml", "c.yml"]
    assert ctx.paths_mentioning(["needle"], paths, "base") == ["a.yml", "c.yml"]
    for rev in ("head", "base"):
        plain = [p for p in paths if (src := ctx.source(p, rev)) is not None and "needle" in src.text]
        assert ctx.paths_mentioning(["needle"], paths, rev) == plain


def test_a_search_of_the_base_is_kept_and_gives_the_heads_answer_with_the_touched_files_read(
    tmp_path: Path, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Context.paths_mentioning narrows by the base's `git grep`, kept by the base's tree: a later review of a
    change on that base searches nothing, and the answer is the head's (a touched file is read at head: one that
    starts naming the needle is found, one that stops is not; an added one is read)."""
    from npu_review import gitsource

    repo = _repo(tmp_path)
    base = _commit(
        repo, {"a.sh": "bash gen.sh\n", "b.sh": "echo\n", "c.sh": "sh gen.sh\n", "d.sh": "bash gen.sh x\n"}, "one"
    )
    (repo / "d.sh").unlink()
    head = _commit(repo, {"a.sh": "echo\n", "b.sh": "bash gen.sh\n", "e.sh": "source gen.sh\n"}, "two")
    searched: list[str] = []
    grep_files = gitsource.Git.grep_files

    def counted(self: gitsource.Git, rev: str, needles: list[str], pathspecs: list[str]) -> set[str] | None:
        searched.append(rev)
        return grep_files(self, rev, needles, pathspecs)

    monkeypatch.setattr(gitsource.Git, "grep_files", counted)
    monkeypatch.setattr("npu_review.checks.context._LITERAL_SPECS", 0)  # `*.sh`: the search covers them by name
    paths = ["a.sh", "b.sh", "c.sh", "e.sh"]
    expected = ["b.sh", "c.sh", "e.sh"]
    assert _context(repo, base, head).paths_mentioning(["gen.sh"], paths) == expected
    assert searched == [base]
    diskcache.flush()
    diskcache._stores.clear()  # a new process: the search comes from the folder
    assert _context(repo, base, head).paths_mentioning(["gen.sh"], paths) == expected
    assert searched == [base]
    monkeypatch.setattr(diskcache, "_folder", None)  # nothing kept: the head is searched, the same answer
    assert _context(repo, base, head).paths_mentioning(["gen.sh"], paths) == expected
    assert searched == [base, head]


def test_a_whole_tree_glob_pass_keeps_the_bases_answer_and_gives_each_heads(
    tmp_path: Path, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Context.paths_matching with a glob of any folder passes over every path once per base tree (kept between runs
    by the tree's id); each head's answer is the base's with the paths the change adds, deletes or renames: the
    answer of the pass over the head's paths."""
    repo = _repo(tmp_path)
    base = _commit(repo, {"setup.py": "", "a/build_x.py": "", "a/run.py": "", "ci/t.py": "", "old/setup.py": ""}, "one")
    (repo / "new").mkdir()
    git(repo, "mv", "old/setup.py", "new/setup.py")
    (repo / "a" / "build_x.py").unlink()
    head = _commit(repo, {"b/build_y.py": "", "b/other.py": "", "ci/t.py": "x = 1\n"}, "two")
    (repo / "b" / "build_y.py").unlink()
    other = _commit(repo, {"c/setup.py": ""}, "three")
    globs_ = ("**/setup.py", "**/build*.py", "ci/**/*.py")
    scans: list[int] = []
    anywhere = Context._matching_anywhere

    def counted(patterns: tuple[str, ...], paths: list[str]) -> list[str]:
        scans.append(len(paths))
        return anywhere(patterns, paths)

    def plain(ctx: Context, rev: str) -> list[str]:
        return [p for p in ctx.paths_at(rev) if any(globs.match(p, g) for g in globs_)]

    monkeypatch.setattr(Context, "_matching_anywhere", staticmethod(counted))
    for later in (head, other, head):
        ctx = _context(repo, base, later)
        for rev in ("head", "base"):
            assert ctx.paths_matching(globs_, rev) == plain(ctx, rev)
        diskcache.flush()
        diskcache._stores.clear()  # a new process
    assert len(scans) == 1  # the base's paths, once
    assert _context(repo, base, head).paths_matching(globs_) == ["b/build_y.py", "ci/t.py", "new/setup.py", "setup.py"]
    monkeypatch.setattr(diskcache, "_folder", None)
    ctx = _context(repo, base, head)
    assert ctx.paths_matching(globs_) == plain(ctx, "head")
    assert len(scans) == 2


def test_a_change_bases_paths_grouped_by_kind_are_the_groups_of_its_own_paths(tmp_path: Path) -> None:
    """The base's groups of paths by candidate kinds are made from the head's and the paths the change touches
    (Context._group): the same groups as a pass over the base's paths, whatever the change does to a path."""
    repo = _repo(tmp_path)
    files = {
        "a/run_npu.sh": "x\n",
        "b/x.sh": "x\n",
        ".github/workflows/ci.yml": "on: push\n",
        "docker/Dockerfile": "FROM x\n",
        "docs/a.md": "# a\n",
        "only/base.py": "x = 1\n",
        "README": "x\n",
    }
    base = _commit(repo, files, "one")
    git(repo, "rm", "-q", "only/base.py", "b/x.sh")
    (repo / "c").mkdir()
    git(repo, "mv", "docs/a.md", "c/a.rst")
    head = _commit(repo, {"new/y_npu.sh": "y\n", "docker/Dockerfile": "FROM y\n", "z/new.md": "z\n"}, "two")
    for older, newer in ((base, head), (head, base)):
        ctx = _context(repo, older, newer)
        assert ctx.candidate_paths(frozenset({"shell"}), "base")  # the head's groups are made first
        assert ctx._by_candidates("base") == KindMap().group(ctx.paths_at("base"))
        assert ctx._by_candidates("head") == KindMap().group(ctx.paths_at("head"))
