"""The image/build graph (checks/analysis/builds.py) and what it is made of: docker command lines
(parsers/dockercli.py), the shell evaluator's branches, loops and functions (parsers/gha/evaluate.py), the tags
docker/metadata-action gives (parsers/gha/metadata_action.py)."""

from __future__ import annotations

import textwrap

from npu_review.checks.analysis import builds
from npu_review.checks.config import DEFAULT_CONFIG
from npu_review.checks.context import Context
from npu_review.checks.kinds import KindMap
from npu_review.checks.model import ChangeSet, ChangeStatus, FileChange, MemoryTree
from npu_review.checks.parsers.dockercli import EWord, docker_op
from npu_review.checks.parsers.gha.evaluate import RunEvaluator
from npu_review.checks.parsers.gha.values import WILD, Val
from npu_review.checks.parsers.imagetags import parse_ref


def _words(*texts: str) -> list[EWord]:
    return [EWord(t, (Val(t),), 1) for t in texts]


def _context(files: dict[str, str]) -> Context:
    head = {k: textwrap.dedent(v).lstrip("\n") for k, v in files.items()}
    cs = ChangeSet(head=MemoryTree(head), audit=True)
    config = DEFAULT_CONFIG.for_tree(cs.head.paths())
    return Context(cs, config, KindMap(config.paths, config.facts.file_kinds))


def _run(text: str, **kw: object) -> RunEvaluator:
    ev = RunEvaluator("s.sh", None, {}, lambda p: None, cwd="", **kw)  # type: ignore[arg-type]
    ev.run_lines(list(enumerate(textwrap.dedent(text).lstrip("\n").splitlines(), start=1)))
    return ev


def test_docker_build_reads_file_tags_args_platforms_and_push() -> None:
    op = docker_op(
        _words("docker", "buildx", "build", "-f", "d/Dockerfile", "-t", "q.io/a/b:1", "--build-arg", "X=1")
        + _words("--build-arg", "HTTP_PROXY", "--platform", "linux/amd64,linux/arm64", "--push", ".")
    )
    assert op is not None and op.kind == "build"
    assert [v.text for v in op.file or ()] == ["d/Dockerfile"] and [v.text for v in op.targets] == ["q.io/a/b:1"]
    assert [(a.name, a.value.text if a.value else None) for a in op.args] == [("X", "1"), ("HTTP_PROXY", None)]
    assert op.platforms == ("linux/amd64", "linux/arm64") and op.push and op.args_known
    assert [v.text for v in op.context or ()] == ["."]


def test_docker_run_skips_options_with_values_and_flag_clusters() -> None:
    op = docker_op(_words("docker", "run", "--name", "x", "-v", "/a:/b", "-it", "--rm", "img:1", "bash"))
    assert op is not None and op.kind == "run" and [v.text for v in op.sources] == ["img:1"]


def test_an_unknown_word_that_may_hold_options_makes_the_arguments_unknown() -> None:
    words = [*_words("docker", "build"), EWord("$ARGS", (Val(WILD),), 1, spread=True), *_words(".")]
    op = docker_op(words)
    assert op is not None and not op.args_known


def test_evaluator_takes_the_branch_a_known_test_decides() -> None:
    ev = _run(
        """
        SUFFIX=""
        if [ -n "$SUFFIX" ]; then
          TAG="main-$SUFFIX"
        else
          TAG="main"
        fi
        docker push q.io/a/b:$TAG
        """
    )
    [push] = [op for op in ev.ops if op.kind == "push"]
    assert [v.text for v in push.sources] == ["q.io/a/b:main"]


def test_evaluator_loops_and_functions_report_where_called() -> None:
    ev = _run(
        """
        push() {
          docker push "q.io/a/b:$1"
        }
        for d in a2 a3; do
          push "$d"
        done
        """
    )
    pushes = [op for op in ev.ops if op.kind == "push"]
    assert {v.text for op in pushes for v in op.sources} == {"q.io/a/b:a2", "q.io/a/b:a3"}
    assert {op.line for op in pushes} == {5}


def test_second_command_of_a_continued_line_is_on_its_own_line() -> None:
    ev = _run(
        """
        pip install torch==2.5.1 && \\
            pip install vllm==0.9.1
        """,
        record=frozenset({"pip"}),
    )
    assert [c.line for c in ev.called] == [1, 2]


def test_graph_metadata_tags_through_a_reusable_workflow_call() -> None:
    ctx = _context(
        {
            ".github/workflows/_build.yml": """
                on:
                  workflow_call:
                    inputs:
                      suffix: {type: string}
                jobs:
                  merge:
                    runs-on: ubuntu-latest
                    steps:
                      - run: echo "SUFFIX=-${{ inputs.suffix }}" >> $GITHUB_ENV
                      - id: meta
                        uses: docker/metadata-action@v5
                        with:
                          images: quay.io/acme/app
                          tags: |
                            type=schedule,pattern=main,suffix=${{ env.SUFFIX }}
                            type=pep440,pattern={{version}},suffix=${{ env.SUFFIX }}
                      - uses: docker/build-push-action@v6
                        with:
                          push: true
                          tags: ${{ steps.meta.outputs.tags }}
                """,
            ".github/workflows/image.yml": """
                on:
                  schedule:
                    - cron: '0 0 * * *'
                  push:
                    tags: ['v*']
                jobs:
                  images:
                    strategy:
                      matrix:
                        suffix: [a2, a3]
                    uses: ./.github/workflows/_build.yml
                    with:
                      suffix: ${{ matrix.suffix }}
                """,
            "docs/use.md": (
                "```bash\ndocker pull quay.io/acme:latest\ndocker pull quay.io/acme/app:1.0-a5\n"
                "docker pull quay.io/acme/app:1.0-a3\n```\n"
            ),
        }
    )
    g = builds.graph(ctx)
    assert sorted(p.shown for p in g.pushed["quay.io/acme/app"]) == [
        "<pep440 version>-a2",
        "<pep440 version>-a3",
        "latest",
        "main-a2",
        "main-a3",
    ]
    verdicts = {p.ref.text: builds.unpushed(g, p) for p in g.judged_pulls(lambda r: True)}
    assert verdicts["quay.io/acme:latest"] is not None and verdicts["quay.io/acme:latest"].kind == "namespace"
    assert verdicts["quay.io/acme/app:1.0-a5"] is not None and verdicts["quay.io/acme/app:1.0-a5"].kind == "tag"
    assert verdicts["quay.io/acme/app:1.0-a3"] is None
    assert {leg.leg.label for leg in g.leg_tags} == {"suffix=a2", "suffix=a3"}


def test_builds_of_a_dockerfile_and_what_it_declares() -> None:
    ctx = _context(
        {
            "docker/Dockerfile": "ARG CANN\nFROM quay.io/ascend/cann:${CANN}-910b\nARG X=1\nRUN echo $X\n",
            "scripts/build_image.sh": "docker build -f docker/Dockerfile --build-arg CANN=8.5.0 .\n",
            "docs/build.md": '```bash\ndocker build -f "$DOCKERFILE" .\n```\n',
        }
    )
    g = builds.graph(ctx)
    mine, known = g.builds_of("docker/Dockerfile")
    assert [b.path for b in mine] == ["scripts/build_image.sh"] and not known  # the doc's -f is not known
    args = builds.dockerfile_args(ctx, "docker/Dockerfile")
    assert args is not None and set(args.declared) == {"CANN", "X"} and set(args.needed) == {"CANN"}


def test_repository_names_are_normalised() -> None:
    ref = parse_ref("ubuntu:22.04")
    assert ref is not None and builds.repository(ref) == "docker.io/library/ubuntu"


def test_graphs_that_read_different_files_on_a_change_are_those_built_alone() -> None:
    """On a change, the graphs of one run share what the workflows give them (made once, then copied): each must
    be the graph built alone, whatever was built before it (and adding to one leaves the others alone)."""
    from npu_review.checks.kinds import ASCEND_DOCKERFILE, DOCKERFILE, DOCS, SHELL, WORKFLOW

    files = {
        ".github/workflows/image.yml": (
            "on: {push: {branches: [releases/v1]}}\njobs:\n  b:\n    runs-on: ubuntu-latest\n    steps:\n"
            "      - run: |\n          docker build -f docker/Dockerfile -t quay.io/acme/app:v1.0 .\n"
            "          docker push quay.io/acme/app:v1.0\n"
        ),
        ".github/workflows/test.yml": (
            "on: [pull_request]\njobs:\n  t:\n    runs-on: ubuntu-latest\n    container: quay.io/acme/app:v2.0\n"
            "    steps:\n      - run: docker run quay.io/acme/app:v3.0 true\n"
        ),
        "docker/Dockerfile": "FROM quay.io/acme/base:v1.0\nRUN true\n",
        "docker/Dockerfile.ascend": "FROM quay.io/acme/app:v1.0\nRUN true\n",
        "scripts/app.sh": "docker build -t quay.io/acme/app:v1.1 . && docker push quay.io/acme/app:v1.1\n",
        "scripts/run.sh": "docker run quay.io/acme/tool:v9.9 true\n",
        "docs/use.md": "```bash\ndocker build -t quay.io/acme/doc:v1.2 .\ndocker pull quay.io/acme/app:v4.0\n```\n",
    }
    changes = {
        p: FileChange(p, ChangeStatus.MODIFIED, added_lines=frozenset({1, 2}))
        for p in (".github/workflows/test.yml", "docker/Dockerfile.ascend", "scripts/run.sh")
    }

    def context() -> Context:
        cs = ChangeSet(head=MemoryTree(files), base=MemoryTree(files), changes=changes)
        config = DEFAULT_CONFIG.for_tree(cs.head.paths())
        return Context(cs, config, KindMap(config.paths, config.facts.file_kinds))

    def shown(g: builds.Graph) -> tuple[object, ...]:
        pulls = g.judged_pulls(lambda r: True)
        return (g.builds, pulls, g.pushed, g.unknown_pushes, g.sequences, g.leg_tags, g.unread, g.branches)

    reads = [
        builds.GRAPH_KINDS,
        frozenset({WORKFLOW}),
        frozenset({WORKFLOW, ASCEND_DOCKERFILE}),
        frozenset({DOCKERFILE, ASCEND_DOCKERFILE, WORKFLOW}),
        frozenset({SHELL, DOCS}),
    ]
    alone = [shown(builds.graph(context(), reads=r)) for r in reads]
    shared = context()
    together = [shown(builds.graph(shared, reads=r)) for r in reads]
    assert together == alone
    assert [shown(builds.graph(shared, reads=r)) for r in reads] == alone  # memoised, none changed by another
    assert len(alone[0][2]["quay.io/acme/app"]) == 2 and len(alone[1][2]["quay.io/acme/app"]) == 1
