"""NPU209: a `run:` step exports a variable that only later steps use; each step runs in its own shell."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from npu_review.checks import lazyre
from npu_review.checks.analysis.device import ascend_jobs
from npu_review.checks.analysis.workflows import run_script
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import ASCEND_WORKFLOW, GITHUB, WorkflowHost, workflow_host
from npu_review.checks.model import Severity
from npu_review.checks.parsers import shell
from npu_review.checks.parsers.gha.workflow import Job, Step, Workflow
from npu_review.checks.rule import Hit, Rule

_EXPORT_LINE = lazyre.compile(r"(?P<indent>\s*)export\s+(?P<name>[A-Za-z_]\w*)=(?P<value>\S.*?)\s*\Z")


def _use(name: str) -> re.Pattern[str]:
    return re.compile(r"\$\{?" + re.escape(name) + r"(?![\w])|\bprintenv\s+" + re.escape(name) + r"\b")


def _env_expr(name: str) -> re.Pattern[str]:
    return re.compile(r"\$\{\{[^}]*\benv\." + re.escape(name) + r"\b")


class ExportNotPersisted(Rule):
    """A `run:` step exports a variable and does not use it, while a later step of the job reads it.

    Why: every step of a GitHub Actions job runs in a new shell, so `export X=...` ends with its step. The later
    step sees `$X` empty (or `${{ env.X }}` empty) and runs with a default: a checkpoint path of `/`, a
    missing `PYTHONPATH` entry, the wrong `HCCL_*` setting. Values meant for later steps go to `$GITHUB_ENV`.

    Not reported: an export that the same step uses after it (`export X=1` then `python train.py` reading
    `$X`), variables the runner or image provides anyway (`PATH`, `HOME`, `LD_LIBRARY_PATH`, `GITHUB_*`), and
    later steps that set the variable themselves (`env:`, an assignment, `source`) before using it.

    Bad:
        - name: Set checkpoint dir
          run: |
            export CKPT_DIR=$HOME/ckpts/qwen3_06b
        - name: Train
          run: bash tests/special_npu/run_qwen3_06b_ppo.sh trainer.default_local_dir=$CKPT_DIR

    Good:
        - name: Set checkpoint dir
          run: |
            echo "CKPT_DIR=$HOME/ckpts/qwen3_06b" >> "$GITHUB_ENV"

    Fix: `echo "X=value" >> "$GITHUB_ENV"` (a suggestion is attached when the export is the step's last
    command), or set it in the job's `env:`.
    """

    id = "NPU209"
    name = "export-not-persisted"
    severity = Severity.WARNING
    title = "Exported variable does not reach the later steps that use it"
    kinds = frozenset({ASCEND_WORKFLOW})  # GPU workflows are not this App's business

    def check_job(self, job: Job, wf: Workflow, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        host = workflow_host(src.path)
        if host is None:
            return
        npu_jobs = ascend_jobs(ctx, src.path)
        if npu_jobs is not None and job.id not in npu_jobs:
            return  # a CPU or GPU job of a workflow that also has NPU jobs
        section = ctx.facts.env_persistence
        ambient, prefixes = set(section.ambient), section.ambient_prefixes
        persisted = _persisted(job, host)
        defined = set(wf.env) | set(job.env) | persisted
        for step in job.steps:
            if step.run is None:
                continue
            for name, line, last in _unused_exports(ctx, step):
                if name in ambient or name.startswith(prefixes) or name in defined:
                    continue
                uses = list(_later_uses(ctx, job, step, name))
                if not uses:
                    continue
                yield self._hit(src, host, name, line, last, uses)

    def _hit(self, src: SourceFile, host: WorkflowHost, name: str, line: int, last: bool, uses: list[int]) -> Hit:
        shown = ", ".join(str(n) for n in uses[:5]) + (f" and {len(uses) - 5} more" if len(uses) > 5 else "")
        suggestion = _suggest(src.line(line), host) if last else None
        where = "it is the step's last command" if last else "the step does not use it after the export"
        return Hit(
            src.path,
            line,
            f"`export {name}=...` lives only until the end of its step ({where}); the later step(s) reading "
            f"`${name}` (line {shown}) see it empty. Write it to the job environment: "
            f'`echo "{name}=..." >> "${host.env_file}"`.',
            suggestion=suggestion,
        )


def _unused_exports(ctx: Context, step: Step) -> Iterator[tuple[str, int, bool]]:
    """(name, physical line, is-last-command) of each `export X=...` not used after it in the same block."""
    assert step.run is not None
    lines = step.run.text_lines()
    if not lines:
        return
    script = run_script(ctx, "\n".join(t for _, t in lines) + "\n")
    if script.error is not None:
        return
    statements = list(script.statements)
    last_line = max((st.line for st in statements), default=0)
    for a in script.assignments:
        if a.kind != "export" or a.raw is None or a.arms:
            continue  # in an if/case/loop/function: when it runs is not known
        use = _use(a.name)
        later = "\n".join(t for n, (_, t) in enumerate(lines, start=1) if n > a.line)
        same_line = lines[a.line - 1][1] if 1 <= a.line <= len(lines) else ""
        after_on_line = same_line.split(a.name + "=", 1)[-1]
        if use.search(later) or (re.search(r"[;&|]", after_on_line) and use.search(after_on_line)):
            continue
        yield a.name, lines[a.line - 1][0], a.line >= last_line and _only_statement_on(a.line, statements)


def _only_statement_on(line: int, statements: list[shell.Statement]) -> bool:
    return sum(1 for st in statements if st.line == line) == 1


def _persisted(job: Job, host: WorkflowHost) -> set[str]:
    """Names any step writes to $GITHUB_ENV (GitCode's $ATOMGIT_ENV: the host's env file; then later steps have
    them)."""
    out: set[str] = set()
    files = {"GITHUB_ENV", host.env_file}
    for step in job.steps:
        if step.run is None or not any(f in step.run.value for f in files):
            continue
        for f in files:
            for m in re.finditer(rf"([A-Za-z_]\w*)=[^\n]*{f}", step.run.value):
                out.add(m.group(1))
    return out


def _later_uses(ctx: Context, job: Job, step: Step, name: str) -> Iterator[int]:
    """Lines of later steps that read `name` before anything in that step could have set it."""
    use = _use(name)
    expr = _env_expr(name)
    for later in job.steps:
        if later.index <= step.index or name in later.env:
            continue
        for _, node in later.node.walk():
            if not node.is_scalar:
                continue
            if node is later.run:
                line = _first_unset_use(ctx, later, name, use)
                if line is not None:
                    yield line
                    break
            elif expr.search(node.value):
                yield node.line
                break


def _first_unset_use(ctx: Context, step: Step, name: str, use: re.Pattern[str]) -> int | None:
    assert step.run is not None
    lines = step.run.text_lines()
    script = run_script(ctx, "\n".join(t for _, t in lines) + "\n")
    if script.error is not None:
        return None
    set_at = min((a.line for a in script.assignments if a.name == name), default=None)
    sourced = [st.line for st in script.statements if st.words and st.words[0].raw in ("source", ".")]
    for n, (phys, text) in enumerate(lines, start=1):
        if text.lstrip().startswith("#"):
            continue
        if (set_at is not None and n >= set_at) or any(s <= n for s in sourced):
            return None
        if use.search(text) or _env_expr(name).search(text):
            return phys
    return None


def _suggest(text: str, host: WorkflowHost = GITHUB) -> str | None:
    """`export X=value` -> `echo "X=value" >> "$GITHUB_ENV"` (the host's env file) when the value's quoting allows
    an exact rewrite."""
    m = _EXPORT_LINE.match(text)
    if m is None:
        return None
    value = m.group("value")
    name = m.group("name")
    if len(value) >= 2 and value[0] == value[-1] == '"' and '"' not in value[1:-1].replace('\\"', ""):
        body = f'"{name}={value[1:-1]}"'
    elif len(value) >= 2 and value[0] == value[-1] == "'" and "'" not in value[1:-1]:
        body = f"'{name}={value[1:-1]}'"
    elif re.fullmatch(r"[^\s'\"`;&|<>()#\\~]+", value) or re.fullmatch(r"~/[^\s'\"`;&|<>()#\\~:]*", value):
        body = f'"{name}={"$HOME" + value[1:] if value.startswith("~") else value}"'
    else:
        return None
    return f'{m.group("indent")}echo {body} >> "${host.env_file}"'
