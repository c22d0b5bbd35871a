"""Shell scripts as a graph: which repository script a `bash x.sh` / `source x.sh` names, and what the scripts
that run another one define before the call (so a variable a caller exports is not "undefined" in the callee)."""

from __future__ import annotations

import re

from npu_review.checks.context import Context
from npu_review.checks.kinds import SHELL
from npu_review.checks.parsers.shell import View

# Programs that run or source another script; the sourcing ones share every variable with it.
RUNNERS = frozenset({"bash", "sh", "source", "."})
SOURCERS = frozenset({"source", "."})


def resolve_script(ctx: Context, here: str, argument: str) -> str | None:
    """The repository path a `source x.sh` / `bash x.sh` argument names, or None when it cannot be told.

    Relative paths are tried from the repository root and from the script's folder; a leading
    `$(dirname "$0")/`, `${SCRIPT_DIR}/` or similar counts as the script's folder when the rest is literal.
    """
    arg = argument.strip("\"'")
    folder = here.rsplit("/", 1)[0] if "/" in here else ""
    candidates: list[str] = []
    if "$" in arg or "`" in arg:
        m = re.match(r"\A(?:\$\([^)]*\)|\$\{[A-Za-z_]\w*\}|\$[A-Za-z_]\w*)[\"']?/(?P<rest>[^$`]+)\Z", arg)
        if not m:
            return None
        rest = m.group("rest").strip("\"'")
        candidates = [f"{folder}/{rest}" if folder else rest]
    elif arg.startswith("/"):
        return None
    else:
        candidates = [arg, f"{folder}/{arg}" if folder else arg]
    tree = ctx.changeset.head
    for cand in candidates:
        norm = _normalise(cand)
        if norm and tree.exists(norm):
            return norm
    return None


def _normalise(path: str) -> str | None:
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
            continue
        parts.append(part)
    return "/".join(parts)


def _expand_simple(view: View, argument: str, at: int) -> str | None:
    """`$SCRIPT` / `"${SCRIPT}"` as the variable holds it there; other arguments as written (quotes off)."""
    arg = argument.strip("\"'")
    m = re.fullmatch(r"\$\{?([A-Za-z_]\w*)\}?", arg)
    if not m:
        return arg
    found = view.variable(m.group(1), at)
    return found.value.strip("\"'") if found is not None and isinstance(found.value, str) else None


def caller_exports(ctx: Context) -> dict[str, set[str]]:
    """For each repository script that another one runs (`bash x.sh`, `source x.sh`): the names the
    callers define before the call (a run script inherits exported ones; a sourced one sees all)."""

    def build() -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for path in ctx.paths_of_kind(SHELL):
            src = ctx.source(path)
            # Only a call whose argument ends in .sh/.bash counts, and that text (or the literal value of the
            # variable it names) is in the script: a script without it runs nothing here, so skip its views.
            if src is None or (".sh" not in src.text and ".bash" not in src.text):
                continue
            script = ctx.shell(src)
            if script.error is not None:
                continue
            view = script.view(False, ctx.facts.launchers)
            for call in view.calls:
                if call.program not in RUNNERS:
                    continue
                argument = _expand_simple(view, call.argument, call.index)
                if argument is None or not argument.endswith((".sh", ".bash")):
                    continue
                target = resolve_script(ctx, path, argument)
                if target is None or target == path:
                    continue
                sourced = call.program in SOURCERS
                names = {
                    a.name
                    for a in view.assignments
                    if a.index < call.index and (sourced or a.exported or a.kind == "export")
                }
                out.setdefault(target, set()).update(names)
        return out

    return ctx.memo(("caller-exports", "head", ""), build)
