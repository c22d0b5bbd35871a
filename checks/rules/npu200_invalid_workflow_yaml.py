"""NPU200: an Ascend workflow (or Ascend image build workflow) is not valid YAML, repeats a key, or is YAML that
GitHub still refuses (a step without `run`/`uses`, a key no job or step has, an unclosed `${{`), or writes an
expression without its `$`."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from npu_review.checks import lazyre
from npu_review.checks.analysis.images import grammar
from npu_review.checks.analysis.workflows import workflow_doc
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import ASCEND_WORKFLOW, GITHUB, WORKFLOW, workflow_host
from npu_review.checks.model import Severity
from npu_review.checks.parsers.gha.workflow import JOB_KEYS, STEP_KEYS, nested_job
from npu_review.checks.parsers.yamlmarks import Node
from npu_review.checks.rule import Hit, Rule

# A context read written without its `$`: `'{{ secrets.HF_TOKEN }}'` is the text itself, never the secret.
_NO_DOLLAR = lazyre.compile(
    r"(?<![$\w{])\{\{\s*(?:secrets|github|atomgit|inputs|matrix|env|vars|steps|needs|job|jobs|runner|strategy)\.[\w.\[\]'\"-]+"
    r"[^{}\n]*\}\}"
)


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

    YAML that parses can still be a workflow GitHub refuses, and the same holds then: a step with neither `run:`
    nor `uses:` (a `run: |` line lost, so the command became part of the step's name), a key that no job has
    (a job indented under the previous one by mistake becomes an unknown key of it) or no step has, and an
    expression opened with `${{` and never closed. An expression written without its `$`
    (`HF_TOKEN: '{{ secrets.HF_TOKEN }}'`) is accepted but never expands: the job gets the braces as text.

    Bad:
        jobs:
          e2e_ascend:
            runs-on: linux-aarch64-a2b3-8
            steps:
              - name: Check final pip list
                pip3 list                      # the `run: |` line is missing
              - name: Run tests
                env:
                  HF_TOKEN: '{{ secrets.HF_TOKEN }}'
                run: pytest -sv tests

    Fix: correct the line the message names (`python -c "import yaml,sys; yaml.safe_load(open(sys.argv[1]))" FILE`
    reproduces a YAML error; actionlint reports the structural ones); keep one of the duplicated keys; write
    expressions as `${{ ... }}`.
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
        host = workflow_host(src.path) or GITHUB
        forge = host.name
        if doc.error is not None:
            yield Hit(
                src.path,
                min(max(doc.error.line, 1), max(len(src.lines), 1)),
                f"{forge} cannot load this workflow: {doc.error.message}.",
            )
            return
        if doc.root is None:
            yield Hit(src.path, 1, f"The workflow file is empty; {forge} refuses it.")
            return
        if not doc.root.is_map:
            yield Hit(src.path, doc.root.line, "The top level of a workflow must be a mapping (`on:`, `jobs:`).")
            return
        for dup in doc.duplicates:
            yield Hit(
                src.path,
                dup.line,
                f"Key `{dup.key}` is already defined on line {dup.first_line} of the same mapping; "
                f"{forge} refuses a workflow with a duplicate key.",
            )
        if host is GITHUB:
            # GitCode's jobs and steps have keys of their own (`select:`, `identifier:` in hicann/*'s workflows),
            # and no complete list of them is known here.
            yield from _structure(src, doc.root)
        yield from _expressions(src, forge)


def _structure(src: SourceFile, root: Node) -> Iterator[Hit]:
    """Jobs and steps GitHub refuses although the YAML parses."""
    jobs = root.get("jobs")
    for job_id, _, job in jobs.entries() if jobs is not None and jobs.is_map else ():
        if not job.is_map:
            continue
        for key, knode, value in job.entries():
            if key in JOB_KEYS:
                continue
            nested = nested_job(value)
            why = (
                f"it looks like a job indented under `{job_id}` by mistake: move it out to the level of the other jobs"
                if nested
                else "check its spelling and indentation"
            )
            yield Hit(
                src.path,
                knode.line,
                f"`{key}` is not a key a job can have (job `{job_id}`): GitHub refuses the whole workflow as "
                f"invalid, so none of its jobs runs; {why}.",
            )
        steps = job.get("steps")
        for step in steps.items if steps is not None and steps.is_seq else ():
            if not step.is_map:
                continue
            keys = [(k, kn) for k, kn, _ in step.entries()]
            for key, knode in keys:
                if key not in STEP_KEYS:
                    yield Hit(
                        src.path,
                        knode.line,
                        f"`{key}` is not a key a step can have (job `{job_id}`): GitHub refuses the whole workflow "
                        "as invalid, so none of its jobs runs; check its spelling and indentation.",
                    )
            if step.get("run") is None and step.get("uses") is None:
                name = step.get("name")
                hint = ""
                if name is not None and name.is_scalar and name.end_line > name.line:
                    hint = (
                        f" The lines under `name:` are read as part of the name (`{name.value}`): a `run: |` line "
                        "is missing above the command."
                    )
                yield Hit(
                    src.path,
                    step.line,
                    f"This step of job `{job_id}` has neither `run:` nor `uses:`: GitHub refuses the whole workflow "
                    f"as invalid, so none of its jobs runs.{hint}",
                    end_line=name.end_line if name is not None else None,
                )


def _expressions(src: SourceFile, forge: str) -> Iterator[Hit]:
    """`${{` never closed, and context reads written without `$` (`{{ secrets.X }}`), outside comments."""
    if "{{" not in src.text:
        return
    for n, line in enumerate(src.lines, start=1):
        if "{{" not in line:
            continue
        code = _without_comment(line)
        start = code.find("${{")
        while start != -1:
            close = code.find("}}", start + 3)
            if close == -1:
                if not _continues(src, n):
                    yield Hit(
                        src.path,
                        n,
                        f"This `${{{{` is never closed with `}}}}`: {forge} refuses the whole workflow as invalid, "
                        "so none of its jobs runs.",
                    )
                break
            start = code.find("${{", close + 2)
        m = _NO_DOLLAR.search(code)
        if m is not None:
            written = m.group(0)
            # Unquoted after a key (`KEY: {{ x }}`), YAML even reads the braces as a mapping instead of a string.
            bare = re.search(r"(?:^|:|-)\s*$", code[: m.start()]) is not None
            # A mapping where GitHub expects text: "The workflow is not valid ... A mapping was not expected".
            consequence = (
                f"unquoted, YAML reads the braces as a mapping where {forge} expects text, so {forge} refuses the "
                'workflow file ("A mapping was not expected") and none of its jobs runs'
                if bare
                else f"{forge} never evaluates it, so the job does not get the value"
            )
            yield Hit(
                src.path,
                n,
                f"`{written}` lacks the `$` of an expression: {consequence}. Write `${written}`.",
                suggestion=line.replace(written, "$" + written, 1) if line.count(written) == 1 else None,
            )


def _without_comment(line: str) -> str:
    """The line without a YAML comment (a `#` at the start or after a blank, outside quotes)."""
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i]
    return line


def _continues(src: SourceFile, n: int) -> bool:
    """An expression may go on over the next lines (`${{` at the end of a folded `>-` value): its `}}` follows
    within a few lines, or anywhere in the rest of the same YAML value: the lines indented deeper than the key the
    value starts after (a plain scalar's continuation lines, which YAML folds into one; a `fromJSON(` of 17 lines,
    shirwy/vllm-ascend-910a's model matrix; sweep-r34, judged false), or, for a line of a block scalar, as deep."""
    if any("}}" in src.line(k) for k in range(n + 1, min(n + 12, len(src.lines)) + 1)):
        return True
    first = src.line(n)
    indent = len(first) - len(first.lstrip())
    starts_value = re.match(r"[ \t]*(?:-[ \t]+)?[\w.-]+:[ \t]", first) is not None
    for k in range(n + 1, len(src.lines) + 1):
        text = src.line(k)
        if not text.strip():
            continue
        depth = len(text) - len(text.lstrip())
        if depth < indent or (starts_value and depth == indent):
            return False
        if "}}" in text:
            return True
    return False
