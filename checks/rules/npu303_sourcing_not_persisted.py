"""NPU303: a RUN ends with `source …/set_env.sh` or `export X=…`, whose effect dies with that RUN."""

from __future__ import annotations

from collections.abc import Iterable

from npu_review.checks import lazyre
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import ASCEND_DOCKERFILE
from npu_review.checks.model import Severity
from npu_review.checks.parsers.dockerfile import Command, Dockerfile, Instruction
from npu_review.checks.rule import Hit, Rule

# Scripts whose only job is to set environment variables (sourcing anything else may have side effects).
_ENV_SCRIPT = lazyre.compile(
    r"(?:.*[_-])?(?:set_?env|setenv|env|vars)\.(?:sh|bash)|activate|\.bashrc|\.profile|conda\.sh"
)
# Commands that may follow the last real step without changing what the sourcing could have been for.
_CLEANUP_NAMES = frozenset({"rm", "true", ":", "fi", "done", "esac", "}", ")", "cd", "ls", "pwd", "printenv", "sync"})
_CLEANUP_SUBCOMMANDS = {
    "apt-get": {"clean", "autoclean", "autoremove"},
    "apt": {"clean", "autoclean", "autoremove"},
    "yum": {"clean"},
    "dnf": {"clean"},
    "conda": {"clean"},
    "pip": {"cache", "list", "freeze"},
    "pip3": {"cache", "list", "freeze"},
}


class SourcingNotPersisted(Rule):
    """A RUN sources an environment script (or exports a variable) as its last step.

    Why: every RUN starts a fresh shell. Variables that `source /usr/local/Ascend/ascend-toolkit/set_env.sh`
    or `export X=…` set live only until that RUN ends, so when nothing after them in the same RUN uses them
    they do nothing, and the next RUN (the `pip install` that compiles against CANN) does not see them.
    Trailing cleanup (`rm -rf`, `pip cache purge`, `apt-get clean`, `fi`, a plain `echo`) does not count as use.

    Sourcing set_env.sh *before* the command that needs it, inside the same RUN, is the correct pattern and
    is not reported. A trailing `source` is harmless cruft when a later RUN of the stage sources the script
    again (the RUN that needs CANN): then it is a notice, not a warning. (A RUN that needs the CANN environment
    without sourcing it is not checked: the CANN base images already set part of it with ENV, which this rule
    cannot see.) Environment scripts sourced last in several RUNs of a change are one mistake: one comment, the
    other RUNs listed in it.

    Bad:
        RUN bash Ascend-cann-toolkit_9.1.0_linux-aarch64.run --quiet --install && \\
            source /usr/local/Ascend/ascend-toolkit/set_env.sh && \\
            rm -rf /tmp/*

    Good:
        RUN source /usr/local/Ascend/ascend-toolkit/set_env.sh && \\
            source /usr/local/Ascend/nnal/atb/set_env.sh && \\
            pip install -v -e vllm-ascend --no-build-isolation

    Fix: source the script at the start of each RUN that needs it, or persist the variables with `ENV`.
    """

    id = "NPU303"
    name = "sourcing-not-persisted"
    severity = Severity.WARNING
    title = "Environment sourced or exported at the end of a RUN is lost"
    kinds = frozenset({ASCEND_DOCKERFILE})

    def check_dockerfile(self, df: Dockerfile, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        runs = list(df.of("RUN"))
        for i, instr in enumerate(runs):
            if instr.json_args is not None and not instr.commands:
                continue
            last = _last_effective(instr.commands)
            if last is None:
                continue
            what = _env_setting(last)
            if what is None:
                continue
            verb = "Export" if what.startswith("export") else "Source it"
            message = (
                f"`{what}` is the last step of this RUN: the variables it sets end with the RUN and reach "
                f"neither a later command nor the next instruction. {verb} before the command that needs it "
                "in the same RUN, or persist the values with ENV."
            )
            again = _resourced(df, runs[i + 1 :], instr, last) if not what.startswith("export") else None
            if again is not None:
                message = (
                    f"`{what}` is the last step of this RUN, so it sets nothing that lasts; harmless here: the RUN on "
                    f"line {again} sources the environment again before it needs it. The trailing `source` can go."
                )
            yield Hit(
                src.path,
                last.words[last.start].line,  # the `source`/`export` word, not a `then` before it
                message,
                severity=Severity.NOTICE if again is not None else None,
                # One mistake however many scripts it sources (FlagPerf's image sourced the toolkit's, NNAL's and
                # the toolbox's set_env.sh each in a RUN of its own): one comment, the other RUNs its places.
                cause=None if what.startswith("export") or again is not None else "an environment script sourced last",
            )


def _family(script: str) -> str:
    """Which environment a set_env.sh sets up: NNAL (`nnal/atb/set_env.sh`) or the CANN toolkit (`cann/`,
    `ascend-toolkit/`, the same install under two names)."""
    return "nnal" if "nnal" in script else "toolkit"


def _resourced(df: Dockerfile, later: list[Instruction], instr: Instruction, cmd: Command) -> int | None:
    """The line of a later RUN of the same stage that sources the same environment again before using it."""
    stage_breaks = [f.line for f in df.of("FROM") if f.line > instr.line]
    limit = stage_breaks[0] if stage_breaks else None
    family = _family(cmd.argv[1])
    for run in later:
        if limit is not None and run.line > limit:
            return None
        last = _last_effective(run.commands)
        for other in run.commands:
            if other is last:
                break  # a source that is itself the last step is no use either
            if (
                _env_setting(other) is not None
                and other.argv[0] in ("source", ".")
                and _family(other.argv[1]) == family
            ):
                return run.line
    return None


def _last_effective(commands: tuple[Command, ...]) -> Command | None:
    for cmd in reversed(commands):
        if cmd.in_heredoc != commands[-1].in_heredoc:
            return None  # mixed first line and heredoc script: order is not what it looks like
        if not _is_cleanup(cmd):
            return cmd
    return None


def _is_cleanup(cmd: Command) -> bool:
    argv = cmd.argv
    if not argv:
        return not cmd.assignments()  # a bare `then`/`do`
    prog = argv[0].rsplit("/", 1)[-1]
    if prog in ("echo", "printf"):
        return not cmd.redirects  # `echo … >> ~/.bashrc` does persist something
    if prog in _CLEANUP_NAMES:
        return True
    sub = _CLEANUP_SUBCOMMANDS.get(prog)
    return sub is not None and len(argv) > 1 and argv[1] in sub


def _env_setting(cmd: Command) -> str | None:
    argv = cmd.argv
    if not argv:
        return None
    if argv[0] in ("source", ".") and len(argv) >= 2:
        script = argv[1].rsplit("/", 1)[-1]
        if _ENV_SCRIPT.fullmatch(script):
            return f"{argv[0]} {argv[1]}"
        return None
    if argv[0] == "export" and len(argv) >= 2 and all("=" in a for a in argv[1:]):
        return "export " + " ".join(argv[1:])
    return None
