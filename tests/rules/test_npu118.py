"""NPU118 named-file-missing: its fixture cases (tests/fixtures/NPU118/), messages and the cross-file finding."""

from __future__ import annotations

from npu_review.checks.engine import run
from npu_review.checks.model import ChangeSet, ChangeStatus, FileChange, MemoryTree
from tests.fixture_support import audit
from tests.rules.support import change, file_findings, fixture_tests, tree_findings

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU118")


def test_a_deleted_script_a_workflow_still_runs_is_caused_by_the_change() -> None:
    found = file_findings("NPU118/bad_ci_step_runs_deleted_script", "NPU118")
    (severity, suggestion, message) = found[("e2e_ascend.yml", 22)]
    assert severity == "warning" and suggestion is None
    assert message.endswith("This change deletes it.")


def test_the_hydra_config_is_reported_on_the_literal_that_names_it() -> None:
    found = file_findings("NPU118/bad_hydra_default_config_missing", "NPU118")
    _, _, message = found[("grpo_trainer_qwen25_32b.sh", 4)]
    assert message.startswith("`--config-name grpo_trainer_qwen25_32b_A3` (line 8): there is no")
    assert "in `configs/`" in message


def test_one_misspelled_folder_is_one_finding_with_the_close_name() -> None:
    found = file_findings("NPU118/bad_doc_paths_of_a_clone_with_a_typo", "NPU118")
    assert list(found) == [("README.md", 6)]
    assert "Did you mean `examples/disaggregated_prefill_v1`? Also named on line 13." in found[("README.md", 6)][2]


def test_the_caller_and_its_folder_are_named() -> None:
    found = file_findings("NPU118/bad_script_run_from_its_callers_folder", "NPU118")
    message = found[("test_module_entry_vllm_engine.sh", 4)][2]
    assert "`tests/st/st_run.sh` (line 3) runs this script from `.` or `tests/st`" in message
    assert '`"$(dirname "$0")/test_vllm_engine.py"`' in message


def test_a_rename_in_a_script_gets_the_new_name_as_a_suggestion() -> None:
    script = "#!/usr/bin/env bash\nexport HCCL_CONNECT_TIMEOUT=1800\nbash tests/special_npu/run_a.sh\n"
    runner = "#!/usr/bin/env bash\nexport HCCL_CONNECT_TIMEOUT=1800\npython3 -m verl.trainer.main_ppo\n"
    old, new = "tests/special_npu/run_a.sh", "tests/special_npu/run_a_npu.sh"
    got = tree_findings(
        {"tests/special_npu/all.sh": script, new: runner},
        base={"tests/special_npu/all.sh": script, old: runner},
        changes={new: FileChange(new, ChangeStatus.RENAMED, old, frozenset({1}))},
    )
    mine = [f for f in got if f.rule == "NPU118"]
    assert [(f.path, f.line) for f in mine] == [("tests/special_npu/all.sh", 3)]
    assert mine[0].suggestion == "bash tests/special_npu/run_a_npu.sh"
    assert "renames it to `tests/special_npu/run_a_npu.sh`" in mine[0].message


def test_a_renamed_config_of_a_hydra_app_gets_its_new_name_without_the_extension() -> None:
    # alibaba/ROLL 7f9d4d38: the config moved from DeepSpeed to FSDP2; the NPU launch script kept the old name,
    # and its config path comes from `$(dirname $0)`, so only the name tells.
    app = "import argparse\nfrom hydra import compose, initialize\n"
    script = (
        "#!/bin/bash\nexport HCCL_CONNECT_TIMEOUT=1200\nCONFIG_PATH=$(basename $(dirname $0))\n"
        "python examples/start.py --config_path $CONFIG_PATH --config_name rlvr_deepspeed\n"
    )
    config = "trainer:\n  device: npu\n"
    old, new = "examples/npu/rlvr_deepspeed.yaml", "examples/npu/rlvr_fsdp2.yaml"
    got = tree_findings(
        {"examples/start.py": app, "examples/npu/run.sh": script, new: config},
        base={"examples/start.py": app, "examples/npu/run.sh": script, old: config},
        changes={new: FileChange(new, ChangeStatus.RENAMED, old, frozenset({1}))},
    )
    mine = [f for f in got if f.rule == "NPU118"]
    assert [(f.path, f.line, f.severity.label) for f in mine] == [("examples/npu/run.sh", 4, "warning")]
    assert mine[0].message == (
        "`--config_name rlvr_deepspeed`: there is no `rlvr_deepspeed.yaml` anywhere in the repository, so the run "
        "stops before it starts. This change renames it to `examples/npu/rlvr_fsdp2.yaml`."
    )
    assert mine[0].suggestion == "python examples/start.py --config_path $CONFIG_PATH --config_name rlvr_fsdp2"


def test_a_gpu_only_script_and_a_non_ascend_doc_are_not_read() -> None:
    report = audit(
        {
            "tests/gpu/run.sh": "#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=0\nbash tests/gpu/missing/x.sh\n",
            "tests/gpu/ok.sh": "#!/bin/bash\n",
            "docs/gpu.md": "# GPU\n\n```bash\nbash tests/gpu/missing/x.sh\n```\n",
        }
    )
    assert [f for f in report.findings if f.rule == "NPU118"] == []


def _moved(
    base: dict[str, str], head: dict[str, str], renames: dict[str, str]
) -> list[tuple[str, int, str, str | None]]:
    """NPU118's findings on a change that renames `renames` (old -> new) and leaves every other file as it was."""
    changes = {
        new: FileChange(new, ChangeStatus.RENAMED, old_path=old, added_lines=frozenset())
        for old, new in renames.items()
    }
    report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes))
    return [(f.path, f.line, f.message, f.suggestion) for f in report.findings if f.rule == "NPU118"]


_GUIDE = (
    "# Running the examples on an NPU\n\n```bash\ncd examples/hello_world\npython3 hello_world.py --run_mode=npu\n```\n"
)


def test_a_cd_into_a_folder_the_change_moves_as_a_whole_names_where_it_went() -> None:
    # hicann/pypto 2dfa537: examples renumbered (`hello_world` -> `00_hello_world`), the guide left on the old folder.
    script = "import torch_npu\n\nprint('hello')\n"
    base = {"examples/hello_world/hello_world.py": script, "docs/run.md": _GUIDE}
    head = {"examples/00_hello_world/hello_world.py": script, "docs/run.md": _GUIDE}
    found = _moved(base, head, {"examples/hello_world/hello_world.py": "examples/00_hello_world/hello_world.py"})
    assert found == [
        (
            "docs/run.md",
            4,
            "`examples/hello_world`: the folder `examples/hello_world` or `docs/examples/hello_world` does not exist "
            "in the repository, so the command fails where it runs. This change moves it to `examples/00_hello_world`.",
            "cd examples/00_hello_world",
        )
    ]


def test_a_folder_left_with_files_or_split_in_two_is_not_a_move() -> None:
    guide = "# Running on an NPU\n\n```bash\ncd examples/basic\npython3 add.py\ncd ../split\nls\n```\n"
    files = {"examples/basic/add.py": "print(1)\n", "docs/run.md": guide}
    base = {**files, "examples/basic/mul.py": "m\n", "examples/split/a.py": "a\n", "examples/split/b.py": "b\n"}
    head = {**files, "examples/01_basic/mul.py": "m\n", "examples/split_a/a.py": "a\n", "examples/split_b/b.py": "b\n"}
    renames = {
        "examples/basic/mul.py": "examples/01_basic/mul.py",
        "examples/split/a.py": "examples/split_a/a.py",
        "examples/split/b.py": "examples/split_b/b.py",
    }
    assert _moved(base, head, renames) == []


def test_a_cd_the_change_writes_into_a_folder_it_moves_is_reported_too() -> None:
    script = "import torch_npu\n\nprint('hello')\n"
    base = {"examples/hello_world/hello_world.py": script, "docs/run.md": "# Run on an NPU\n"}
    head = {"examples/00_hello_world/hello_world.py": script, "docs/run.md": _GUIDE}
    changes = {
        "examples/00_hello_world/hello_world.py": FileChange(
            "examples/00_hello_world/hello_world.py",
            ChangeStatus.RENAMED,
            old_path="examples/hello_world/hello_world.py",
            added_lines=frozenset(),
        ),
        "docs/run.md": FileChange("docs/run.md", ChangeStatus.MODIFIED, added_lines=frozenset(range(1, 7))),
    }
    report = run(ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes))
    found = [(f.path, f.line, f.suggestion) for f in report.findings if f.rule == "NPU118"]
    assert found == [("docs/run.md", 4, "cd examples/00_hello_world")]


def test_no_did_you_mean_for_a_word_swapped_for_another() -> None:
    """jianzhnie/ScaleTorch a1fee7d (rs-r25, judged false): a guide runs `examples/device_mesh/fsdp_dp_demo.py`
    (renamed from `hsdp_demo.py` seconds later) and the rule offered `fsdp_tp_demo.py`, another demo (tensor, not
    data parallel). A one-letter typo in a longer word still gets its hint."""
    guide = (
        "# Device mesh on Ascend NPU\n\n```bash\nexport ASCEND_RT_VISIBLE_DEVICES=0,1,2,3\n"
        "torchrun --nproc_per_node 4 examples/device_mesh/fsdp_dp_demo.py\n```\n"
    )
    head = {"docs/device_mesh.md": guide, "examples/device_mesh/fsdp_tp_demo.py": "print('tp')\n"}
    report = run(ChangeSet(head=MemoryTree(head), audit=True))
    (f,) = [f for f in report.findings if f.rule == "NPU118"]
    assert (f.path, f.line) == ("docs/device_mesh.md", 5)
    assert "Did you mean" not in f.message
    from npu_review.checks.analysis.references import word_replaced

    assert word_replaced("fsdp_dp_demo.py", "fsdp_tp_demo.py")
    assert not word_replaced("disaggregate_prefill_v1", "disaggregated_prefill_v1")
    assert not word_replaced("finetune_qwen3vl_30b.sh", "finetune_qwen3vl_30B.sh")


def test_guides_naming_the_same_missing_script_are_one_cause() -> None:
    """jianzhnie/EasyInfer at HEAD (sweep-r19): six model READMEs run `bash scripts/ray_cluster/start_npuslim_ray_
    cluster.sh`, which the repository does not have: one missing file, one comment listing the other guides."""
    guide = (
        "# {m} on Ascend NPU\n\n```bash\nexport ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7\n"
        "bash scripts/ray_cluster/start_npuslim_ray_cluster.sh\n```\n"
    )
    head = {f"examples/{m}/vllm/README.md": guide.format(m=m) for m in ("glm-5", "kimi-k2.5")}
    head["scripts/ray_cluster/stop_ray_cluster.sh"] = "#!/bin/bash\nray stop\n"
    report = run(ChangeSet(head=MemoryTree(head), audit=True))
    found = [f for f in report.findings if f.rule == "NPU118"]
    assert [(f.path, f.line) for f in found] == [
        ("examples/glm-5/vllm/README.md", 5),
        ("examples/kimi-k2.5/vllm/README.md", 5),
    ]
    assert found[0].cause == found[1].cause


def test_a_script_the_repository_ignores_is_made_on_the_reader_s_machine() -> None:
    """A guide runs `tools/npu/out/gen_ops.sh`, which a build step writes and the folder's own `.gitignore` ignores
    (`out/`): never committed, never missing. A script beside it that nothing ignores is."""
    guide = (
        "# Build the Ascend NPU ops\n\n```bash\nsource /usr/local/Ascend/ascend-toolkit/set_env.sh\n"
        "bash tools/npu/out/gen_ops.sh\nbash tools/npu/run_ops.sh\n```\n"
    )
    head = {"tools/npu/.gitignore": "out/\n*.o\n", "docs/build_npu.md": guide, "tools/npu/setup.py": "print()\n"}
    found = [(f.path, f.line) for f in change({}, head).findings if f.rule == "NPU118"]
    assert found == [("docs/build_npu.md", 6)]


def test_the_reader_s_own_file_is_no_file_of_the_repository() -> None:
    """hicann/cann-bench 6829fef3 (rs-r28, judged false): a guide to plugging one's own agent into the pipeline runs
    it with `--config src/auto_pipeline/config/my_agent_cann_exp.yaml`, the config the reader writes."""
    guide = (
        "# Plug your agent into the CANN (Ascend NPU) pipeline\n\n```bash\n"
        "./scripts/run_auto_pipeline.sh \\\n  --config src/auto_pipeline/config/my_agent_cann_exp.yaml \\\n"
        "  --devices 0,1\n```\n"
    )
    head = {
        "docs/guide/agent.md": guide,
        "scripts/run_auto_pipeline.sh": "#!/bin/bash\nwhile [ $# -gt 0 ]; do shift; done\n",
        "src/auto_pipeline/config/default.yaml": "benchmark: cann\n",
    }
    assert [f for f in change({}, head).findings if f.rule == "NPU118"] == []
    missing = dict(head, **{"docs/guide/agent.md": guide.replace("my_agent_cann_exp", "agent_cann_exp")})
    found = [(f.path, f.line) for f in change({}, missing).findings if f.rule == "NPU118"]
    assert found == [("docs/guide/agent.md", 5)]


def test_the_new_operator_a_guide_asks_the_reader_to_add_is_a_placeholder() -> None:
    """flagos-ai/PyTorch-Plugin-FL's agent guide: `pytest tests/integration/ops/test_new_op.py` is the test of the
    operator the reader adds (rs-r37, judged false). A test the guide runs that is not there is still missing."""
    guide = (
        "# Adding an operator for the Ascend NPU backend\n\n```bash\npytest tests/integration/ops/test_new_op.py\n"
        "pytest tests/integration/ops/test_softmax.py\n```\n"
    )
    tree = {"docs/ops_guide.md": guide, "tests/integration/ops/test_add.py": "def test_add():\n    pass\n"}
    assert [(f.line, f.rule) for f in audit(tree).findings if f.rule == "NPU118"] == [(5, "NPU118")]


def test_a_path_below_a_folder_the_guide_writes_with_a_placeholder_is_an_example() -> None:
    """hw-native-sys/pto-isa's operator skill says test cases go in `tests/st/testcase/<testcase>/`, then runs
    `cd tests/st/testcase/fused_add_sub`, the example operator the reader makes (rs-r55, judged false). A guide
    with no such placeholder still gets the missing folder reported."""
    keep = {"tests/st/testcase/tadd/main.cpp": "int main() {}\n"}
    guide = (
        "# Vector operators on Ascend NPU\n\nTest cases live in `tests/st/testcase/<testcase>/`.\n\n"
        "```bash\nsource /usr/local/Ascend/ascend-toolkit/set_env.sh\ncd tests/st/testcase/fused_add_sub\n"
        "python3 gen_data.py\n```\n"
    )
    assert [f for f in change(keep, {**keep, "skills/op/SKILL.md": guide}).findings if f.rule == "NPU118"] == []
    plain = guide.replace("Test cases live in `tests/st/testcase/<testcase>/`.", "Run the test case.")
    found = [
        (f.path, f.line) for f in change(keep, {**keep, "skills/op/SKILL.md": plain}).findings if f.rule == "NPU118"
    ]
    assert found == [("skills/op/SKILL.md", 7)]


def test_a_design_spec_s_commands_name_files_it_plans() -> None:
    """yuqitao1024/DeepEP-Ascend's dated spec (`docs/superpowers/specs/2026-08-18-…-design.md`, "Status: Approved for
    implementation") lists `tests/ascend/benchmark/bench_ep.py` as a file to create and shows the commands it will
    take (rs-r58, judged false twice). A plan's commands are the work it plans, in a plan folder or under a status
    header; the same command in a guide still names a missing file."""
    spec = (
        "# Ascend EPv2 benchmark design\n\n**Status:** Approved for implementation\n\nRuns on Ascend NPU with HCCL.\n\n"
        "| File | Responsibility |\n| --- | --- |\n| `tests/ascend/bench_ep.py` | CLI |\n\n"
        "```bash\npython3 tests/ascend/bench_ep.py --list-cases\n```\n"
    )
    tests = {"tests/ascend/workloads.py": "CASES = []\n"}
    for path in ("docs/superpowers/specs/2026-08-18-ep-design.md", "docs/ep-benchmark.md"):
        assert [f for f in change(tests, {**tests, path: spec}).findings if f.rule == "NPU118"] == []
    dated = spec.replace("**Status:** Approved for implementation\n\n", "")
    path = "docs/plans/2026-08-18-ep.md"
    assert [f for f in change(tests, {**tests, path: dated}).findings if f.rule == "NPU118"] == []
    found = change(tests, {**tests, "docs/ep-benchmark.md": dated}).findings
    assert [(f.path, f.line) for f in found if f.rule == "NPU118"] == [("docs/ep-benchmark.md", 10)]


def test_a_cd_into_a_missing_folder_of_this_repository_s_own_clone_is_reported() -> None:
    """A guide clones this repository and `cd`s into one of its folders under a name it never had (the fifth
    held-out draw's `cd cann-recipes-infer/models/deepseek-v4-...`, the folder being `...-v4-flash-...`): the folder
    is this repository's, and missing."""
    from npu_review.checks import run
    from npu_review.checks.diffing import changes_between
    from npu_review.checks.model import ChangeSet, MemoryTree
    from tests.rules.support import DEFAULT_CONFIG

    readme = (
        "# DeepSeek on Ascend NPU\n\nRuns on Ascend with torch_npu.\n\n```shell\n"
        "git clone https://gitcode.com/cann/cann-recipes-x.git\ncd cann-recipes-x/models/deepseek-v4\n"
        "bash run_npu.sh\n```\n"
    )
    head: dict[str, str | None] = {
        "models/deepseek-v4-flash/README.md": readme,
        "models/deepseek-v4-flash/run_npu.sh": "#!/bin/bash\nexport ASCEND_RT_VISIBLE_DEVICES=0\npython infer.py\n",
    }
    cs = ChangeSet(head=MemoryTree(head), changes=changes_between({}, head), repository="hicann/cann-recipes-x")
    found = [(f.rule, f.line) for f in run(cs, DEFAULT_CONFIG).findings if f.rule == "NPU118"]
    assert found == [("NPU118", 7)]


def test_a_cd_that_resolves_from_where_the_guide_starts_is_no_missing_folder() -> None:
    """A guide's blocks are often alternatives, each from the start: "Install: cd kernels; pip install .", then
    "Editable install: cd kernels; pip install -e ." (UbiquitousLearning/mllm, rs-r78, judged false as
    `kernels/kernels` missing; the check it replaced reported line 15 here)."""
    from npu_review.checks import run
    from npu_review.checks.diffing import changes_between
    from npu_review.checks.model import ChangeSet, MemoryTree
    from tests.rules.support import DEFAULT_CONFIG

    def review(second: str) -> list[tuple[str, int]]:
        readme = (
            "# NPU kernels\n\nBuilds the Ascend NPU kernels (torch_npu).\n\nInstall:\n\n```bash\ncd npu-kernels\n"
            "pip install .\n```\n\nEditable install:\n\n```bash\n"
            f"cd {second}\npip install -e .\n```\n"
        )
        head: dict[str, str | None] = {
            "npu-kernels/README.md": readme,
            "npu-kernels/pyproject.toml": "[project]\nname = 'npu-kernels'\n",
            "npu-kernels/npu_kernels/__init__.py": "",
        }
        cs = ChangeSet(head=MemoryTree(head), changes=changes_between({}, head))
        return [(f.rule, f.line) for f in run(cs, DEFAULT_CONFIG).findings if f.rule == "NPU118"]

    assert review("npu-kernels") == []


def test_a_path_written_with_an_ellipsis_is_a_stand_in() -> None:
    """`pytest tests/st/...` in a workflow guide means the test the reader picks (hw-native-sys/simpler, rs-r77,
    judged false as a missing test path); `tests/st/missing_case` is still a path."""
    from npu_review.checks import run
    from npu_review.checks.diffing import changes_between
    from npu_review.checks.model import ChangeSet, MemoryTree
    from tests.rules.support import DEFAULT_CONFIG

    def review(path: str) -> list[tuple[str, int]]:
        readme = (
            "# Swimlanes on Ascend NPU\n\nProfiles the Ascend NPU kernels (torch_npu).\n\n```bash\n"
            f"pytest {path} --enable-chip-swimlane\n```\n"
        )
        head: dict[str, str | None] = {"tools/README.md": readme, "tests/st/test_add.py": "def test_add():\n    pass\n"}
        cs = ChangeSet(head=MemoryTree(head), changes=changes_between({}, head))
        return [(f.rule, f.line) for f in run(cs, DEFAULT_CONFIG).findings if f.rule == "NPU118"]

    assert review("tests/st/...") == []
    assert review("tests/st/…") == []
    assert review("tests/st/test_ad.py") == [("NPU118", 6)]
