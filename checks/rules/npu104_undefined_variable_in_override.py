"""NPU104: a Hydra override of an NPU launch script uses a shell variable that nothing defines."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from npu_review.checks.analysis.device import npu_reading
from npu_review.checks.analysis.scripts import caller_exports, defined_names, unguarded_refs
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import NPU_SCRIPT, SHELL
from npu_review.checks.messages import shorten
from npu_review.checks.model import Severity
from npu_review.checks.parsers.shell import Override, View
from npu_review.checks.rule import Hit, Rule


class UndefinedVariableInOverride(Rule):
    """A Hydra override in an NPU launch script uses a `$VAR` that the script never sets.

    Why: bash expands an unset variable to an empty string (without `set -u`), so Hydra receives
    `trainer.n_gpus_per_node=` or `data.train_files=`: a null, an empty path, or a parse error, found only
    after the job has queued for NPUs. Typos (`$MODLE_PATH`) and variables removed from the top of the
    script while an override still uses them look exactly like this.

    Bad:
        MODEL_PATH=${MODEL_PATH:-$HOME/models/Qwen3-8B}
        python3 -m verl.trainer.main_ppo actor_rollout_ref.model.path=$MODLE_PATH ...

    Good:
        MODEL_PATH=${MODEL_PATH:-$HOME/models/Qwen3-8B}
        python3 -m verl.trainer.main_ppo actor_rollout_ref.model.path=$MODEL_PATH \\
            trainer.nnodes=${NNODES:-1} data.train_files=${TRAIN_FILE:?set TRAIN_FILE} "$@"

    Fix: define the variable (an assignment, `export`, `${VAR:-default}`), or, when the caller must pass it,
    say so with `${VAR:?message}`. A variable counts as defined when the script assigns, exports, reads or
    loops over it anywhere, gives it a `${VAR:-…}`/`${VAR:=…}`/`${VAR:?…}` form anywhere, when a repository
    script it sources defines it, or when a repository script that runs it exports it. Well-known variables
    (HOME, RANK, MASTER_ADDR, NNODES, SLURM_*, ASCEND_*, positional parameters, `$@`, ...) are fine. A script
    that defines variables dynamically (`eval`, `export $(...)`, a sourced file outside the repository that
    cannot be read) is not checked.
    """

    id = "NPU104"
    name = "undefined-variable-in-override"
    severity = Severity.ERROR
    title = "A Hydra override uses a shell variable the NPU launch script never defines"
    kinds = frozenset({SHELL, NPU_SCRIPT})
    context_kinds = frozenset({SHELL, NPU_SCRIPT})  # sourced helpers and the scripts that run this one

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        script = ctx.shell(src)
        view = npu_reading(ctx, src)
        if view is None or not view.invocations:
            return
        facts = ctx.facts.shell_env
        defined = defined_names(ctx, src.path, script)
        if defined is None:
            return  # something defines variables we cannot see
        known = ctx.memo(("npu104-known", "head", ""), lambda: frozenset(facts.known))
        prefixes = facts.known_prefixes
        callers: set[str] | None = None  # what the scripts that run this one define: read only when needed
        seen: set[tuple[int, str]] = set()
        for o in _overrides(view):
            if "$" not in o.text:
                continue  # nothing is expanded (most overrides)
            for name in unguarded_refs(o.text):
                if name in defined or name in known or name.startswith(prefixes):
                    continue
                if callers is None:
                    callers = caller_exports(ctx).get(src.path, set())
                if name in callers:
                    continue
                if (o.line, name) in seen:
                    continue
                seen.add((o.line, name))
                yield Hit(
                    src.path,
                    o.line,
                    f"`${name}` in the override `{shorten(o.text, 90)}` is never set: this script does not assign, "
                    f"export, read or loop over `{name}`, gives it no `${{{name}:-default}}`, and no repository "
                    "script it sources or that runs it defines it. Bash expands it to an empty string, so Hydra "
                    f"gets `{o.key}` without that part{_missing(o, name)}. Define `{name}`, give it a default "
                    f"(`${{{name}:-...}}`), or, if the caller must pass it, write `${{{name}:?set {name}}}`.",
                    cause=f"${name}",  # one unset variable, one cause, however many overrides use it
                )


def _missing(o: Override, name: str) -> str:
    raw = (o.raw or "").strip("\"'")
    return " (an empty value)" if raw in (f"${name}", f"${{{name}}}") else ""


def _overrides(view: View) -> Iterator[Override]:
    """The overrides the view's launch commands pass (array elements once), in source order."""
    seen: set[tuple[int, str]] = set()
    for inv in view.invocations:
        for o in inv.overrides:
            if (o.line, o.text) not in seen:
                seen.add((o.line, o.text))
                yield o
