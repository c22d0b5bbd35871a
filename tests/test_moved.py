"""Lines a change only moves (checks/moved.py): a finding the file had before on the same text is old debt."""

from __future__ import annotations

from npu_review.checks.config import default_config
from npu_review.checks.engine import run
from npu_review.checks.model import ChangeSet, ChangeStatus, FileChange, MemoryTree
from npu_review.checks.moved import BaseView, moved_lines
from tests.rules.support import change, got

SCRIPT = (
    "#!/bin/bash\n"
    "# GRPO on Ascend NPU\n"
    "export VLLM_ATTENTION_BACKEND=XFORMERS\n"
    "export HCCL_CONNECT_TIMEOUT=1200\n"
    "python3 -m verl.trainer.main_ppo trainer.device=npu\n"
)
XFORMERS = (
    "`VLLM_ATTENTION_BACKEND=XFORMERS` names a GPU-only implementation where this runs on NPU: vLLM-Ascend chooses "
    "its own attention backend and never runs the one vLLM is asked for: at best this does nothing, and it can stop "
    "the run (a vLLM release whose backend list no longer has the name refuses it at start-up; with vLLM 0.9-0.10, "
    "XFORMERS, which vLLM's V1 engine lacks, sent vLLM back to its V0 engine, which vLLM-Ascend rejects). Drop it; "
    "vLLM-Ascend needs no attention backend setting."
)


def test_moved_lines_pairs_each_added_line_with_a_removed_one_of_the_same_text() -> None:
    base = "a\nb\nc\nd\n"
    head = "a\nc\nb  \nd\ne\n"  # `b` moved below `c` (trailing blanks aside), `e` is new
    # Whichever lines the diff marks: each marked line whose text an unaccounted base line had moved from there.
    assert moved_lines(base, head, {2, 3, 5}) == {2: 3, 3: 2}
    assert moved_lines(base, head, {3, 5}) == {3: 2}
    # The same text twice: each removed line pairs with one added line, in order; the third copy is new.
    assert moved_lines("x\ny\nx\n", "y\nx\nx\nx\n", {2, 3, 4}) == {2: 1, 3: 3}
    # A file whose line ends went from CRLF to LF: every line is marked, every line moved.
    assert moved_lines("a\r\nb\r\n", "a\nb\n", {1, 2}) == {1: 1, 2: 2}


def test_a_setting_the_change_only_moves_is_old_debt() -> None:
    moved = SCRIPT.replace(
        "export VLLM_ATTENTION_BACKEND=XFORMERS\nexport HCCL_CONNECT_TIMEOUT=1200\n",
        "export HCCL_CONNECT_TIMEOUT=1200\nexport VLLM_ATTENTION_BACKEND=XFORMERS\n",
    )
    assert got(change({"run_npu.sh": SCRIPT}, {"run_npu.sh": moved}), "NPU113") == []
    # Written anew, the same setting is the change's.
    fresh = SCRIPT.replace("export VLLM_ATTENTION_BACKEND=XFORMERS\n", "")
    assert got(change({"run_npu.sh": fresh}, {"run_npu.sh": SCRIPT}), "NPU113") == [
        ("run_npu.sh", 3, "warning", XFORMERS)
    ]


def test_a_file_rewritten_with_new_line_ends_keeps_its_old_findings_off_the_change() -> None:
    base = SCRIPT.replace("\n", "\r\n")
    lines = frozenset(range(1, SCRIPT.count("\n") + 1))
    cs = ChangeSet(
        head=MemoryTree({"run_npu.sh": SCRIPT}),
        base=MemoryTree({"run_npu.sh": base}),
        changes={"run_npu.sh": FileChange("run_npu.sh", ChangeStatus.MODIFIED, None, lines)},
    )
    assert [f for f in run(cs, default_config()).findings if f.rule == "NPU113"] == []
    # The same rewrite with the setting new in it: reported.
    cs = ChangeSet(
        head=MemoryTree({"run_npu.sh": SCRIPT}),
        base=MemoryTree({"run_npu.sh": base.replace("export VLLM_ATTENTION_BACKEND=XFORMERS\r\n", "")}),
        changes={"run_npu.sh": FileChange("run_npu.sh", ChangeStatus.MODIFIED, None, lines)},
    )
    assert [(f.rule, f.line, f.message) for f in run(cs, default_config()).findings if f.rule == "NPU113"] == [
        ("NPU113", 3, XFORMERS)
    ]


def test_a_moved_line_whose_finding_the_change_causes_stays() -> None:
    # The guide's two lines swap places, and the change deletes the script the second one names: the file did
    # not have that finding before, so it is the change's.
    guide = "# NPU guide\n\n```bash\nbash examples/run_npu.sh\nbash examples/prepare_npu.sh\n```\n"
    swapped = "# NPU guide\n\n```bash\nbash examples/prepare_npu.sh\nbash examples/run_npu.sh\n```\n"
    script = "#!/bin/bash\nexport ASCEND_RT_VISIBLE_DEVICES=0\npython3 train.py --device npu\n"
    base = {"docs/npu.md": guide, "examples/run_npu.sh": script, "examples/prepare_npu.sh": script}
    head = {"docs/npu.md": swapped, "examples/prepare_npu.sh": script}
    found = [(f.rule, f.path, f.line, f.severity.label) for f in change(base, head).findings]
    assert found == [("NPU118", "docs/npu.md", 5, "warning")]
    assert change(base, head).findings[0].message.startswith("`examples/run_npu.sh`: the script `examples/run_npu.sh`")


def test_an_order_rule_on_a_moved_line_stays() -> None:
    # A pin moved to fix an install order that it still does not fix is the change's business (verl c8bd1f92:
    # the torch pins moved down, still before the requirements that downgrade torchvision).
    base = (
        "FROM quay.io/ascend/cann:8.3.rc1-910b-ubuntu22.04-py3.11\n"
        "COPY requirements-npu.txt /tmp/\n"
        "RUN pip install torch==2.7.1 torch_npu==2.7.1 && \\\n"
        "    pip install vllm==0.11.0 && \\\n"
        "    pip install -r /tmp/requirements-npu.txt\n"
    )
    head = (
        "FROM quay.io/ascend/cann:8.3.rc1-910b-ubuntu22.04-py3.11\n"
        "COPY requirements-npu.txt /tmp/\n"
        "RUN pip install vllm==0.11.0 && \\\n"
        "    pip install torch==2.7.1 torch_npu==2.7.1 && \\\n"
        "    pip install -r /tmp/requirements-npu.txt\n"
    )
    reqs = {"requirements-npu.txt": "torchvision==0.20.1\n"}
    before = [f.line for f in change({}, {"docker/Dockerfile.npu": base, **reqs}).findings if f.rule == "NPU308"]
    moved = change({"docker/Dockerfile.npu": base, **reqs}, {"docker/Dockerfile.npu": head, **reqs})
    after = [f.line for f in moved.findings if f.rule == "NPU308"]
    assert before == [3]
    assert after == [4]


def test_the_base_view_is_the_head_tree_with_the_changed_files_as_they_were() -> None:
    cs = ChangeSet(
        head=MemoryTree({"a": "A2", "b": "B", "new": "N"}),
        base=MemoryTree({"a": "A1", "b": "B", "gone": "G", "old": "O"}),
        changes={
            "a": FileChange("a", ChangeStatus.MODIFIED, None, frozenset({1})),
            "new": FileChange("new", ChangeStatus.RENAMED, "old", frozenset({1})),
            "gone": FileChange("gone", ChangeStatus.DELETED),
        },
    )
    view = BaseView(cs)
    assert list(view.paths()) == ["a", "b", "gone", "old"]
    assert [view.read(p) for p in ("a", "b", "gone", "old", "new")] == ["A1", "B", "G", "O", None]
    assert (view.exists("new"), view.exists("old"), view.exists("b")) == (False, True, True)
