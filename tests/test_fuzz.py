"""Fuzzing with hypothesis: no input crashes or hangs the engine, the diff reader or the config parser.

Each test is bounded (examples and a deadline per example), so the suite's time stays fixed in CI.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npu_review.checks import ChangeSet, ConfigError, MemoryTree, parse_config, run
from npu_review.checks.diffing import DiffError, changes_between, parse_unified_diff
from npu_review.checks.engine import known_rule_ids

FUZZ = settings(max_examples=120, deadline=2000, suppress_health_check=[HealthCheck.too_slow], derandomize=True)

PATHS = [
    "examples/ascend_extras/run_qwen3_8b_npu.sh",
    "examples/grpo_trainer/run_qwen3_4b_fsdp.sh",
    ".github/workflows/e2e_ascend.yml",
    ".github/workflows/docker-build-ascend-a2.yml",
    "docker/ascend/Dockerfile.ascend_9.1.0_a2",
    "docker/ascend/Dockerfile.ascend_9.1.0_a3",
    "container-images/cann/Containerfile",
    "docker/ascend/supported_tags.md",
    "docs/ascend_tutorial/get_start/install_guidance.rst",
    "requirements-npu.txt",
    "verl/utils/device.py",
]

# Fragments of the real syntax, so the fuzzer reaches deep into the parsers instead of bouncing off.
FRAGMENTS = [
    "export TASK_QUEUE_ENABLE=2\n",
    "python3 -m verl.trainer.main_ppo \\\n",
    "    actor_rollout_ref.rollout.enforce_eager=",
    "${ENFORCE_EAGER:-False}",
    "+actor_rollout_ref.rollout.engine_kwargs.vllm.compilation_config.cudagraph_mode=",
    "FULL_DECODE_ONLY",
    'case "${DEVICE}" in\n',
    "npu)\n",
    ";;\nesac\n",
    "ARGS=(\n",
    ")\n",
    '"${ARGS[@]}"',
    "jobs:\n",
    "  build:\n",
    "    runs-on: linux-aarch64-a2b3-8\n",
    "    container:\n",
    "      image: ",
    "quay.io/ascend/verl:latest-vllm-910b-ubuntu\n",
    "${{ matrix.tag }}",
    "&a [*a, *a]\n",
    "- ",
    "{",
    "[",
    "'",
    '"',
    "FROM quay.io/ascend/cann:9.1.0-910b-ubuntu22.04-py3.12\n",
    "RUN ",
    "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
    " && ",
    " \\\n",
    "\n\n",
    "ENV MAX_JOBS=1\n",
    "wget --no-check-certificate https://x/y.run",
    "pip uninstall ",
    "source xxxx/ascend-toolkit/setenv.bash\n",
    "/usr/local/Ascend/ascend_toolkit/",
    "Atlas-cann-910_93-ops_${cann_version}_linux-${arch}.run",
    "msrun --worker_num=2--local_worker_num=2 ",
    "sudo -E apt-get install ",
    "yum install ",
    "yes | ",
    " < /dev/null",
    "{EXTRA_CONTENT}\n",
    "python3 -m pip install torch-npu\n",
    "<<EOF\n",
    "EOF\n",
    "pip install torch==2.10.0 torch_npu==2.10.0.post4\n",
    "import torch\n",
    "def f(device_name='cuda'):\n",
    "[link](../../docker/ascend/Dockerfile.x)\n",
    "| CANN | 9.1.0 |\n",
    "\u200b",
    "\t",
    "\r\n",
    "#",
    "\\",
    "$",
    "`",
]

texts = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=40)), max_size=40).map("".join)


@FUZZ
@given(files=st.dictionaries(st.sampled_from(PATHS), st.one_of(st.none(), texts), max_size=6))
def test_engine_never_crashes_in_an_audit(files: dict[str, str | None]) -> None:
    report = run(ChangeSet(head=MemoryTree(files), audit=True))
    assert report.errors == [], report.errors
    for f in report.findings:
        assert f.path in files and 1 <= f.line <= f.end_line


@FUZZ
@given(
    base=st.dictionaries(st.sampled_from(PATHS), texts, max_size=4),
    head=st.dictionaries(st.sampled_from(PATHS), texts, max_size=4),
    title=st.text(max_size=30),
)
def test_engine_never_crashes_on_a_change(base: dict[str, str], head: dict[str, str], title: str) -> None:
    b: dict[str, str | None] = dict(base)
    h: dict[str, str | None] = dict(head)
    cs = ChangeSet(head=MemoryTree(h), base=MemoryTree(b), changes=changes_between(b, h), title=title)
    report = run(cs)
    assert report.errors == [], report.errors


DIFF_FRAGMENTS = [
    "diff --git a/x b/x\n",
    "--- a/x\n",
    "+++ b/x\n",
    "@@ -1,2 +1,3 @@\n",
    "@@ -0,0 +1 @@\n",
    " ctx\n",
    "+add\n",
    "-del\n",
    "new file mode 100644\n",
    "deleted file mode 100644\n",
    "rename from a\n",
    "rename to b\n",
    "Binary files a/x and b/x differ\n",
    "\\ No newline at end of file\n",
    "--- /dev/null\n",
]


@FUZZ
@given(st.lists(st.one_of(st.sampled_from(DIFF_FRAGMENTS), st.text(max_size=20)), max_size=30).map("".join))
def test_diff_reader_parses_or_says_why(text: str) -> None:
    try:
        changes = parse_unified_diff(text)
    except DiffError as exc:
        assert str(exc).startswith("cannot parse the diff")
    else:
        assert all(all(n >= 1 for n in c.added_lines) for c in changes.values())


CONFIG_FRAGMENTS = [
    "rules:\n",
    "  NPU301: off\n",
    "  NPU103: {severity: error}\n",
    "  NPU999: on\n",
    "ignore_paths: [",
    "docs/**",
    "]\n",
    "paths:\n",
    "  npu_script: ['*.sh']\n",
    "knowledge:\n",
    "  graph_modes: {valid: [FULL]}\n",
    "&x [*x]\n",
    "- ",
]


@FUZZ
@given(st.lists(st.one_of(st.sampled_from(CONFIG_FRAGMENTS), st.text(max_size=15)), max_size=20).map("".join))
def test_config_parses_or_raises_config_error(text: str) -> None:
    try:
        parse_config(text, known_rule_ids())
    except ConfigError as exc:
        assert "\n" not in str(exc)


@pytest.mark.parametrize(
    "text",
    [
        "a: &a ["
        + ", ".join(["*a"] * 9)
        + "]\n"
        + "".join(
            f"{c}: &{c} [" + ", ".join([f"*{p}"] * 9) + "]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)
        ),
        "x" * 900_000,  # just under the 1 MB the CLI and the App read at most
        "[" * 50_000,
        "RUN " + "a \\\n" * 20_000,
        "export A=" + "$B" * 50_000 + "\n",
    ],
    ids=["yaml-alias-bomb", "900KB-line", "deep-nesting", "20k-continuations", "50k-expansions"],
)
def test_pathological_files_finish(text: str) -> None:
    files: dict[str, str | None] = {p: text for p in PATHS}
    report = run(ChangeSet(head=MemoryTree(files), audit=True))
    assert report.errors == []
