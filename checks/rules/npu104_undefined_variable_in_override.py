"""NPU104: a Hydra override of an NPU launch script uses a shell variable that nothing defines."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from npu_review.checks.analysis.device import npu_reading
from npu_review.checks.analysis.scripts import SOURCERS, caller_exports, resolve_script
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import NPU_SCRIPT, SHELL
from npu_review.checks.model import Severity
from npu_review.checks.parsers.shell import Override, ShellScript, View, closing_brace
from npu_review.checks.rule import Hit, Rule

_DECLARERS = frozenset({"export", "declare", "typeset", "local", "readonly"})
_NAME = re.compile(r"[A-Za-z_]\w*\Z")
# `${NAME-x}`, `${NAME:-x}`, `=`, `?`, `+` forms: the script knows that NAME may be unset
_GUARDED = re.compile(r"\$\{([A-Za-z_]\w*):?[-=?]")
_ARITH_ASSIGN = re.compile(r"\(\(\s*([A-Za-z_]\w*)\s*(?:[-+*/%]?=|\+\+|--)")
_MAX_DEPTH = 3
_PLAIN = re.compile(r"[^'\"\\$]+")  # all but what `_unguarded_refs` looks at
_BRACED = re.compile(r"#?([A-Za-z_]\w*)(.*)\Z", re.S)  # the inside of `${...}`
_GUARD_OP = re.compile(r":?[-=?+]")
_REF = re.compile(r"[A-Za-z_]\w*")


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
        defined = _defined_names(ctx, src.path, script, 0, set())
        if defined is None:
            return  # something defines variables we cannot see
        known = ctx.memo(("npu104-known", "head", ""), lambda: frozenset(facts.known))
        prefixes = facts.known_prefixes
        callers: set[str] | None = None  # what the scripts that run this one define: read only when needed
        seen: set[tuple[int, str]] = set()
        for o in _overrides(view):
            if "$" not in o.text:
                continue  # nothing is expanded (most overrides)
            for name in _unguarded_refs(o.text):
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
                    f"`${name}` in the override `{_short(o.text)}` is never set: this script does not assign, "
                    f"export, read or loop over `{name}`, gives it no `${{{name}:-default}}`, and no repository "
                    "script it sources or that runs it defines it. Bash expands it to an empty string, so Hydra "
                    f"gets `{o.key}` without that part{_missing(o, name)}. Define `{name}`, give it a default "
                    f"(`${{{name}:-...}}`), or, if the caller must pass it, write `${{{name}:?set {name}}}`.",
                )


def _missing(o: Override, name: str) -> str:
    raw = (o.raw or "").strip("\"'")
    return " (an empty value)" if raw in (f"${name}", f"${{{name}}}") else ""


def _short(text: str, limit: int = 90) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _overrides(view: View) -> Iterator[Override]:
    """The overrides the view's launch commands pass (array elements once), in source order."""
    seen: set[tuple[int, str]] = set()
    for inv in view.invocations:
        for o in inv.overrides:
            if (o.line, o.text) not in seen:
                seen.add((o.line, o.text))
                yield o


def _unguarded_refs(word: str) -> Iterator[str]:
    """Names a shell word expands without a guard: `$X`, `${X}`, `${X/a/b}`, `${#X}`, inside `$( )` too.

    Not reported: single-quoted text (Hydra's own `${a.b}` interpolations), `\\$`, special and positional
    parameters, `${X:-…}`/`${X:=…}`/`${X:?…}`/`${X:+…}` (the operand is not looked into), `${!X}`.
    """
    if "$" not in word:
        return  # nothing is expanded (most overrides)
    i, n = 0, len(word)
    dq = False
    while i < n:
        run = _PLAIN.match(word, i)
        if run is not None:  # characters that change nothing here, stepped over in one go
            i = run.end()
            if i == n:
                return
        c = word[i]
        if c == "'" and not dq:
            j = word.find("'", i + 1)
            if j < 0:
                return
            i = j + 1
            continue
        if c == '"':
            dq = not dq
            i += 1
            continue
        if c == "\\":
            i += 2
            continue
        if c != "$":
            i += 1
            continue
        if word.startswith("$((", i):
            i += 3  # arithmetic: `$((N * 2))` reads bare names as 0 when unset; `$N` inside is still seen
            continue
        if word.startswith("$(", i):
            i += 2
            continue
        if word.startswith("${", i):
            end = closing_brace(word, i + 2)
            body = word[i + 2 : end if end >= 0 else n]
            i = end + 1 if end >= 0 else n
            m = _BRACED.match(body)
            if not m or body.startswith("!"):
                continue
            rest = m.group(2)
            if _GUARD_OP.match(rest):
                continue  # guarded: a default, an assignment, an error message, or "if set"
            yield m.group(1)
            continue
        m2 = _REF.match(word, i + 1)
        if m2:
            yield m2.group(0)
            i = m2.end()
        else:
            i += 2  # `$@`, `$1`, `$?`, a lone `$`
    return


def _defined_names(ctx: Context, path: str, script: ShellScript, depth: int, visiting: set[str]) -> set[str] | None:
    """Every name the script (and the repository scripts it sources) defines; None when that is unknowable."""
    if script.error is not None:
        return None
    visiting = visiting | {path}
    harmless = ctx.facts.shell_env.harmless_eval
    names = {a.name for a in script.assignments}
    # neither pattern matches a NUL, so over the lines joined by one they find what they find line by line
    text = "\0".join(ll.text for ll in script.logical)
    names.update(_GUARDED.findall(text))
    names.update(_ARITH_ASSIGN.findall(text))
    for st in script.statements:
        words = [w.raw for w in st.words]
        if not words:
            continue
        cmd = words[0]
        if cmd == "eval" and not any(t in " ".join(words[1:]) for t in harmless):
            return None
        if cmd in _DECLARERS and any(w.startswith(("$", '"$')) for w in words[1:]):
            return None  # export $(grep ... .env | xargs), export "$k=$v"
        if cmd == "getopts" and len(words) >= 3:
            names.add(words[2])
        elif cmd in ("mapfile", "readarray"):
            plain = [w for w in words[1:] if _NAME.match(w)]
            names.add(plain[-1] if plain else "MAPFILE")
        elif cmd == "printf" and "-v" in words[:-1]:
            names.add(words[words.index("-v") + 1])
        elif cmd == "let":
            names.update(m.group(1) for w in words[1:] if (m := re.match(r"([A-Za-z_]\w*)", w.strip("\"'"))))
        elif cmd == "select" and len(words) >= 2:
            names.add(words[1])
        elif cmd in SOURCERS and len(words) >= 2:
            target = words[1].strip("\"'")
            if target.startswith(("<(", "/dev/")) or "`" in target:
                return None
            resolved = resolve_script(ctx, path, target)
            if resolved is None:
                if target.startswith(("/", "~", "$HOME", "${HOME}")):
                    continue  # a system or user file (CANN's set_env.sh, ~/.bashrc): well-known names only
                return None
            if resolved in visiting:
                continue
            other = ctx.source(resolved)
            if other is None or depth >= _MAX_DEPTH:
                return None
            more = _defined_names(ctx, resolved, ctx.shell(other), depth + 1, visiting)
            if more is None:
                return None
            names |= more
    return {n for n in names if _NAME.match(n)}
