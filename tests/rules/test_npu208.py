"""NPU208 ci-overrides-image-pin: its fixture cases (tests/fixtures/NPU208/), and what they cannot say."""

from __future__ import annotations

import textwrap

from npu_review.checks.facts import default_facts
from npu_review.checks.parsers.sh import Source, commands
from npu_review.checks.rules.npu208_ci_overrides_image_pin import Frameworks, pins_in, same_ref
from tests.rules.support import (
    fixture_tests,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU208")


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


def test_a_change_s_other_files_are_not_parsed_as_dockerfiles(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """huaweicloud/huaweicloud-sdk-python-v3 61b05df8 changes 45,678 files: NPU208 parsed each one as a Dockerfile to
    look for framework pins, and was stopped after 183 s (rs-r61). Only the change's Dockerfiles are read so."""
    from npu_review.checks.parsers import dockerfile as dfp
    from tests.rules.support import change

    parsed: list[str] = []
    parse = dfp.parse

    def recording(text: str):  # type: ignore[no-untyped-def]
        parsed.append(text.splitlines()[0] if text else "")
        return parse(text)

    monkeypatch.setattr(dfp, "parse", recording)
    head = {
        "setup.py": "# the SDK\nfrom setuptools import setup\nsetup(name='sdk')\n",
        "docker/ascend/Dockerfile": (
            "FROM quay.io/ascend/cann:8.3.rc1-910b-ubuntu22.04-py3.11\nRUN pip install vllm==0.9.1\n"
        ),
        ".github/workflows/ascend.yml": (
            "name: ascend\non: [pull_request]\njobs:\n  test:\n    runs-on: linux-aarch64-a2-1\n"
            "    steps:\n      - run: pip install vllm==0.9.1 && pytest tests/e2e\n"
        ),
    }
    base = {p: t.replace("sdk", "old") for p, t in head.items()}
    head["docker/ascend/Dockerfile"] += "ENV HCCL_CONNECT_TIMEOUT=1200\n"  # the line the change adds pins nothing
    change(base, head)
    assert "# the SDK" not in parsed and "name: ascend" not in parsed
    assert "FROM quay.io/ascend/cann:8.3.rc1-910b-ubuntu22.04-py3.11" in parsed
