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
