"""Each rule's docstring `Bad:` example fires the rule and its `Good:` example does not (as pylint runs the bad.py
and good.py of its message docs). An example is a fragment; SCAFFOLDS says where it goes (a path, the lines around
it, the other files of the tree). What an example may hold, so that it reads as it runs:

- several files: a line `# <path>` (optionally followed by a note in parentheses) starts the part of the example
  that goes to that path; the text before the first such line goes to the scaffold's own path. A part's path may
  have a template of its own (`Scaffold.parts`).
- a change: with `Scaffold.change`, the example is a diff: lines starting with `-` are the base revision's, lines
  starting with `+` the head's, lines starting with a space (context) are in both; the PR title is the one the
  heading names (`Bad (in a PR titled "..."):`) or the scaffold's. A part noted `(deleted)` is in the base only,
  one noted `(new)` in the head only.
- an addition: with `Scaffold.added`, the example is what a change adds to the scaffold's files.
- a shorthand the docstring defines (`SWR_CN = swr.cn-southwest-2...`): `Scaffold.names` spells it out.
- a character the docs cannot show: `<U+200B>` stands for it, in a path as in the text.
- several examples: every `Bad ...:` (or `Good ...:`) heading starts one, and each must fire (stay silent).

A rule listed in NOT_RUN says why its examples cannot run; its fixture cases show the same (tests/fixtures/<RULE>/).
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

import pytest

from npu_review.checks.config import DEFAULT_CONFIG, parse_config
from npu_review.checks.diffing import changes_between
from npu_review.checks.engine import known_rule_ids, run
from npu_review.checks.model import ChangeSet, MemoryTree
from npu_review.checks.rule import all_rules
from tests.fixture_support import audit


@dataclass(frozen=True)
class Scaffold:
    path: str
    template: str = "{example}\n"  # `{example}` is replaced by the example, indented by `indent`
    indent: str = ""
    others: tuple[tuple[str, str], ...] = ()  # more files of the tree, as (path, text), in both revisions
    parts: tuple[tuple[str, str, str], ...] = ()  # (path, template, indent) of the example's `# <path>` parts
    change: bool = False  # the example is a diff: `-` lines are the base's, `+` lines the head's
    added: bool = False  # the example is what a change adds: the base has the files without it
    title: str = ""  # the PR title when the example's heading names none
    names: tuple[tuple[str, str], ...] = ()  # (short name, text) of the shorthand the docstring defines
    config: str | None = None  # the repo config's text, for a tree too small to be recognised as its project


@dataclass(frozen=True)
class Example:
    heading: str
    text: str

    @property
    def title(self) -> str | None:
        m = re.search(r'titled "([^"]*)"', self.heading)
        return m.group(1) if m else None


_DF = "docker/ascend/Dockerfile.ascend_9.1.0_a2"
_FROM = "FROM swr.cn-south-1.myhuaweicloud.com/ascendhub/cann:9.1.0-910b-ubuntu22.04-py3.12\n"
_VLLM_ASCEND = "RUN git clone -b releases/v0.18.0 https://github.com/vllm-project/vllm-ascend.git\n"
_CANN_FROM = "FROM quay.io/ascend/cann:8.5.0-910b-ubuntu22.04-py3.11\n"
_SH = "examples/ascend/run_qwen3_8b_grpo_npu.sh"
_LAUNCH = "#!/usr/bin/env bash\npython3 -m verl.trainer.main_ppo \\\n{example}\n    trainer.nnodes=1\n"
_WF = ".github/workflows/e2e_ascend.yml"
_JOB = "name: e2e\non: [pull_request]\njobs:\n  e2e_ascend:\n    runs-on: linux-aarch64-a2b3-8\n{example}\n"

# A generated Hydra config (verl/trainer/config/_generated_*.yaml), cut to the keys the examples name.
_HYDRA = (
    "verl/trainer/config/_generated_ppo_trainer.yaml",
    "actor_rollout_ref:\n  actor:\n    strategy: fsdp\n  rollout:\n    name: vllm\n    checkpoint_engine:\n"
    "      backend: naive\n      update_weights_bucket_megabytes: 2048\n  model:\n    path: ~/models/x\n"
    "    override_config: {}\ntrainer:\n  nnodes: 1\n",
)
# verl's ray base module (the functions with CUDA defaults) and its device-API check, which skips the module.
_RAY_BASE = (
    "from verl.utils.device import get_device_name\n\n\n"
    "class RayResourcePool:\n"
    '    def get_placement_groups(self, strategy="STRICT_PACK", name=None, device_name="cuda"):\n'
    "        return []\n\n\n"
    "class RayWorkerGroup:\n"
    "    def __init__(self, resource_pool=None, ray_cls_with_init=None, **kwargs):\n"
    '        self.device_name = kwargs.get("device_name", "cuda")\n\n\n'
    "def _buffer(n):\n"
)
_DEVICE_API_CHECK = (
    "tests/special_sanity/check_device_api_usage.py",
    'CUDA_KEYWORD_CHECK_WHITELIST = [\n    "verl/utils/device.py",\n    "verl/single_controller/ray/base.py",\n]\n',
)
_MINDSPEED_SH = "tests/special_npu/run_qwen3_06b_grpo_mindspeed.sh"
_MINDSPEED = (
    "#!/usr/bin/env bash\nexport TASK_QUEUE_ENABLE=1\n\npython3 -m verl.trainer.main_ppo --config-path=config \\\n"
    "{example}\n"
    "    actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2 \\\n    trainer.n_gpus_per_node=8\n"
)
# The A2 build workflow: it pushes `latest-vllm-910b-ubuntu` to quay.io/ascend/verl.
_BUILD_A2 = (
    ".github/workflows/docker-build-ascend-a2.yml",
    "name: docker-build-ascend-a2\non:\n  push:\n    branches: [main]\nenv:\n  QUAY_REPO: quay.io/ascend/verl\njobs:\n"
    "  build-push:\n    runs-on: ubuntu-22.04-arm\n    steps:\n      - uses: actions/checkout@v4\n"
    '      - id: version\n        run: echo "tag=latest-vllm-910b-ubuntu" >> "$GITHUB_OUTPUT"\n'
    "      - uses: docker/build-push-action@v6\n        with:\n          context: .\n"
    "          file: ./docker/ascend/Dockerfile.ascend_9.1.0_a2\n          push: true\n"
    "          tags: ${{ env.QUAY_REPO }}:${{ steps.version.outputs.tag }}\n",
)
_BUILD_A2_RUN = _BUILD_A2[1].replace(
    '        run: echo "tag=latest-vllm-910b-ubuntu" >> "$GITHUB_OUTPUT"\n', "        run: |\n{example}\n"
)
# A CI job that runs scripts/prepare_env_npu.sh as a child, then tests (NPU114).
_CALLS_PREPARE = "    steps:\n      - run: bash scripts/prepare_env_npu.sh\n      - run: python3 tests/test_npu.py\n"
# A dependency installer with an option parser that rejects what it does not know (NPU117).
_INSTALL_DEPS = (
    '#!/usr/bin/env bash\n# CANN dependencies\nwhile [[ $# -gt 0 ]]; do\n    case "$1" in\n'
    '        --cann-version) CANN_VERSION="$2"; shift 2 ;;\n        *) echo "Unknown option: $1"; exit 1 ;;\n'
    "    esac\ndone\n"
)
# setup.py runs scripts/gen_npu.sh with sh (NPU317).
_SETUP_RUNS_SH = (
    "import os\nimport subprocess\n\n\ndef gen(base):\n"
    '    subprocess.call(["sh", os.path.join(base, "scripts", "gen_npu.sh")])\n'
)
_SWR = (
    ("SWR_CN", "swr.cn-southwest-2.myhuaweicloud.com/modelfoundry/ascend-ci"),
    ("SWR_AP", "swr.ap-southeast-1.myhuaweicloud.com/base_image/ascend-ci"),
)


def _pulls(name: str, runner: str = "linux-aarch64-a2b3-8") -> tuple[str, str, str]:
    """A workflow whose job runs in the container the example names (`image: ...`)."""
    return (
        f".github/workflows/{name}.yml",
        f"name: {name}\non: [pull_request]\njobs:\n  {name}:\n    runs-on: {runner}\n    container:\n{{example}}\n"
        "    steps:\n      - run: npu-smi info\n",
        "      ",
    )


def _merge(device: str) -> str:
    """The merge job of a multi-arch build: the example's `docker buildx imagetools create` names the tags."""
    return (
        f"name: docker-build-ascend-{device}\non: workflow_dispatch\njobs:\n  merge:\n    runs-on: ubuntu-latest\n"
        "    steps:\n      - env:\n          IMAGE: quay.io/ascend/verl\n        run: |\n{example}\n"
    )


def _matrix_build(device: str) -> tuple[str, str, str]:
    """A build workflow of `device`, a matrix over the architectures; the example goes under the build's `with:`."""
    return (
        f".github/workflows/docker-build-ascend-{device}.yml",
        f"name: docker-build-ascend-{device}\non:\n  push:\n    branches: [main]\njobs:\n  build:\n"
        "    strategy:\n      matrix:\n        tag: [amd64, arm64]\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: docker/build-push-action@v6\n        with:\n          context: .\n"
        f"          file: ./docker/ascend/Dockerfile.ascend_9.1.0_{device}\n          push: true\n"
        f"          tags: quay.io/ascend/verl:latest-vllm-{'910b' if device == 'a2' else device}-ubuntu\n{{example}}\n",
        "          ",
    )


_DF_A2 = ("docker/ascend/Dockerfile.ascend_9.1.0_a2", _FROM)


def _twin(device: str) -> tuple[str, str, str]:
    """One of the A2/A3 twin Dockerfiles of CANN 8.5.0; the example follows its device lines."""
    base, soc = ("910b", "ascend910b1") if device == "a2" else ("a3", "ascend910_9392")
    return (
        f"docker/ascend/Dockerfile.ascend_8.5.0_{device}",
        f"FROM swr.cn-south-1.myhuaweicloud.com/ascendhub/cann:8.5.0-{base}-ubuntu22.04-py3.11\n"
        f"ARG SOC_VERSION={soc}\n{{example}}\n",
        "",
    )


def _meta_build(name: str) -> tuple[str, str, str]:
    """An image build whose metadata-action step takes the example's `tags:` rules."""
    return (
        f".github/workflows/{name}.yml",
        f"name: {name}\non:\n  push:\n    branches: [main]\n  pull_request:\njobs:\n  image:\n"
        "    runs-on: ubuntu-24.04-arm\n    steps:\n      - uses: actions/checkout@v4\n      - id: meta\n"
        "        uses: docker/metadata-action@v5\n        with:\n"
        "          images: quay.io/ascend/vllm-ascend\n{example}\n"
        "      - uses: docker/build-push-action@v6\n        with:\n"
        f"          file: docker/Dockerfile.{name.removeprefix('image_').replace('_', '.')}\n"
        "          push: ${{ github.event_name == 'push' }}\n          tags: ${{ steps.meta.outputs.tags }}\n",
        "          ",
    )


# A workflow that runs the reusable e2e workflow once per request, side by side.
_PR_COMMAND = (
    ".github/workflows/pr_command.yaml",
    "name: pr command\non:\n  workflow_dispatch:\n    inputs:\n      request_id:\n        type: string\n"
    "        required: true\nconcurrency:\n  group: pr-command-${{ inputs.request_id }}\n  cancel-in-progress: false\n"
    "jobs:\n  run:\n    uses: ./.github/workflows/_e2e.yaml\n    with:\n"
    "      config_file: tests/e2e/configs/Qwen3-8B.yaml\n"
    "      request_id: ${{ inputs.request_id }}\n",
)
# The multi-node e2e workflow and two of its calls, which pass both its secrets.
_E2E_SECRETS = (
    ".github/workflows/_e2e.yaml",
    "name: e2e (multi-node)\non:\n  workflow_call:\n    secrets:\n      KUBECONFIG_B64:\n        required: true\n"
    "      UPLOAD_TOKEN:\n        required: false\njobs:\n  test:\n    runs-on: linux-aarch64-a3-16\n    steps:\n"
    "      - run: ./tests/e2e/run_multi_node.sh\n        env:\n"
    "          KUBECONFIG_B64: ${{ secrets.KUBECONFIG_B64 }}\n"
    "          UPLOAD_TOKEN: ${{ secrets.UPLOAD_TOKEN }}\n",
)
_NIGHTLY_CALLS = (
    ".github/workflows/nightly_multi_node.yaml",
    "name: nightly multi-node\non:\n  schedule:\n    - cron: '0 2 * * *'\njobs:\n"
    + "".join(
        f"  {job}:\n    uses: ./.github/workflows/_e2e.yaml\n    secrets:\n"
        "      KUBECONFIG_B64: ${{ secrets.KUBECONFIG_B64 }}\n      UPLOAD_TOKEN: ${{ secrets.UPLOAD_TOKEN }}\n"
        for job in ("nightly-dp", "nightly-pd")
    ),
)
_CANN_83 = "quay.io/ascend/cann:8.3.rc2-910b-ubuntu22.04-py3.11"


def _cann_job(name: str) -> tuple[str, str]:
    return (
        f".github/workflows/{name}.yml",
        f"name: {name}\non: [pull_request]\njobs:\n  test:\n    runs-on: linux-aarch64-a2b3-1\n    container:\n"
        f"      image: {_CANN_83}\n    steps:\n      - run: pytest tests/e2e\n",
    )


SCAFFOLDS: dict[str, Scaffold] = {
    "NPU101": Scaffold(_SH, "#!/usr/bin/env bash\n{example}\n"),
    "NPU102": Scaffold(_SH, _LAUNCH, "    "),
    "NPU103": Scaffold(_SH, _LAUNCH, change=True),
    "NPU104": Scaffold(_SH, "#!/usr/bin/env bash\n{example}\n"),
    "NPU105": Scaffold(_SH, "#!/usr/bin/env bash\n{example}\n", others=(_HYDRA,)),
    "NPU106": Scaffold(_SH, _LAUNCH, "    "),
    # The Megatron config the example changes, and an NPU Megatron script that inherits its default.
    "NPU107": Scaffold(
        "verl/trainer/config/engine/megatron.yaml",
        "param_offload: False\nuse_mbridge: True\n{example}\nuse_remove_padding: True\n",
        others=(
            (
                _MINDSPEED_SH,
                _MINDSPEED.replace(
                    "{example}",
                    "    --config-name='ppo_megatron_trainer.yaml' \\\n"
                    "    actor_rollout_ref.model.path=$HOME/models/Qwen/Qwen3-0.6B \\",
                ),
            ),
        ),
        parts=((_MINDSPEED_SH, _MINDSPEED, ""),),
        change=True,
        title="[BREAKING][megatron] chore: make Megatron-Bridge the default",
    ),
    "NPU108": Scaffold(_SH, _LAUNCH, "    "),
    "NPU109": Scaffold(_SH, "#!/usr/bin/env bash\n{example}\n"),
    "NPU110": Scaffold("tests/e2e/run_npu.sh", "#!/usr/bin/env bash\n{example}\n"),
    "NPU111": Scaffold(_SH, "#!/usr/bin/env bash\n{example}\n"),  # (`·` in the docstring marks a blank)
    "NPU114": Scaffold(
        "scripts/prepare_env_npu.sh",
        others=((_WF, _JOB.replace("{example}", _CALLS_PREPARE)),),
    ),
    "NPU113": Scaffold(_SH, "#!/usr/bin/env bash\n{example}\n"),
    "NPU115": Scaffold(_SH, "#!/usr/bin/env bash\n{example}\n"),
    "NPU116": Scaffold(_SH, "#!/usr/bin/env bash\n{example}\n"),
    "NPU117": Scaffold(
        ".github/workflows/build.yml",
        _JOB.replace("{example}", "    steps:\n{example}"),
        "      ",
        others=(("scripts/install_deps.sh", _INSTALL_DEPS),),
        parts=(("scripts/install_deps.sh", "{example}\n", ""),),
    ),
    # Another script of the repository gives DEVICE a default: the repository's scripts set it themselves.
    "NPU119": Scaffold(
        _SH,
        "#!/usr/bin/env bash\n{example}\n",
        others=(("examples/ascend/run_qwen3_8b_sft_npu.sh", "#!/usr/bin/env bash\nDEVICE=${DEVICE:-npu}\n"),),
    ),
    "NPU120": Scaffold(_SH, "#!/usr/bin/env bash\n{example}\n"),
    "NPU121": Scaffold("examples/ascend/offline_infer_npu.py"),
    "NPU122": Scaffold("setup.py"),
    "NPU123": Scaffold(_SH, "#!/usr/bin/env bash\n{example}\n"),
    "NPU124": Scaffold(_SH, "#!/usr/bin/env bash\n{example}\n"),
    "NPU125": Scaffold("scripts/run_distribute_train_ascend.sh", "#!/bin/bash\n{example}\n"),
    "NPU322": Scaffold("docker/Dockerfile.npu"),
    "NPU323": Scaffold("docker/Dockerfile.npu"),
    "NPU324": Scaffold(".github/Dockerfile.buildwheel", others=(("vllm_ascend/__init__.py", ""),)),
    "NPU325": Scaffold("docker/ascend/Dockerfile.ascend_8.5.0_a2", _CANN_FROM + "{example}\n"),
    "NPU326": Scaffold("docker/ascend/Dockerfile.ascend_8.5.0_a2", _CANN_FROM + "{example}\n"),
    "NPU118": Scaffold(
        "tests/special_npu/run_e2e.sh",
        "#!/usr/bin/env bash\n{example}\n",
        others=(("tests/special_npu/run_qwen3_06b_grpo_npu.sh", "#!/usr/bin/env bash\n"),),
    ),
    "NPU200": Scaffold(_WF, "name: e2e\non: [pull_request]\n{example}\n"),
    "NPU201": Scaffold(
        *_pulls("e2e_ascend"),
        others=(_BUILD_A2, _DF_A2),
        parts=(_pulls("model_ascend"), _pulls("nightly_ascend"), _pulls("release_ascend")),
        names=_SWR,
    ),
    "NPU202": Scaffold(
        _BUILD_A2[0],
        _BUILD_A2_RUN,
        "          ",
        others=(_DF_A2,),
        parts=(_pulls("vllm_ascend"),),
        names=_SWR,
    ),
    "NPU203": Scaffold(
        ".github/workflows/docker-build-ascend-a2.yml",
        _merge("a2"),
        "          ",
        others=(
            (
                ".github/workflows/docker-build-ascend-a3.yml",
                _merge("a3").replace(
                    "{example}",
                    "          docker buildx imagetools create -t "
                    '"$IMAGE:v0.8.0-cann9.0.0-torch_npu2.9.0.post2-a3-ubuntu22.04-py3.11-vllm" $DIGESTS',
                ),
            ),
        ),
        parts=(("docs/ascend_tutorial/quick_start.md", "```bash\n{example}\n```\n", ""),),
    ),
    "NPU204": Scaffold(
        "docs/ascend_tutorial/ci_guide.md", "# CI on Ascend\n\n```bash\n{example}\n```\n", others=(_BUILD_A2, _DF_A2)
    ),
    "NPU205": Scaffold(*_matrix_build("a2"), parts=(_matrix_build("a3"),)),
    "NPU206": Scaffold(
        ".github/workflows/docker-build-ascend-a2.yml",
        "name: docker-build-ascend-a2\non:\n  push:\n    branches: [main]\nenv:\n  QUAY_REPO: quay.io/ascend/verl\n"
        "jobs:\n  build:\n    runs-on: ubuntu-latest\n    strategy:\n      matrix:\n        tag: [amd64, arm64]\n"
        "    steps:\n{example}\n",
        "      ",
    ),
    "NPU207": Scaffold(_WF, _JOB.replace("{example}", "    steps:\n      - run: |\n{example}"), "          "),
    # The A3 sglang image is built from a Dockerfile that pins MindSpeed.
    "NPU208": Scaffold(
        _WF,
        "name: e2e_ascend\non: [pull_request]\njobs:\n  e2e_sglang_a3:\n    runs-on: linux-aarch64-a3-16\n{example}\n",
        "    ",
        others=(
            (
                ".github/workflows/docker-build-ascend-a3-sglang.yml",
                _matrix_build("a3")[1]
                .replace("Dockerfile.ascend_9.1.0_a3", "Dockerfile.ascend.sglang_9.1.0_a3")
                .replace("latest-vllm-a3-ubuntu", "latest-sglang-a3-ubuntu")
                .replace("{example}", "          cache-to: type=gha,mode=max,scope=ascend-a3-sglang"),
            ),
            (
                "docker/ascend/Dockerfile.ascend.sglang_9.1.0_a3",
                _FROM.replace("-910b-", "-a3-")
                + "RUN git clone --depth 1 --branch core_r0.16.0 https://gitcode.com/ascend/MindSpeed.git /MindSpeed\n",
            ),
        ),
    ),
    "NPU209": Scaffold(_WF, _JOB.replace("{example}", "    steps:\n{example}"), "      "),
    "NPU210": Scaffold(
        _WF,
        "name: e2e_ascend\non:\n  pull_request:\n{example}\njobs:\n  e2e:\n    runs-on: linux-aarch64-a2b3-8\n"
        "    steps:\n      - run: bash tests/special_npu/run_qwen3_06b_ppo.sh\n",
        "    ",
        others=(("tests/special_npu/run_qwen3_06b_ppo.sh", "#!/usr/bin/env bash\n"),),
    ),
    # The project's other Ascend jobs run on the current labels.
    "NPU211": Scaffold(
        _WF,
        "name: e2e_ascend\non: [pull_request]\njobs:\n  e2e:\n{example}\n    steps:\n      - run: npu-smi info\n",
        "    ",
        others=(
            (
                ".github/workflows/nightly_ascend.yml",
                "name: nightly_ascend\non: [pull_request]\njobs:\n"
                + "".join(
                    f"  {job}:\n    runs-on: {label}\n    container:\n"
                    f"      image: {_SWR[0][1]}/verl/verl:latest-vllm-{device}-ubuntu\n"
                    "    steps:\n      - run: npu-smi info\n"
                    for job, label, device in (
                        ("nightly_a2", "linux-aarch64-a2b3-8", "910b"),
                        ("nightly_a2_ppo", "linux-aarch64-a2b3-8", "910b"),
                        ("nightly_a3", "linux-aarch64-a3-16", "a3"),
                    )
                ),
            ),
        ),
        names=_SWR,
        config="profile: verl\n",  # a fragment of verl's layout, too small to be recognised as verl
    ),
    # The examples carry their triggers (NPU212 reports only jobs that forks run by themselves) and the project's
    # other guards (it reports only in a project that guards jobs).
    "NPU212": Scaffold(_WF, "name: e2e\n{example}\n"),
    "NPU213": Scaffold(
        _WF,
        _JOB.replace("{example}", "    steps:\n      - uses: docker/metadata-action@v5\n        with:\n{example}"),
        "          ",
    ),
    # A weekly test matrix; the config file the examples name exists under nightly/ only.
    "NPU215": Scaffold(
        ".github/workflows/configs/weekly_config.yaml",
        "weekly:\n  multi_node:\n    test_config:\n{example}\n",
        "      ",
        others=(("tests/e2e/nightly/multi_node/external_dp/config/Kimi-K2.6-W4A8-64k-1k-TPOT50-PD.yaml", "x: 1\n"),),
    ),
    "NPU217": Scaffold(_WF, _JOB.replace("{example}", "    steps:\n{example}"), "      "),
    "NPU222": Scaffold(
        _WF, "name: e2e\non: [pull_request]\njobs:\n  e2e:\n    runs-on: linux-aarch64-a2b3-4\n{example}\n", "    "
    ),
    "NPU223": Scaffold(_WF, "{example}\n", others=(("scripts/ascend/run_tests.sh", "#!/bin/bash\npytest tests\n"),)),
    "NPU224": Scaffold(".github/workflows/release.yml", "name: release\non: [release]\n{example}\n"),
    "NPU225": Scaffold(_WF),
    "NPU226": Scaffold(
        _WF,
        _JOB.replace("{example}", "    steps:\n{example}"),
        "      ",
        others=(("requirements-npu.txt", "torch_npu==2.5.1\n"), ("setup.py", "from setuptools import setup\n")),
    ),
    "NPU220": Scaffold("scripts/release_npu.sh", "#!/bin/bash\nset -e\n{example}\n"),
    "NPU221": Scaffold("docker/Dockerfile"),
    "NPU227": Scaffold(_WF, _JOB, "    "),
    "NPU228": Scaffold("tests/special_npu/run_sft_sp2.sh", "set -x\n{example}\n"),
    "NPU229": Scaffold(
        "docs/tutorials/deepseek.md", "# DeepSeek\n\n{example}\n", others=(("vllm_ascend/__init__.py", ""),)
    ),
    "NPU230": Scaffold(".github/workflows/pr_nightly_command.yml", others=(("vllm_ascend/__init__.py", ""),)),
    "NPU301": Scaffold(_DF, _FROM + "{example}\n"),
    "NPU302": Scaffold(_DF, _FROM + "{example}\n"),
    "NPU303": Scaffold(_DF, _FROM + "{example}\nRUN python3 -c 'import torch_npu'\n"),
    "NPU304": Scaffold(_DF, _FROM + "{example}\n"),
    "NPU305": Scaffold("docker/ascend/Dockerfile.ascend_9.0.0_a3"),
    "NPU306": Scaffold(_DF, _FROM + "{example}\n"),
    "NPU307": Scaffold(
        "docker/ascend/Dockerfile.ascend_8.3.rc1_a2",
        "FROM swr.cn-south-1.myhuaweicloud.com/ascendhub/cann:8.3.rc1-910b-ubuntu22.04-py3.11\nRUN {example}\n",
    ),
    "NPU308": Scaffold(
        "docker/ascend/Dockerfile.ascend_8.3.rc1_a2",
        "FROM swr.cn-south-1.myhuaweicloud.com/ascendhub/cann:8.3.rc1-910b-ubuntu22.04-py3.11\n{example}\n",
    ),
    "NPU309": Scaffold(_DF, _FROM + "RUN {example}\n"),
    "NPU310": Scaffold(*_twin("a2"), parts=(_twin("a3"),), change=True),
    # The vllm-ascend checkout says which release's requirements the example installs (one that brings triton-ascend).
    "NPU311": Scaffold(_DF, _FROM + _VLLM_ASCEND + "RUN {example}\n    true\n"),
    "NPU312": Scaffold("requirements-npu.txt", "{example}\n"),
    "NPU313": Scaffold("docker/Dockerfile", "{example}\n"),
    "NPU317": Scaffold("scripts/gen_npu.sh", others=(("setup.py", _SETUP_RUNS_SH),)),
    "NPU318": Scaffold(_DF, _FROM + "{example}\n"),
    "NPU321": Scaffold("requirements-npu.txt", "{example}\n"),
    "NPU401": Scaffold(
        "verl/trainer/ppo/ray_trainer.py",
        "from verl.single_controller.ray.base import RayWorkerGroup\n\n\n"
        "def init_workers(resource_pool, pool, cls):\n{example}\n",
        "    ",
        others=(_DEVICE_API_CHECK,),
        added=True,
        parts=(("verl/single_controller/ray/base.py", _RAY_BASE + "{example}\n    return buf\n", "    "),),
    ),
    "NPU402": Scaffold(
        "verl/utils/vllm/__init__.py",
        "from .npu_vllm_patch import apply_npu_vllm_patches\n{example}\n",
        others=(("verl/utils/vllm/npu_vllm_patch.py", "def apply_npu_vllm_patches():\n    pass\n"),),
        change=True,
    ),
    "NPU403": Scaffold("setup.py", others=(("torch_npu/__init__.py", ""),)),
    "NPU404": Scaffold(
        "setup.py",
        others=(
            ("vllm_ascend/__init__.py", ""),
            ("vllm_ascend/ops/__init__.py", ""),
            ("vllm_ascend/ops/layernorm.py", ""),
        ),
    ),
    "NPU501": Scaffold(
        "docs/ascend_tutorial/get_start/quick_start.md",
        others=(("docs/ascend_tutorial/get_start/install_guidance.md", "# 安装指南\n"),),
    ),
    "NPU502": Scaffold(
        "docker/ascend/README.md",
        others=(
            ("docker/ascend/Dockerfile.ascend_9.1.0_a2", _FROM),
            ("scripts/install_vllm_mcore_npu.sh", "#!/usr/bin/env bash\npip install vllm\n"),
        ),
    ),
    "NPU319": Scaffold("docs/install_npu.md", "# Install on Ascend NPU\n\n{example}\n"),
    "NPU506": Scaffold("README.md", "# Install on Ascend NPU\n\n```bash\n{example}\n```\n"),
    "NPU503": Scaffold(
        "docker/ascend/supported_tags.md",
        "# Supported tags\n\n## Latest Images\n\n{example}\n",
        others=(
            ("docker/ascend/Dockerfile.ascend_9.1.0_a2", _FROM),
            ("docker/ascend/Dockerfile.ascend_9.1.0_a3", _FROM.replace("-910b-", "-a3-")),
        ),
    ),
    "NPU504": Scaffold("docs/install_guide.md", "# Install guide\n\n{example}\n"),
    "NPU314": Scaffold(_DF, _FROM + "{example}\n"),
    "NPU315": Scaffold(_DF, _FROM + "{example}\n"),
    "NPU316": Scaffold(_DF, _FROM + "{example}\n"),
    "NPU214": Scaffold(*_meta_build("image_openeuler"), parts=(_meta_build("image_310p_openeuler"),)),
    "NPU216": Scaffold(
        ".github/workflows/_e2e.yaml",
        "name: e2e (reusable)\non:\n  workflow_call:\n    inputs:\n      config_file:\n        type: string\n"
        '        required: true\n      request_id:\n        type: string\n        default: ""\n{example}\njobs:\n'
        "  test:\n    runs-on: linux-aarch64-a2b3-4\n    steps:\n"
        '      - run: pytest tests/e2e --config ${{ inputs.config_file }} --id "${{ inputs.request_id }}"\n',
        others=(_PR_COMMAND,),
    ),
    "NPU218": Scaffold(
        ".github/workflows/weekly_multi_node.yaml",
        "name: weekly multi-node\non:\n  schedule:\n    - cron: '0 3 * * 0'\njobs:\n{example}\n",
        "  ",
        others=(_E2E_SECRETS, _NIGHTLY_CALLS),
    ),
    "NPU219": Scaffold(
        ".github/workflows/unit.yml",
        "name: unit\non: [pull_request]\njobs:\n  unit:\n    runs-on: linux-aarch64-a2b3-1\n{example}\n"
        "    steps:\n      - run: pytest tests/unit\n",
        "    ",
        others=(("Dockerfile", f"FROM {_CANN_83}\nRUN pip install -e .\n"), _cann_job("ci"), _cann_job("nightly")),
    ),
}

# Rules whose examples cannot run here, and why (their fixture cases show the same).
NOT_RUN: dict[str, str] = {}


# A line `# <path>` (a path with a folder, or a file name with an extension), perhaps with a note in parentheses.
_PART = re.compile(r"# (?P<path>[\w.\-<+>]+(?:/[\w.\-<+>]+)+|[\w\-]+\.[\w.\-]+)(?: \((?P<note>[^)]*)\))?:?")
_CHAR = re.compile(r"<U\+([0-9A-F]{4,6})>")


def _examples(doc: str, kind: str) -> list[Example]:
    """The indented blocks under `Bad:` (or `Good:`) lines that end with the colon."""
    out = []
    lines = doc.splitlines()
    for i, line in enumerate(lines):
        if re.match(rf"{kind}\b[^\n]*:\s*$", line):
            block = []
            for nxt in lines[i + 1 :]:
                if nxt.strip() and not nxt.startswith("    "):
                    break
                block.append(nxt)
            out.append(Example(line, textwrap.dedent("\n".join(block)).strip("\n")))
    return out


def _parts(scaffold: Scaffold, text: str) -> dict[str, tuple[list[str], str]]:
    """The example's text by path (lines, note): the part before any `# <path>` line goes to the scaffold's path."""
    parts: dict[str, tuple[list[str], str]] = {}
    path, note = scaffold.path, ""
    for line in text.splitlines():
        m = _PART.fullmatch(line)
        if m:
            path, note = m["path"], m["note"] or ""
            parts.setdefault(path, ([], note))
            continue
        parts.setdefault(path, ([], note))[0].append(line)
    return {p: (lines, note) for p, (lines, note) in parts.items() if any(s.strip() for s in lines)}


def _fill(scaffold: Scaffold, path: str, lines: list[str]) -> str:
    template, indent = scaffold.template, scaffold.indent
    if path != scaffold.path:
        template, indent = next(((t, i) for p, t, i in scaffold.parts if p == path), ("{example}\n", ""))
    return template.replace("{example}", textwrap.indent("\n".join(lines), indent))


def _run(rid: str, example: Example) -> list[str]:
    scaffold = SCAFFOLDS[rid]
    base: dict[str, str | None] = dict(scaffold.others)
    head: dict[str, str | None] = dict(scaffold.others)
    text = example.text
    for short, full in scaffold.names:
        text = text.replace(short, full)
    for named, (named_lines, note) in _parts(scaffold, text).items():
        path = _CHAR.sub(lambda m: chr(int(m[1], 16)), named)
        lines = [_CHAR.sub(lambda m: chr(int(m[1], 16)), s) for s in named_lines]
        if not scaffold.change:
            head[path] = _fill(scaffold, path, lines)
            if scaffold.added:
                base[path] = _fill(scaffold, path, [])
            continue
        if note != "new":
            base[path] = _fill(scaffold, path, [s[1:] for s in lines if s[:1] != "+"])
        if note != "deleted":
            head[path] = _fill(scaffold, path, [s[1:] for s in lines if s[:1] != "-"])
    if scaffold.change or scaffold.added:
        title = example.title if example.title is not None else scaffold.title
        config = parse_config(scaffold.config, known_rule_ids()) if scaffold.config else DEFAULT_CONFIG
        report = run(ChangeSet(MemoryTree(head), MemoryTree(base), changes_between(base, head), title=title), config)
    else:
        report = audit(head, scaffold.config)
    assert report.errors == []
    return [f"{f.path}:{f.line}: {f.message}" for f in report.findings if f.rule == rid]


@pytest.mark.parametrize("rid", sorted(SCAFFOLDS))
def test_the_bad_example_fires(rid: str) -> None:
    bad = _examples(all_rules()[rid].doc(), "Bad")
    assert bad, f"{rid} has no Bad: example"
    for example in bad:
        assert _run(rid, example), f"{rid}'s Bad example gives no finding:\n{example.text}"


@pytest.mark.parametrize("rid", sorted(SCAFFOLDS))
def test_the_good_example_is_silent(rid: str) -> None:
    good = _examples(all_rules()[rid].doc(), "Good")
    assert good, f"{rid} has no Good: example"
    for example in good:
        assert _run(rid, example) == [], f"{rid}'s Good example gives findings:\n{example.text}"


def test_every_rule_is_run_or_says_why_not() -> None:
    assert set(SCAFFOLDS) | set(NOT_RUN) == set(all_rules())
    assert not set(SCAFFOLDS) & set(NOT_RUN)


def test_an_example_can_name_files_and_be_a_change() -> None:
    """The scaffolding itself: `# <path>` parts, `-`/`+` lines, the title from the heading, a deleted file."""
    scaffold = Scaffold("a.sh", "#!/bin/sh\n{example}\n", change=True, others=(("c.txt", "c\n"),))
    text = "-x=1\n+x=2\n y\n# docs/b.md (deleted)\n-gone\n# d.txt (new)\n+new"
    parts = _parts(scaffold, text)
    assert parts == {
        "a.sh": (["-x=1", "+x=2", " y"], ""),
        "docs/b.md": (["-gone"], "deleted"),
        "d.txt": (["+new"], "new"),
    }
    assert Example('Bad (in a PR titled "[ci] fix: x"):', "").title == "[ci] fix: x"
    assert _fill(scaffold, "a.sh", ["x=2"]) == "#!/bin/sh\nx=2\n" and _fill(scaffold, "d.txt", ["new"]) == "new\n"
