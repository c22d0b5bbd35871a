"""NPU226 step-before-checkout: its fixture cases (tests/fixtures/NPU226/) and messages."""

from __future__ import annotations

from npu_review.checks import run
from npu_review.checks.model import ChangeSet, MemoryTree
from tests.rules.support import file_findings, fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU226")


def test_the_message_names_the_command_and_the_checkout() -> None:
    found = file_findings("NPU226/bad_install_before_checkout", "NPU226")
    message = found[("nightly_ascend.yml", 13)][2]
    assert message.startswith(
        "This step runs `uv pip install -r requirements-npu.txt` (line 15) before the job's checkout (line 16)"
    )


def test_a_late_install_names_the_last_test_step() -> None:
    found = file_findings("NPU226/bad_install_after_the_last_test", "NPU226")
    message = found[("_e2e_nightly_single_node.yaml", 19)][2]
    assert "after the job's last step that runs code (line 15)" in message


def test_a_command_substitution_that_runs_python_uses_the_install() -> None:
    """cosdt/pytorch-integration-tests d42a931 (rs-r26, judged false): the step after `pip install torch*.whl`
    reads `torch_version=$(python -c "import torch; print(torch.__version__)")`: the install is used."""
    workflow = (
        "name: build torch\non: [push]\njobs:\n  build:\n    runs-on: linux-aarch64-a2-1\n"
        "    container:\n      image: quay.io/ascend/cann:8.5.0-910b-ubuntu22.04-py3.11\n    steps:\n"
        "      - uses: actions/checkout@v4\n      - run: bash ci/build_torch_npu.sh\n"
        "      - run: pip install dist/torch_npu*.whl\n"
        '      - run: |\n          v=$(python -c "import torch_npu; print(torch_npu.__version__)")\n'
        '          echo "torch_npu ${v}" >> $GITHUB_STEP_SUMMARY\n'
    )
    report = run(ChangeSet(head=MemoryTree({".github/workflows/ascend_build.yml": workflow}), audit=True))
    assert [f for f in report.findings if f.rule == "NPU226"] == []
    late = workflow.replace('v=$(python -c "import torch_npu; print(torch_npu.__version__)")', "v=done")
    report = run(ChangeSet(head=MemoryTree({".github/workflows/ascend_build.yml": late}), audit=True))
    assert [f.line for f in report.findings if f.rule == "NPU226"] == [11]
