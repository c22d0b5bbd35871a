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


def test_npu113_a_vllm_build_for_another_named_device_is_no_cuda_build() -> None:
    """mindspore-ai/docs 7232756e (rs-r29, judged false): vLLM-MindSpore's install guide builds vLLM's CPU backend
    on purpose (`VLLM_TARGET_DEVICE=cpu python setup.py install`): no CUDA kernels, no CUDA torch."""
    from tests.rules.support import change

    guide = (
        "# Install on Ascend NPU\n\n```bash\nsource /usr/local/Ascend/ascend-toolkit/set_env.sh\n"
        "git clone https://github.com/vllm-project/vllm.git\ncd vllm\n"
        "VLLM_TARGET_DEVICE=cpu python setup.py install\n```\n"
    )
    assert [f for f in change({}, {"docs/install.md": guide}).findings if f.rule == "NPU113"] == []
    cuda = guide.replace("VLLM_TARGET_DEVICE=cpu ", "VLLM_TARGET_DEVICE=cuda ")
    assert [(f.path, f.line) for f in change({}, {"docs/install.md": cuda}).findings if f.rule == "NPU113"] == [
        ("docs/install.md", 7)
    ]


def test_a_driver_that_runs_the_npu_work_over_ssh_is_not_on_npu() -> None:
    """InfiniTensor/ci's `ascend_test_suite/` driver runs the serving over ssh on the NPU server and, on its own
    scheduler host, `docker run --gpus=all` evaluation clients that query it over HTTP: the rule asked for the
    NPUs there (rs-r51, judged false). A driver that also sets Ascend variables itself is on NPU."""
    from tests.rules.support import change

    driver = (
        "#!/bin/bash\n"
        'ssh -p 14735 ci@$ip "source /usr/local/Ascend/ascend-toolkit/set_env.sh && npu-smi info"\n'
        "docker run --rm --gpus=all --network=host evalscope:0624 --host $ip --port 8000\n"
    )
    path = "scheduler/ascend_test_suite/run_accuracy.sh"
    assert [f for f in change({}, {path: driver}).findings if f.rule == "NPU113"] == []
    local = driver.replace("#!/bin/bash\n", "#!/bin/bash\nexport ASCEND_RT_VISIBLE_DEVICES=0,1\n")
    assert [(f.path, f.line) for f in change({}, {path: local}).findings if f.rule == "NPU113"] == [(path, 4)]


def test_a_block_of_nccl_settings_is_one_cause() -> None:
    """TencentARC/mllm-npu's training scripts keep a GPU cluster's NCCL block (four variables) in an NPU launch:
    one comment, not one per variable (rs-r66 and sweep-r26 judged the four findings noise, one cause split)."""
    from npu_review.checks.causes import by_cause
    from tests.fixture_support import audit

    script = (
        "#!/bin/bash\nexport NCCL_IB_SL=3\nexport NCCL_IB_TC=160\nexport NCCL_SOCKET_IFNAME=eth0\n"
        "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7\ntorchrun --nnodes=1 --nproc_per_node=8 train.py\n"
    )
    found = [f for f in audit({"scripts/train_npu.sh": script}).findings if f.rule == "NPU113"]
    assert [f.line for f in found] == [2, 3, 4]
    assert [(c.lead.line, [f.line for f in c.also]) for c in by_cause(found)] == [(2, [3, 4])]
