"""NPU227 environment-stack-disagrees: its fixture cases (tests/fixtures/NPU227/), and what they cannot say."""

from __future__ import annotations

from npu_review.checks.analysis.stacks import image_stack
from tests.rules.support import file_findings, fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU227")


def test_npu227_image_stack_reads_project_images_tagged_after_cann() -> None:
    assert image_stack("swr.example.com/verl/verl:verl-sglang-8.5.0-a3-ubuntu22.04-py3.11-latest") == {
        "cann": "8.5.0",
        "device": "a3",
        "os": "ubuntu22.04",
        "python": "3.11",
    }
    assert image_stack("quay.io/ascend/vllm-ascend:v0.11.0rc0-a3") == {}


def test_npu227_python_path_suggests_the_home_python() -> None:
    got = file_findings("NPU227/bad_mixed_python_path", "NPU227")
    severity, suggestion, _ = got[("Dockerfile", 5)]
    assert severity == "warning"
    assert suggestion == "    && ln -s /opt/_internal/cpython-3.11.6/bin/pip3.11 pip3.11 \\"


def test_npu227_moved_commit_names_every_stale_place() -> None:
    got = file_findings("NPU227/change_moved_commit", "NPU227")
    _, _, message = got[("pr_test.yaml", 7)]
    assert "Dockerfile:3 (`VLLM_COMMIT`) still pins `d886c26d4d4f`" in message


def test_npu227_a_pin_of_another_component_is_no_moved_commit() -> None:
    """kubeflow/trainer c0787ad3 dropped a `actions/setup-python@ece7cb...` step from one workflow and added an
    `actions/github-script@60a0d8...` one: two actions, not one pin moved. An action's pin is CI's tooling, which
    projects bump workflow by workflow (huggingface's doc-builder pins, judged noise each time): not judged even
    when one action's pin moves in one workflow. A component's pin (`ARG VLLM_COMMIT=`) that moves in one file and
    not the other is."""
    from npu_review.checks import run
    from npu_review.checks.model import ChangeSet, ChangeStatus, FileChange, MemoryTree

    setup = "actions/setup-python@ece7cb06caefa5fff74198d8649806c4678c61a1"
    script = "actions/github-script@60a0d83039c74a4aee543508d2ffcb1c3799cdea"
    newer = "actions/setup-python@a26af69be951a213d495a4c3e4e4022e16d87065"

    def wf(step: str) -> str:
        return f"on: [push]\njobs:\n  t:\n    runs-on: linux-aarch64-a2-1\n    steps:\n      - uses: {step}\n"

    other = ".github/workflows/test-npu.yaml"
    edited = ".github/workflows/lockfile.yaml"
    base = {other: wf(setup), edited: wf(setup)}
    changes = {edited: FileChange(edited, ChangeStatus.MODIFIED, added_lines=frozenset({6}))}
    for step, expected in ((script, []), (newer, [])):
        head = {other: wf(setup), edited: wf(step)}
        report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes))
        assert [(f.path, f.line) for f in report.findings if f.rule == "NPU227"] == expected, step
    dockerfile = (
        "FROM quay.io/ascend/cann:8.5.0-910b-ubuntu22.04-py3.11\nARG VLLM_COMMIT={}\nRUN git checkout $VLLM_COMMIT\n"
    )
    old, new = "d886c26d4d4f0c2d39b2cdbb0ea4d23ae8d7f5e1", "4d51588e2e1e8b0a63e4b0ab6b4cbf9e10c3cd8a"
    base = {"docker/Dockerfile.a2": dockerfile.format(old), "docker/Dockerfile.a3": dockerfile.format(old)}
    head = {"docker/Dockerfile.a2": dockerfile.format(new), "docker/Dockerfile.a3": dockerfile.format(old)}
    changes = {
        "docker/Dockerfile.a2": FileChange("docker/Dockerfile.a2", ChangeStatus.MODIFIED, added_lines=frozenset({2}))
    }
    report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes))
    assert [(f.path, f.line) for f in report.findings if f.rule == "NPU227"] == [("docker/Dockerfile.a2", 2)]
