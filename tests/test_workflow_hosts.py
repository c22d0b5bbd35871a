"""The forges whose workflow folders are read (kinds.WORKFLOW_HOSTS): GitHub's .github/workflows and GitCode's
.gitcode/workflows classify alike, GitCode's stages and post jobs are jobs of the model, and a reusable call
resolves within the caller's own folder."""

from __future__ import annotations

import pytest

from npu_review.checks import kinds
from npu_review.checks.kinds import ASCEND_WORKFLOW, WORKFLOW, YAML, KindMap
from npu_review.checks.parsers.gha.calls import calls, local_target, secret_reads
from npu_review.checks.parsers.gha.workflow import parse


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (".gitcode/workflows/ci.yml", {WORKFLOW, YAML}),
        (".gitcode/workflows/hixl_action.yaml", {WORKFLOW, YAML}),
        (".gitcode/workflows/ops_npu.yml", {WORKFLOW, ASCEND_WORKFLOW, YAML}),
        (".gitcode/workflows/e2e_ascend.yaml", {WORKFLOW, ASCEND_WORKFLOW, YAML}),
        (".gitcode/workflows/configs/nightly.yaml", {YAML}),  # a data file in a subfolder
        (".gitcode/ISSUE_TEMPLATE/bug-report.yml", {YAML}),
        ("docs/.gitcode/workflows/ci.yml", {YAML}),
    ],
)
def test_gitcode_workflows_have_the_workflow_kinds(path: str, expected: set[str]) -> None:
    assert set(KindMap().kinds(path)) == expected


def test_a_repo_config_glob_for_one_folder_covers_the_other() -> None:
    kinds_map = KindMap({WORKFLOW: (".github/workflows/build*.yml",), ASCEND_WORKFLOW: (".gitcode/workflows/x.yml",)})
    assert kinds_map.globs[WORKFLOW] == (".github/workflows/build*.yml", ".gitcode/workflows/build*.yml")
    assert kinds_map.globs[ASCEND_WORKFLOW] == (".gitcode/workflows/x.yml", ".github/workflows/x.yml")
    assert kinds_map.kinds(".gitcode/workflows/build_npu.yml") == {WORKFLOW, YAML}


def test_the_host_of_a_path() -> None:
    assert kinds.workflow_host(".github/workflows/a.yml") is kinds.GITHUB
    assert kinds.workflow_host(".gitcode/workflows/a.yaml") is kinds.GITCODE
    assert kinds.workflow_host(".gitcode/workflows/sub/a.yaml") is None
    assert kinds.workflow_host(".gitcode/workflows/README.md") is None
    assert kinds.workflow_folder_host(".gitcode/workflows/scripts/x.sh") is kinds.GITCODE
    assert kinds.in_ci_folders("**/config*/*.yaml") == (".github/**/config*/*.yaml", ".gitcode/**/config*/*.yaml")


GITCODE_WORKFLOW = """\
name: pipeline
on:
  pull_request_comment:
    types: [created]
env:
  MERGE_ID: ${{ atomgit.event.pull_request.number }}
stages:
  stage1:
    jobs:
      JOB_pre:
        steps:
          - name: Checkout
            identifier: process_checkout
            uses: checkout
            with:
              token: ${{ secrets.GIT_TOKEN }}
        runs-on: ['self-hosted', 'arch=x64']
  stage2:
    jobs:
      JOB_compile:
        uses: .gitcode/workflows/compile_action.yml
        with:
          arch: x64
jobs:
  JOB_top:
    runs-on: ['self-hosted']
    steps:
      - run: echo "${{ secrets.AK }}"
post:
  jobs:
    job_post:
      uses: cann/.gitcode/.gitcode/workflows/post_action.yml@master
"""


def test_gitcode_stages_and_post_jobs_are_jobs() -> None:
    wf = parse(GITCODE_WORKFLOW, ".gitcode/workflows/pipeline.yml")
    assert wf is not None
    assert list(wf.jobs) == ["JOB_pre", "JOB_compile", "JOB_top", "job_post"]
    assert [s.id for s in wf.jobs["JOB_pre"].steps] == ["process_checkout"]
    assert [(c.job.id, c.target, c.line) for c in calls(wf)] == [
        ("JOB_compile", ".gitcode/workflows/compile_action.yml", 21)
    ]
    assert [(r.name, r.line) for r in secret_reads(wf)] == [("GIT_TOKEN", 16), ("AK", 28)]


def test_stages_are_no_jobs_of_a_github_workflow() -> None:
    wf = parse(GITCODE_WORKFLOW, ".github/workflows/pipeline.yml")
    assert wf is not None
    assert list(wf.jobs) == ["JOB_top"]


@pytest.mark.parametrize(
    ("uses", "caller", "expected"),
    [
        ("./.github/workflows/_e2e.yaml", ".github/workflows/ci.yml", ".github/workflows/_e2e.yaml"),
        (".github/workflows/_e2e.yaml", ".github/workflows/ci.yml", None),  # GitHub needs the `./`
        ("./.gitcode/workflows/_e2e.yaml", ".github/workflows/ci.yml", None),  # not GitHub's folder
        (".gitcode/workflows/compile.yml", ".gitcode/workflows/ci.yml", ".gitcode/workflows/compile.yml"),
        ("./.gitcode/workflows/compile.yml", ".gitcode/workflows/ci.yml", ".gitcode/workflows/compile.yml"),
        ("./.github/workflows/compile.yml", ".gitcode/workflows/ci.yml", None),
        ("acme/ops/.gitcode/workflows/c.yml@master", ".gitcode/workflows/ci.yml", None),
    ],
)
def test_a_call_resolves_within_the_callers_folder(uses: str, caller: str, expected: str | None) -> None:
    assert local_target(uses, caller) == expected


def test_a_call_by_the_repository_address_on_gitcode() -> None:
    assert (
        local_target("acme/ops/.gitcode/workflows/c.yml@master", ".gitcode/workflows/ci.yml", "acme/ops")
        == ".gitcode/workflows/c.yml"
    )
