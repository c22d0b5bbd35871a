"""NPU110 misspelled-ascend-env-variable: its fixture cases (tests/fixtures/NPU110/)."""

from __future__ import annotations

from tests.rules.support import (
    fixture_tests,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU110")


def _run_on(day: str) -> list[tuple[str, str, int, str, str]]:
    from npu_review.checks.config import DEFAULT_CONFIG
    from npu_review.checks.engine import run
    from npu_review.checks.model import ChangeSet, MemoryTree

    files = {"examples/run_rl_npu.sh": "#!/bin/bash\nexport VLLM_ENABLE_TOPK_OPTIMZE=1\npython -m train\n"}
    report = run(ChangeSet(head=MemoryTree(files), audit=True, when=day), DEFAULT_CONFIG)
    return [(f.rule, f.path, f.line, f.severity.label, f.message) for f in report.findings if f.rule == "NPU110"]


def test_a_name_is_retired_as_of_the_day_of_the_change() -> None:
    """vLLM-Ascend read `VLLM_ASCEND_ENABLE_TOPK_OPTIMIZE` until 2025-07-09 and the misspelled
    `..._TOPK_OPTIMZE` until 2025-06-07 (facts env_vllm_ascend.retired): a change of 2025-06-08 gets the warning
    and the spelling still read; a change of today gets a notice that advises deleting the line."""
    assert _run_on("2025-06-08") == [
        (
            "NPU110",
            "examples/run_rl_npu.sh",
            2,
            "warning",
            "`VLLM_ENABLE_TOPK_OPTIMZE` is not a variable the upstream package reads "
            "(`VLLM_ASCEND_ENABLE_TOPK_OPTIMIZE` without its family): nothing reads it, so the setting is silently "
            "ignored. Did you mean `VLLM_ASCEND_ENABLE_TOPK_OPTIMIZE` (or `VLLM_ASCEND_ENABLE_TOPK_OPTIMZE`: both "
            "spellings were used)? The corrected name turns the setting on: check that the value is one it accepts.",
        )
    ]
    assert _run_on("2026-12-05") == [
        (
            "NPU110",
            "examples/run_rl_npu.sh",
            2,
            "notice",
            "`VLLM_ENABLE_TOPK_OPTIMZE` is not a known variable, and the name it is closest to, "
            "`VLLM_ASCEND_ENABLE_TOPK_OPTIMZE`, is one vLLM-Ascend no longer reads (its `envs.py` dropped it): "
            "the line sets nothing either way. Delete it, or set the variable that does its job in the vLLM-Ascend "
            "release you run.",
        )
    ]


def test_a_name_the_file_reads_back_is_its_own_and_an_added_underscore_switches_off() -> None:
    """omni-ai-npu/omni-infer 8d432b78 (rs-r31, judged false): a serving config sets `CPU_AFFINITY_COMF` and its
    script exports `CPU_AFFINITY_CONF="${CPU_AFFINITY_COMF}"`: a variable of the file's own. Ascend/MindIE-PyMotor
    e7bf38ec (rs-r31, judged noise as deliberate): an env block's `HCCL_ENTRY_LOG_ENABLE_` switches the key off."""
    from npu_review.checks.model import Severity
    from tests.rules.support import change

    cfg = (
        "env:\n  CPU_AFFINITY_COMF: 1\n  HCCL_CONNECT_TIMEOUT: 600\nscript: |\n"
        '  source /usr/local/Ascend/ascend-toolkit/set_env.sh\n  export CPU_AFFINITY_CONF="${CPU_AFFINITY_COMF}"\n'
    )
    assert [f for f in change({}, {"omni/cli/server_npu.yml": cfg}).findings if f.rule == "NPU110"] == []
    doc = (
        '# DeepSeek on Ascend NPU\n\n```json\n{\n  "HCCL_ENTRY_LOG_ENABLE_": 1,\n  "HCCL_CONNECT_TIMEOUT": 600,\n'
        '  "HCCL_CONECT_TIMEOUT": 600\n}\n```\n'
    )
    found = [(f.line, f.severity) for f in change({}, {"docs/deepseek.md": doc}).findings if f.rule == "NPU110"]
    assert found == [(5, Severity.NOTICE), (7, Severity.WARNING)]


def test_a_name_the_project_s_code_names_is_its_own() -> None:
    """hanxindou/hccl-agent's guide sets `HCCL_VM_EXPANSION_MODE`, which its plugin lists in an `ENV_FIELDS` table
    its config loader reads from `os.environ` and exports as the real `HCCL_OP_EXPANSION_MODE` (sweep-r22, judged
    false: "nothing reads it" was wrong). Without that code the name is reported."""
    from tests.rules.support import change

    doc = "# HCCL on Ascend NPU\n\n```bash\nexport HCCL_VM_EXPANSION_MODE=AIV\n```\n"
    loader = (
        'ENV_FIELDS = {\n    "expansion_mode": "HCCL_VM_EXPANSION_MODE",\n}\n\n\n'
        "def load(environ):\n    return {k: environ.get(v) for k, v in ENV_FIELDS.items()}\n"
    )
    alone = [(f.path, f.line) for f in change({}, {"docs/hccl_vm.md": doc}).findings if f.rule == "NPU110"]
    assert alone == [("docs/hccl_vm.md", 4)]
    head = {"docs/hccl_vm.md": doc, "plugin/hccl_vm_backend.py": loader}
    assert [f for f in change({}, head).findings if f.rule == "NPU110"] == []
