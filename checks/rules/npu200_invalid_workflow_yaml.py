"""NPU200: an Ascend workflow (or Ascend image build workflow) is not valid YAML, or repeats a key."""

from __future__ import annotations

from collections.abc import Iterable

from npu_review.checks.analysis.images import grammar
from npu_review.checks.analysis.workflows import workflow_doc
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import ASCEND_WORKFLOW, WORKFLOW
from npu_review.checks.model import Severity
from npu_review.checks.rule import Hit, Rule


class InvalidWorkflowYaml(Rule):
    """The workflow file cannot be loaded, so GitHub will not run it at all.

    Why: a YAML syntax error (a tab in the indentation, an unclosed quote or bracket, a `key: value: x` line) or a
    key written twice in the same mapping makes GitHub reject the whole workflow ("Invalid workflow file"). The
    Ascend jobs then silently stop running on PRs, or the image build stops pushing, and nobody notices until the
    nightly is stale. The other NPU2xx rules cannot read a broken file either; this rule says why.

    Bad:
        jobs:
          e2e_ascend:
            runs-on: linux-aarch64-a2b3-8
            container:
              image: swr.cn-southwest-2.myhuaweicloud.com/modelfoundry/ascend-ci/verl/verl:latest-vllm-910b-ubuntu
             options: --shm-size=16g      # indented one space less than `image:`
            runs-on: linux-aarch64-a3-16   # `runs-on` twice in one job

    Good:
        jobs:
          e2e_ascend:
            runs-on: linux-aarch64-a2b3-8
            container:
              image: swr.cn-southwest-2.myhuaweicloud.com/modelfoundry/ascend-ci/verl/verl:latest-vllm-910b-ubuntu
              options: --shm-size=16g

    Fix: correct the line the message names (`python -c "import yaml,sys; yaml.safe_load(open(sys.argv[1]))" FILE`
    reproduces the error); keep one of the duplicated keys.
    """

    id = "NPU200"
    name = "invalid-workflow-yaml"
    severity = Severity.ERROR
    title = "Ascend workflow is not valid YAML"
    kinds = frozenset({ASCEND_WORKFLOW, WORKFLOW})

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if ASCEND_WORKFLOW not in src.kinds and not any(m in src.text for m in grammar(ctx).producer_markers):
            return
        doc = workflow_doc(ctx, src.path)
        if doc is None:
            return
        if doc.error is not None:
            yield Hit(
                src.path,
                min(max(doc.error.line, 1), max(len(src.lines), 1)),
                f"GitHub cannot load this workflow: {doc.error.message}.",
            )
            return
        if doc.root is None:
            yield Hit(src.path, 1, "The workflow file is empty; GitHub refuses it.")
            return
        if not doc.root.is_map:
            yield Hit(src.path, doc.root.line, "The top level of a workflow must be a mapping (`on:`, `jobs:`).")
            return
        for dup in doc.duplicates:
            yield Hit(
                src.path,
                dup.line,
                f"Key `{dup.key}` is already defined on line {dup.first_line} of the same mapping; "
                "GitHub refuses a workflow with a duplicate key.",
            )
