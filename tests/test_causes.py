"""One cause, one comment: the cause id of a finding (checks.engine.cause_id) and the grouping (checks.causes)."""

from __future__ import annotations

from npu_review.checks.causes import Comment, by_cause, places
from npu_review.checks.engine import cause_id
from npu_review.checks.model import Finding, Severity
from npu_review.checks.rule import Hit


def test_the_cause_is_the_rule_and_the_offending_text_not_the_place() -> None:
    a = cause_id("NPU301", Hit("docker/a/Dockerfile", 3, "m1", cause="wget --no-check-certificate"))
    b = cause_id("NPU301", Hit("docker/b/Dockerfile", 40, "m2", cause="wget   --no-check-certificate"))
    assert a == b and len(a) == 12
    assert cause_id("NPU302", Hit("x", 3, "m1", cause="wget --no-check-certificate")) != a
    assert cause_id("NPU301", Hit("x", 3, "m1", cause="curl -k")) != a


def test_without_a_named_cause_the_message_is_the_cause() -> None:
    assert cause_id("NPU104", Hit("a.sh", 1, "`$X` is never set")) == cause_id(
        "NPU104", Hit("b.sh", 9, "`$X`  is never set")
    )
    assert cause_id("NPU104", Hit("a.sh", 1, "`$X` is never set")) != cause_id(
        "NPU104", Hit("a.sh", 1, "`$Y` is never set")
    )


def test_same_cause_family_rules_share_a_cause_space() -> None:
    # NPU201 and NPU202 are one family (a stale tag): the same text is one cause whichever of them says it.
    assert cause_id("NPU201", Hit("x", 1, "m", cause="t")) == cause_id("NPU202", Hit("y", 2, "n", cause="t"))


def _f(path: str, line: int, cause: str, rule: str = "NPU301") -> Finding:
    return Finding(rule, "r", Severity.WARNING, path, line, line, f"{path}:{line}", cause=cause)


def test_by_cause_leads_with_the_first_place_and_lists_the_others() -> None:
    found = [_f("b/Dockerfile", 5, "c1"), _f("a/Dockerfile", 9, "c1"), _f("a/Dockerfile", 2, "c2"), _f("a/x", 1, "")]
    got = by_cause(found)
    assert got == [
        Comment(_f("a/Dockerfile", 2, "c2")),
        Comment(_f("a/Dockerfile", 9, "c1"), (_f("b/Dockerfile", 5, "c1"),)),
        Comment(_f("a/x", 1, "")),
    ]
    assert places(got[1]) == "`b/Dockerfile:5`"
    many = Comment(_f("a", 1, "c"), tuple(_f("a", n, "c") for n in range(2, 15)))
    assert places(many, limit=3) == "`a:2`, `a:3`, `a:4`, and 10 more"


def test_commands_a_change_cuts_alike_are_one_cause_in_twin_guides_and_elsewhere() -> None:
    """NPU111: a guide and its translation that cut the same command, and another command cut the same way in
    another guide of the change, are one habit and one comment (a replay sweep's blind judges called the repeats
    noise)."""
    from pathlib import Path

    from tests.fixture_support import Case, case_config, run_case

    cut = "```bash\npython3 -m sglang.bench_serving\n  --backend sglang-oai\n```\n"
    other = "```bash\ntorchrun train.py\n  --nproc_per_node 8\n```\n"
    head = {"docs/en/bench.md": f"# Bench\n\n{cut}", "docs/zh/bench.md": f"# 测试\n\n{cut}", "docs/train.md": other}
    head_files: dict[str, str | None] = dict(head)
    case = Case("causes", Path("."), None, head_files, set(), [], "", None)
    report = run_case(case, case_config(case))
    cuts = [f for f in report.findings if f.rule == "NPU111"]
    assert [(f.path, f.line) for f in cuts] == [("docs/en/bench.md", 4), ("docs/train.md", 2), ("docs/zh/bench.md", 4)]
    assert cuts[0].cause == cuts[1].cause == cuts[2].cause
    assert [len(c.also) for c in by_cause(cuts)] == [2]


def test_one_doc_cut_alike_three_times_is_one_cause() -> None:
    """NPU111: two settings of one listing with blanks after their `\\` (verl #6126's GSPO guide) and the same cut
    in another block of the file are one comment on the first, naming the others."""
    from pathlib import Path

    from tests.fixture_support import Case, case_config, run_case

    listing = (
        "```bash\n"
        "# parameter offload\n"
        "actor_rollout_ref.actor.fsdp_config.param_offload=True  \\ \n"
        "actor_rollout_ref.ref.fsdp_config.param_offload=True \\\n"
        "\n"
        "# entropy\n"
        "actor_rollout_ref.actor.entropy_checkpointing=True \\\n"
        "actor_rollout_ref.actor.entropy_from_logits_with_chunking=True \\  \n"
        "actor_rollout_ref.ref.entropy_from_logits_with_chunking=True \\\n"
        "```\n"
    )
    run = "```bash\npython3 -m verl.trainer.main_ppo \\ \n    trainer.device=npu\n```\n"
    doc = f"# GSPO on Ascend NPU\n\n{listing}\nThen:\n\n{run}"
    head_files: dict[str, str | None] = {"docs/ascend/gspo_npu.md": doc}
    case = Case("causes", Path("."), None, head_files, set(), [], "", None)
    report = run_case(case, case_config(case))
    cuts = [f for f in report.findings if f.rule == "NPU111"]
    assert [(f.line, f.severity.label) for f in cuts] == [(5, "warning"), (10, "warning"), (17, "warning")]
    assert cuts[0].cause == cuts[1].cause == cuts[2].cause
    assert [(c.lead.line, [p.line for p in c.also]) for c in by_cause(cuts)] == [(5, [10, 17])]


def test_twin_files_of_two_devices_and_the_places_named_are_one_cause() -> None:
    """The same mistake in an A2 and an A3 twin says its device and its lines: neither is part of the cause (each
    twin's own comment was judged a duplicate blind, replay-r9)."""
    a2 = "`pip uninstall triton` runs after `pip install -r requirements.txt` (line 44) in the 910b image"
    a3 = "`pip uninstall triton` runs after `pip install -r requirements.txt` (line 45) in the a3 image"
    assert cause_id("NPU311", Hit("Dockerfile_a2", 50, a2)) == cause_id("NPU311", Hit("Dockerfile_a3", 51, a3))
    rows = (
        "This row is for 910b (A2) but links `Dockerfile.ascend_8.3.rc1_a3`, the A3 Dockerfile (`_a3` suffix)",
        "This row is for A3 but links `Dockerfile.ascend_8.3.rc1_a2`, the A2 Dockerfile (`_a2` suffix)",
    )
    assert cause_id("NPU503", Hit("t.md", 28, rows[0])) == cause_id("NPU503", Hit("t.md", 29, rows[1]))
    stale = "`Dockerfile.ascend_9.0.0_{}` is built on cann:9.0.1, but docs/guide.rst:{} still says CANN 9.0.0"
    assert cause_id("NPU503", Hit("a", 2, stale.format("a2", 62))) == cause_id(
        "NPU503", Hit("b", 2, stale.format("a3", 63))
    )
    # What the mistake is stays apart: another version, another package, another image.
    assert cause_id("NPU503", Hit("a", 2, stale.format("a2", 62))) != cause_id(
        "NPU503", Hit("a", 2, stale.format("a2", 62).replace("9.0.1", "9.0.2"))
    )
    assert cause_id("NPU311", Hit("a", 1, a2)) != cause_id("NPU311", Hit("a", 1, a2.replace("triton", "torch")))
    assert cause_id("NPU201", Hit("a", 1, "pulls python:3.11")) != cause_id("NPU201", Hit("a", 1, "pulls python:3.10"))


def test_numbers_written_to_the_environment_in_one_example_are_one_cause() -> None:
    """NPU121: two ports of one example written as numbers (Ascend/ray-ascend's guide; sweep-r31 judged the second
    comment a duplicate) are one comment on the first; a None is another mistake (unset, not quote)."""
    from pathlib import Path

    from tests.fixture_support import Case, case_config, run_case

    doc = (
        "# Transport on Ascend NPU\n\n```python\nimport os\nimport torch_npu\n"
        'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0,1"\n'
        'os.environ["YR_DS_WORKER_PORT"] = 31501\n'
        'os.environ["YR_DS_METASTORE_PORT"] = 2379\n'
        'os.environ["HCCL_IF_IP"] = None\n'
        "```\n"
    )
    case = Case("causes", Path("."), None, {"docs/user_guide/npu_transport.md": doc}, set(), [], "", None)
    found = [f for f in run_case(case, case_config(case)).findings if f.rule == "NPU121"]
    assert [f.line for f in found] == [7, 8, 9]
    assert [(c.lead.line, [p.line for p in c.also]) for c in by_cause(found)] == [(7, [8]), (9, [])]


def test_what_the_shell_cannot_parse_in_one_script_is_one_cause() -> None:
    """NPU115: a retry block cut off loses its `then ... fi` and its loop's `done` (zhonganbi102-netizen/
    nano-chat-NPU; sweep-r31 judged the second comment a duplicate): one comment on the first, naming the other."""
    from pathlib import Path

    from tests.fixture_support import Case, case_config, run_case

    script = (
        "#!/bin/bash\nsource /usr/local/Ascend/ascend-toolkit/set_env.sh\nfor attempt in 1 2 3; do\n"
        '  echo "try $attempt"\n  if torchrun --nproc_per_node 8 train.py --device npu\n    echo done\n\n'
        "echo finished\n"
    )
    case = Case("causes", Path("."), None, {"scripts/train_npu.sh": script}, set(), [], "", None)
    found = [f for f in run_case(case, case_config(case)).findings if f.rule == "NPU115"]
    assert [f.line for f in found] == [3, 5]
    assert [(c.lead.line, [p.line for p in c.also]) for c in by_cause(found)] == [(3, [5])]


def test_the_scripts_one_caller_runs_with_sh_are_one_cause() -> None:
    """NPU317: a harness that runs each benchmark script with `sh` where they use bash-only syntax (mindspore-lite's
    test runner; sweep-r34 and sweep-r35 judged the second comment on a duplicate): one comment, the other named."""
    from pathlib import Path

    from tests.fixture_support import Case, case_config, run_case

    runner = "#!/bin/bash\nsource /usr/local/Ascend/ascend-toolkit/set_env.sh\nsh ./run_npu_a.sh\nsh ./run_npu_b.sh\n"
    script = '#!/bin/bash\nsource /usr/local/Ascend/ascend-toolkit/set_env.sh\nif [[ -n "$1" ]]; then echo $1; fi\n'
    files: dict[str, str | None] = {
        "test/run_benchmark_npu.sh": runner,
        "test/run_npu_a.sh": script,
        "test/run_npu_b.sh": script,
    }
    case = Case("causes", Path("."), None, files, set(), [], "", None)
    found = [f for f in run_case(case, case_config(case)).findings if f.rule == "NPU317"]
    assert [(f.path, f.line) for f in found] == [("test/run_npu_a.sh", 2), ("test/run_npu_b.sh", 2)]
    assert [(c.lead.path, [p.path for p in c.also]) for c in by_cause(found)] == [
        ("test/run_npu_a.sh", ["test/run_npu_b.sh"])
    ]
