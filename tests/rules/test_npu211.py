"""NPU211 runner-label-mismatch: its fixture cases (tests/fixtures/NPU211/), and what they cannot say."""

from __future__ import annotations

from npu_review.checks.model import ChangeStatus, FileChange
from tests.rules.support import (
    fixture_tests,
    tree_findings,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU211")


CN = "swr.cn-southwest-2.myhuaweicloud.com/modelfoundry/ascend-ci/verl/verl"


def _jobs(label: str, n: int) -> str:
    body = "\n".join(
        f"""  job{i}:
    if: github.repository_owner == 'verl-project'
    runs-on: {label}
    container:
      image: {CN}:latest-vllm-a3-ubuntu
    steps:
      - run: npu-smi info
"""
        for i in range(n)
    )
    return "name: e2e_ascend\non:\n  pull_request:\njobs:\n" + body


def test_runner_migration_to_an_unknown_label_is_a_notice() -> None:
    path = ".github/workflows/e2e_ascend.yml"
    base, head = _jobs("linux-aarch64-a3-16", 2), _jobs("linux-aarch64-a3-32", 2)
    added = frozenset(n for n, line in enumerate(head.splitlines(), start=1) if "runs-on" in line)
    got = tree_findings(
        {path: head}, base={path: base}, changes={path: FileChange(path, ChangeStatus.MODIFIED, None, added)}
    )
    mine = [f for f in got if f.rule == "NPU211"]
    assert len(mine) == 2 and all(f.severity.label == "notice" for f in mine)
    # One job alone on an unknown label is an error.
    head1 = base.replace("runs-on: linux-aarch64-a3-16", "runs-on: linux-aarch64-a3-32", 1)
    line = next(n for n, t in enumerate(head1.splitlines(), start=1) if "a3-32" in t)
    got = tree_findings(
        {path: head1},
        base={path: base},
        changes={path: FileChange(path, ChangeStatus.MODIFIED, None, frozenset({line}))},
    )
    assert [(f.rule, f.line, f.severity.label) for f in got if f.rule == "NPU211"] == [("NPU211", line, "error")]


def test_a_label_the_repository_s_own_list_leaves_out_is_a_warning_that_says_so() -> None:
    """With no labels in the facts and none that two other jobs use, the labels known to be served are the ones the
    repository lists itself (`.github/actionlint.yaml`): a label it leaves out may still be a shared pool's runner
    (fla-org's `linux-aarch64-a2-1`, sweep-r30, judged false as "no runner serves it"), so the finding says what
    is known, as a warning."""
    from pathlib import Path

    from tests.fixture_support import Case, case_config, run_case

    job = (
        "  {name}:\n    runs-on: {label}\n    container:\n"
        "      image: quay.io/ascend/cann:8.5.0-910b-ubuntu22.04-py3.11\n"
        "    steps:\n      - run: python -c 'import torch_npu'\n"
    )
    wf = (
        "name: npu tests\non: [pull_request]\njobs:\n"
        + job.format(name="oj", label="linux-aarch64-a2-1")
        + job.format(name="ci", label="linux-aarch64-a2-8")
    )
    lint = "self-hosted-runner:\n  labels:\n    - linux-aarch64-a2-4\n    - linux-aarch64-a2-8\n"
    files: dict[str, str | None] = {".github/workflows/npu.yml": wf, ".github/actionlint.yaml": lint}
    case = Case("npu211", Path("."), None, files, set(), [], "", None)
    found = [f for f in run_case(case, case_config(case)).findings if f.rule == "NPU211"]
    assert [(f.line, f.severity.label) for f in found] == [(5, "warning")]
    assert found[0].message.startswith(
        "`linux-aarch64-a2-1` is not among the Ascend runner labels .github/actionlint.yaml lists "
        "(`linux-aarch64-a2-4`, `linux-aarch64-a2-8`), and no other Ascend job uses it; unless a runner has it"
    )
