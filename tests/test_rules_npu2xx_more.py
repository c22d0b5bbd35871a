"""NPU204, NPU206-NPU212 and the NPU202 change-caused findings: helpers and the cases fixtures cannot express."""

from __future__ import annotations

import textwrap

import pytest

from checks import engine
from checks.config import DEFAULT_CONFIG, parse_config
from checks.context import Context
from checks.facts import default_facts
from checks.indexes.images import built_files
from checks.indexes.runners import ascend_jobs
from checks.kinds import KindMap
from checks.model import ChangeSet, ChangeStatus, FileChange, Finding, MemoryTree
from checks.parsers.gha.runners import RunnerCatalog, runner_label_sets
from checks.parsers.gha.workflow import Workflow, build, trigger_filters
from checks.parsers.sh import Source, commands
from checks.parsers.yamlmarks import parse as parse_yaml
from checks.rule import all_rules
from checks.rules.npu206_build_push_output_misconfigured import _outputs, _tag_colon
from checks.rules.npu207_registry_cleanup_command import _is_remote
from checks.rules.npu207_registry_cleanup_command import _suggest as suggest_207
from checks.rules.npu208_ci_overrides_image_pin import Frameworks, pins_in, same_ref
from checks.rules.npu209_export_not_persisted import _suggest as suggest_209
from checks.rules.npu212_missing_fork_guard import guard_owners

MINE = ("NPU204", "NPU206", "NPU207", "NPU208", "NPU209", "NPU210", "NPU211", "NPU212")
CN = "swr.cn-southwest-2.myhuaweicloud.com/modelfoundry/ascend-ci/verl/verl"


def wf(text: str, path: str = ".github/workflows/e2e_ascend.yml") -> Workflow:
    w = build(parse_yaml(textwrap.dedent(text)), path)
    assert w is not None
    return w


def ctx_for(cs: ChangeSet) -> Context:
    return Context(cs, DEFAULT_CONFIG, KindMap())


def findings(
    files: dict[str, str], base: dict[str, str] | None = None, changes: dict[str, FileChange] | None = None
) -> list[Finding]:
    head = {k: textwrap.dedent(v).lstrip("\n") for k, v in files.items()}
    if base is None:
        cs = ChangeSet(head=MemoryTree(head), audit=True)
    else:
        cs = ChangeSet(
            head=MemoryTree(head),
            base=MemoryTree({k: textwrap.dedent(v).lstrip("\n") for k, v in base.items()}),
            changes=changes or {},
        )
    return engine.run(cs, VERL).findings


# The trees here are fragments of verl's layout, too small to be detected as verl: the profile is named.
VERL = parse_config("profile: verl\n", engine.known_rule_ids())


# -- documentation -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("rid", MINE)
def test_rule_docs_have_why_bad_good_fix(rid: str) -> None:
    cls = all_rules()[rid]
    doc = cls.doc()
    for section in ("Why:", "Bad:", "Good:", "Fix:"):
        assert section in doc, f"{rid} doc lacks {section}"
    assert cls.title and "\n" not in cls.title


# -- workflow helpers ---------------------------------------------------------------------------------------------


def test_runner_labels_scalar_list_group_and_matrix() -> None:
    w = wf(
        """
        on: push
        jobs:
          a:
            runs-on: linux-aarch64-a2b3-8
          b:
            runs-on: [self-hosted, npu-0]
          c:
            runs-on: {group: ascend, labels: [linux-aarch64-a3-16]}
          d:
            runs-on: ${{ matrix.runner }}
            strategy:
              matrix:
                include:
                  - runner: ubuntu-latest
                  - runner: ubuntu-22.04-arm
          e:
            runs-on: ${{ inputs.runner }}
        """
    )
    assert runner_label_sets(w, w.jobs["a"]) == [("linux-aarch64-a2b3-8",)]
    assert runner_label_sets(w, w.jobs["b"]) == [("self-hosted", "npu-0")]
    assert runner_label_sets(w, w.jobs["c"]) == [("linux-aarch64-a3-16",)]
    assert runner_label_sets(w, w.jobs["d"]) == [("ubuntu-latest",), ("ubuntu-22.04-arm",)]
    assert runner_label_sets(w, w.jobs["e"]) == [None]


def test_runner_catalog() -> None:
    cat = RunnerCatalog(default_facts().ascend_runners)
    a2 = cat.runner("linux-aarch64-a2b3-8")
    assert a2 is not None and (a2.device, a2.npus, a2.status) == ("910b", 8, "current")
    a3 = cat.runner("linux-aarch64-a3-16")
    assert a3 is not None and (a3.device, a3.npus) == ("a3", 16)
    old = cat.runner("linux-aarch64-a2-8")
    assert old is not None and old.status == "retired" and old.device == "910b"
    shaped = cat.runner("linux-aarch64-a3-32")
    assert shaped is not None and (shaped.status, shaped.npus) == ("shape", 32)
    assert cat.of(("self-hosted", "npu-0")) is not None
    assert cat.runner("ubuntu-latest") is None and cat.runner("self-hosted") is None


def test_trigger_filters_and_run_block_command_lines() -> None:
    w = wf(
        """
        on:
          pull_request:
            paths:
              - "verl/**"
              - ".github/workflows/e2e_ascend.yml"
        jobs:
          a:
            runs-on: ubuntu-latest
            steps:
              - run: |
                  echo one
                  ./crane delete quay.io/ascend/verl:tmp-a2-amd64 \\
                    || true
        """
    )
    assert [(e, n.value, n.line) for e, n in trigger_filters(w, "paths")] == [
        ("pull_request", "verl/**", 5),
        ("pull_request", ".github/workflows/e2e_ascend.yml", 6),
    ]
    run = w.jobs["a"].steps[0].run
    assert run is not None
    cmds = commands(Source.lines(run.text_lines()))
    assert [(c.line, c.argv[0]) for c in cmds] == [(12, "echo"), (13, "./crane"), (14, "true")]


def test_source_at_base_reads_unchanged_files_from_head() -> None:
    # The App's base tree holds only the changed files' text; unchanged ones are the same at head.
    head = MemoryTree({"a.yml": "x: 1\n", "b.yml": "y: 2\n"})
    base = MemoryTree({"b.yml": "y: 1\n"}, extra_paths=["a.yml"])
    cs = ChangeSet(head=head, base=base, changes={"b.yml": FileChange("b.yml", ChangeStatus.MODIFIED)})
    ctx = ctx_for(cs)
    a = ctx.source_at("a.yml", "base")
    b = ctx.source_at("b.yml", "base")
    assert a is not None and a.text == "x: 1\n"
    assert b is not None and b.text == "y: 1\n"


def test_built_files_follow_needs_of_a_merge_job() -> None:
    w = wf(
        """
        on: push
        jobs:
          build:
            runs-on: ubuntu-latest
            steps:
              - uses: docker/build-push-action@v6
                with:
                  file: ./docker/ascend/Dockerfile.ascend_9.1.0_a2
          merge:
            runs-on: ubuntu-latest
            needs: build
            steps:
              - run: docker buildx imagetools create -t quay.io/ascend/verl:latest-vllm-910b-ubuntu x
        """,
        ".github/workflows/docker-build-ascend-a2.yml",
    )
    assert built_files(w, "merge") == {"docker/ascend/Dockerfile.ascend_9.1.0_a2"}


def test_ascend_jobs_at_a_revision() -> None:
    text = f"""
    on: push
    jobs:
      a:
        runs-on: linux-aarch64-a2b3-8
        container:
          image: {CN}:latest-vllm-910b-ubuntu
      b:
        runs-on: ubuntu-latest
    """
    cs = ChangeSet(head=MemoryTree({".github/workflows/e2e_ascend.yml": textwrap.dedent(text)}), audit=True)
    jobs = ascend_jobs(ctx_for(cs), "head")
    assert [(j.job, j.runner.label) for j in jobs] == [("a", "linux-aarch64-a2b3-8")]


# -- rule helpers ---------------------------------------------------------------------------------------------------


def test_guard_owners() -> None:
    assert guard_owners("github.repository_owner == 'verl-project'") == ["verl-project"]
    assert guard_owners("${{ 'volcengine' == github.repository_owner && x }}") == ["volcengine"]
    assert guard_owners('github.repository == "verl-project/verl"') == ["verl-project"]
    assert guard_owners("github.repository_owner != 'verl-project'") == []


def test_tag_colon_and_outputs() -> None:
    assert _tag_colon("${{ env.QUAY_REPO }}:temp-main-a2-${{ matrix.tag }}") == len("${{ env.QUAY_REPO }}")
    assert _tag_colon("quay.io/ascend/verl") is None
    assert _tag_colon("localhost:5000/verl") is None
    assert _tag_colon("localhost:5000/verl:tmp") == len("localhost:5000/verl")
    (exp,) = _outputs("type=image,name=${{ env.R }},push-by-digest=true,name-canonical=true,push=true")
    assert exp["name"] == "${{ env.R }}" and exp["push-by-digest"] == "true"


def test_registry_cleanup_helpers() -> None:
    assert _is_remote("quay.io/ascend/verl:tmp-a2") and _is_remote("${{ env.QUAY_REPO }}:tmp")
    assert not _is_remote("verl:local") and not _is_remote("ubuntu")
    line = "  ./crane tag delete quay.io/ascend/verl:tmp-a3-amd64 || true"
    assert suggest_207(line, "quay.io/ascend/verl:tmp-a3-amd64", True) == (
        '  ./crane delete quay.io/ascend/verl:tmp-a3-amd64 || echo "::warning::could not delete '
        'quay.io/ascend/verl:tmp-a3-amd64"'
    )
    assert suggest_207("  ./crane tag delete X:t", "X:t", False) == "  ./crane delete X:t"


def test_pin_helpers() -> None:
    assert same_ref("releases/v0.23.0", "v0.23.0")
    assert same_ref("de93536e9028ecf1e4dc28608dc80f336dcdfe59", "de93536e")
    assert not same_ref("core_r0.16.0", "core_r0.18.0")
    fw = Frameworks(default_facts().framework_pins)
    text = textwrap.dedent(
        """\
        git clone https://gitcode.com/Ascend/MindSpeed.git /MindSpeed
        cd /MindSpeed && git checkout core_r0.16.0
        pip install git+https://github.com/NVIDIA/Megatron-LM.git@core_r0.16.0 --no-deps
        pip install vllm-ascend==0.23.0
        git clone https://gitcode.com/Ascend/MindSpeed-LLM.git /MindSpeed-LLM
        """
    )
    cwd = None
    cmds = []
    for c in commands(Source.file(text)):
        cmds.append((c, cwd))
        if c.argv and c.argv[0] == "cd":
            cwd = c.argv[1]
    pins = [(p.framework, p.ref, p.line) for p in pins_in(cmds, fw, "x")]
    assert pins == [
        ("MindSpeed", "core_r0.16.0", 2),
        ("Megatron-LM", "core_r0.16.0", 3),
        ("vllm-ascend", "0.23.0", 4),
    ]


def test_export_suggestion_is_exact_or_absent() -> None:
    assert suggest_209('    export A="x y"') == '    echo "A=x y" >> "$GITHUB_ENV"'
    assert suggest_209("    export A='$x'") == "    echo 'A=$x' >> \"$GITHUB_ENV\""
    assert suggest_209("    export A=~/logs") == '    echo "A=$HOME/logs" >> "$GITHUB_ENV"'
    assert suggest_209("    export A=$(pwd)/x") is None
    assert suggest_209("    export A=a:~/b") is None


# -- change-caused findings (kept on lines the change did not touch) -------------------------------------------------

NIGHTLY = f"""
name: nightly_ascend
on:
  pull_request:
    paths:
      - "tests/special_npu/run_qwen3_06b_grpo.sh"
      - ".github/workflows/nightly_ascend.yml"
jobs:
  nightly:
    if: github.repository_owner == 'verl-project'
    runs-on: linux-aarch64-a2b3-8
    container:
      image: {CN}:latest-vllm-910b-ubuntu
    steps:
      - uses: actions/checkout@v4
      - run: bash tests/special_npu/run_qwen3_06b_grpo.sh
"""
SCRIPT = "#!/usr/bin/env bash\npython3 -m verl.trainer.main_ppo trainer.n_gpus_per_node=8\n"


def test_paths_filter_rename_is_caused_by_the_change() -> None:
    path = ".github/workflows/nightly_ascend.yml"
    new = "tests/special_npu/run_qwen3_06b_grpo_npu.sh"
    changes = {
        new: FileChange(new, ChangeStatus.RENAMED, "tests/special_npu/run_qwen3_06b_grpo.sh", frozenset({1})),
    }
    got = findings(
        {path: NIGHTLY, new: SCRIPT},
        base={path: NIGHTLY, "tests/special_npu/run_qwen3_06b_grpo.sh": SCRIPT},
        changes=changes,
    )
    mine = [f for f in got if f.rule == "NPU210"]
    assert [(f.path, f.line) for f in mine] == [(path, 5)]
    assert mine[0].suggestion == f'      - "{new}"'
    assert "renames" in mine[0].message


def test_untouched_stale_filter_is_not_reported_on_an_unrelated_change() -> None:
    path = ".github/workflows/nightly_ascend.yml"
    stale = NIGHTLY.replace('run_qwen3_06b_grpo.sh"', 'run_qwen2_5_05b_grpo.sh"', 1)
    other = "verl/__init__.py"
    got = findings(
        {path: stale, other: "x = 2\n"},
        base={path: stale, other: "x = 1\n"},
        changes={other: FileChange(other, ChangeStatus.MODIFIED, None, frozenset({1}))},
    )
    assert [f for f in got if f.rule in MINE] == []


def _jobs(label: str, n: int) -> str:
    body = "\n".join(
        f"""  job{i}:
    if: github.repository_owner == 'verl-project'
    runs-on: {label}
    container:
      image: {CN}:latest-vllm-a3-ubuntu
    steps:
      - run: npu-smi info
"""
        for i in range(n)
    )
    return "name: e2e_ascend\non:\n  pull_request:\njobs:\n" + body


def test_runner_migration_to_an_unknown_label_is_a_notice() -> None:
    path = ".github/workflows/e2e_ascend.yml"
    base, head = _jobs("linux-aarch64-a3-16", 2), _jobs("linux-aarch64-a3-32", 2)
    added = frozenset(n for n, line in enumerate(head.splitlines(), start=1) if "runs-on" in line)
    got = findings(
        {path: head}, base={path: base}, changes={path: FileChange(path, ChangeStatus.MODIFIED, None, added)}
    )
    mine = [f for f in got if f.rule == "NPU211"]
    assert len(mine) == 2 and all(f.severity.label == "notice" for f in mine)
    # One job alone on an unknown label is an error.
    head1 = base.replace("runs-on: linux-aarch64-a3-16", "runs-on: linux-aarch64-a3-32", 1)
    line = next(n for n, t in enumerate(head1.splitlines(), start=1) if "a3-32" in t)
    got = findings(
        {path: head1},
        base={path: base},
        changes={path: FileChange(path, ChangeStatus.MODIFIED, None, frozenset({line}))},
    )
    assert [(f.rule, f.line, f.severity.label) for f in got if f.rule == "NPU211"] == [("NPU211", line, "error")]
