"""NPU203 image-tag-component-naming: its fixture cases (tests/fixtures/NPU203/), and what they cannot say."""

from __future__ import annotations

import textwrap

from npu_review.checks import engine
from npu_review.checks.model import ChangeSet, MemoryTree
from tests.rules.support import (
    fixture_tests,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU203")


def test_npu203_suggests_torch_npu() -> None:
    build_wf = textwrap.dedent(
        """\
        name: docker-build-ascend-a2
        on: workflow_dispatch
        jobs:
          merge:
            runs-on: ubuntu-latest
            steps:
              - env:
                  IMAGE: quay.io/ascend/verl
                run: |
                  docker buildx imagetools create \\
                    -t "$IMAGE:v0.8.0-cann9.0.0-torch2.9.0-910b-ubuntu22.04-py3.11-vllm" \\
                    $DIGESTS
        """
    )
    report = engine.run(
        ChangeSet(head=MemoryTree({".github/workflows/docker-build-ascend-a2.yml": build_wf}), audit=True)
    )
    found = [f for f in report.findings if f.rule == "NPU203"]
    assert [(f.line, f.suggestion) for f in found] == [
        (11, '            -t "$IMAGE:v0.8.0-cann9.0.0-torch_npu2.9.0-910b-ubuntu22.04-py3.11-vllm" \\')
    ]
