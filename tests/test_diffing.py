"""Unified diffs to FileChanges: the hunk-header reading of a diff without context against the line-by-line parse."""

from __future__ import annotations

from npu_review.checks.diffing import parse_diff, parse_unified_diff
from npu_review.checks.model import ChangeStatus, FileChange

# What `git diff -U0 -M` writes: a modified file with two hunks (one a pure deletion), an added file without a final
# newline, a deleted file, a rename with an edit, a binary file.
ZERO_CONTEXT = (
    "diff --git a/docker/ascend/Dockerfile b/docker/ascend/Dockerfile\n"
    "index 1111111..2222222 100644\n--- a/docker/ascend/Dockerfile\n+++ b/docker/ascend/Dockerfile\n"
    "@@ -2 +2,2 @@ FROM quay.io/ascend/cann:8.3.rc1-910b-ubuntu22.04-py3.11\n"
    "-RUN pip install vllm==0.9.0\n+RUN pip install vllm==0.9.1\n+ENV HCCL_CONNECT_TIMEOUT=1200\n"
    "@@ -7,2 +7,0 @@ RUN true\n-RUN a\n-RUN b\n"
    "diff --git a/scripts/run_npu.sh b/scripts/run_npu.sh\nnew file mode 100755\nindex 0000000..3333333\n"
    "--- /dev/null\n+++ b/scripts/run_npu.sh\n@@ -0,0 +1,2 @@\n+#!/bin/bash\n+export ASCEND_RT_VISIBLE_DEVICES=0\n"
    "\\ No newline at end of file\n"
    "diff --git a/old.md b/old.md\ndeleted file mode 100644\nindex 4444444..0000000\n--- a/old.md\n+++ /dev/null\n"
    "@@ -1 +0,0 @@\n-# Old\n"
    "diff --git a/docs/a.md b/docs/b.md\nsimilarity index 90%\nrename from docs/a.md\nrename to docs/b.md\n"
    "index 5555555..6666666 100644\n--- a/docs/a.md\n+++ b/docs/b.md\n@@ -3 +3 @@\n-old line\n+new line\n"
    "diff --git a/logo.png b/logo.png\nindex 7777777..8888888 100644\nBinary files a/logo.png and b/logo.png differ\n"
)


def test_a_diff_without_context_gives_its_added_lines_by_the_hunk_headers() -> None:
    got = parse_unified_diff(ZERO_CONTEXT)
    assert got == {p: f.change for p, f in parse_diff(ZERO_CONTEXT).items()}
    assert got == {
        "docker/ascend/Dockerfile": FileChange(
            "docker/ascend/Dockerfile", ChangeStatus.MODIFIED, None, frozenset({2, 3})
        ),
        "scripts/run_npu.sh": FileChange("scripts/run_npu.sh", ChangeStatus.ADDED, None, frozenset({1, 2})),
        "old.md": FileChange("old.md", ChangeStatus.DELETED, None, frozenset()),
        "docs/b.md": FileChange("docs/b.md", ChangeStatus.RENAMED, "docs/a.md", frozenset({3})),
        "logo.png": FileChange("logo.png", ChangeStatus.MODIFIED, None, frozenset(), binary=True),
    }


def test_a_diff_with_context_lines_is_read_line_by_line() -> None:
    # `--diff` may be given any unified diff: with context, a hunk's head lines are not all added.
    diff = (
        "--- a/run_npu.sh\n+++ b/run_npu.sh\n@@ -1,3 +1,4 @@\n #!/bin/bash\n+export HCCL_BUFFSIZE=400\n"
        " export HCCL_CONNECT_TIMEOUT=1800\n python3 train.py\n"
    )
    assert parse_unified_diff(diff) == {
        "run_npu.sh": FileChange("run_npu.sh", ChangeStatus.MODIFIED, None, frozenset({2}))
    }
