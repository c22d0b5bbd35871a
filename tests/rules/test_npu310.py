"""NPU310 a2-a3-twin-drift: its fixture cases (tests/fixtures/NPU310/), and what they cannot say."""

from __future__ import annotations

from npu_review.checks import run
from npu_review.checks.model import ChangeSet, MemoryTree
from tests.fixture_support import FIXTURES, audit, load_case, run_case
from tests.rules.support import (
    change,
    file_findings,
    fixture_tests,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU310")


def test_npu310_names_the_twin_and_its_history() -> None:
    got = file_findings("NPU310/change_one_twin_edited", "NPU310")
    sev, _, message = got[("Dockerfile.ascend.sglang_8.5.0_a3", 15)]
    assert sev == "warning"
    assert "docker/ascend/Dockerfile.ascend.sglang_8.5.0_a2" in message
    assert "identical (up to device tokens) before this change" in message
    report = run_case(load_case(FIXTURES / "NPU310/change_twins_edited_differently"))
    related = {f.path.rsplit("/", 1)[-1]: f.related for f in report.findings if f.rule == "NPU310"}
    assert [(r.path.rsplit("/", 1)[-1], r.line) for r in related["Dockerfile.ascend.sglang_8.5.0_a2"]] == [
        ("Dockerfile.ascend.sglang_8.5.0_a3", 22)
    ]


def test_npu310_audit_reports_each_pair_once() -> None:
    a2 = (
        "FROM r/cann:9.1.0-910b-ubuntu22.04-py3.12\nARG SOC_VERSION=ascend910b1\nRUN pip install a\nRUN pip install b\n"
    )
    a3 = "FROM r/cann:9.1.0-a3-ubuntu22.04-py3.12\nARG SOC_VERSION=ascend910_9392\nRUN pip install c\nRUN pip install d"

    files = {"docker/ascend/Dockerfile.ascend_x_a2": a2, "docker/ascend/Dockerfile.ascend_x_a3": a3}
    report = run(ChangeSet(head=MemoryTree(files), audit=True))
    found = [(f.path, f.line) for f in report.findings if f.rule == "NPU310"]
    assert found == [("docker/ascend/Dockerfile.ascend_x_a2", 3)]


def test_npu310_os_twins_compare_configuration_only_and_say_which_instructions() -> None:
    ubuntu = (
        "FROM quay.io/ascend/cann:9.0.0-910b-ubuntu22.04-py3.11\n"
        "ENV DEBIAN_FRONTEND=noninteractive\n"
        "COPY tools/installer.sh /workspace/\n"
        "RUN apt-get update && apt-get install -y gcc\n"
    )
    openeuler = (
        "FROM quay.io/ascend/cann:9.0.0-910b-openeuler24.03-py3.11\n"
        "COPY tools/installer.sh /workspace/app/\n"
        "RUN yum install -y gcc gcc-c++\n"
    )
    report = audit({"Dockerfile": ubuntu, "Dockerfile.openEuler": openeuler})
    got = [(f.rule, f.path, f.line, f.severity.label, f.message) for f in report.findings if f.rule == "NPU310"]
    assert got == [
        (
            "NPU310",
            "Dockerfile.openEuler",
            2,
            "warning",
            "The OS twins Dockerfile.openEuler and Dockerfile differ in their COPY/ADD/ARG/ENV/WORKDIR "
            "instructions: Dockerfile.openEuler line 2; Dockerfile line 3 without a counterpart in the other "
            "file. Make the twins match, or suppress with the reason where the difference is OS-specific.",
        )
    ]


def test_a_change_compares_the_twins_of_the_folders_it_touches_only() -> None:
    """A change that edits the A3 twin of one folder gets that pair's drift; another folder's drifting pair, which
    the change does not touch, is not read for it (an audit reports both)."""
    from npu_review.checks.model import ChangeStatus, FileChange

    a2 = "FROM r/cann:9.1.0-910b-ubuntu22.04-py3.12\nRUN pip install a\nRUN pip install b\n"
    a3 = "FROM r/cann:9.1.0-a3-ubuntu22.04-py3.12\nRUN pip install a\nRUN pip install b\n"
    drifted = a3.replace("pip install b", "pip install c")
    base = {
        "docker/sglang/Dockerfile.ascend_a2": a2,
        "docker/sglang/Dockerfile.ascend_a3": a3,
        "docker/vllm/Dockerfile.ascend_a2": a2,
        "docker/vllm/Dockerfile.ascend_a3": drifted,
    }
    head = {**base, "docker/sglang/Dockerfile.ascend_a3": drifted}
    path = "docker/sglang/Dockerfile.ascend_a3"
    changes = {path: FileChange(path, ChangeStatus.MODIFIED, added_lines=frozenset({3}))}
    report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes))
    assert [(f.path, f.line) for f in report.findings if f.rule == "NPU310"] == [(path, 3)]
    audit_report = run(ChangeSet(head=MemoryTree(head), audit=True))
    assert sorted(f.path for f in audit_report.findings if f.rule == "NPU310") == [
        "docker/sglang/Dockerfile.ascend_a2",
        "docker/vllm/Dockerfile.ascend_a2",
    ]


def test_a_change_to_lines_the_twin_never_had_is_no_new_drift() -> None:
    """ByteDance-Seed/VeOmni 55e26357 (rs-r20, judged false): the A3 Dockerfile installs with pip where its A2 twin
    uses uv, and the change edits that pip line: the twins differed there before by as many lines. A line the change
    adds with no counterpart is still drift."""
    head_a2 = "FROM quay.io/ascend/cann:8.3.rc2-910b-ubuntu22.04-py3.11\nRUN uv sync --extra npu\nRUN echo done\n"
    a3 = "FROM quay.io/ascend/cann:8.3.rc2-a3-ubuntu22.04-py3.11\nRUN pip install -e .[npu]\nRUN echo done\n"
    edited = a3.replace("pip install -e .[npu]", "pip install -e .[npu] && \\\n    pip install transformers==5.2.0")
    a2p, a3p = "docker/ascend/Dockerfile.ascend_8.3.rc2_a2", "docker/ascend/Dockerfile.ascend_8.3.rc2_a3"
    report = change({a2p: head_a2, a3p: a3}, {a2p: head_a2, a3p: edited})
    assert [f for f in report.findings if f.rule == "NPU310"] == []
    report = change({a2p: head_a2, a3p: a3}, {a2p: head_a2, a3p: edited + "RUN pip install triton-ascend\n"})
    assert [(f.path, f.line) for f in report.findings if f.rule == "NPU310"] == [(a3p, 2)]
