"""Reading blobs from git: batched `cat-file` exchanges and the engine's read-ahead order."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from npu_review import gitsource
from npu_review.gitsource import Git, GitTree
from tests.test_cli import git, write


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


@pytest.fixture
def recorded(
    tree_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[GitTree, Git, list[tuple[Git, list[str]]]]]:
    """The HEAD tree, its reader, and every cat-file exchange (which reader, the specs asked), threads included."""
    g = Git(tree_repo)
    tree = GitTree(g, g.resolve("HEAD"))
    exchanges: list[tuple[Git, list[str]]] = []
    real = Git.cat_many

    def recording(self: Git, specs: list[str]) -> list[bytes | None]:
        exchanges.append((self, list(specs)))
        return real(self, specs)

    monkeypatch.setattr(Git, "cat_many", recording)
    yield tree, g, exchanges
    g.close()


def _sha(tree: GitTree, path: str) -> str:
    return tree._all()[path]


def test_announced_order_is_read_ahead_by_a_thread(recorded: tuple[GitTree, Git, list[tuple[Git, list[str]]]]) -> None:
    tree, g, exchanges = recorded
    order = [p for p in tree.paths() if p.endswith(".sh")]
    tree.read_order(order)
    texts = []
    for i, path in enumerate(order):
        texts.append(tree.read(path))
        if i == 10:  # a read out of order in between (context) neither uses nor drops the read-ahead
            assert tree.read("with space.txt") == "spaced\n"
    assert texts == [f"echo {i}\n" for i in range(150)]
    # Every announced blob was fetched exactly once: by the thread (its own reader, at most 64 per exchange),
    # or by the caller for a path it asked for before the thread got to it.
    ahead = [specs for reader, specs in exchanges if reader is not g]
    assert ahead and all(len(specs) <= 64 for specs in ahead)
    fetched = [spec for _, specs in exchanges for spec in specs]
    assert sorted(fetched) == sorted([_sha(tree, p) for p in order] + [_sha(tree, "with space.txt")])
    assert tree.read("blob.bin") is None  # binary
    assert tree.read("no/such/file") is None
    # A path read again (its text let go by the engine) is read anew, by the caller.
    assert tree.read(order[0]) == "echo 0\n"


def test_read_ahead_holds_a_bounded_amount(
    recorded: tuple[GitTree, Git, list[tuple[Git, list[str]]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    tree, _, _ = recorded
    monkeypatch.setattr(gitsource, "_AHEAD_BYTES", 10)  # one exchange ahead at most
    order = [p for p in tree.paths() if p.endswith(".sh")]
    tree.read_order(order)
    ahead = tree._ahead
    assert ahead is not None
    assert [tree.read(p) for p in order[:70]] == [f"echo {i}\n" for i in range(70)]
    ahead._thread.join(timeout=0.2)
    assert ahead._thread.is_alive()  # waiting for the reader: 80 blobs are not fetched yet
    assert sum(len(d or b"") for d in ahead._ready.values()) <= 10 + 64 * len("echo 100\n")
    assert [tree.read(p) for p in order[70:]] == [f"echo {i}\n" for i in range(70, 150)]
    ahead._thread.join(timeout=5)
    assert not ahead._thread.is_alive()


def test_a_new_order_stops_the_last_read_ahead(recorded: tuple[GitTree, Git, list[tuple[Git, list[str]]]]) -> None:
    tree, _, _ = recorded
    order = [p for p in tree.paths() if p.endswith(".sh")]
    tree.read_order(order)
    first = tree._ahead
    tree.read_order(order[:5])
    assert first is not None and first._stop
    first._thread.join(timeout=5)
    assert not first._thread.is_alive()
    assert [tree.read(p) for p in order[:5]] == [f"echo {i}\n" for i in range(5)]


def test_a_forked_child_reads_without_the_parents_thread(tree_repo: Path) -> None:
    import os

    g = Git(tree_repo)
    tree = GitTree(g, g.resolve("HEAD"))
    order = [p for p in tree.paths() if p.endswith(".sh")]
    tree.read_order(order)
    assert tree.read(order[0]) == "echo 0\n"
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: no read-ahead thread here; every read must still come back
        try:
            ok = [tree.read(p) for p in order] == [f"echo {i}\n" for i in range(150)]
            os.write(w, b"ok" if ok else b"wrong")
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as pipe:
        answer = pipe.read()
    os.waitpid(pid, 0)
    assert answer == b"ok"
    g.close()


def test_reads_outside_the_announced_order_are_read_ahead_by_extension(counted: tuple[GitTree, list[int]]) -> None:
    tree, calls = counted
    scripts = [p for p in tree.paths() if p.endswith(".sh")]  # what a rule indexing every script reads
    assert [tree.read(p) for p in scripts] == [f"echo {i}\n" for i in range(150)]
    assert tree.read("with space.txt") == "spaced\n"
    assert calls == [64, 64, 22, 1]  # the .sh files in three exchanges, then the only .txt file
