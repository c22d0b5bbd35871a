"""Image references, tag classification, matrix/expression evaluation, producers and consumers."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npu_review.checks.analysis.images import inventory
from npu_review.checks.config import DEFAULT_CONFIG
from npu_review.checks.context import Context
from npu_review.checks.facts import default_facts
from npu_review.checks.kinds import KindMap
from npu_review.checks.model import ChangeSet, MemoryTree
from npu_review.checks.parsers.gha.evaluate import RunEvaluator, WorkflowEval
from npu_review.checks.parsers.gha.expressions import substitute
from npu_review.checks.parsers.gha.values import WILD
from npu_review.checks.parsers.gha.workflow import Scope, build, matrix_combinations, parse
from npu_review.checks.parsers.imagetags import Grammar, documented_tags, parse_ref
from npu_review.checks.parsers.yamlmarks import parse as parse_yaml

CN = "swr.cn-southwest-2.myhuaweicloud.com/modelfoundry/ascend-ci/verl/verl"


@pytest.fixture(scope="module")
def g() -> Grammar:
    return Grammar(default_facts().image_tags)


# -- references and families ------------------------------------------------------------------------------------


def test_parse_ref() -> None:
    ref = parse_ref(f"{CN}:latest-vllm-910b-ubuntu")
    assert ref is not None
    assert ref.repository == CN and ref.tag == "latest-vllm-910b-ubuntu"
    assert parse_ref("localhost:5000/verl") is not None and parse_ref("localhost:5000/verl").tag is None  # type: ignore[union-attr]
    assert parse_ref("quay.io/ascend/verl@sha256:abc").digest == "sha256:abc"  # type: ignore[union-attr]
    assert parse_ref("not an image") is None


def test_family_and_mirror_location(g: Grammar) -> None:
    cn = parse_ref(f"{CN}:x")
    quay = parse_ref("quay.io/ascend/verl:x")
    gpu = parse_ref("verlai/verl:app-verl0.6")
    runner = parse_ref("quay.io/albert54/actions-runner:ubuntu-24.04")
    assert cn and quay and gpu and runner
    assert g.family(cn) == g.family(quay) == "ascend/verl"
    assert g.family(gpu) is None and g.family(runner) is None
    assert g.location(cn) == "swr.cn-southwest-2.myhuaweicloud.com/modelfoundry/ascend-ci"
    assert g.mirror_name(g.location(cn)) == "swr-cn-southwest-2"
    assert g.location(quay) == "quay.io"


# -- tag grammar --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tag", "scheme", "role", "device", "backend"),
    [
        ("latest-vllm-910b-ubuntu", "F3", "floating", "910b", "vllm"),
        ("latest-sglang-a3-ubuntu", "F3", "floating", "a3", "sglang"),
        ("latest-cann9.0.0-torch_npu2.9.0post2-910b-ubuntu22.04-py3.11-vllm", "F2", "floating", "910b", "vllm"),
        ("latest-cann8.5.0-torch_npu2.8.0post2-a3-ubuntu22.04-py3.11-sglang", "F2", "floating", "a3", "sglang"),
        ("verl-9.0.0-910b-ubuntu22.04-py3.11-latest", "F1", "floating", "910b", "vllm"),
        ("verl-sglang-8.3.rc1-a3-ubuntu22.04-py3.11-latest", "F1", "floating", "a3", "sglang"),
        ("v0.8.0-cann9.0.0-torch_npu2.9.0.post2-a3-ubuntu22.04-py3.11-vllm", "R2", "release", "a3", "vllm"),
        ("verl-8.5.0-910b-ubuntu22.04-py3.11-v0.7.1", "R1", "release", "910b", "vllm"),
        ("verl-8.5.2-a3-ubuntu22.04-py3.11-qwen3-5", "M1", "model", "a3", "vllm"),
    ],
)
def test_classify_eras(g: Grammar, tag: str, scheme: str, role: str, device: str, backend: str) -> None:
    info = g.classify(tag)
    assert (info.scheme, info.role, info.device, info.backend) == (scheme, role, device, backend)
    assert info.issues == ()


@pytest.mark.parametrize("tag", ["ubuntu-24.04", "latest", "tmp-a2-amd64", "app-verl0.6-vllm0.11", ""])
def test_unknown_tags_are_unknown(g: Grammar, tag: str) -> None:
    assert not g.classify(tag).known


def test_naming_issues_and_fixes(g: Grammar) -> None:
    torch = g.classify("v0.8.0-cann9.0.0-torch2.9.0post2-910b-ubuntu22.04-py3.11-vllm")
    assert torch.scheme == "R2"
    assert [(i.field, i.token, i.fix) for i in torch.issues] == [
        ("torch_npu", "torch2.9.0post2", "torch_npu2.9.0post2")
    ]
    assert torch.fixed() == "v0.8.0-cann9.0.0-torch_npu2.9.0post2-910b-ubuntu22.04-py3.11-vllm"
    a2 = g.classify("latest-vllm-a2-ubuntu")
    assert a2.device == "910b" and [(i.field, i.fix) for i in a2.issues] == [("device", "910b")]
    bare = g.classify("latest-9.0.0-torch_npu2.9.0-a3-ubuntu22.04-py3.11-vllm")
    assert [(i.field, i.fix) for i in bare.issues] == [("cann", "cann9.0.0")]


def test_post_spellings_share_an_identity(g: Grammar) -> None:
    dot = g.classify("v0.8.0-cann9.0.0-torch_npu2.9.0.post2-a3-ubuntu22.04-py3.11-vllm")
    nodot = g.classify("v0.8.0-cann9.0.0-torch2.9.0post2-a3-ubuntu22.04-py3.11-vllm")
    assert (dot.post, nodot.post) == (".post2", "post2")
    assert g.normalized(dot) == g.normalized(nodot)


def test_documented_tags(g: Grammar) -> None:
    text = "docker pull quay.io/ascend/verl:v0.8.0-cann9.0.0-torch_npu2.9.0.post2-a3-ubuntu22.04-py3.11-vllm\n"
    text += "| 910b | `latest-vllm-910b-ubuntu` | --shm-size-16g | pip-install-foo-bar |\n"
    found = [(line, tag) for line, tag, _, _ in documented_tags(text, g, bare=True)]
    assert found == [
        (1, "v0.8.0-cann9.0.0-torch_npu2.9.0.post2-a3-ubuntu22.04-py3.11-vllm"),
        (2, "latest-vllm-910b-ubuntu"),
    ]
    assert [t for _, t, _, _ in documented_tags(text, g, bare=False)] == [found[0][1]]


# -- matrix and expressions -------------------------------------------------------------------------------------


def _node(text: str):  # type: ignore[no-untyped-def]
    root = parse_yaml(text).root
    assert root is not None
    return root


def test_matrix_product_exclude_include() -> None:
    m = _node(
        "device: [910b, a3]\nbackend: [vllm, sglang]\nexclude:\n  - device: 910b\n    backend: sglang\n"
        "include:\n  - device: a3\n    runner: linux-aarch64-a3-16\n  - device: a5\n    backend: vllm\n"
    )
    combos = matrix_combinations(m)
    assert combos == [
        {"device": "910b", "backend": "vllm"},
        {"device": "a3", "backend": "vllm", "runner": "linux-aarch64-a3-16"},
        {"device": "a3", "backend": "sglang", "runner": "linux-aarch64-a3-16"},
        {"device": "a5", "backend": "vllm"},
    ]


def test_dynamic_matrix_is_unknown() -> None:
    assert matrix_combinations(_node("device: ${{ fromJSON(inputs.devices) }}\n")) is None
    assert matrix_combinations(_node("include: ${{ fromJSON(needs.plan.outputs.legs) }}\n")) is None


def test_substitute_keeps_unknowns_wild() -> None:
    def lookup(ctx: str, parts: tuple[str, ...]):  # type: ignore[no-untyped-def]
        from npu_review.checks.parsers.gha.values import Val

        return [Val("quay.io/ascend/verl")] if (ctx, parts) == ("env", ("QUAY_REPO",)) else None

    vals = substitute("${{ env.QUAY_REPO }}:tmp-${{ matrix.tag }}", lookup)
    assert [v.text for v in vals] == [f"quay.io/ascend/verl:tmp-{WILD}"]


# -- run blocks and producers -------------------------------------------------------------------------------------

F1_BUILD = textwrap.dedent(
    """\
    name: docker-build-ascend-a2
    on:
      workflow_dispatch:
      release:
        types: [published]
    env:
      QUAY_REPO: quay.io/ascend/verl
    jobs:
      build:
        runs-on: ubuntu-latest
        outputs:
          tag: ${{ steps.version.outputs.tag }}
        steps:
          - id: base_image
            run: |
              BASE_IMAGE_FULL=$(grep '^FROM' ./docker/ascend/Dockerfile.ascend_a2 | head -1 | cut -d' ' -f2)
              BASE_IMAGE_TAG=$(echo "$BASE_IMAGE_FULL" | cut -d':' -f2)
              NEW_IMAGE_NAME="verl-$BASE_IMAGE_TAG"
              echo "new_image_name=$NEW_IMAGE_NAME" >> "$GITHUB_OUTPUT"
          - id: version
            run: |
              if [ "${{ github.event_name }}" = "release" ]; then
                echo "tag=${{ steps.base_image.outputs.new_image_name }}-${{ github.ref_name }}" >> $GITHUB_OUTPUT
              else
                echo "tag=${{ steps.base_image.outputs.new_image_name }}-latest" >> $GITHUB_OUTPUT
              fi
      merge:
        runs-on: ubuntu-latest
        needs: build
        steps:
          - env:
              IMAGE: ${{ env.QUAY_REPO }}
            run: |
              docker buildx imagetools create \\
                -t "$IMAGE:${{ needs.build.outputs.tag }}" \\
                $DIGESTS
    """
)
DOCKERFILE = "# base\nFROM swr.cn-south-1.myhuaweicloud.com/ascendhub/cann:9.0.0-910b-ubuntu22.04-py3.11\n"


def test_f1_tag_is_derived_from_the_dockerfile_from_line() -> None:
    wf = parse(F1_BUILD, ".github/workflows/docker-build-ascend-a2.yml")
    assert wf is not None
    files = {"docker/ascend/Dockerfile.ascend_a2": DOCKERFILE}
    pushes = WorkflowEval(wf, files.get).pushes()
    refs = sorted(p.ref.text for p in pushes)
    assert refs == [
        f"quay.io/ascend/verl:verl-9.0.0-910b-ubuntu22.04-py3.11-{WILD}",
        "quay.io/ascend/verl:verl-9.0.0-910b-ubuntu22.04-py3.11-latest",
    ]
    latest = next(p for p in pushes if p.ref.known)
    assert ("docker/ascend/Dockerfile.ascend_a2", 2) in latest.ref.origins  # the FROM line
    assert latest.line == 34  # the `-t` line of the imagetools call


def test_run_evaluator_models_only_what_it_knows() -> None:
    wf = build(parse_yaml("jobs: {}\n"), "w.yml")
    assert wf is not None
    run = _node(
        'run: |\n  A="x-$UNSET"\n  B=$(date +%s)\n  echo "a=$A" >> "$GITHUB_OUTPUT"\n  echo "b=$B" >> $GITHUB_OUTPUT\n'
    )
    ev = RunEvaluator("w.yml", Scope(wf), {}, lambda p: None)
    ev.run(run.at("run"))  # type: ignore[arg-type]
    assert [v.text for v in ev.outputs["a"]] == [f"x-{WILD}"]
    assert [v.text for v in ev.outputs["b"]] == [WILD]


def _ctx(files: dict[str, str]) -> Context:
    return Context(ChangeSet(head=MemoryTree(files), audit=True), DEFAULT_CONFIG, KindMap())


def test_inventory_resolves_env_and_matrix_in_consumers() -> None:
    consumer = textwrap.dedent(
        f"""\
        name: nightly_ascend_multinode
        on: workflow_dispatch
        env:
          IMAGE: {CN}:latest-vllm-a3-ubuntu
        jobs:
          multinode:
            runs-on: linux-aarch64-a3-16
            strategy:
              matrix:
                device: [910b, a3]
            container:
              image: ${{{{ env.IMAGE }}}}
            services:
              helper:
                image: {CN}:latest-vllm-${{{{ matrix.device }}}}-ubuntu
            steps:
              - run: echo ok
          runner:
            runs-on: ubuntu-latest
            container:
              image: quay.io/albert54/actions-runner:ubuntu-24.04
            steps:
              - run: echo ${{{{ inputs.image }}}}
          unknown:
            runs-on: linux-aarch64-a3-16
            container:
              image: ${{{{ inputs.image }}}}
            steps:
              - run: echo ok
        """
    )
    inv = inventory(_ctx({".github/workflows/nightly_ascend_multinode.yml": consumer}))
    got = sorted((c.line, c.tag) for c in inv.consumers)
    assert got == [
        (4, "latest-vllm-a3-ubuntu"),
        (12, "latest-vllm-a3-ubuntu"),
        (15, "latest-vllm-910b-ubuntu"),
        (15, "latest-vllm-a3-ubuntu"),
    ]
    assert not inv.producers


def test_inventory_producers_exclude_temporary_tags_and_keep_unknown_as_patterns() -> None:
    build_wf = textwrap.dedent(
        """\
        name: docker-build-ascend-a3
        on: workflow_dispatch
        jobs:
          build:
            runs-on: ubuntu-latest
            strategy:
              matrix:
                tag: [amd64, arm64]
            steps:
              - uses: docker/build-push-action@v6
                with:
                  file: ./docker/ascend/Dockerfile.ascend_9.1.0_a3
                  push: true
                  tags: |
                    quay.io/ascend/verl:tmp-a3-${{ matrix.tag }}
                    quay.io/ascend/verl:latest-vllm-a3-${{ inputs.os }}
              - uses: docker/build-push-action@v6
                with:
                  file: ./docker/ascend/Dockerfile.ascend_9.1.0_a3
                  push: false
                  tags: quay.io/ascend/verl:never-pushed
        """
    )
    inv = inventory(_ctx({".github/workflows/docker-build-ascend-a3.yml": build_wf}))
    tags = sorted(p.tag for p in inv.products())
    assert tags == [f"latest-vllm-a3-{WILD}"]
    assert inv.produced("latest-vllm-a3-ubuntu") is None  # could be: unknown
    assert inv.produced("latest-vllm-910b-ubuntu") is False


# -- suggestions (the fixtures check lines, these check the replacement text) -----------------------------------


_SHELL_PIECES = [*"$(){}'\"|;&<>=\\` \nabcFROM:-#", "echo ", "grep ", "cut -d: -f2", "${{ x }}", "if ", "fi"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_SHELL_PIECES), max_size=100).map("".join))
def test_run_evaluator_never_raises(script: str) -> None:
    wf = build(parse_yaml("jobs: {}\n"), "w.yml")
    assert wf is not None
    from npu_review.checks.parsers.yamlmarks import SCALAR, Node

    node = Node(SCALAR, 1, 1 + script.count("\n"), value=script, style="|")
    ev = RunEvaluator("w.yml", Scope(wf), {}, lambda p: "FROM a:b\n")
    ev.run(node)


def test_a_base_inventory_shares_the_products_of_a_workflow_and_files_the_change_leaves_alone() -> None:
    """On a change, the base's products of a workflow the change does not touch are the head's (evaluated once),
    unless its evaluation read a file the change touches: then they are evaluated at the base."""
    from npu_review.checks.model import ChangeStatus, FileChange

    def producer(name: str, tag_file: str) -> str:
        return textwrap.dedent(
            f"""\
            name: {name}
            on: workflow_dispatch
            jobs:
              build:
                runs-on: ubuntu-latest
                steps:
                  - run: |
                      TAG=$(cat {tag_file})
                      docker build -t quay.io/ascend/verl:$TAG .
                      docker push quay.io/ascend/verl:$TAG
            """
        )

    files = {
        ".github/workflows/docker-build-ascend-a2.yml": producer("docker-build-ascend-a2", "docker/a2_tag.txt"),
        ".github/workflows/docker-build-ascend-a3.yml": producer("docker-build-ascend-a3", "docker/a3_tag.txt"),
        "docker/a2_tag.txt": "latest-vllm-910b-ubuntu",
        "docker/a3_tag.txt": "latest-vllm-a3-ubuntu",
    }
    head = {**files, "docker/a3_tag.txt": "latest-vllm-a3-openeuler"}
    change = FileChange("docker/a3_tag.txt", ChangeStatus.MODIFIED, added_lines=frozenset({1}))
    cs = ChangeSet(head=MemoryTree(head), base=MemoryTree(files), changes={"docker/a3_tag.txt": change})
    ctx = Context(cs, DEFAULT_CONFIG, KindMap())
    now, before = inventory(ctx), inventory(ctx, "base")
    a2, a3 = ".github/workflows/docker-build-ascend-a2.yml", ".github/workflows/docker-build-ascend-a3.yml"
    assert [p.tag for p in now.producers[a3].products] == ["latest-vllm-a3-openeuler"]
    assert [p.tag for p in before.producers[a3].products] == ["latest-vllm-a3-ubuntu"]
    assert [p.tag for p in before.producers[a2].products] == ["latest-vllm-910b-ubuntu"]
    assert before.producers[a2].products is now.producers[a2].products  # evaluated once
    # The same inventories from a context that evaluates the base first, and one per revision alone.
    first_base = Context(cs, DEFAULT_CONFIG, KindMap())
    assert inventory(first_base, "base").producers == before.producers
    assert inventory(first_base).producers == now.producers
    assert inventory(Context(cs, DEFAULT_CONFIG, KindMap()), "base").producers == before.producers


def test_on_a_change_the_inventory_decides_which_workflows_are_ascend_when_asked_for_consumers() -> None:
    """On a change, the inventory leaves the workflows' content kinds undecided until its consumers are asked for;
    they are those of a context that decided every workflow's kinds first, whichever revision."""
    from npu_review.checks.kinds import ASCEND_WORKFLOW
    from npu_review.checks.model import ChangeStatus, FileChange

    def consumer(runner: str, tag: str) -> str:
        return (
            f"on: workflow_dispatch\njobs:\n  t:\n    runs-on: {runner}\n    container:\n"
            f"      image: {CN}:{tag}\n    steps:\n      - run: echo ok\n"
        )

    base = {
        ".github/workflows/nightly.yml": consumer("linux-aarch64-a3-16", "latest-vllm-a3-ubuntu"),  # by content
        ".github/workflows/gpu.yml": consumer("ubuntu-latest", "latest-vllm-910b-ubuntu"),
        ".github/workflows/e2e_ascend.yml": consumer("ubuntu-latest", "latest-vllm-910b-ubuntu"),  # by path
        ".github/workflows/docs.yml": "on: push\njobs:\n  d:\n    runs-on: ubuntu-latest\n    steps:\n      - run: x\n",
    }
    head = {**base, ".github/workflows/gpu.yml": consumer("linux-aarch64-a2-8", "latest-vllm-910b-ubuntu")}
    change = FileChange(".github/workflows/gpu.yml", ChangeStatus.MODIFIED, added_lines=frozenset({4}))
    cs = ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes={change.path: change})

    def consumers(force: bool) -> list[list[tuple[str, int, str]]]:
        ctx = Context(cs, DEFAULT_CONFIG, KindMap())
        if force:
            for rev in ("head", "base"):
                for path in ctx.paths_at(rev):
                    src = ctx.source(path, rev)
                    assert src is not None
                    _ = src.kinds
        invs = [inventory(ctx), inventory(ctx, "base")]
        if not force:
            undecided = [p for p in ctx.head_paths() if (src := ctx.source(p)) is not None and src._decide is not None]
            assert undecided == [
                ".github/workflows/docs.yml",
                ".github/workflows/gpu.yml",
                ".github/workflows/nightly.yml",
            ]
        return [[(c.path, c.line, c.tag) for c in inv.consumers] for inv in invs]

    lazy = consumers(False)
    assert lazy == consumers(True)
    assert [sorted({p for p, _l, _t in found}) for found in lazy] == [
        [".github/workflows/e2e_ascend.yml", ".github/workflows/gpu.yml", ".github/workflows/nightly.yml"],
        [".github/workflows/e2e_ascend.yml", ".github/workflows/nightly.yml"],
    ]
    assert ASCEND_WORKFLOW in KindMap().kinds(".github/workflows/e2e_ascend.yml")
