"""NPU113 cuda-setting-in-npu-context: its fixture cases (tests/fixtures/NPU113/), and what they cannot say."""

from __future__ import annotations

from tests.rules.support import file_findings, fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU113")


def test_npu113_renames_the_variable_to_its_npu_counterpart() -> None:
    got = file_findings("NPU113/bad_npu_script", "NPU113")
    assert got[("run_multinode_npu.sh", 4)] == (
        "warning",
        "export HCCL_SOCKET_IFNAME=eth0",
        "`NCCL_SOCKET_IFNAME` is read by NCCL / CUDA only: where this runs on NPU, `HCCL_SOCKET_IFNAME` does that "
        "job and this setting does nothing. Set `HCCL_SOCKET_IFNAME` instead (both, if this also runs on GPUs).",
    )
    # A GPU option has no exact fix: the message says what to do.
    severity, suggestion, message = got[("run_multinode_npu.sh", 8)]
    assert (severity, suggestion) == ("warning", None)
    assert message.startswith("`ray start --num-gpus` asks for GPUs where this runs on NPU: Ray registers")


def test_npu113_a_vllm_build_without_the_empty_target_is_a_cuda_build() -> None:
    got = file_findings("NPU113/bad_image_and_guide", "NPU113")
    assert got[("install_npu.md", 9)][2] == (
        "This builds vllm from source for CUDA: without `VLLM_TARGET_DEVICE=empty` its build compiles CUDA kernels "
        "and installs the CUDA torch over the NPU one. Prefix the install with `VLLM_TARGET_DEVICE=empty`."
    )


def test_npu113_a_gpu_attention_backend_is_named_in_every_layout() -> None:
    script = file_findings("NPU113/bad_attention_backend_script", "NPU113")
    severity, suggestion, message = script[("run_qwen3_32b_gspo_npu.sh", 5)]
    assert (severity, suggestion) == ("warning", None)
    assert message.startswith(
        "`VLLM_ATTENTION_BACKEND=XFORMERS` names a GPU-only implementation where this runs on NPU: vLLM-Ascend "
        "chooses its own attention backend and never runs the one vLLM is asked for"
    )
    # The option of `vllm serve`, written with `=` and in lower case, is the same setting.
    job = file_findings("NPU113/bad_attention_backend_workflow", "NPU113")
    assert job[("e2e_ascend.yml", 13)][2].startswith(
        "`vllm serve --attention-backend flashmla` names a GPU-only implementation"
    )


def _backend_change(base: dict[str, str], head: dict[str, str]) -> list[tuple[str, int, str]]:
    from npu_review.checks import run
    from npu_review.checks.diffing import changes_between
    from npu_review.checks.model import ChangeSet, MemoryTree

    report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes_between(base, head)))
    return [(f.path, f.line, f.severity.label) for f in report.findings if f.rule == "NPU113"]


_DOC = (
    "# Tuning\n\n```bash\nexport VLLM_ATTENTION_BACKEND=XFORMERS\n"
    "python3 -m verl.trainer.main_ppo trainer.device=npu\n```\n"
)


def test_npu113_a_line_copied_to_a_new_doc_is_written_a_line_moved_there_is_carried() -> None:
    """The same new file: beside the old doc (the text now twice) it is written by the change and a warning; with
    the old doc deleted (the text as often as before) it is a move, a notice (tests/fixtures/NPU113/trap_attention_
    backend_moved_with_its_doc is the moved and re-formatted case)."""
    old = {"docs/npu/tuning.md": _DOC}
    copied = {**old, "docs/ascend/tuning.md": _DOC}
    moved = {"docs/ascend/tuning.md": _DOC}
    assert _backend_change(old, copied) == [("docs/ascend/tuning.md", 4, "warning")]
    assert _backend_change(old, moved) == [("docs/ascend/tuning.md", 4, "notice")]
    # A line removed from a file of another kind (a workflow) carries nothing into a doc.
    job = "on: push\njobs:\n  t:\n    runs-on: linux-aarch64-a2-8\n    steps:\n      - run: |\n"
    wf = {".github/workflows/npu.yml": job + "          export VLLM_ATTENTION_BACKEND=XFORMERS\n          pytest\n"}
    assert _backend_change(wf, {".github/workflows/npu.yml": job + "          pytest\n", **moved}) == [
        ("docs/ascend/tuning.md", 4, "warning")
    ]
