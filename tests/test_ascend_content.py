"""Ascend by content (checks.ascend): Dockerfiles, workflows and scripts recognised whatever their path, and the
FROM line read after the global ARG defaults are substituted."""

from __future__ import annotations

import random
import re
import string
import sys
import textwrap

import pytest

from npu_review.checks import ascend
from npu_review.checks.config import DEFAULT_CONFIG
from npu_review.checks.context import Context
from npu_review.checks.engine import needed_paths
from npu_review.checks.facts import default_facts
from npu_review.checks.kinds import ASCEND_DOCKERFILE, ASCEND_WORKFLOW, NPU_SCRIPT, KindMap
from npu_review.checks.model import ChangeSet, ChangeStatus, FileChange, MemoryTree
from npu_review.checks.parsers import dockerfile as dfp
from tests.fixture_support import audit

M = ascend.markers(default_facts().ascend_content)


def _df(text: str) -> dfp.Dockerfile:
    return dfp.parse(textwrap.dedent(text).lstrip("\n"))


def test_from_reads_the_global_arg_default() -> None:
    df = _df(
        """
        ARG BASE_IMAGE=quay.io/ascend/cann:8.3.rc1-910b-ubuntu22.04-py3.11
        FROM ${BASE_IMAGE} AS build
        """
    )
    image = next(df.of("FROM")).image
    assert image is not None
    assert (image.image, image.tag, image.stage, image.raw, image.args) == (
        "quay.io/ascend/cann",
        "8.3.rc1-910b-ubuntu22.04-py3.11",
        "build",
        "${BASE_IMAGE}",
        (1,),
    )


def test_from_reads_a_default_expansion_and_parts_of_a_reference() -> None:
    df = _df(
        """
        ARG REGISTRY=swr.cn-south-1.myhuaweicloud.com/ascendhub
        ARG CANN
        FROM ${REGISTRY}/cann:${CANN:-8.5.0}-a3-ubuntu22.04-py3.11
        """
    )
    image = next(df.of("FROM")).image
    assert image is not None
    assert image is not None
    assert image.image == "swr.cn-south-1.myhuaweicloud.com/ascendhub/cann"
    assert image.tag == "8.5.0-a3-ubuntu22.04-py3.11"


def test_from_leaves_an_arg_without_default_unknown_and_ignores_stage_args() -> None:
    df = _df(
        """
        ARG BASE
        FROM ${BASE}
        ARG LATER=quay.io/ascend/cann:8.5.0-910b-ubuntu22.04-py3.11
        FROM ${LATER}
        """
    )
    images = [i.image for i in df.of("FROM")]
    assert [(i.image, i.tag) for i in images if i is not None] == [("${BASE}", None), ("${LATER}", None)]
    assert not ascend.dockerfile_is_ascend(df, M)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ARG B=quay.io/ascend/cann:8.5.0-910b-ubuntu22.04-py3.11\nFROM ${B}\n", True),
        ("FROM swr.cn-south-1.myhuaweicloud.com/ascendhub/cann:8.5.0-a3-openeuler24.03-py3.11\n", True),
        ("FROM quay.io/ascend/manylinux:8.0.0-910b-manylinux_2_28-py3.11\n", True),
        ("FROM ghcr.io/acme/serve:latest-cann8.5.0-910b\n", True),
        ("FROM ubuntu:22.04\nRUN pip install torch==2.7.1 torch_npu==2.7.1\n", True),
        ("FROM ubuntu:22.04\nRUN bash Ascend-cann-toolkit_8.5.0_linux-aarch64.run --install\n", True),
        ("FROM python:3.11\nRUN pip install triton-ascend==3.2.0\n", True),
        ("FROM nvcr.io/nvidia/pytorch:25.01-py3\nRUN pip install flash-attn\n", False),
        ("FROM ubuntu:22.04\n# torch_npu comes in the NPU image, not here\nRUN pip install torch\n", False),
        ("ARG BASE=nvidia/cuda:12.4.1-devel-ubuntu22.04\nFROM ${BASE}\n", False),
        # Any case; an instruction after others; a non-ASCII one (searched without the cheap test).
        ("FROM ubuntu:22.04\nRUN apt-get update\nENV PATH=/USR/LOCAL/ASCEND/bin:$PATH\n", True),
        ("FROM ubuntu:22.04\nRUN echo 安装 && pip install Torch-NPU\n", True),
        ("FROM ubuntu:22.04\nRUN pip install torch\nCOPY npu/ /opt/npu/\n", False),
    ],
)
def test_dockerfile_is_ascend(text: str, expected: bool) -> None:
    assert ascend.dockerfile_is_ascend(dfp.parse(text), M) is expected


CI_YML = """
name: ci
on: [pull_request]
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - run: ruff check .
  e2e-npu:
    runs-on: [self-hosted, ascend-910b-8]
    steps:
      - run: pytest tests/npu
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (CI_YML, True),
        ("jobs:\n  t:\n    runs-on: linux-aarch64-a2b3-4\n", True),
        ("jobs:\n  t:\n    strategy:\n      matrix:\n        runner:\n          - linux-aarch64-a3-16\n", True),
        ("jobs:\n  t:\n    runs-on: x\n    container:\n      image: quay.io/ascend/cann:8.5.0-910b\n", True),
        ("jobs:\n  t:\n    runs-on: self-hosted\n    container:\n      options: --device /dev/davinci0\n", True),
        ("jobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - run: docker push quay.io/ascend/app:1\n", True),
        ("jobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - run: pytest\n", False),
        # A paths filter naming an Ascend folder is not a runner; a comment is not a job.
        ("on:\n  pull_request:\n    paths:\n      - docker/ascend/**\njobs:\n  t:\n    runs-on: ubuntu\n", False),
        ("jobs:\n  t:\n    # runs-on: linux-aarch64-a2b3-4 once we have one\n    runs-on: ubuntu-latest\n", False),
        # A build whose only Ascend sign is its base image, passed as a build argument in a block value.
        (
            "jobs:\n  b:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: docker/build-push-action@v6\n"
            "        with:\n          build-args: |\n            BASE_IMAGE=quay.io/ascend/cann:8.3.rc2-a3\n",
            True,
        ),
        # ... but an untagged mention (a URL, a folder) is not an image.
        ("jobs:\n  t:\n    runs-on: ubuntu\n    steps:\n      - run: echo see gitcode.com/ascend/pytorch\n", False),
    ],
)
def test_workflow_is_ascend(text: str, expected: bool) -> None:
    assert ascend.workflow_is_ascend(text, M) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # An install marker in any case, in a workflow with non-ASCII text (whose cheap test reads ſ as s).
        ("jobs:\n  t:\n    runs-on: x\n    steps:\n      - run: pip install TORCH_NPU  # 安装\n", True),
        (
            "name: ſetup\njobs:\n  t:\n    steps:\n      - run: source /usr/local/Ascend/ascend-toolkit/ſet_env.sh\n",
            True,
        ),
        ("jobs:\n  t:\n    steps:\n      - run: pip install torch-npu==2.5.1\n", True),
        # torch and npu both there, not torch_npu: the cheap test passes, the search says no.
        ("jobs:\n  t:\n    steps:\n      - run: pip install torch  # npu later\n      - run: pytest\n", False),
        ("jobs:\n  t:\n    steps:\n      - run: pip install torch_npu\n".replace("torch_npu", "torch_npux"), False),
    ],
)
def test_workflow_markers_whatever_the_case_and_characters(text: str, expected: bool) -> None:
    assert ascend.workflow_is_ascend(text, M) is expected


def test_what_the_workflow_markers_need_of_a_text() -> None:
    """Read from the shipped markers' parse: each alternative's pieces (one spelling of each must be there)."""
    assert M.workflow_needs == (
        (("/dev/davinci",),),
        (("ascend_rt_visible_devices",),),
        (("ascend-cann-",),),
        (("torch-npu", "torch_npu"),),
        (("triton-ascend", "triton_ascend"),),
        (("/usr/local/ascend/",),),
        (("ascend-toolkit/",), ("set_env.sh",)),
        (("nnal/atb/set_env.sh",),),
    )
    # An alternative that needs no literal (`\d+`) leaves no cheap test.
    assert ascend._needs(re.compile(r"(?:/dev/davinci)|(?:\d+)", re.IGNORECASE)) is None


def test_without_the_private_re_parser_the_searches_alone_decide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ascend, "sre_parse", None)
    assert ascend._needs(re.compile("ascend", re.IGNORECASE)) is None
    assert ascend._may_match(None, "no marker here") is True  # no cheap no: the search is made


def test_what_a_pattern_needs_is_in_every_text_it_matches() -> None:
    """Random patterns (literals, small classes, groups, repeats, assertions, alternations, case switches) and
    random texts (both cases, ı ſ K İ, line breaks, comments): where the search of the text's code finds the
    pattern, the cheap test never rules the text out; and it does rule many texts out."""
    rnd = random.Random(7)
    leaves = ["a", "b", "s", "k", "i", "K", "S", "-", "_", "=", "/", r"\.", "ab", "sk", "ı", "ſ", "\u212a", "é", r"\n"]
    others = [r"\b", r"\s*", r"\s+", ".", r"\w+", "[^a]", "^", "$", "(?=a)", "(?<!b)", "[ks]", "[-_]", "[aS=]"]

    def gen(depth: int) -> str:
        r = rnd.random()
        if depth > 3 or r < 0.35:
            return rnd.choice(leaves)
        if r < 0.5:
            return rnd.choice(others)
        if r < 0.6:
            return f"(?:{gen(depth + 1)}|{gen(depth + 1)})"
        if r < 0.7:
            return f"({gen(depth + 1)})" + rnd.choice(["", "?", "*", "+", "{2}", "{0,2}", "+?", "*+"])
        if r < 0.75:
            return f"(?-i:{gen(depth + 1)})"
        if r < 0.78:
            return f"(?>{gen(depth + 1)})"
        return gen(depth + 1) + gen(depth + 1)

    chars = [
        "a",
        "b",
        "s",
        "k",
        "i",
        "A",
        "S",
        "K",
        "ı",
        "ſ",
        "\u212a",
        "İ",
        "é",
        "-",
        "_",
        "=",
        "/",
        ".",
        " ",
        "\n",
        "#",
    ]
    ruled_out = 0
    for _ in range(3000):
        try:
            pattern = re.compile("|".join(f"(?:{gen(0)})" for _ in range(rnd.randint(1, 3))), re.IGNORECASE)
        except re.error:
            continue
        needs = ascend._needs(pattern)
        for _ in range(10):
            lowered = "".join(rnd.choice(chars) for _ in range(rnd.randint(0, 12))).lower()
            if not ascend._may_match(needs, lowered):
                ruled_out += 1
                assert pattern.search(ascend._code(lowered)) is None, (pattern.pattern, lowered)
    assert ruled_out > 3000


def test_the_non_ascii_characters_an_ascii_literal_matches_ignoring_case() -> None:
    """Asked of `re` for every code point: an ignore-case ASCII literal (alone or in a class) matches no other
    non-ASCII character than those _FOLDED replaces by that literal's letter."""
    every = "".join(chr(c) for c in range(0x80, sys.maxunicode + 1) if not 0xD800 <= c < 0xE000)
    folded = dict(ascend._FOLDED)
    for ch in string.printable:
        for source in (re.escape(ch), f"[{re.escape(ch)}]"):
            matched = set(re.compile(source, re.IGNORECASE).findall(every))
            assert {folded.get(m) for m in matched} <= {ch.lower()}, (source, matched)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("source /usr/local/Ascend/ascend-toolkit/set_env.sh\npython serve.py\n", True),
        ("export ASCEND_RT_VISIBLE_DEVICES=0,1\npython serve.py\n", True),
        ("export HCCL_CONNECT_TIMEOUT=1500\npython3 -m verl.trainer.main_ppo trainer.n_gpus_per_node=8\n", True),
        ('python -c "import torch_npu"\n', True),
        ("python3 -m verl.trainer.main_ppo trainer.device=npu\n", True),
        # MindSpore on Ascend: the HCCL rank table, CANN's log switch, the Ascend device target.
        ("export RANK_TABLE_FILE=$(realpath $5)\npython train.py --device_id=$i\n", True),
        ("export SLOG_PRINT_TO_STDOUT=0\npython train.py\n", True),
        ("python train.py --device_target=Ascend --device_id=0\n", True),
        ("python eval.py --device_target Ascend\n", True),
        ("python train.py --device_target=GPU\n", False),
        ("python train.py --device_target=CPU  # Ascend later\n", False),
        # A GPU script that kept TASK_QUEUE_ENABLE; a script for several devices; a comment.
        ("export TASK_QUEUE_ENABLE=2\nexport CUDA_DEVICE_MAX_CONNECTIONS=1\npython train.py\n", False),
        ("export HCCL_CONNECT_TIMEOUT=1500\nif [ $D = cuda ]; then export NCCL_DEBUG=INFO; fi\n", False),
        ("# on NPU: source /usr/local/Ascend/ascend-toolkit/set_env.sh\npython train.py\n", False),
    ],
)
def test_script_is_npu(text: str, expected: bool) -> None:
    assert ascend.script_is_npu(text, M) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("case $DEVICE in\n  gpu) export X=1 ;;\nesac\n", True),
        ("export CUDA_VISIBLE_DEVICES=0,1\n", True),
        ("nvidia-smi -L\n", True),
        ("python train.py --device=cuda\n", True),
        ("python train.py trainer.n_gpus_per_node=8 rollout.gpu_memory_utilization=0.6\n", False),
        ("export ROCMLU=1 CUDAX=2 XPUS=3\n", False),  # words inside longer names
        ("# use cuda here\npython train.py\n", False),  # a comment
    ],
)
def test_selects_other_device(text: str, expected: bool) -> None:
    assert ascend.selects_other_device(text) is expected


@pytest.mark.parametrize(
    ("paths", "expected"),
    [
        (["vllm_ascend/__init__.py", "setup.py"], True),
        (["src/mindie_ascend/__init__.py"], True),
        (["verl/__init__.py", "docker/ascend/Dockerfile.ascend_9.1.0_a2"], False),
        (["tools/ascend/__init__.py"], False),  # not the project's own package
    ],
)
def test_ascend_only_repository(paths: list[str], expected: bool) -> None:
    assert ascend.ascend_only(paths, M) is expected


FILES = {
    "docker/npu/Dockerfile": "ARG BASE_IMAGE=quay.io/ascend/cann:8.3.rc1-910b-ubuntu22.04-py3.11\nFROM ${BASE_IMAGE}\n",
    "docker/gpu/Dockerfile": "FROM nvcr.io/nvidia/pytorch:25.01-py3\n",
    ".github/workflows/ci.yml": CI_YML,
    ".github/workflows/docs.yml": "jobs:\n  t:\n    runs-on: ubuntu-latest\n",
    "train.sh": "source /usr/local/Ascend/ascend-toolkit/set_env.sh\npython train.py\n",
    "tools/lint.sh": "ruff check .\n",
}


def _kinds(files: dict[str, str]) -> dict[str, set[str]]:
    ctx = Context(ChangeSet(head=MemoryTree(files), audit=True), DEFAULT_CONFIG, KindMap())
    wanted = (ASCEND_DOCKERFILE, ASCEND_WORKFLOW, NPU_SCRIPT)
    return {p: {k for k in wanted if ctx.has_kind(p, k)} for p in files}


def test_context_gives_content_kinds_whatever_the_path() -> None:
    assert _kinds(FILES) == {
        "docker/npu/Dockerfile": {ASCEND_DOCKERFILE},
        "docker/gpu/Dockerfile": set(),
        ".github/workflows/ci.yml": {ASCEND_WORKFLOW},
        ".github/workflows/docs.yml": set(),
        "train.sh": {NPU_SCRIPT},
        "tools/lint.sh": set(),
    }


def test_an_ascend_only_repository_is_ascend_everywhere() -> None:
    kinds = _kinds({**FILES, "acme_ascend/__init__.py": ""})
    assert kinds["docker/gpu/Dockerfile"] == {ASCEND_DOCKERFILE}
    assert kinds[".github/workflows/docs.yml"] == {ASCEND_WORKFLOW}
    assert kinds["tools/lint.sh"] == {NPU_SCRIPT}


def test_the_app_fetches_every_candidate_of_a_content_kind() -> None:
    changes = {p: FileChange(p, ChangeStatus.MODIFIED) for p in ("docker/gpu/Dockerfile", ".github/workflows/docs.yml")}
    head, base = needed_paths(FILES, changes, DEFAULT_CONFIG)
    # Changed files are fetched whatever their content; unchanged Dockerfiles and workflows as the context that
    # content-kind rules read (NPU310's twins, the image inventory).
    assert {"docker/gpu/Dockerfile", ".github/workflows/docs.yml"} <= head
    assert {"docker/npu/Dockerfile", ".github/workflows/ci.yml"} <= head
    assert base == {"docker/gpu/Dockerfile", ".github/workflows/docs.yml"}


# One mistake of each Dockerfile rule that reads Ascend Dockerfiles by content.
_DOCKERFILE_MISTAKES = (
    "RUN wget --no-check-certificate https://example.com/x.run -O x.run\n"  # NPU301
    "RUN pip install a && \\\n"
    "\n"  # NPU304
    "    pip install b\n"
    "RUN pip install c \\\n"
    "    git clone https://example.com/d.git\n"  # NPU306
    "RUN echo ${LATE}\n"  # NPU313
    "ARG LATE=1\n"
)
_SOURCED_LAST = "RUN pip install e && source /usr/local/Ascend/ascend-toolkit/set_env.sh\n"  # NPU303 (Ascend itself)
_DOCKERFILE_RULES = ["NPU301", "NPU303", "NPU304", "NPU306", "NPU313"]


def test_dockerfile_rules_read_ascend_dockerfiles_only_in_a_mixed_repository() -> None:
    files = {
        "docker/npu/Dockerfile": "ARG BASE_IMAGE=quay.io/ascend/cann:8.3.rc1-910b-ubuntu22.04-py3.11\n"
        "FROM ${BASE_IMAGE}\n" + _DOCKERFILE_MISTAKES + _SOURCED_LAST,
        "docker/gpu/Dockerfile": "FROM nvcr.io/nvidia/pytorch:25.01-py3\n" + _DOCKERFILE_MISTAKES,
    }
    report = audit(files)
    assert report.errors == []
    got = {(f.path, f.rule) for f in report.findings if f.rule in _DOCKERFILE_RULES}
    # A CUDA image's Dockerfile is not this App's business, whatever it does.
    assert got == {("docker/npu/Dockerfile", rule) for rule in _DOCKERFILE_RULES}


def test_in_an_ascend_only_repository_every_dockerfile_is_read() -> None:
    files = {"acme_ascend/__init__.py": "", "Dockerfile": "FROM python:3.11\n" + _DOCKERFILE_MISTAKES + _SOURCED_LAST}
    report = audit(files)
    assert {f.rule for f in report.findings if f.rule in _DOCKERFILE_RULES} == set(_DOCKERFILE_RULES)


def test_content_kinds_are_decided_when_first_asked_and_the_same() -> None:
    """A file's content kinds are decided on first use of `kinds` (a scan that reads only texts decides none), the
    same as when asked at once; a file let go of before they were asked is freed, not held by a cycle."""
    import gc
    import weakref

    ctx = Context(ChangeSet(head=MemoryTree(FILES), audit=True), DEFAULT_CONFIG, KindMap())
    sources = {p: ctx.source(p) for p in FILES}
    assert all(src is not None for src in sources.values())
    assert [p for p, src in sources.items() if src is not None and src._decide is not None] == [
        "docker/npu/Dockerfile",
        "docker/gpu/Dockerfile",
        ".github/workflows/ci.yml",
        ".github/workflows/docs.yml",
        "train.sh",
        "tools/lint.sh",
    ]
    assert {p: set(src.kinds) for p, src in sources.items() if src is not None} == {
        p: set(KindMap().kinds(p)) | k for p, k in _kinds(FILES).items()
    }
    assert all(src is not None and src._decide is None for src in sources.values())
    later = Context(ChangeSet(head=MemoryTree(FILES), audit=True), DEFAULT_CONFIG, KindMap())
    held = later.source("train.sh")
    assert held is not None and held._decide is not None
    gone = weakref.ref(held)
    del held
    was = gc.isenabled()
    gc.disable()
    try:
        later.release("train.sh")
        assert gone() is None  # freed by its count: nothing but the context held it
    finally:
        if was:
            gc.enable()
    again = later.source("train.sh")
    assert again is not None and again.kinds == {"shell", NPU_SCRIPT}
