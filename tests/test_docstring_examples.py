"""Each rule's docstring `Bad:` example fires the rule and its `Good:` example does not (as pylint runs the bad.py
and good.py of its message docs). An example is a fragment; SCAFFOLDS says where it goes (a path, the lines around
it). A rule whose examples need more than one file or a change to show is listed in NOT_RUN with the reason; its
fixture cases show the same (tests/fixtures/<RULE>/)."""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

import pytest

from checks.rule import all_rules
from tests.fixture_support import audit


@dataclass(frozen=True)
class Scaffold:
    path: str
    template: str  # `{example}` is replaced by the example, indented by `indent`
    indent: str = ""
    others: tuple[tuple[str, str], ...] = ()  # more files of the tree, as (path, text)


_DF = "docker/ascend/Dockerfile.ascend_9.1.0_a2"
_FROM = "FROM swr.cn-south-1.myhuaweicloud.com/ascendhub/cann:9.1.0-910b-ubuntu22.04-py3.12\n"
_VLLM_ASCEND = "RUN git clone -b releases/v0.18.0 https://github.com/vllm-project/vllm-ascend.git\n"
_SH = "examples/ascend/run_qwen3_8b_grpo_npu.sh"
_LAUNCH = "#!/usr/bin/env bash\npython3 -m verl.trainer.main_ppo \\\n{example}\n    trainer.nnodes=1\n"
_WF = ".github/workflows/e2e_ascend.yml"
_JOB = "name: e2e\non: [pull_request]\njobs:\n  e2e_ascend:\n    runs-on: linux-aarch64-a2b3-8\n{example}\n"

SCAFFOLDS: dict[str, Scaffold] = {
    "NPU101": Scaffold(_SH, "#!/usr/bin/env bash\n{example}\n"),
    "NPU102": Scaffold(_SH, _LAUNCH, "    "),
    "NPU104": Scaffold(_SH, "#!/usr/bin/env bash\n{example}\n"),
    "NPU106": Scaffold(_SH, _LAUNCH, "    "),
    "NPU108": Scaffold(_SH, _LAUNCH, "    "),
    "NPU111": Scaffold(_SH, "#!/usr/bin/env bash\n{example}\n"),  # (`·` in the docstring marks a blank)
    "NPU200": Scaffold(_WF, "name: e2e\non: [pull_request]\n{example}\n"),
    "NPU207": Scaffold(_WF, _JOB.replace("{example}", "    steps:\n      - run: |\n{example}"), "          "),
    "NPU209": Scaffold(_WF, _JOB.replace("{example}", "    steps:\n{example}"), "      "),
    # The examples carry their triggers (NPU212 reports only jobs that forks run by themselves) and the project's
    # other guards (it reports only in a project that guards jobs).
    "NPU212": Scaffold(_WF, "name: e2e\n{example}\n"),
    "NPU213": Scaffold(
        _WF,
        _JOB.replace("{example}", "    steps:\n      - uses: docker/metadata-action@v5\n        with:\n{example}"),
        "          ",
    ),
    "NPU301": Scaffold(_DF, _FROM + "{example}\n"),
    "NPU302": Scaffold(_DF, _FROM + "{example}\n"),
    "NPU303": Scaffold(_DF, _FROM + "{example}\nRUN python3 -c 'import torch_npu'\n"),
    "NPU304": Scaffold(_DF, _FROM + "{example}\n"),
    "NPU306": Scaffold(_DF, _FROM + "{example}\n"),
    "NPU309": Scaffold(_DF, _FROM + "RUN {example}\n"),
    # The vllm-ascend checkout says which release's requirements the example installs (one that brings triton-ascend).
    "NPU311": Scaffold(_DF, _FROM + _VLLM_ASCEND + "RUN {example}\n    true\n"),
    "NPU312": Scaffold("requirements-npu.txt", "{example}\n"),
    "NPU313": Scaffold("docker/Dockerfile", "{example}\n"),
}

_CROSS = "the example needs other files (see its fixture cases)"
NOT_RUN: dict[str, str] = {
    "NPU103": "a change (a diff between two revisions) with a PR title",
    "NPU105": "the project's Hydra config schema: " + _CROSS,
    "NPU107": "a change to the Hydra defaults and the NPU scripts that rely on them",
    "NPU110": "not scaffolded yet (the rule came after this test): see its fixture cases",
    "NPU215": "not scaffolded yet (the rule came after this test): see its fixture cases",
    "NPU201": "several workflows that pull the same image (the docstring has no Bad example)",
    "NPU202": "a build workflow and the workflow that pulls: " + _CROSS,
    "NPU203": "the build workflow and a doc naming its tags: " + _CROSS,
    "NPU204": "the published-tags table: " + _CROSS,
    "NPU205": "the A2 and the A3 build workflows: " + _CROSS,
    "NPU206": "a build step and the step reading its digest, elided with `...`",
    "NPU208": "the Dockerfile behind the image the job runs in: " + _CROSS,
    "NPU210": "the tree the paths filter names: " + _CROSS,
    "NPU211": "two alternative jobs in one fragment (a retired label, an A3 image on an A2 runner)",
    "NPU305": "a Dockerfile name and base image of the other device: the fragment names them in prose",
    "NPU307": "the base image named in the heading (`cann:8.3.rc1-910b-…`), elided",
    "NPU308": "the vllm-ascend release the image installs: " + _CROSS,
    "NPU310": "the A2/A3 twin Dockerfiles and a change to one of them",
    "NPU401": "the index of functions with CUDA defaults: " + _CROSS,
    "NPU402": "a change that removes a workaround",
    "NPU501": "an invisible character, written `<U+200B>` in the docstring",
    "NPU502": "the files the links point to: " + _CROSS,
    "NPU503": "the Dockerfiles the version table links to: " + _CROSS,
}


def _examples(doc: str, kind: str) -> list[str]:
    """The indented blocks under `Bad:` (or `Good:`) lines that end with the colon."""
    out = []
    lines = doc.splitlines()
    for i, line in enumerate(lines):
        if re.match(rf"{kind}\b[^\n]*:\s*$", line):
            block = []
            for nxt in lines[i + 1 :]:
                if nxt.strip() and not nxt.startswith("    "):
                    break
                block.append(nxt)
            out.append(textwrap.dedent("\n".join(block)).strip("\n"))
    return out


def _run(rid: str, example: str) -> list[str]:
    scaffold = SCAFFOLDS[rid]
    body = textwrap.indent(example, scaffold.indent)
    report = audit({scaffold.path: scaffold.template.format(example=body), **dict(scaffold.others)})
    assert report.errors == []
    return [f"{f.line}: {f.message}" for f in report.findings if f.rule == rid]


@pytest.mark.parametrize("rid", sorted(SCAFFOLDS))
def test_the_bad_example_fires(rid: str) -> None:
    bad = _examples(all_rules()[rid].doc(), "Bad")
    assert bad, f"{rid} has no Bad: example"
    for example in bad:
        assert _run(rid, example), f"{rid}'s Bad example gives no finding:\n{example}"


@pytest.mark.parametrize("rid", sorted(SCAFFOLDS))
def test_the_good_example_is_silent(rid: str) -> None:
    good = _examples(all_rules()[rid].doc(), "Good")
    assert good, f"{rid} has no Good: example"
    for example in good:
        assert _run(rid, example) == [], f"{rid}'s Good example gives findings:\n{example}"


def test_every_rule_is_run_or_says_why_not() -> None:
    assert set(SCAFFOLDS) | set(NOT_RUN) == set(all_rules())
    assert not set(SCAFFOLDS) & set(NOT_RUN)
