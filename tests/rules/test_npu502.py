"""NPU502 broken-repo-link: its fixture cases (tests/fixtures/NPU502/), and what they cannot say."""

from __future__ import annotations

from npu_review.checks import run
from npu_review.checks.model import ChangeSet, ChangeStatus, FileChange, MemoryTree
from tests.rules.support import (
    fixture_tests,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU502")


def test_npu502_stale_references_in_workflows_and_docs_are_listed_on_the_rename() -> None:
    old, new = "docker/ascend/Dockerfile.ascend_9.0.0_a2", "docker/ascend/Dockerfile.ascend_9.1.0_a2"
    workflow = (
        "on:\n  pull_request:\n    paths:\n"
        f"      - '{old}'\n      - '!{old}'\n      - 'docker/ascend/**'\n"
        "jobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n"
        f"      - run: docker build -f {old}_v0.8.0 .\n"
    )
    readme = f"| 910b | [Dockerfile](https://github.com/verl-project/verl/blob/main/{old}) |\n"
    base = {old: "FROM cann:9.0.0-910b\n", ".github/workflows/docs.yml": workflow, "docs/README.md": readme}
    head = {new: "FROM cann:9.1.0-910b\n", ".github/workflows/docs.yml": workflow, "docs/README.md": readme}
    change = FileChange(new, ChangeStatus.RENAMED, old_path=old, added_lines=frozenset({1}))
    report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes={new: change}))
    (f,) = [f for f in report.findings if f.rule == "NPU502"]
    assert (f.path, f.line) == (new, 1)
    assert ".github/workflows/docs.yml:4" in f.message and "docs/README.md:1" in f.message
    assert "docs.yml:5" not in f.message and "docs.yml:11" not in f.message
