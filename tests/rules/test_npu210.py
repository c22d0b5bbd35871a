"""NPU210 paths-filter-missing-file: its fixture cases (tests/fixtures/NPU210/), and what they cannot say."""

from __future__ import annotations

from npu_review.checks.model import ChangeStatus, FileChange
from tests.rules.support import (
    fixture_tests,
    tree_findings,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU210")


MINE = ("NPU204", "NPU206", "NPU207", "NPU208", "NPU209", "NPU210", "NPU211", "NPU212")

CN = "swr.cn-southwest-2.myhuaweicloud.com/modelfoundry/ascend-ci/verl/verl"

NIGHTLY = f"""
name: nightly_ascend
on:
  pull_request:
    paths:
      - "tests/special_npu/run_qwen3_06b_grpo.sh"
      - ".github/workflows/nightly_ascend.yml"
jobs:
  nightly:
    if: github.repository_owner == 'verl-project'
    runs-on: linux-aarch64-a2b3-8
    container:
      image: {CN}:latest-vllm-910b-ubuntu
    steps:
      - uses: actions/checkout@v4
      - run: bash tests/special_npu/run_qwen3_06b_grpo.sh
"""

SCRIPT = "#!/usr/bin/env bash\npython3 -m verl.trainer.main_ppo trainer.n_gpus_per_node=8\n"


def test_paths_filter_rename_is_caused_by_the_change() -> None:
    path = ".github/workflows/nightly_ascend.yml"
    new = "tests/special_npu/run_qwen3_06b_grpo_npu.sh"
    changes = {
        new: FileChange(new, ChangeStatus.RENAMED, "tests/special_npu/run_qwen3_06b_grpo.sh", frozenset({1})),
    }
    got = tree_findings(
        {path: NIGHTLY, new: SCRIPT},
        base={path: NIGHTLY, "tests/special_npu/run_qwen3_06b_grpo.sh": SCRIPT},
        changes=changes,
    )
    mine = [f for f in got if f.rule == "NPU210"]
    assert [(f.path, f.line) for f in mine] == [(path, 5)]
    assert mine[0].suggestion == f'      - "{new}"'
    assert "renames" in mine[0].message


def test_untouched_stale_filter_is_not_reported_on_an_unrelated_change() -> None:
    path = ".github/workflows/nightly_ascend.yml"
    stale = NIGHTLY.replace('run_qwen3_06b_grpo.sh"', 'run_qwen2_5_05b_grpo.sh"', 1)
    other = "verl/__init__.py"
    got = tree_findings(
        {path: stale, other: "x = 2\n"},
        base={path: stale, other: "x = 1\n"},
        changes={other: FileChange(other, ChangeStatus.MODIFIED, None, frozenset({1}))},
    )
    assert [f for f in got if f.rule in MINE] == []
