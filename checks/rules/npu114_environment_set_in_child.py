"""NPU114: environment set where it dies with its process: a script of exports run as a child, an `export`
written to ~/.bashrc in an image."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from npu_review.checks import lazyre
from npu_review.checks.analysis.scripts import (
    PYTHON_CALLER_GLOBS,
    UnitCommand,
    calls_of,
    run_unit,
    script_unit,
    unit_shell,
)
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.facts import Facts
from npu_review.checks.kinds import ASCEND_DOCKERFILE, DOCKERFILE, NPU_SCRIPT, SHELL, WORKFLOW
from npu_review.checks.model import Related, Severity
from npu_review.checks.rule import Hit, Rule

if TYPE_CHECKING:
    from npu_review.checks.parsers.dockerfile import Dockerfile, Instruction

_ENV_SCRIPT = lazyre.compile(r"(?:.*[_-])?(?:set_?env|setenv|env|vars)\.(?:sh|bash)\Z")
_CLEANUP = frozenset({"echo", "printf", "true", ":", "rm", "cd", "ls", "pwd", "printenv", "env", "exit", "sync"})
# A command that reads ~/.bashrc itself (`source ~/.bashrc && python ...`, `. /root/.bashrc`).
_SOURCES_BASHRC = lazyre.compile(r"(?:^|[;&|(]|\s)(?:source|\.)[ \t]+(?:~|\$HOME|\$\{HOME\}|/root)/\.bashrc\b")
_BASHRC = lazyre.compile(r"(?:~|\$HOME|\$\{HOME\}|/root)/\.bashrc\Z|/etc/bash\.bashrc\Z")
_EXPORT_TEXT = lazyre.compile(r"\bexport\s+([A-Za-z_]\w*)=")
# Paths through which an image's components are found (a cloned package on PYTHONPATH, a tool's bin on PATH): in
# ~/.bashrc only, the non-interactive jobs the image is built for cannot import or run them. Tuning variables
# (log levels, LD_PRELOAD of an allocator) written there are a deliberate choice for interactive use.
_PROGRAM_ENV = lazyre.compile(r"(?:PYTHONPATH|PATH)\Z")


class EnvironmentSetInChild(Rule):
    """Environment set in a process that ends before anything can use it.

    Why: a child process cannot change its parent's environment. A script whose last commands only export
    variables or source `set_env.sh`, run as `bash x.sh` (or `sh x.sh`, `./x.sh`) by a CI step or another
    script, sets them in a shell that exits right after: the caller and its later steps see none of it
    (sgl-kernel-npu exported `HCCL_BUFFSIZE` and the CANN library path at the end of scripts its workflows ran
    with `bash`, then built and tested without them). In a Dockerfile, `echo 'export X=...' >> ~/.bashrc`
    reaches only interactive bash: RUN, CMD, `docker exec` and CI container steps never read ~/.bashrc (verl
    put the Megatron-LM `PYTHONPATH` there, which its NPU CI jobs never got).

    Bad:
        # scripts/prepare_env_npu.sh (run by a workflow step as `bash scripts/prepare_env_npu.sh`)
        bash build.sh
        pip install output/deep_ep*.whl
        export HCCL_BUFFSIZE=2048

    Good:
        # scripts/prepare_env_npu.sh (it writes to $GITHUB_ENV, or a step sources it)
        bash build.sh
        pip install output/deep_ep*.whl
        echo "HCCL_BUFFSIZE=2048" >> "$GITHUB_ENV"

    Fix: `source` the script in the shell that needs the values (a CI step's own), write them to `$GITHUB_ENV`
    in CI, or set them with `ENV` in a Dockerfile.

    Not reported: a script whose callers all `source` it, a call that is the caller's last command (nothing
    runs after it), exports followed by a command of the same script, `source ... >> ~/.bashrc` lines (the CANN
    images set the CANN environment with ENV anyway), and ~/.bashrc exports of a variable an ENV sets too, of
    tuning variables (log levels, an allocator in LD_PRELOAD: a deliberate choice for interactive shells), or of
    one that later RUNs set again themselves; ~/.bashrc exports in a Dockerfile whose later RUNs `source
    ~/.bashrc` themselves (its environment file by design: those RUNs get the value); only PATH, PYTHONPATH and
    variables a later RUN or CMD reads are reported.
    """

    id = "NPU114"
    name = "environment-set-in-child"
    severity = Severity.WARNING
    title = "Environment set in a child process that exits before it is used"
    kinds = frozenset({SHELL, NPU_SCRIPT, ASCEND_DOCKERFILE})
    context_kinds = frozenset({SHELL, NPU_SCRIPT, WORKFLOW, DOCKERFILE})

    @classmethod
    def context_paths(cls, facts: Facts) -> tuple[str, ...]:
        return PYTHON_CALLER_GLOBS  # the Python build files whose `["sh", "x.sh"]` calls script_calls reads

    context_triggers = frozenset({SHELL, NPU_SCRIPT})

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if not (SHELL in src.kinds or NPU_SCRIPT in src.kinds):
            return
        if "export" not in src.text and "source" not in src.text:
            return
        unit = script_unit(ctx, src)
        if unit is None:
            return
        tail = _env_tail(list(unit_shell(unit).commands))
        if not tail:
            return
        calls = calls_of(ctx, src.path)
        if not calls or any(c.how == "source" for c in calls):
            return  # sourced somewhere: the values reach that caller
        # A shell, CI step or image that goes on after the call (a Python build script that runs it is left out:
        # what it does next with the environment cannot be told).
        children = [c for c in calls if c.followed and c.where != "python"]
        if not children:
            return
        first = tail[0]
        what = ", ".join(f"`{' '.join(w.raw for w in c.words)[:50]}`" for c in tail[:3])
        shown = children[0]
        yield Hit(
            src.path,
            first.line,
            f"This script ends by setting environment ({what}), but {shown.caller}:{shown.line} runs it as a "
            f"child process (`{shown.how} {src.path}`): the values vanish when it exits, and the commands "
            "that follow the call there do not get them. Source the script in the shell that needs them, "
            "or persist them ($GITHUB_ENV in CI, ENV in a Dockerfile).",
            end_line=tail[-1].words[-1].line,
            related=tuple(Related(c.caller, c.line, "runs it as a child") for c in children[:5]),
        )

    def check_dockerfile(self, df: Dockerfile, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if ".bashrc" not in src.text:
            return
        env_names = {p.name for i in df.of("ENV") for p in i.pairs}
        # A build argument of the same name is what later RUNs read (an ARG is in every RUN's environment):
        # then only CMD and ENTRYPOINT, which run in the container without build arguments, need the export.
        arg_names = {p.name for i in df.of("ARG") for p in i.pairs}
        runs = list(df.of("RUN", "CMD", "ENTRYPOINT"))
        for k, instr in enumerate(runs):
            if instr.keyword != "RUN" or ".bashrc" not in instr.args:
                continue
            if any(r.keyword == "RUN" and _SOURCES_BASHRC.search(r.args) for r in runs[k + 1 :]):
                continue  # the image's own later RUNs read ~/.bashrc: it is this Dockerfile's environment file
            unit = run_unit(src.path, instr)
            if unit is None:
                continue
            for name, line in _bashrc_exports(list(unit_shell(unit).commands), unit.source.text):
                later = runs[k + 1 :]
                if name in arg_names:
                    later = [r for r in later if r.keyword != "RUN"]
                if name in env_names or not _needed(name, later):
                    continue
                yield Hit(
                    src.path,
                    line,
                    f"`export {name}=...` is written to ~/.bashrc, which only interactive bash reads: later RUNs, "
                    f"CMD, `docker exec` and CI steps in this image never see `{name}`. Set it with `ENV {name}=...`.",
                )


def _env_tail(cmds: list[UnitCommand]) -> list[UnitCommand]:
    """The commands at the script's end that only set environment (exports, sourced env scripts), when there is
    one and what follows them is cleanup (`echo`, `rm`, ...)."""
    tail: list[UnitCommand] = []
    for cmd in reversed(cmds):
        argv = [w.unquoted for w in cmd.words]
        if not argv:
            continue
        prog = argv[0]
        if prog == "export" and len(argv) > 1 and all("=" in a for a in argv[1:] if not a.startswith("-")):
            tail.append(cmd)
            continue
        if prog in ("source", ".") and len(argv) > 1 and _ENV_SCRIPT.match(argv[1].rsplit("/", 1)[-1]):
            tail.append(cmd)
            continue
        if not tail and prog in _CLEANUP and not any(">" in w.raw for w in cmd.words):
            continue
        break
    return list(reversed(tail))


def _bashrc_exports(cmds: list[UnitCommand], source: str) -> Iterator[tuple[str, int]]:
    """(name, line) of each `echo "export NAME=..." >> ~/.bashrc` (the redirection's target read from the text
    after the command's last word: `>> \\` + the target on the next line counts; an echo into a conda
    environment's `activate.d/env_vars.sh` does not)."""
    for cmd in cmds:
        if cmd.name not in ("echo", "printf") or not cmd.words:
            continue
        text = " ".join(w.raw for w in cmd.words)
        m = _EXPORT_TEXT.search(text)
        if m is None:
            continue
        last = cmd.words[-1]
        after = _COMMAND_END.split(source[last.offset + len(last.raw) :], maxsplit=1)[0]
        target = _REDIRECT_TARGET.search(after)
        if target is not None and not _BASHRC.search(target.group(1)):
            continue
        yield m.group(1), cmd.line


# Where a command's text ends (the next operator), and the target of an output redirection in what precedes it.
_COMMAND_END = lazyre.compile(r"&&|\|\||;|\|")
_REDIRECT_TARGET = lazyre.compile(r">>?\s*(?:\\\n\s*)?([^\s;&|]+)")


def _needed(name: str, later: list[Instruction]) -> bool:
    """A program reads it by itself, or a later RUN/CMD uses `$NAME` without setting it first."""
    if _PROGRAM_ENV.match(name):
        return True
    use = re.compile(r"\$\{?" + re.escape(name) + r"\b")
    for instr in later:
        text = instr.args
        if re.search(rf"\b{re.escape(name)}=", text):
            return False
        if use.search(text):
            return True
    return False
