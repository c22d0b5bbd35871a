"""A synthetic repository shaped like verl's Ascend side, for the engine benchmark (written from scratch, no verl text).

`generate(root, n)` writes `n` files whose kinds and sizes follow verl's tree at HEAD (Python about half the files
at ~11 kB, shell scripts ~5.5 kB, docs ~9 kB, workflows ~6.5 kB, Dockerfiles ~4 kB), with the Ascend share raised:
NPU launch scripts with Hydra overrides, shared launch scripts with a `case npu)` branch, Ascend workflows with
container images, Dockerfiles under docker/ascend, the Ascend tutorial, plus neutral files (configs, data, binaries)
that no rule reads. A few files carry the mistakes the rules look for, at a low rate, as a real tree does.
"""

from __future__ import annotations

import os
import posixpath
import random
import subprocess
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

MODELS = ["qwen2_5_7b", "qwen3_8b", "qwen3_30b_a3b", "qwen3_32b", "qwen3_235b", "deepseek_v3", "glm4_9b", "llama3_8b"]
ALGOS = ["grpo", "ppo", "dapo", "gspo", "rloo", "reinforce_pp"]
STRATEGIES = ["fsdp", "fsdp2", "megatron"]
BACKENDS = ["vllm", "sglang"]
CANN = ["8.2.rc1", "8.3.rc1", "8.5.0", "9.0.0", "9.1.0"]
DEVICES = [("a2", "910b"), ("a3", "a3")]
GRAPH_MODES = ["FULL_DECODE_ONLY", "PIECEWISE", "FULL_AND_PIECEWISE", "NONE", "FULL"]
SWR = "swr.cn-southwest-2.myhuaweicloud.com/modelfoundry/ascend-ci/verl/verl"

# (share of all files, generator name). Verl HEAD: 54 % .py, 15 % .sh, 15 % docs, 9 % YAML, 4 % Dockerfiles.
MIX: list[tuple[float, str]] = [
    (0.48, "python"),
    (0.11, "npu_script"),
    (0.05, "shared_script"),
    (0.02, "plain_script"),
    (0.025, "ascend_workflow"),
    (0.015, "workflow"),
    (0.025, "ascend_dockerfile"),
    (0.01, "dockerfile"),
    (0.06, "ascend_doc"),
    (0.07, "doc"),
    (0.005, "requirements"),
    (0.07, "config_yaml"),
    (0.03, "data_json"),
    (0.02, "text"),
    (0.01, "binary"),
]


T = TypeVar("T")


def _pick(rng: random.Random, seq: list[T]) -> T:
    return seq[rng.randrange(len(seq))]


# ----------------------------------------------------------------------------------------------- shell


def _overrides(rng: random.Random, model: str, algo: str, backend: str, npu: bool) -> list[str]:
    tp = rng.choice([1, 2, 4, 8])
    out = [
        f"algorithm.adv_estimator={algo}",
        'data.train_files="${TRAIN_FILE}"',
        'data.val_files="${TEST_FILE}"',
        f"data.train_batch_size={rng.choice([16, 64, 256, 512, 1024])}",
        f"data.max_prompt_length={rng.choice([512, 1024, 2048, 4096])}",
        f"data.max_response_length={rng.choice([512, 1024, 4096, 8192])}",
        "data.filter_overlong_prompts=True",
        "data.truncation='error'",
        'actor_rollout_ref.model.path="${MODEL_PATH}"',
        "actor_rollout_ref.model.use_remove_padding=True",
        "actor_rollout_ref.model.enable_gradient_checkpointing=True",
        f"actor_rollout_ref.actor.optim.lr={rng.choice(['1e-6', '5e-7', '2e-6'])}",
        f"actor_rollout_ref.actor.ppo_mini_batch_size={rng.choice([8, 32, 64, 128])}",
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=${PPO_MICRO_BATCH_SIZE_PER_GPU}",
        f"actor_rollout_ref.actor.use_kl_loss={rng.choice(['True', 'False'])}",
        "actor_rollout_ref.actor.kl_loss_coef=0.001",
        "actor_rollout_ref.actor.kl_loss_type=low_var_kl",
        "actor_rollout_ref.actor.entropy_coeff=0",
        f"actor_rollout_ref.actor.ulysses_sequence_parallel_size={rng.choice([1, 2, 4])}",
        "actor_rollout_ref.actor.fsdp_config.param_offload=${OFFLOAD}",
        "actor_rollout_ref.actor.fsdp_config.optimizer_offload=${OFFLOAD}",
        "+actor_rollout_ref.actor.fsdp_config.mixed_precision.param_dtype=bf16",
        "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=${LOG_PROB_MICRO_BATCH_SIZE_PER_GPU}",
        f"actor_rollout_ref.rollout.tensor_model_parallel_size={tp}",
        f"actor_rollout_ref.rollout.name={backend}",
        f"actor_rollout_ref.rollout.gpu_memory_utilization={rng.choice(['0.6', '0.8', '0.9'])}",
        "actor_rollout_ref.rollout.n=${ROLLOUT_N}",
        "actor_rollout_ref.rollout.enable_chunked_prefill=True",
        f"actor_rollout_ref.rollout.max_num_batched_tokens={rng.choice([8192, 16384, 32768])}",
        "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=${LOG_PROB_MICRO_BATCH_SIZE_PER_GPU}",
        "actor_rollout_ref.ref.fsdp_config.param_offload=True",
        "algorithm.use_kl_in_reward=False",
        "trainer.critic_warmup=0",
        'trainer.logger=\'["console","tensorboard"]\'',
        'trainer.project_name="${project_name}"',
        'trainer.experiment_name="${exp_name}"',
        "trainer.n_gpus_per_node=${NGPUS_PER_NODE}",
        "trainer.nnodes=${NNODES}",
        f"trainer.save_freq={rng.choice([-1, 20, 50])}",
        f"trainer.test_freq={rng.choice([-1, 5, 10])}",
        f"trainer.total_epochs={rng.choice([1, 5, 15])}",
    ]
    if npu:
        eager = rng.random() < 0.3
        out.append(f"actor_rollout_ref.rollout.enforce_eager={'True' if eager else 'False'}")
        if backend == "vllm" and rng.random() < 0.6:
            mode = _pick(rng, GRAPH_MODES[:4])
            out.append(f'+actor_rollout_ref.rollout.engine_kwargs.vllm.compilation_config.cudagraph_mode="{mode}"')
            out.append(
                "+actor_rollout_ref.rollout.engine_kwargs.vllm.compilation_config.cudagraph_capture_sizes=[8,16]"
            )
        if backend == "sglang" and rng.random() < 0.98:
            out.append("+actor_rollout_ref.rollout.engine_kwargs.sglang.attention_backend=ascend")
        out.append("trainer.device=npu")
    if rng.random() < 0.5:
        out.append("critic.optim.lr=1e-5")
        out.append("critic.model.path=${MODEL_PATH}")
        out.append("critic.ppo_micro_batch_size_per_gpu=${PPO_MICRO_BATCH_SIZE_PER_GPU}")
    return out


def _header(rng: random.Random, model: str, algo: str, strategy: str, where: str) -> list[str]:
    return [
        "#!/usr/bin/env bash",
        f"# {algo.upper()} | {model} | {strategy} training | {where}",
        "#",
        "# Environment variables below can be overridden from the caller.",
        "set -xeuo pipefail",
        "",
        f"project_name='{algo.upper()}-{model}'",
        f"exp_name='{algo}-{model}-{strategy}-{rng.randrange(10_000)}'",
        'RAY_DATA_HOME=${RAY_DATA_HOME:-"${HOME}/verl"}',
        f'MODEL_PATH=${{MODEL_PATH:-"${{RAY_DATA_HOME}}/models/{model}"}}',
        'TRAIN_FILE=${TRAIN_FILE:-"${RAY_DATA_HOME}/data/gsm8k/train.parquet"}',
        'TEST_FILE=${TEST_FILE:-"${RAY_DATA_HOME}/data/gsm8k/test.parquet"}',
        "NNODES=${NNODES:-1}",
        f"NGPUS_PER_NODE=${{NGPUS_PER_NODE:-{rng.choice([8, 16])}}}",
        "OFFLOAD=${OFFLOAD:-True}",
        "ROLLOUT_N=${ROLLOUT_N:-5}",
        "PPO_MICRO_BATCH_SIZE_PER_GPU=${PPO_MICRO_BATCH_SIZE_PER_GPU:-2}",
        "LOG_PROB_MICRO_BATCH_SIZE_PER_GPU=${LOG_PROB_MICRO_BATCH_SIZE_PER_GPU:-4}",
        "",
    ]


def _launch(overrides: list[str], extra: str = "") -> list[str]:
    lines = ["python3 -m verl.trainer.main_ppo \\"]
    lines += [f"    {o} \\" for o in overrides]
    if extra:
        lines.append(f"    {extra} \\")
    lines.append('    "$@"')
    return lines


def npu_script(rng: random.Random, i: int) -> tuple[str, str]:
    model, algo, strategy, backend = _pick(rng, MODELS), _pick(rng, ALGOS), _pick(rng, STRATEGIES), _pick(rng, BACKENDS)
    where = rng.choice(
        [
            f"examples/ascend_extras/{algo}_trainer/run_{model}_{strategy}_{i}.sh",
            f"tests/special_npu/nightly_ci_ascend/run_{algo}_{model}_{strategy}_{i}_npu.sh",
            f"verl/experimental/fully_async_policy/shell/{algo}_{model}_{strategy}_{i}_npu.sh",
            f"examples/{algo}_trainer/run_{model}_{strategy}_{i}_npu.sh",
        ]
    )
    lines = _header(rng, model, algo, strategy, "Ascend NPU")
    level = "2" if rng.random() < 0.05 else "1"  # TASK_QUEUE_ENABLE=2 with graph mode is a finding
    lines += [
        f"export TASK_QUEUE_ENABLE={level}",
        "export CPU_AFFINITY_CONF=1",
        "export HCCL_CONNECT_TIMEOUT=1800",
        "export HCCL_EXEC_TIMEOUT=3600",
        "export VLLM_ASCEND_ENABLE_NZ=0",
        "export MULTI_STREAM_MEMORY_REUSE=2",
        'export LD_PRELOAD="/usr/lib/aarch64-linux-gnu/libjemalloc.so.2${LD_PRELOAD:+:$LD_PRELOAD}"',
        "",
        "ray stop --force || true",
        "",
    ]
    lines += _launch(_overrides(rng, model, algo, backend, npu=True))
    return where, "\n".join(lines) + "\n"


def shared_script(rng: random.Random, i: int) -> tuple[str, str]:
    model, algo, strategy, backend = _pick(rng, MODELS), _pick(rng, ALGOS), _pick(rng, STRATEGIES), _pick(rng, BACKENDS)
    where = f"examples/{algo}_trainer/run_{model}_{strategy}_{i}.sh"
    lines = _header(rng, model, algo, strategy, "NVIDIA GPUs or Ascend NPUs")
    lines[14:14] = [
        "# DEVICE is auto-detected by probing torch_npu; override only for special cases.",
        "DEVICE=${DEVICE:-$(python3 -c 'import torch_npu' 2>/dev/null && echo npu || echo gpu)}",
        f"INFER_BACKEND=${{INFER_BACKEND:-{backend}}}",
        "ROLLOUT_GPU_MEM_UTIL=${ROLLOUT_GPU_MEM_UTIL:-0.6}",
        "DEVICE_ARGS=()",
    ]
    eager = rng.random() < 0.3
    lines += [
        'case "${DEVICE}" in',
        "    gpu)",
        "        DEVICE_ARGS+=(actor_rollout_ref.rollout.enforce_eager=False)",
        "        ;;",
        "    npu)",
        "        export VLLM_USE_V1=1",
        f"        export TASK_QUEUE_ENABLE={'2' if rng.random() < 0.05 else '1'}",
        "        export CPU_AFFINITY_CONF=1",
        "        NGPUS_PER_NODE=16",
        "        ROLLOUT_GPU_MEM_UTIL=0.9",
        f"        DEVICE_ARGS+=(actor_rollout_ref.rollout.enforce_eager={'True' if eager else 'False'})",
        "        DEVICE_ARGS+=(trainer.device=npu)",
        "        ;;",
        "    *)",
        '        echo "unknown DEVICE=${DEVICE}" >&2',
        "        exit 1",
        "        ;;",
        "esac",
        "",
        'case "${INFER_BACKEND}" in',
        "    vllm) ROLLOUT_ARGS=(actor_rollout_ref.rollout.name=vllm) ;;",
        "    sglang) ROLLOUT_ARGS=(actor_rollout_ref.rollout.name=sglang) ;;",
        "esac",
        "",
    ]
    lines += _launch(_overrides(rng, model, algo, backend, npu=False), '"${DEVICE_ARGS[@]}" "${ROLLOUT_ARGS[@]}"')
    return where, "\n".join(lines) + "\n"


def plain_script(rng: random.Random, i: int) -> tuple[str, str]:
    where = rng.choice([f"scripts/tools/convert_{i}.sh", f"tests/special_e2e/run_check_{i}.sh"])
    lines = ["#!/usr/bin/env bash", "set -euo pipefail", "", 'ROOT="$(cd "$(dirname "$0")/.." && pwd)"', ""]
    for k in range(rng.randrange(20, 60)):
        lines += [
            f"step_{k}() {{",
            f'    echo "[step {k}] converting shard {k} under ${{ROOT}}"',
            f'    python3 "${{ROOT}}/scripts/model_merger.py" --backend fsdp --shard {k} --target "${{OUT:-/tmp/out}}"',
            "}",
            f"step_{k}",
            "",
        ]
    return where, "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------- workflows


def _image(rng: random.Random, device: str | None = None) -> str:
    device = device or _pick(rng, DEVICES)[1]
    return f"{SWR}:latest-{_pick(rng, BACKENDS)}-{device}-ubuntu"


def ascend_workflow(rng: random.Random, i: int) -> tuple[str, str]:
    if rng.random() < 0.3:
        return _build_workflow(rng, i)
    name = f"e2e_{_pick(rng, ALGOS)}_{_pick(rng, BACKENDS)}_ascend_{i}"
    lines = [
        f"name: {name}",
        "",
        "on:",
        "  push:",
        "    branches:",
        "      - main",
        "      - v0.*",
        "  pull_request:",
        "    branches:",
        "      - main",
        "    paths:",
        f'      - ".github/workflows/{name}.yml"',
        '      - "tests/special_npu/**"',
        '      - "verl/**"',
        '      - "requirements-npu.txt"',
        "",
        "concurrency:",
        "  group: ${{ github.workflow }}-${{ github.ref }}",
        "  cancel-in-progress: ${{ github.ref != 'refs/heads/main' }}",
        "",
        "permissions:",
        "  contents: read",
        "",
        "jobs:",
    ]
    for j in range(rng.randrange(2, 5)):
        a, device = _pick(rng, DEVICES)
        runner = f"linux-aarch64-{a}-{rng.choice([2, 4, 8])}"
        if rng.random() < 0.02:  # now and then a job pulls the other device's image
            device = "a3" if device == "910b" else "910b"
        lines += [
            f"  job_{j}:",
            "    if: github.repository_owner == 'verl-project'",
            f"    name: E2E Ascend {j}",
            f"    runs-on: {runner}",
            "    timeout-minutes: 120",
            "    container:",
            f"      image: {_image(rng, device)}",
            "      options: >-",
            "        --shm-size 16g",
            "    env:",
            '      HF_ENDPOINT: "https://hf-mirror.com"',
            '      PIP_INDEX_URL: "http://cache-service.nginx-pypi-cache.svc.cluster.local/pypi/simple"',
            "    steps:",
            "      - name: Check npu and CANN info",
            "        run: |",
            '          cat /usr/local/Ascend/ascend-toolkit/latest/"$(uname -i)"-linux/ascend_toolkit_install.info',
            "          npu-smi info",
            "      - name: Checkout",
            "        uses: actions/checkout@v4",
            "        with:",
            "          fetch-depth: 0",
            "      - name: Install the current repository",
            "        run: |",
            "          pip install -r requirements-npu.txt",
            "          pip install --no-deps -e .",
            "      - name: Prepare data",
            "        run: python3 examples/data_preprocess/gsm8k.py --local_save_dir ${HOME}/data/gsm8k",
        ]
        for k in range(rng.randrange(2, 6)):
            script = f"tests/special_npu/run_{_pick(rng, MODELS)}_{k}.sh"
            lines += [
                f"      - name: Run case {k}",
                "        run: |",
                "          ray stop --force",
                f"          bash {script}",
            ]
    return f".github/workflows/{name}.yml", "\n".join(lines) + "\n"


def _build_workflow(rng: random.Random, i: int) -> tuple[str, str]:
    a, device = _pick(rng, DEVICES)
    backend = _pick(rng, BACKENDS)
    dockerfile = f"docker/ascend/Dockerfile.ascend_9.1.0_{a}"  # one of the fixed files: the paths filter holds
    name = f"docker-build-ascend-{backend}-{a}-{i}"
    lines = [
        f"name: {name}",
        "",
        "on:",
        "  workflow_dispatch:",
        "  push:",
        '    branches: ["main"]',
        "    paths:",
        f'      - "{dockerfile}"',
        f'      - ".github/workflows/{name}.yml"',
        "",
        "env:",
        "  QUAY_REPO: quay.io/ascend/verl",
        "",
        "jobs:",
        "  build-push:",
        "    runs-on: ${{ matrix.runner }}",
        "    strategy:",
        "      matrix:",
        "        include:",
        "          - {arch: linux/amd64, runner: ubuntu-latest, tag: amd64}",
        "          - {arch: linux/arm64, runner: ubuntu-22.04-arm, tag: arm64}",
        "    steps:",
        "      - uses: actions/checkout@v4",
        "      - name: Get image tag",
        "        id: version",
        "        run: |",
        f'          echo "tag=latest-{backend}-{device}-ubuntu" >> "$GITHUB_OUTPUT"',
        "      - uses: docker/setup-buildx-action@v3",
        "      - name: Build and push by digest",
        "        uses: docker/build-push-action@v6",
        "        with:",
        "          context: .",
        f"          file: {dockerfile}",
        "          platforms: ${{ matrix.arch }}",
        f"          cache-from: type=gha,scope={backend}-{a}-{i}-${{{{ matrix.tag }}}}",
        f"          cache-to: type=gha,mode=max,scope={backend}-{a}-{i}-${{{{ matrix.tag }}}}",
        "          outputs: type=image,name=${{ env.QUAY_REPO }},push-by-digest=true,push=true",
        "  merge:",
        "    needs: build-push",
        "    runs-on: ubuntu-latest",
        "    steps:",
        "      - name: Create manifest list and push",
        "        run: |",
        f"          docker buildx imagetools create -t $QUAY_REPO:latest-{backend}-{device}-ubuntu \\",
        "            $(printf '$QUAY_REPO@sha256:%s ' *)",
    ]
    return f".github/workflows/{name}.yml", "\n".join(lines) + "\n"


def workflow(rng: random.Random, i: int) -> tuple[str, str]:
    name = f"{_pick(rng, ['e2e', 'unit', 'model', 'sanity'])}_{_pick(rng, ALGOS)}_gpu_{i}"
    lines = [
        f"name: {name}",
        "on:",
        "  pull_request:",
        "    paths: ['verl/**', 'tests/**']",
        "permissions:",
        "  contents: read",
        "jobs:",
    ]
    for j in range(rng.randrange(1, 4)):
        lines += [
            f"  test_{j}:",
            "    runs-on: [L20x8]",
            "    timeout-minutes: 60",
            "    container:",
            f"      image: verlai/verl:vllm0{rng.randrange(8, 12)}.dev{rng.randrange(1, 9)}",
            "    steps:",
            "      - uses: actions/checkout@v4",
            "      - name: Install",
            "        run: pip3 install --no-deps -e .[test]",
        ]
        for k in range(rng.randrange(3, 8)):
            lines += [f"      - name: Case {k}", f"        run: pytest -s -x tests/trainer/test_case_{k}.py"]
    return f".github/workflows/{name}.yml", "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------------------- Dockerfiles


def ascend_dockerfile(rng: random.Random, i: int) -> tuple[str, str]:
    cann = _pick(rng, CANN)
    a, device = _pick(rng, DEVICES)
    lines = [
        "# Pull base image",
        f"FROM quay.io/ascend/cann:{cann}-{device}-ubuntu22.04-py3.11",
        "",
        f'ARG SOC_VERSION="ascend{"910b1" if a == "a2" else "910_9391"}"',
        "ARG PIP_INDEX_URL=https://mirrors.huaweicloud.com/repository/pypi/simple",
        "",
        "# Prepare required system dependencies",
        "RUN apt-get update -y && \\",
        "    apt-get install -y --no-install-recommends gcc g++ cmake libnuma-dev wget git curl jq && \\",
        "    apt-get clean && \\",
        "    rm -rf /var/lib/apt/lists/* /tmp/* /var/tmp/* && \\",
        "    pip install --upgrade pip packaging setuptools && \\",
        "    pip cache purge",
        "",
        "# Clone the libraries",
        "RUN git clone --depth 1 --branch v0.11.0 https://github.com/vllm-project/vllm.git && \\",
        "    git clone --depth 1 --branch v0.11.0rc1 https://github.com/vllm-project/vllm-ascend.git && \\",
        "    git clone --depth 1 --branch core_r0.13.0 https://github.com/NVIDIA/Megatron-LM.git",
        "",
        "# Install the libraries with the CANN environment of this layer",
        "RUN source /usr/local/Ascend/ascend-toolkit/set_env.sh && \\",
        "    source /usr/local/Ascend/nnal/atb/set_env.sh && \\",
        "    cd vllm && VLLM_TARGET_DEVICE=empty pip install -v -e . && cd .. && \\",
        "    cd vllm-ascend && pip install -r requirements.txt && \\",
        "    export COMPILE_CUSTOM_KERNELS=1 && pip install --no-build-isolation -v -e . && cd .. && \\",
        "    pip install -e Megatron-LM && \\",
        "    pip install mbridge qwen_vl_utils mathruler && \\",
        "    rm -rf /tmp/* /var/tmp/* && \\",
        "    pip cache purge",
        "",
    ]
    if rng.random() < 0.1:
        lines += ["RUN wget --no-check-certificate https://example.com/kernels.run -O /tmp/kernels.run", ""]
    if rng.random() < 0.1:
        lines += ["ENV MAX_JOBS=16", ""]
    for k in range(rng.randrange(3, 10)):
        lines += [
            f"# Extra step {k}",
            f"RUN pip install --no-cache-dir extra-package-{k}=={rng.randrange(1, 5)}.{rng.randrange(0, 20)}.0 && \\",
            '    python3 -c "import torch, torch_npu; print(torch.__version__)"',
            "",
        ]
    lines += [
        'ENV LD_LIBRARY_PATH="/usr/local/Ascend/driver/lib64/driver:${LD_LIBRARY_PATH}"',
        'CMD ["/bin/bash"]',
    ]
    return f"docker/ascend/Dockerfile.ascend_{cann}_{a}_{i}", "\n".join(lines) + "\n"


def dockerfile(rng: random.Random, i: int) -> tuple[str, str]:
    lines = [
        f"FROM nvcr.io/nvidia/pytorch:{rng.randrange(23, 26)}.{rng.randrange(1, 12):02d}-py3",
        "ENV DEBIAN_FRONTEND=noninteractive",
        "RUN apt-get update && apt-get install -y --no-install-recommends git wget && rm -rf /var/lib/apt/lists/*",
    ]
    for k in range(rng.randrange(6, 20)):
        lines.append(f"RUN pip install --no-cache-dir pkg{k}=={rng.randrange(1, 4)}.{rng.randrange(0, 9)}")
    return f"docker/verl0.{rng.randrange(4, 8)}-cu12{rng.randrange(4, 9)}/Dockerfile.app.{i}", "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------------ docs


def _doc_body(rng: random.Random, paragraphs: int, links: list[str]) -> list[str]:
    out = []
    for p in range(paragraphs):
        out += [
            f"## Section {p}",
            "",
            "The rollout runs on Ascend NPUs with vLLM-Ascend; graph mode is the default, set `enforce_eager` only",
            "when a model does not capture. Keep `TASK_QUEUE_ENABLE=1` with graph mode on, and use the image that",
            f"matches your CANN version (see [the tags]({_pick(rng, links)})).",
            "",
            "| CANN | torch | torch_npu | image |",
            "| --- | --- | --- | --- |",
            f"| {_pick(rng, CANN)} | 2.7.1 | 2.7.1 | `{_image(rng)}` |",
            "",
            "```bash",
            f"docker pull {_image(rng)}",
            "bash examples/ascend_extras/grpo_trainer/run_qwen3_8b_fsdp_1.sh",
            "```",
            "",
        ]
    return out


def ascend_doc(rng: random.Random, i: int) -> tuple[str, str]:
    if rng.random() < 0.5:
        path = f"docs/ascend_tutorial/{_pick(rng, ['get_start', 'faq', 'dev_guide/performance'])}/guide_{i}.md"
        here = posixpath.dirname(path)
        # Links that resolve, as in a maintained tree; about one document in fifty points at a file since renamed.
        targets = ["docker/ascend/supported_tags.md", "docs/ascend_tutorial/get_start/install_guidance.rst"]
        if rng.random() < 0.02:
            targets.append("docker/ascend/Dockerfile.ascend_8.0.rc1_a2")
        links = [posixpath.relpath(t, here) for t in targets] + ["#section-0"]
        lines = [f"# Ascend guide {i}", "", *_doc_body(rng, rng.randrange(6, 16), links)]
        return path, "\n".join(lines) + "\n"
    lines = [f"Ascend guide {i}", "=" * 20, "", ".. toctree::", "   :maxdepth: 1", ""]
    for p in range(rng.randrange(6, 16)):
        lines += [
            f"Part {p}",
            "-" * 10,
            "",
            "Run the launch script inside the Ascend image, after sourcing the CANN environment:",
            "",
            ".. code-block:: bash",
            "",
            "   source /usr/local/Ascend/ascend-toolkit/set_env.sh",
            f"   docker run -it {_image(rng)} bash",
            "",
            "See `install guidance <../get_start/install_guidance.rst>`_ for the versions.",
            "",
        ]
    return f"docs/ascend_tutorial/model_support/example_{i}.rst", "\n".join(lines) + "\n"


def doc(rng: random.Random, i: int) -> tuple[str, str]:
    lines = [f"# Topic {i}", ""]
    for p in range(rng.randrange(8, 24)):
        lines += [
            f"## Part {p}",
            "",
            "verl trains with FSDP or Megatron; rollouts run on vLLM or SGLang. The configuration is Hydra-based,",
            "so every field below can be overridden on the command line as `section.key=value`.",
            "",
            "```yaml",
            "actor_rollout_ref:",
            "  rollout:",
            "    name: vllm",
            f"    gpu_memory_utilization: 0.{rng.randrange(4, 9)}",
            "```",
            "",
        ]
    where = rng.choice([f"docs/algo/topic_{i}.md", f"docs/perf/topic_{i}.md", f"examples/topic_{i}/README.md"])
    return where, "\n".join(lines) + "\n"


def requirements(rng: random.Random, i: int) -> tuple[str, str]:
    pkgs = ["accelerate", "datasets", "hydra-core", "numpy<2.0.0", "pandas", "peft", "pyarrow>=15.0.0", "ray[default]"]
    pkgs += [f"torch=={rng.choice(['2.7.1', '2.8.0'])}", "transformers", "tensordict>=0.8.0,<=0.10.0"]
    return f"examples/recipe_{i}/requirements-npu.txt", "\n".join(pkgs) + "\n"


# ---------------------------------------------------------------------------------------------- Python


def python(rng: random.Random, i: int) -> tuple[str, str]:
    pkg = _pick(rng, ["workers", "trainer", "utils", "models", "single_controller", "experimental", "tests"])
    where = f"verl/{pkg}/mod_{i}.py" if pkg != "tests" else f"tests/unit/test_mod_{i}_on_cpu.py"
    lines = [
        "# Copyright 2026 The verl authors",
        "#",
        '# Licensed under the Apache License, Version 2.0 (the "License");',
        "",
        f'"""Module {i}: helpers for the {pkg} package."""',
        "",
        "import logging",
        "import os",
        "from dataclasses import dataclass",
        "",
        "import torch",
        "",
        "from verl.utils.device import get_device_name, get_torch_device, is_npu_available",
        "",
        "logger = logging.getLogger(__file__)",
        "",
    ]
    if rng.random() < 0.4:  # verl's Python names CUDA often, behind a device check
        lines += [
            "",
            "def _empty_cache() -> None:",
            "    if torch.cuda.is_available():",
            "        torch.cuda.empty_cache()",
            '    elif get_device_name() == "npu":',
            "        get_torch_device().empty_cache()",
            "",
        ]
    if rng.random() < 0.03:  # a CUDA default that callers may silently take, and a call that takes it
        lines += [
            "",
            f"def get_placement_groups_{i}(",
            '    bundles: list, strategy: str = "STRICT_PACK", device_name: str = "cuda"',
            ") -> list:",
            "    return [(b, strategy, device_name) for b in bundles]",
            "",
            "",
            f"GROUPS = get_placement_groups_{i}([1, 2], strategy='PACK')",
            "",
        ]
    target = rng.randrange(150, 420)
    k = 0
    while len(lines) < target:
        kind = rng.randrange(4)
        if kind == 0:
            lines += [
                "@dataclass",
                f"class Config{k}:",
                f'    """Settings of step {k}."""',
                "",
                "    micro_batch_size: int = 2",
                "    use_dynamic_bsz: bool = False",
                f"    max_token_len: int = {rng.randrange(1, 64) * 1024}",
                "",
            ]
        elif kind == 1:
            lines += [
                f"def step_{k}(batch: dict, config: Config0 | None = None) -> dict:",
                f'    """Runs step {k} on one micro batch."""',
                "    device = get_device_name()",
                "    out = {}",
                "    for key, value in batch.items():",
                "        if isinstance(value, torch.Tensor):",
                "            out[key] = value.to(device, non_blocking=True)",
                "        else:",
                "            out[key] = value",
                "    get_torch_device().synchronize()",
                "    return out",
                "",
            ]
        elif kind == 2:
            lines += [
                f"def _placement_{k}(world_size: int, device_name: str = get_device_name()) -> list[int]:",
                "    if is_npu_available:",
                '        os.environ.setdefault("HCCL_CONNECT_TIMEOUT", "1800")',
                "    ranks = list(range(world_size))",
                f'    logger.info("placement {k}: %s on %s", ranks, device_name)',
                "    return ranks",
                "",
            ]
        else:
            lines += [
                f"class Worker{k}:",
                "    def __init__(self, rank: int) -> None:",
                "        self.rank = rank",
                "        self.device = get_torch_device()",
                "",
                "    def memory(self) -> int:",
                "        return int(self.device.memory_allocated())",
                "",
            ]
        lines.append("")
        k += 1
    return where, "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------- neutral


def config_yaml(rng: random.Random, i: int) -> tuple[str, str]:
    lines = [f"# config {i}", "defaults:", "  - _self_", ""]
    for s in range(rng.randrange(10, 40)):
        lines += [f"section_{s}:", f"  enable: {rng.choice(['true', 'false'])}", f"  size: {rng.randrange(1, 4096)}"]
        lines += [f"  name: item_{s}", "  nested:", "    a: 1", "    b: null", ""]
    return f"verl/trainer/config/generated/cfg_{i}.yaml", "\n".join(lines) + "\n"


def data_json(rng: random.Random, i: int) -> tuple[str, str]:
    rows = ",\n".join(f'  {{"id": {k}, "prompt": "question {k}", "answer": {rng.randrange(1000)}}}' for k in range(60))
    return f"tests/data/sample_{i}.json", "[\n" + rows + "\n]\n"


def text(rng: random.Random, i: int) -> tuple[str, str]:
    where = rng.choice([f"examples/templates/prompt_{i}.jinja", f"verl/version/notes_{i}.txt", f"tests/golden_{i}.out"])
    return where, "".join(f"line {k}: {'x' * rng.randrange(10, 80)}\n" for k in range(rng.randrange(20, 80)))


def binary(rng: random.Random, i: int) -> tuple[str, bytes]:
    return f"docs/_static/img_{i}.png", b"\x89PNG\r\n\x1a\n" + rng.randbytes(rng.randrange(2_000, 30_000))


GENERATORS: dict[str, Callable[[random.Random, int], tuple[str, str | bytes]]] = {
    "python": python,
    "npu_script": npu_script,
    "shared_script": shared_script,
    "plain_script": plain_script,
    "ascend_workflow": ascend_workflow,
    "workflow": workflow,
    "ascend_dockerfile": ascend_dockerfile,
    "dockerfile": dockerfile,
    "ascend_doc": ascend_doc,
    "doc": doc,
    "requirements": requirements,
    "config_yaml": config_yaml,
    "data_json": data_json,
    "text": text,
    "binary": binary,
}


def plan(n: int) -> list[str]:
    """How many files of each generator: the shares of MIX, rounded, adding up to n."""
    counts = {name: int(share * n) for share, name in MIX}
    order = [name for _, name in sorted(MIX, reverse=True)]
    for k in range(n - sum(counts.values())):
        counts[order[k % len(order)]] += 1
    return [name for name, c in counts.items() for _ in range(c)]


FIXED: dict[str, str] = {
    "docker/ascend/supported_tags.md": "# Supported tags\n\n| tag |\n| --- |\n"
    + "".join(f"| `latest-{b}-{d}-ubuntu` |\n" for b in BACKENDS for _, d in DEVICES),
    "docs/ascend_tutorial/get_start/install_guidance.rst": "Install\n=======\n\nUse the Ascend image.\n",
    "requirements-npu.txt": "torch==2.7.1\ntorch_npu==2.7.1\ntransformers\n",
    "README.md": "# verl-like synthetic tree\n",
    **{
        f"docker/ascend/Dockerfile.ascend_9.1.0_{a}": f"FROM quay.io/ascend/cann:9.1.0-{d}-ubuntu22.04-py3.11\n"
        'RUN pip install --no-cache-dir torch==2.7.1 torch_npu==2.7.1\nCMD ["/bin/bash"]\n'
        for a, d in DEVICES
    },
}


def files(n: int = 10_000, seed: int = 0) -> dict[str, str | bytes]:
    """The n files of the tree for a seed, path -> content (the same layout as `generate` writes)."""
    rng = random.Random(seed)
    out: dict[str, str | bytes] = {}
    for i, name in enumerate(plan(n - len(FIXED))):
        path, content = GENERATORS[name](rng, i)
        out[path] = content
    out.update(FIXED)
    return out


def one(kind: str, i: int, seed: int = 0) -> tuple[str, str | bytes]:
    """One file of a generator ("npu_script", "ascend_dockerfile", ...), for building a change."""
    return GENERATORS[kind](random.Random(f"{seed}-{kind}-{i}"), i)


def generate(root: Path, n: int = 10_000, seed: int = 0) -> Counter[str]:
    """Write the n files of `files(n, seed)` under root; returns how many files of each top directory."""
    made: Counter[str] = Counter()
    for path, content in files(n, seed).items():
        full = root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            full.write_bytes(content)
        else:
            full.write_text(content, encoding="utf-8")
        made[path.split("/", 1)[0]] += 1
    return made


def _git(root: Path, *commands: list[str]) -> None:
    """Run git commands in `root`, without the user's git config or hooks."""
    env = {
        **os.environ,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@localhost",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@localhost",
    }
    for args in commands:
        subprocess.run(["git", "-C", str(root), *args], check=True, env=env, stdout=subprocess.DEVNULL)


def commit(root: Path) -> None:
    """`git init` + one commit of everything, without the user's git config or hooks."""
    _git(root, ["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "--no-verify", "-m", "synthetic tree"])


# The files a small Ascend change touches (see `change`): the first path of each kind, in path order.
CHANGE_KINDS = ("ascend_workflow", "ascend_dockerfile", "npu_script")


def _first(paths: list[str], want: Callable[[str], bool]) -> str:
    return next(p for p in sorted(paths) if want(p))


def change(root: Path) -> list[str]:
    """A 3-file Ascend change on a tree `generate` wrote, committed on top: an Ascend workflow that pulls an image
    (a step added to one of its jobs), an Ascend Dockerfile (a RUN added) and an NPU launch script (an export
    added). The same three edits on a tree of any size, so that the change's cost can be compared across sizes.
    Returns the changed paths."""
    paths = [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and ".git" not in p.parts]
    texts: dict[str, str] = {}

    def read(p: str) -> str:
        if p not in texts:
            texts[p] = (root / p).read_text(encoding="utf-8")
        return texts[p]

    wf = _first(
        paths,
        lambda p: p.startswith(".github/workflows/e2e_") and "ascend" in p and "      image: " in read(p),
    )
    df = _first(paths, lambda p: p.startswith("docker/ascend/Dockerfile.ascend_") and p.count("_") >= 3)
    sh = _first(paths, lambda p: p.startswith("tests/special_npu/") and p.endswith("_npu.sh"))
    edits = {
        wf: read(wf).replace(
            "      - name: Checkout\n",
            "      - name: Show the image\n        run: npu-smi info\n      - name: Checkout\n",
            1,
        ),
        df: read(df).replace('CMD ["/bin/bash"]', 'RUN pip install --no-cache-dir pytest==8.3.0\nCMD ["/bin/bash"]', 1),
        sh: read(sh).replace(
            "export HCCL_CONNECT_TIMEOUT=1800\n", "export HCCL_CONNECT_TIMEOUT=1800\nexport HCCL_BUFFSIZE=400\n", 1
        ),
    }
    for p, text in edits.items():
        if text == read(p):
            raise RuntimeError(f"change: nothing to edit in {p}")
        (root / p).write_text(text, encoding="utf-8")
    _git(root, ["add", "-A"], ["commit", "-q", "--no-verify", "-m", "a small Ascend change"])
    return sorted(edits)
