"""NPU326: a package manager that asks for confirmation (`pip uninstall`, `apt-get install`, `yum install` without
`-y`) in a Docker build or a CI job's container, where nobody answers."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import replace

from npu_review.checks import lazyre
from npu_review.checks.analysis.device import ascend_jobs
from npu_review.checks.analysis.programs import SYSTEM_MANAGERS, program_at
from npu_review.checks.analysis.scripts import PYTHON_CALLER_GLOBS, ScriptCall, ascend_step_unit, calls_of
from npu_review.checks.analysis.workflows import workflow
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.facts import Facts
from npu_review.checks.kinds import ASCEND_DOCKERFILE, ASCEND_WORKFLOW, DOCKERFILE, NPU_SCRIPT, SHELL, WORKFLOW
from npu_review.checks.model import Related, Severity
from npu_review.checks.parsers.dockerfile import Dockerfile
from npu_review.checks.parsers.gha.workflow import Job, Step, Workflow
from npu_review.checks.parsers.pipcli import pip_call
from npu_review.checks.parsers.sh import Command, Source, commands
from npu_review.checks.rule import Hit, Rule

# Per package manager: the verbs that ask, what it asks, and what it does when nobody answers.
_ASKING = {
    "apt-get": (
        frozenset({"install"}),
        "`Do you want to continue? [Y/n]`",
        "stops with `Abort.` (exit status 1)",
    ),
    "yum": (
        frozenset({"install", "groupinstall"}),
        "`Is this ok [y/N]:`",
        "exits with `Exiting on user command` (exit status 1)",
    ),
    "dnf": (
        frozenset({"install", "groupinstall"}),
        "`Is this ok [y/N]:`",
        "stops with `Operation aborted.` (exit status 1)",
    ),
}
_ASKING["apt"] = _ASKING["apt-get"]
# Saying yes to every prompt: `-y`, `--yes`, `--assume-yes`, `--assumeyes`, `y` among clustered short options
# (`-qy`); for apt also its quiet level 2 (`-qq`, `-q=2`), which implies it.
_YES = lazyre.compile(r"--yes|--assume-?yes|-[A-Za-z]*y[A-Za-z]*")
_APT_YES = lazyre.compile(r"-[A-Za-z]*q[A-Za-z]*q[A-Za-z]*|-q=[2-9]")
# A file that says yes once for all, per package manager (pip, or SYSTEM_MANAGERS' package format): pip's PIP_YES,
# apt's APT::Get::Assume-Yes (in a configuration file the image writes, or `-o`), yum's and dnf's `assumeyes` (their
# .conf, or `--setopt`).
_SAYS_YES = {
    "pip": lazyre.compile(r"PIP_YES"),
    "apt": lazyre.compile(r"(?i)APT::Get::Assume-Yes"),
    "rpm": lazyre.compile(r"(?i)\bassumeyes\s*=\s*(?:1|true|yes|on)\b"),
}


class ConfirmationPromptUnanswered(Rule):
    """A package manager that asks for confirmation runs without `-y` in an Ascend image build or an Ascend CI
    step, or in a repository script that one of them runs: `pip uninstall`, `apt-get` / `apt install`, `yum` /
    `dnf install`.

    Why: they ask before they change anything (`Proceed (Y/n)?`, `Do you want to continue? [Y/n]`,
    `Is this ok [y/N]:`). A `docker build` RUN has no terminal and a CI step's input is empty, so nobody answers:
    pip stops with `EOFError` (exit status 2) and leaves the package installed, apt-get stops with `Abort.`, yum and
    dnf exit with status 1. Under `&&` or `set -e` the Ascend image or the NPU job fails; elsewhere the step goes on
    without the change it asked for. sgl-kernel-npu's first Ascend CI ran `python3 -m pip uninstall deepep` and
    vllm-ascend's e2e jobs `pip uninstall triton`: both had to add `-y` within a day; a vllm-ascend benchmark job
    ran `apt-get install git` in the CANN container and got `-y` the next commit. apt-get asks only when it installs
    more than the packages named, which most installs do; a remove asks only when there is something to remove
    (rarely known from the file), so removes are not judged. A script gets no answer either when a CI step or a
    RUN runs it: catlass's tests/run_all_test.sh, which its CI runs, got `pip uninstall torch_catlass` and needed
    `-y` (a script is followed up to three callers deep: a step runs ci/pre_smoke.sh, which runs the script).

    Bad:
        RUN pip install torch-npu==2.8.0.post2 && \\
            pip uninstall triton && \\
            pip install triton-ascend==3.2.0

    Good:
        RUN pip install torch-npu==2.8.0.post2 && \\
            pip uninstall -y triton && \\
            pip install triton-ascend==3.2.0

    Fix: add `-y` (a suggestion does it).

    Not reported: `uv pip` (uv never asks), a command given its answers (`yes | apt-get install x`, input
    redirected), a file that says yes once for all (`PIP_YES`, apt's `APT::Get::Assume-Yes`, yum's `assumeyes`;
    for a script, also a caller's: the workflow's `env: PIP_YES`, an `export PIP_YES=1` in the script that runs
    it), apt, yum and dnf in a CI job that runs on the runner itself (GitHub's hosted runners configure apt to
    assume yes; a self-hosted runner's configuration is unknown), a script that no Ascend CI job's step and no
    Ascend Dockerfile's RUN of this repository runs (a person may run it at a terminal and answer; a CI outside the
    repository is not known), and a script whose caller gives it input (`yes | bash x.sh`, `bash x.sh < answers`).
    """

    id = "NPU326"
    name = "confirmation-prompt-unanswered"
    severity = Severity.ERROR
    title = "package manager asks for confirmation where nobody answers"
    kinds = frozenset({ASCEND_WORKFLOW, ASCEND_DOCKERFILE, SHELL, NPU_SCRIPT})
    needles = ("uninstall", "apt", "yum", "dnf")
    # Who runs a script: the call graph of script_calls (workflow steps, Dockerfile RUNs, scripts), read only when a
    # script changes.
    context_kinds = frozenset({WORKFLOW, ASCEND_WORKFLOW, SHELL, NPU_SCRIPT, DOCKERFILE, ASCEND_DOCKERFILE})
    context_triggers = frozenset({SHELL, NPU_SCRIPT})

    @classmethod
    def context_paths(cls, facts: Facts) -> tuple[str, ...]:
        return PYTHON_CALLER_GLOBS  # the Python build files whose `["bash", "x.sh"]` lists script_calls reads

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if not (SHELL in src.kinds or NPU_SCRIPT in src.kinds):
            return
        cmds = commands(Source.file(src.text))
        own = _settled(src)
        if not any(True for _ in _check(src, cmds, "", own)):
            return  # the script's own test first: who runs it is a search of every caller's text
        runner = _unattended_runner(ctx, src.path)
        if runner is None:
            return  # run by hand, or by nothing this repository holds (a person may answer)
        call, where, settled = runner
        for hit in _check(src, cmds, where, settled | own):
            yield replace(hit, related=(Related(call.caller, call.line, "runs this script"),))

    def check_step(self, step: Step, job: Job, wf: Workflow, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if step.run is None or not any(n in step.run.value for n in self.needles):
            return
        unit = ascend_step_unit(ctx, src.path, job, step)
        if unit is not None:
            # GitHub's hosted runners say yes to apt for every job (`APT::Get::Assume-Yes` in their image), and a
            # self-hosted runner's configuration is unknown: the system package managers count in a job's container.
            settled = _settled(src) | (set() if job.field("container") is not None else set(_SAYS_YES) - {"pip"})
            yield from _check(src, commands(unit.source), "this CI step", settled)

    def check_dockerfile(self, df: Dockerfile, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        settled = _settled(src)
        for instr in df.of("RUN"):
            if any(n in instr.args for n in self.needles):
                yield from _check(src, instr.commands, "`docker build`", settled)


# How far up the chain of callers a script is followed (a CI step runs ci/test.sh, which runs tests/run_all.sh).
_MAX_CALLERS_DEPTH = 3


def _unattended_runner(ctx: Context, path: str) -> tuple[ScriptCall, str, set[str]] | None:
    """The call that runs the script where nobody answers: a step of an Ascend CI job, or a RUN of an Ascend
    Dockerfile, directly or through the scripts they run (up to _MAX_CALLERS_DEPTH); with the phrase that says
    where, and the package managers settled along the way (said yes for by a caller's text, or not judged: apt,
    yum and dnf in a job on the runner itself). None when no such call is found, or when a call on the way gives the
    script its input (`yes | bash x.sh`, `bash x.sh < answers`)."""
    seen = {path}
    todo = [(path, 0, set[str]())]
    while todo:
        target, depth, settled = todo.pop(0)
        for call in calls_of(ctx, target):
            if _given_input(ctx, call):
                continue
            caller = ctx.source(call.caller)
            if caller is None:
                continue
            here = settled | _settled(caller)
            if call.where == "run":
                job_settled = _ci_job(ctx, call)
                if job_settled is not None:
                    where = f"this script, which the CI step at {call.caller}:{call.line} runs,"
                    return call, where, here | job_settled
            elif call.where == "dockerfile":
                if ctx.has_kind(call.caller, ASCEND_DOCKERFILE):
                    return call, f"this script, which `docker build` runs ({call.caller}:{call.line}),", here
            elif call.where == "script" and depth + 1 < _MAX_CALLERS_DEPTH and call.caller not in seen:
                seen.add(call.caller)
                todo.append((call.caller, depth + 1, here))
    return None


def _ci_job(ctx: Context, call: ScriptCall) -> set[str] | None:
    """The managers settled for the step's job (see check_step), when the call is in a step of an Ascend job."""
    if not ctx.has_kind(call.caller, ASCEND_WORKFLOW):
        return None
    wf = workflow(ctx, call.caller)
    if wf is None:
        return None
    job = next((j for j in wf.jobs.values() if j.node.line <= call.line <= j.node.end_line), None)
    if job is None:
        return None
    jobs = ascend_jobs(ctx, call.caller)
    if jobs is not None and job.id not in jobs:
        return None
    return set() if job.field("container") is not None else set(_SAYS_YES) - {"pip"}


def _given_input(ctx: Context, call: ScriptCall) -> bool:
    """The call's line gives the script its input: a pipe into it, or a redirection of its standard input
    (`yes | bash x.sh`, `bash x.sh < answers`, `bash x.sh <<EOF`)."""
    src = ctx.source(call.caller)
    if src is None:
        return False
    text = src.line(call.line)
    name = call.target.rsplit("/", 1)[-1]
    at = text.find(name)
    if at < 0:
        return False
    before, after = text[:at], text[at + len(name) :]
    return bool(re.search(r"(?<!\|)\|(?!\|)", before)) or bool(re.search(r"(?<![<>&0-9])<(?![(>])", after))


def _settled(src: SourceFile) -> set[str]:
    """The package managers the file says yes for once for all (see _SAYS_YES)."""
    return {manager for manager, says in _SAYS_YES.items() if says.search(src.text)}


def _check(src: SourceFile, cmds: Iterable[Command], where: str, settled: set[str]) -> Iterator[Hit]:
    """The commands that ask, unless their package manager is `settled` (said yes for, or not judged here)."""
    before: Command | None = None
    for cmd in cmds:
        piped, before = before is not None and before.op in ("|", "|&"), cmd
        if piped or any("<" in r.op for r in cmd.redirects):
            continue  # `yes | apt-get install x`, `pip uninstall x < answers`: its answers come from there
        found = _asks(cmd, settled)
        if found is None:
            continue
        said, asks, fails = found
        text = src.line(cmd.line)
        verb = said.split()[-1]
        yield Hit(
            src.path,
            cmd.line,
            f"`{said}` asks {asks}, and in {where} nobody answers: it {fails}, the change it was to make is not "
            f"made, and the build or job fails where the command's status counts. Add `-y`.",
            suggestion=text.replace(f" {verb}", f" {verb} -y", 1) if text.count(f" {verb}") == 1 else None,
            cause=f"{said} without -y",
        )


def _asks(cmd: Command, settled: set[str]) -> tuple[str, str, str] | None:
    """(the command as said, `pip uninstall`; what it asks; what it does unanswered) of a command that asks, unless
    the file says yes for its package manager once for all (`settled`)."""
    words = [w.unquoted for w in cmd.words]
    # Past `then`/`do` and `NAME=value` (cmd.start), and wrappers (`sudo -E`, `env`), which keep the prompt.
    at = cmd.start + program_at(cmd.words[cmd.start :])
    if at >= len(words):
        return None
    prog = words[at].rsplit("/", 1)[-1]
    rest = words[at + 1 :]
    if prog in _ASKING:
        verbs, asks, fails = _ASKING[prog]
        verb = next((a for a in rest if not a.startswith("-")), None)
        manager = SYSTEM_MANAGERS[prog]
        if verb not in verbs or manager in settled or any(_YES.fullmatch(a) for a in rest):
            return None
        if manager == "apt" and any(_APT_YES.fullmatch(a) for a in rest):
            return None
        if any(_SAYS_YES[manager].search(a) for a in rest):
            return None  # `-o APT::Get::Assume-Yes=true`, `--setopt=assumeyes=1`
        if manager == "apt":  # apt asks only when it does more than it was told
            asks += " when it installs more than the packages named (their dependencies)"
        return f"{prog} {verb}", asks, fails
    if "uninstall" not in rest or prog == "uv" or "pip" in settled:
        return None
    call = pip_call(cmd if at == cmd.start else Command(cmd.words[at:], cmd.op, cmd.redirects))
    if call is None or call.verb != "uninstall" or any(_YES.fullmatch(a) for a in rest):
        return None
    names = [f"`{w.unquoted}`" for _req, w in call.packages[:3]]
    names += [f"the packages of `{w.unquoted}`" for w in call.files[:1]]
    asks = f"`Proceed (Y/n)?` for {', '.join(names) or 'the packages'} when installed"
    return "pip uninstall", asks, "stops with `EOFError` (exit status 2)"
