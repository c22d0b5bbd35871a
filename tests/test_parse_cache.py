"""The parses kept between runs (checks.context.ParseCache): the same findings, each blob parsed once, bounded."""

from __future__ import annotations

from npu_review.checks.context import ParseCache
from npu_review.checks.engine import run
from npu_review.checks.model import ChangeSet, ChangeStatus, FileChange, MemoryTree

DOCKERFILE = "FROM quay.io/ascend/cann:8.2.rc1-910b-ubuntu22.04-py3.11\nRUN wget --no-check-certificate https://example.com/k.run\n"


def test_a_parse_is_kept_by_text_and_the_oldest_leaves_first() -> None:
    cache = ParseCache(max_text_chars=10)
    made: list[str] = []

    def make(text: str) -> str:
        made.append(text)
        return text.upper()

    assert cache.get("p", "a", "12345", lambda: make("12345")) == "12345"
    assert cache.get("p", "a", "12345", lambda: make("12345")) == "12345"
    assert cache.get("p", "b", "abcde", lambda: make("abcde")) == "ABCDE"
    assert cache.get("p", "c", "vwxyz", lambda: make("vwxyz")) == "VWXYZ"  # 15 chars: "a" leaves
    assert cache.get("p", "a", "12345", lambda: make("12345")) == "12345"
    assert cache.get("p", "a", "changed", lambda: make("changed")) == "CHANGED"  # another text: another parse
    assert made == ["12345", "abcde", "vwxyz", "12345", "changed"]
    assert cache.get("p", "big", "x" * 11, lambda: "not kept") == "not kept"
    assert cache.get("p", "big", "x" * 11, lambda: "made again") == "made again"


def _changeset(head: dict[str, str], base: dict[str, str], changed: str) -> ChangeSet:
    lines = frozenset(range(1, head[changed].count("\n") + 1))
    return ChangeSet(
        head=MemoryTree(head),
        base=MemoryTree(base),
        changes={changed: FileChange(changed, ChangeStatus.MODIFIED, added_lines=lines)},
    )


def test_reviews_of_one_base_share_the_unchanged_files_parses() -> None:
    base = {f"docker/ascend/Dockerfile.{i}": DOCKERFILE for i in range(5)}
    base["docker/ascend/Dockerfile.0"] = DOCKERFILE.replace("k.run", "j.run")
    first = {**base, "docker/ascend/Dockerfile.0": DOCKERFILE + "RUN echo one\n"}
    second = {**base, "docker/ascend/Dockerfile.1": DOCKERFILE + "RUN echo two\n"}
    cache = ParseCache()
    for head, changed in ((first, "docker/ascend/Dockerfile.0"), (second, "docker/ascend/Dockerfile.1")):
        alone = run(_changeset(head, base, changed))
        shared = run(_changeset(head, base, changed), parses=cache)
        assert shared.findings == alone.findings and alone.findings
    assert cache.hits > 0
