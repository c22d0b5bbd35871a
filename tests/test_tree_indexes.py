"""What the passes over a whole tree build (folders, names, the detected profile, touched paths) equals what the
plain definitions give: the passes take shortcuts (a folder already known, a literal prefix before a regex)."""

from __future__ import annotations

import random

import pytest

from npu_review.checks import context, globs
from npu_review.checks import facts as facts_data
from npu_review.checks.analysis import references
from npu_review.checks.config import DEFAULT_CONFIG
from npu_review.checks.context import Context, dirs_of
from npu_review.checks.kinds import KindMap
from npu_review.checks.model import ChangeSet, ChangeStatus, FileChange, MemoryTree


def _random_paths(rng: random.Random) -> list[str]:
    # Odd shapes too (a leading or doubled `/`, an empty name): the passes must not assume git's paths.
    return ["".join(rng.choice("ab/.") for _ in range(rng.randrange(8))) for _ in range(rng.randrange(8))]


def _context(paths: list[str]) -> Context:
    return Context(ChangeSet(MemoryTree(dict.fromkeys(paths, "")), audit=True), DEFAULT_CONFIG, KindMap())


@pytest.mark.parametrize("searches", [16, 0], ids=["names-searched", "names-indexed"])
def test_folders_and_their_entries_are_those_of_every_path(monkeypatch: pytest.MonkeyPatch, searches: int) -> None:
    monkeypatch.setattr(context, "_NAMED_SEARCHES", searches)
    rng = random.Random(3)
    cases = [["verl/a/b.py", "verl/a/c.py", "verl/d.py", "docs/x.md", "README.md"], ["aa/a", "/aa/", "ba/aaa"]]
    cases += [_random_paths(rng) for _ in range(2000)]
    for paths in cases:
        folders: set[str] = set()
        entries: dict[str, set[str]] = {}
        for p in paths:
            parts = p.split("/")
            folders.update("/".join(parts[:k]) for k in range(1, len(parts)))
            for k in range(len(parts)):
                entries.setdefault("/".join(parts[:k]), set()).add(parts[k])
        assert dirs_of(paths) == folders, paths
        ctx = _context(sorted(set(paths)))
        for folder in folders | {p + "x" for p in paths} | {p.rpartition("/")[0] for p in paths}:
            assert ctx.is_head_dir(folder) == (folder in folders), (paths, folder)
        for folder, names in entries.items():
            assert references.folder_entries(ctx, folder) == names, (paths, folder)
        for other in {p + "x" for p in paths} - set(entries):
            assert references.folder_entries(ctx, other) == frozenset(), (paths, other)
        for p in paths:
            same = [q for q in ctx.head_paths() if q.split("/")[-1] == p.split("/")[-1]]
            if "." in p.split("/")[-1]:
                assert references.same_name_elsewhere(ctx, p, limit=99) == same, p
            assert ctx.paths_named(p.split("/")[-1]) == same, p


def test_the_detected_profile_is_the_one_whose_globs_match_most() -> None:
    looks = {name: [globs.compile_glob(g) for g in gs] for name, gs in facts_data._looks_like_globs().items()}

    def reference(paths: list[str]) -> str:
        count = {name: sum(any(p.match(path) for path in paths) for p in pats) for name, pats in looks.items() if pats}
        best = max(count, key=lambda n: (count[n], [-ord(ch) for ch in n]), default=None)
        return best if best is not None and count[best] else facts_data.FALLBACK_PROFILE

    samples = [g.replace("**", "x/y").replace("*", "z") for gs in facts_data._looks_like_globs().values() for g in gs]
    samples += ["verl/trainer/main.py", "vllm_ascend/envs.py", "README.md", "src/x.py", "verl", "docs/x.md"]
    rng = random.Random(5)
    for _ in range(300):
        paths = rng.sample(samples, rng.randrange(len(samples) // 2))
        assert facts_data.detect(paths) == reference(paths), paths


def test_a_renamed_file_is_touched_under_both_names() -> None:
    change = FileChange("new/name.sh", ChangeStatus.RENAMED, "old/name.sh")
    cs = ChangeSet(MemoryTree({"new/name.sh": ""}), changes={"new/name.sh": change})
    assert cs.touched("new/name.sh") and cs.touched("old/name.sh") and not cs.touched("other.sh")
    assert ChangeSet(MemoryTree({}), audit=True).touched("anything")


def test_the_paths_a_glob_matches_are_found_under_its_literal_folders_alone() -> None:
    """`Context.paths_matching` tries each glob on the range of the sorted paths under its literal folders; the
    answer is every path `globs.match_any` accepts, whatever the globs (a literal path, `**` first, a wildcard
    in a middle folder)."""
    rng = random.Random(5)
    assert globs.literal_folder(".github/**/*runner*.json") == ".github/"
    assert globs.literal_folder(".github/actionlint.yaml") == ".github/"
    assert globs.literal_folder("a/b*/c.md") == "a/"
    assert globs.literal_folder("**/x.sh") == ""
    pattern_sets = [
        (".github/actionlint.yaml", ".github/**/*runner*.json", ".github/**/*label*.json"),
        ("a/**/b", "a/b*/a", "b/a"),
        ("**/a.b", "a/a"),
        ("a", "a/", "/a/**"),
    ]
    for _ in range(1500):
        paths = sorted(set(_random_paths(rng)) | {".github/actionlint.yaml", ".github/x/my_runners.json", ".gitx"})
        ctx = _context(paths)
        for patterns in pattern_sets:
            assert ctx.paths_matching(patterns) == [p for p in paths if globs.match_any(p, patterns)], (paths, patterns)
