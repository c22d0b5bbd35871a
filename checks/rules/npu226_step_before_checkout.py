"""NPU226: an Ascend job's step uses the repository's files before the job checks them out, or installs
something after the last step that could use it."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from npu_review.checks import lazyre
from npu_review.checks.analysis.device import ascend_jobs
from npu_review.checks.analysis.references import Cmd, block_cmds, is_checkout, repo_uses
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import ASCEND_WORKFLOW
from npu_review.checks.model import Severity
from npu_review.checks.parsers.gha.workflow import Job, Step, Workflow
from npu_review.checks.rule import Hit, Rule

# Commands that only fetch, unpack or install (an install step is made of these alone).
_INSTALL_HELPERS = frozenset(
    {"wget", "curl", "chmod", "tar", "unzip", "source", ".", "export", "cd", "echo", "rm", "mkdir", "ln", "set",
     "update-alternatives", "sudo", "cp", "mv", "ls", "pwd", "true", "printf", "npu-smi", "cat", "df", "du", "env"}
)  # fmt: skip
_PACKAGE_MANAGERS = frozenset({"apt-get", "apt", "yum", "dnf", "conda", "mamba", "micromamba", "zypper"})
_PIP = lazyre.compile(r"pip(?:3(?:\.\d+)?)?\Z")
_PYTHON = lazyre.compile(r"python(?:3(?:\.\d+)?)?\Z")
# Programs that run code (tests, the project, a script): a step with one of them may use what was installed.
_RUNNERS = frozenset(
    {"pytest", "py.test", "torchrun", "deepspeed", "bash", "sh", "make", "ctest", "cmake", "ninja", "vllm",
     "lm_eval", "accelerate", "msrun"}
)  # fmt: skip


# A program that runs code inside a command substitution (`$(python -c "import torch_npu")`, `` `pytest -q` ``).
_SUBSTITUTED_RUN = lazyre.compile(
    r"(?:\$\(|`)\s*(?:sudo\s+)?(?:python(?:3(?:\.\d+)?)?|" + "|".join(sorted(re.escape(r) for r in _RUNNERS)) + r")\b"
)


class StepBeforeCheckout(Rule):
    """An Ascend job's step needs the repository's files, but runs before the job's `actions/checkout`; or a step
    installs a package after every step that could use it.

    Why: a job starts in an empty workspace (on a self-hosted NPU runner, in the files an earlier run left
    behind). A step that installs the repository (`pip install -e .`, `pip install -r requirements-npu.txt`) or
    runs one of its scripts before the checkout fails there, or installs stale code from the last run: verl's
    nightly veomni job installed the repository two steps before its checkout. An install placed after the job's
    last test step serves nothing: the tests that needed it ran without it (vllm-ascend's nightly op tests
    installed triton-ascend after the pytest step that needed it).

    Bad:
        - name: Install the current repository
          run: pip install -r requirements-npu.txt && pip install -e .
        - uses: actions/checkout@v4

    Good:
        - uses: actions/checkout@v4
        - name: Install the current repository
          run: pip install -r requirements-npu.txt && pip install -e .

    Fix: move the step after the checkout; move a late install before the steps that use it.

    Silent on: steps that run in another folder (`working-directory` outside the workspace, a `cd` to an absolute
    path first: a repository copy baked into the image), jobs without a checkout of their own (they may work on
    such a copy), steps after any step that fills the workspace another way (a clone, a download), and a late
    install that a later step may still use (any step after it that runs code, inside a command substitution too:
    `v=$(python -c "import torch_npu")`).
    """

    id = "NPU226"
    name = "step-before-checkout"
    severity = Severity.WARNING
    title = "Ascend job step uses the repository before its checkout, or installs after the steps that need it"
    kinds = frozenset({ASCEND_WORKFLOW})

    def check_job(self, job: Job, wf: Workflow, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        npu = ascend_jobs(ctx, src.path)
        if npu is not None and job.id not in npu:
            return
        yield from self._before_checkout(job, wf, src, ctx)
        yield from self._late_install(job, src, ctx)

    def _before_checkout(self, job: Job, wf: Workflow, src: SourceFile, ctx: Context) -> Iterator[Hit]:
        first = next((s for s in job.steps if _fills_workspace(s)), None)
        if first is None or not is_checkout(first):
            return
        for step in job.steps[: first.index]:
            uses = repo_uses(ctx, step, job, wf)
            if not uses:
                continue
            use = uses[0]
            yield Hit(
                src.path,
                step.line,
                f"This step runs `{use.what}` (line {use.line}) before the job's checkout (line {first.line}): the "
                "workspace is still empty, or holds files an earlier run left on the runner, so the step fails "
                "or uses stale code. Move it after the checkout.",
            )

    def _late_install(self, job: Job, src: SourceFile, ctx: Context) -> Iterator[Hit]:
        kinds: list[tuple[Step, str, list[str]]] = []
        for step in job.steps:
            if step.run is None:
                local = (step.uses or "").startswith("./")
                kinds.append((step, "local-action" if local else "action", []))
                continue
            classified = _classify(block_cmds(step.run.text_lines()))
            if classified[0] != "runs" and _SUBSTITUTED_RUN.search(step.run.value):
                classified = ("runs", [])  # `v=$(python -c "import torch")`: a command inside the value runs code
            kinds.append((step, *classified))
        tests = [k for k, (_, kind, _) in enumerate(kinds) if kind == "runs"]
        if not tests:
            return
        last = tests[-1]
        after = kinds[last + 1 :]
        for k, (step, kind, what) in enumerate(after):
            if kind != "install":
                continue
            if any(later in ("other", "local-action") for _, later, _ in after[k + 1 :]):
                return  # a later step may use it
            test_step = kinds[last][0]
            yield Hit(
                src.path,
                step.line,
                f"This step installs {', '.join(f'`{w}`' for w in what[:3])} after the job's last step that runs "
                f"code (line {test_step.line}), and no later step runs anything: nothing uses what it installs. If "
                "the tests need it, move it before them.",
            )
            return


def _fills_workspace(step: Step) -> bool:
    """A step that puts files into the workspace: a checkout, a download of artifacts, a clone."""
    uses = (step.uses or "").split("@", 1)[0]
    if is_checkout(step) or "checkout" in uses or "download-artifact" in uses or "cache" in uses:
        return True
    if step.run is not None:
        text = step.run.value
        return "git clone" in text or "git init" in text or "git fetch" in text or "git worktree" in text
    return False


def _classify(cmds: list[Cmd]) -> tuple[str, list[str]]:
    """("install", what) for a step that only fetches and installs packages; ("runs", []) for one that runs code;
    ("other", []) for the rest."""
    installed: list[str] = []
    runs = False
    other = False
    for c in cmds:
        prog = c.program
        argv = c.argv
        if prog == "sudo" and len(argv) > 1:
            prog = argv[1].rsplit("/", 1)[-1]
            argv = argv[1:]
        if (
            _PIP.fullmatch(prog)
            or (prog == "uv" and argv[1:2] == ["pip"])
            or (_PYTHON.fullmatch(prog) and argv[1:3] == ["-m", "pip"])
        ):
            if "install" in argv:
                installed.extend(a for a in argv[argv.index("install") + 1 :] if not a.startswith("-"))
                continue
            other = True
            continue
        if prog in _PACKAGE_MANAGERS:
            if "install" in argv:
                installed.extend(a for a in argv[argv.index("install") + 1 :] if not a.startswith("-"))
            continue
        if prog.endswith(".run") or (prog in ("bash", "sh") and len(argv) > 1 and argv[1].endswith(".run")):
            installed.append(argv[0] if prog.endswith(".run") else argv[1])
            continue
        if prog in _INSTALL_HELPERS or not prog:
            continue
        if prog in _RUNNERS or _PYTHON.fullmatch(prog) or prog.startswith("./"):
            runs = True
        else:
            other = True
    if runs:
        return "runs", []
    if installed and not other:
        return "install", installed
    return ("other" if other else "plain"), []
