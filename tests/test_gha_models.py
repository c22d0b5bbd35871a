"""The GitHub Actions models the workflow rules share (runner labels and catalog, trigger filters, run blocks),
the indexes built on them (built files, Ascend jobs), and base-revision reads."""

from __future__ import annotations

import textwrap

from npu_review.checks.analysis.images import built_files
from npu_review.checks.analysis.runners import runner_jobs
from npu_review.checks.config import DEFAULT_CONFIG
from npu_review.checks.context import Context
from npu_review.checks.facts import default_facts
from npu_review.checks.kinds import KindMap
from npu_review.checks.model import ChangeSet, ChangeStatus, FileChange, MemoryTree
from npu_review.checks.parsers.gha.calls import WHOLE_INPUTS, reads_whole_inputs
from npu_review.checks.parsers.gha.runners import RunnerCatalog, runner_label_sets
from npu_review.checks.parsers.gha.workflow import Workflow, build, trigger_filters
from npu_review.checks.parsers.sh import Source, commands
from npu_review.checks.parsers.yamlmarks import parse as parse_yaml

CN = "swr.cn-southwest-2.myhuaweicloud.com/modelfoundry/ascend-ci/verl/verl"


def wf(text: str, path: str = ".github/workflows/e2e_ascend.yml") -> Workflow:
    w = build(parse_yaml(textwrap.dedent(text)), path)
    assert w is not None
    return w


def ctx_for(cs: ChangeSet) -> Context:
    return Context(cs, DEFAULT_CONFIG, KindMap())


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


def test_the_jobs_on_ascend_runners_at_a_revision() -> None:
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
    jobs = runner_jobs(ctx_for(cs), "head")
    assert [(j.job, j.runner.label) for j in jobs] == [("a", "linux-aarch64-a2b3-8")]


def test_reads_whole_inputs_answers_as_the_pattern_does() -> None:
    texts = {
        "run: echo '${{ toJSON(inputs) }}'": True,
        "run: jq .inputs | tee x": True,
        "run: cat $GITHUB_EVENT_PATH": True,
        "run: echo ${{ toJson(github.event) }}": True,
        "run: echo ${{ inputs.tag }}": False,
        "on: push\njobs: {}": False,
        "run: echo ${{ INPUTS }}": True,
        # re.I folds the dotless ı to i: non-ASCII text goes to the pattern itself
        "run: echo ${{ ınputs }}": True,
    }
    for text, expected in texts.items():
        assert reads_whole_inputs(text) is expected, text
        assert (WHOLE_INPUTS.search(text) is not None) is expected, text


def test_a_job_indented_under_another_is_kept_as_its_own_job() -> None:
    text = textwrap.dedent(
        """\
        on: [push]
        jobs:
          first:
            runs-on: ubuntu-latest
            steps:
              - run: make
            second:
              runs-on: ubuntu-latest
              steps:
                - run: bash build.sh
            bogus: 1
        """
    )
    wf = build(parse_yaml(text), ".github/workflows/ci.yml")
    assert wf is not None
    assert list(wf.jobs) == ["first", "second"]
    assert wf.jobs["second"].nested_in == "first"
    assert wf.jobs["first"].nested_in is None
    assert [s.run.value.strip() for s in wf.jobs["second"].steps if s.run is not None] == ["bash build.sh"]
