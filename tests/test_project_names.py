"""No message names a project the reviewed files do not name themselves (issue 10, deliverable 5).

A finding's message and suggestion may mention what the files under review hold (a script that launches
`verl.trainer.main_ppo` may be told about its `actor_rollout_ref.*` keys, a Dockerfile that clones vllm-ascend
about vllm-ascend's releases) and dependency packages (torch_npu, vllm-ascend's build switches), but never a
project's name, owner, image or pull request that comes only from npu-review's own facts: verl's owner in a
fork guard, verl's doc paths, `actor_rollout_ref.` on a script that never uses it. Checked on every fixture
case whose layout is not verl's (verl's own profile may name verl's pull requests: it is the project there),
with the profile detection picks.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from npu_review.checks import facts
from tests.fixture_support import all_cases, load_case, run_case

# Names of projects, their owners and images, their module paths, and pull-request numbers.
_PROJECT_NAMES = re.compile(
    r"verl-project|volcengine|vllm-project|actor_rollout_ref|quay\.io/ascend/verl|\bverl(?:\.[a-z_]+)*\b"
    r"|\bverl/|(?<![\w&])#\d{3,5}\b|ascend_tutorial|perf_tuning_on_ascend|npu_advance_features|faq\.rst",
    re.IGNORECASE,
)


def _not_verl(folder: Path) -> bool:
    case = load_case(folder)
    return facts.detect(case.head.keys()) != "verl" and "profile:" not in (case.config_text or "")


_CASES = [p for p in all_cases() if _not_verl(p)]


def test_most_layouts_are_checked() -> None:
    assert len(_CASES) >= 80  # the fixtures of other layouts than verl's (86 when written)


@pytest.mark.parametrize("folder", _CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_messages_name_only_what_the_reviewed_files_name(folder: Path) -> None:
    case = load_case(folder)
    corpus = "\n".join(t for t in (*case.head.values(), *(case.base or {}).values()) if t).lower()
    stray = [
        f"{f.rule} {f.path}:{f.line}: {m.group(0)!r} in {text!r}"
        for f in run_case(case).findings
        for text in (f.message, f.suggestion or "")
        for m in _PROJECT_NAMES.finditer(text)
        if m.group(0).lower() not in corpus
    ]
    assert stray == []


def test_the_pattern_catches_what_it_is_for() -> None:
    # The test above can fail: each of these names is caught.
    for text in (
        "guard it with `github.repository_owner == 'verl-project'`",
        "see verl's docs/ascend_tutorial",
        "set `actor_rollout_ref.rollout.enforce_eager=True`",
        "the HCCL engine registers as nccl (#5473)",
        "pull quay.io/ascend/verl:latest",
        "in verl.utils.device",
    ):
        assert _PROJECT_NAMES.search(text), text
    for text in ("torch_npu 2.9.0", "vllm-ascend v0.13.0", "VLLM_ASCEND_TASK_QUEUE_ENABLE", "`a && b`", "line 12"):
        assert not _PROJECT_NAMES.search(text), text
