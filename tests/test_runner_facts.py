"""Runner labels and their capacity read from the project (issue 10): `.github/actionlint.yaml` and runner-label
JSON files, merged into the catalog NPU211 and NPU212 use."""

from __future__ import annotations

from npu_review.checks.analysis.runners import project_labels, runner_catalog
from npu_review.checks.config import DEFAULT_CONFIG
from npu_review.checks.context import Context
from npu_review.checks.kinds import KindMap
from npu_review.checks.model import ChangeSet, MemoryTree
from npu_review.checks.parsers.gha.runners import ProjectLabel, Runner

ACTIONLINT = "self-hosted-runner:\n  labels:\n    - linux-aarch64-a5-8\n    - linux-amd64-cpu-8-hk\n    - my-npu-box\n"
JSON = """{
  "linux-aarch64-a2b3-4": {"chip": "a2", "npu_num": 4, "image_tag": "9.1.0-910b-ubuntu22.04-py3.12"},
  "my-npu-box": {"chip": "a3", "npu_num": 16},
  "linux-amd64-cpu-8-hk": {"chip": "cpu", "npu_num": 0},
  "notes": "not a label"
}
"""


def ctx_of(files: dict[str, str | None]) -> Context:
    return Context(ChangeSet(head=MemoryTree(files), audit=True), DEFAULT_CONFIG, KindMap())


def test_labels_come_from_actionlint_and_the_json_which_wins() -> None:
    ctx = ctx_of({".github/actionlint.yaml": ACTIONLINT, ".github/workflows/scripts/runner_label.json": JSON})
    j = ".github/workflows/scripts/runner_label.json"
    assert project_labels(ctx, "head") == {
        "linux-aarch64-a5-8": ProjectLabel("linux-aarch64-a5-8", None, None, True, ".github/actionlint.yaml"),
        "linux-amd64-cpu-8-hk": ProjectLabel("linux-amd64-cpu-8-hk", None, None, False, j),
        "my-npu-box": ProjectLabel("my-npu-box", "a3", 16, True, j),
        "linux-aarch64-a2b3-4": ProjectLabel("linux-aarch64-a2b3-4", "910b", 4, True, j),
    }
    catalog = runner_catalog(ctx)
    # A label no shape names is an Ascend runner because the project's JSON says so, with its capacity.
    assert catalog.runner("my-npu-box") == Runner("my-npu-box", "a3", 16, "current", f"listed in {j}")
    assert catalog.runner("linux-aarch64-a5-8") == Runner(
        "linux-aarch64-a5-8", None, 8, "current", "listed in .github/actionlint.yaml"
    )
    assert catalog.runner("linux-amd64-cpu-8-hk") is None  # `chip: cpu`
    # `-0` is a launcher: capacity unknown, not zero.
    assert catalog.runner("linux-aarch64-a2b3-0") == Runner("linux-aarch64-a2b3-0", "910b", None, "shape")
    listed = {"linux-aarch64-a5-8", "my-npu-box", "linux-aarch64-a2b3-4"}
    assert listed <= set(catalog.current) and "linux-amd64-cpu-8-hk" not in catalog.current


def test_broken_or_foreign_label_files_are_ignored() -> None:
    ctx = ctx_of(
        {
            ".github/runner_labels.json": "{not json",
            ".github/label_sync.json": '[{"name": "bug"}]',
            ".github/actionlint.yml": "self-hosted-runner: [oops]\n",
            ".github/workflows/misc/model_list.json": '{"linux-aarch64-a2b3-4": {"npu_num": 99}}',  # not a label file
        }
    )
    assert project_labels(ctx, "head") == {}
