"""NPU314 build-mirror-config-persisted: its fixture cases, and what they do not say."""

from __future__ import annotations

from npu_review.checks.causes import by_cause
from tests.fixture_support import audit
from tests.rules.support import fixture_tests, got

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU314")

_FROM = "FROM quay.io/ascend/cann:8.3.rc1-910b-ubuntu22.04-py3.11\n"


_CI = """\
name: image
on: [push]
jobs:
  b:
    runs-on: ubuntu-latest
    steps:
      - run: docker build --build-arg APTMIRROR=http://10.0.0.2:8081 -f docker/npu/Dockerfile .
"""


def test_python_m_pip_and_sed_with_clustered_flags_are_read_and_an_arg_no_workflow_sets_is_a_notice() -> None:
    df = _FROM + (
        'ARG APTMIRROR=""\nARG PIP_INDEX_URL=""\n'
        'RUN sed -Ei "s@archive.ubuntu.com@${APTMIRROR#http://}@g" /etc/apt/sources.list\n'
        "RUN python3 -m pip config set global.index-url ${PIP_INDEX_URL}\n"
    )
    assert got(audit({"docker/npu/Dockerfile": df, ".github/workflows/image.yml": _CI}), "NPU314") == [
        (
            "docker/npu/Dockerfile",
            4,
            "warning",
            "writing `/etc/apt/sources.list` with build argument `APTMIRROR` stays in the image: every user's "
            "`apt-get` then goes to the build's mirror or proxy, which they may not reach or trust. Pass it for "
            "the command only, or undo it in the same RUN.",
        ),
        (
            "docker/npu/Dockerfile",
            5,
            "notice",
            "`pip config set global.index-url` with build argument `PIP_INDEX_URL` stays in the image: every user's "
            "`pip install` then goes to the build's mirror or proxy, which they may not reach or trust. Pass it for "
            "the command only, or undo it in the same RUN. (No workflow here sets `PIP_INDEX_URL`: this holds for "
            "images built with it.)",
        ),
    ]


def test_a_global_arg_with_a_public_default_redeclared_in_the_stage_is_left_alone() -> None:
    df = (
        "ARG PIP_INDEX_URL=https://pypi.example.org/simple\n"
        + _FROM
        + "ARG PIP_INDEX_URL\nRUN pip config set global.index-url ${PIP_INDEX_URL}\n"
    )
    assert got(audit({"Dockerfile": df}), "NPU314") == []


def test_one_mirror_decision_in_twin_dockerfiles_is_one_cause_per_tool() -> None:
    df = _FROM + (
        'ARG APTMIRROR=""\nARG PIP_INDEX_URL=""\n'
        'RUN sed -Ei "s@archive.ubuntu.com@${APTMIRROR#http://}@g" /etc/apt/sources.list\n'
        "RUN pip config set global.index-url ${PIP_INDEX_URL}\n"
    )
    ci = _CI.replace("--build-arg APTMIRROR", "--build-arg PIP_INDEX_URL=x --build-arg APTMIRROR")
    files = {f"docker/npu/Dockerfile.{dev}": df for dev in ("a2", "a3", "310p")}
    report = audit({**files, ".github/workflows/image.yml": ci})
    found = [f for f in report.findings if f.rule == "NPU314"]
    assert len(found) == 6
    assert [(c.lead.path, c.lead.line, len(c.also)) for c in by_cause(found)] == [
        ("docker/npu/Dockerfile.310p", 4, 2),
        ("docker/npu/Dockerfile.310p", 5, 2),
    ]


def test_npu314_a_public_default_counts_where_the_builds_of_that_dockerfile_replace_it() -> None:
    dockerfile = (
        "FROM quay.io/ascend/cann:8.5.0-910b-ubuntu22.04-py3.11\n"
        'ARG PIP_INDEX_URL="https://pypi.tuna.tsinghua.edu.cn/simple"\n'
        "RUN pip config set global.index-url ${PIP_INDEX_URL}\n"
    )

    def job(name: str, dockerfile: str, extra: str) -> str:
        return (
            f"name: {name}\non: [push]\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n"
            "      - uses: actions/checkout@v4\n"
            f"      - run: docker build -f {dockerfile} {extra}-t quay.io/example/app:{name} .\n"
        )

    files = {
        "Dockerfile": dockerfile,
        "docker/Dockerfile.nightly": dockerfile,
        ".github/workflows/release.yml": job(
            "release", "Dockerfile", "--build-arg PIP_INDEX_URL=http://cache.svc.cluster.local/simple "
        ),
        ".github/workflows/nightly.yml": job("nightly", "docker/Dockerfile.nightly", ""),
    }
    found = [(f.path, f.line, f.severity.label) for f in audit(files).findings if f.rule == "NPU314"]
    assert found == [("Dockerfile", 3, "warning")]


def test_a_build_a_doc_shows_is_not_what_the_project_builds_with() -> None:
    """`check --all` reads the docs too: a README's `docker build --build-arg APT_MIRROR=<public mirror>` is a user's
    own build, so the image the project builds never takes the mirror: a notice (verl's Dockerfile.stable.vllm)."""
    from tests.fixture_support import FIXTURES, audit, load_case

    case = load_case(FIXTURES / "NPU314/trap_mirror_argument_only_docs_pass")
    files = {p: t for p, t in case.head.items() if t is not None}
    found = [(f.path, f.line, f.severity.label) for f in audit(files).findings if f.rule == "NPU314"]
    assert found == [("docker/Dockerfile.stable.vllm", 5, "notice")]


def test_a_build_of_any_dockerfile_at_all_is_no_build_of_a_dev_container() -> None:
    """eosphoros-ai/DB-GPT's build script runs `docker build -f "$DOCKERFILE" --build-arg PIP_INDEX_URL=...` with the
    Dockerfile an option gives (any path), and its dev container's Dockerfile, which no build names, keeps a public
    default mirror (sweep-r27, judged false): the editor builds a dev container. The same script naming that Dockerfile
    passes its own value."""
    from tests.fixture_support import audit

    dockerfile = (
        "FROM quay.io/ascend/cann:8.5.0-910b-ubuntu22.04-py3.11\n"
        'ARG PIP_INDEX_URL="https://pypi.tuna.tsinghua.edu.cn/simple"\n'
        "RUN pip config set global.index-url ${PIP_INDEX_URL}\n"
    )
    script = (
        '#!/bin/bash\nDOCKERFILE="Dockerfile"\nPIP_INDEX_URL="https://pypi.tuna.tsinghua.edu.cn/simple"\n'
        'while [[ $# -gt 0 ]]; do\n    key="$1"\n    case $key in\n'
        '        -i|--pip-index-url)\n        PIP_INDEX_URL="$2"\n        shift\n        shift\n        ;;\n'
        '        -f|--dockerfile)\n        DOCKERFILE="$2"\n        shift\n        shift\n        ;;\n'
        "        *)\n        shift\n        ;;\n    esac\ndone\n"
        "docker build \\\n    --build-arg PIP_INDEX_URL=$PIP_INDEX_URL \\\n"
        "    -f $DOCKERFILE \\\n    -t app:latest .\n"
    )
    files = {
        ".devcontainer/Dockerfile.dev": dockerfile,
        "docker/base/Dockerfile": "FROM quay.io/ascend/cann:8.5.0-910b-ubuntu22.04-py3.11\n",
        "docker/base/build_image.sh": script,
    }
    assert [f for f in audit(files).findings if f.rule == "NPU314"] == []
    # Any other Dockerfile may be the one the script builds (vllm-ascend's image workflow takes its file as an input).
    other = {("docker/Dockerfile.dev" if p.startswith(".devcontainer/") else p): t for p, t in files.items()}
    assert [(f.path, f.line) for f in audit(other).findings if f.rule == "NPU314"] == [("docker/Dockerfile.dev", 3)]
    named = dict(
        files, **{"docker/base/build_image.sh": script.replace("-f $DOCKERFILE", "-f .devcontainer/Dockerfile.dev")}
    )
    found = [(f.path, f.line) for f in audit(named).findings if f.rule == "NPU314"]
    assert found == [(".devcontainer/Dockerfile.dev", 3)]
