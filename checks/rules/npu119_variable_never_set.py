"""NPU119: an NPU script reads a variable that nothing sets, where an empty value breaks it."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from npu_review.checks import lazyre
from npu_review.checks.analysis.scripts import (
    PYTHON_CALLER_GLOBS,
    ShellUnit,
    calls_of,
    defined_names,
    exported_by_a_script,
    provided_names,
    script_unit,
    scripts_setting,
    sourced_through_a_variable,
    unguarded_refs,
    unit_shell,
)
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.facts import Facts
from npu_review.checks.kinds import DOCKERFILE, NPU_SCRIPT, SHELL, WORKFLOW
from npu_review.checks.model import Severity
from npu_review.checks.parsers.sh import lex
from npu_review.checks.rule import Hit, Rule

_REF_WORD = lazyre.compile(r"\"?\$\{?([A-Za-z_]\w*)\}?\"?(?:/\S*)?\Z")
_NUMERIC_TEST = frozenset({"-eq", "-ne", "-gt", "-ge", "-lt", "-le"})
_RUNS = frozenset({"bash", "sh", "source", ".", "cd", "python", "python3"})
_GUARDED = lazyre.compile(r"\$\{([A-Za-z_]\w*):?[-=?]")
_CASE_SUBJECT = lazyre.compile(r"(?:^|[;&|(]\s*)case\s+(\S+)\s+in\b")
_ABORTS = (
    "The script decides by it (a `case` or a test) under `set -u`, so bash stops it there with `unbound variable` "
    "instead of taking a branch."
)
_NOUNSET = lazyre.compile(r"(?:^|[;&|]\s*)set\s+(?:-[a-zA-Z]*u[a-zA-Z]*\b|-o\s+nounset\b)")


class VariableNeverSet(Rule):
    """An NPU script reads a variable that nothing sets, where its empty value breaks the script.

    Why: bash expands an unset variable to nothing. Where that matters the script fails far from the
    cause: a `case` or test on it under `set -u` aborts instead of choosing a branch (`DEVICE: unbound
    variable`); `bash $DEFAULT_YAML` runs bash with no
    script (it waits for input or does nothing); `cd $DIR` goes home; `[ $USE_MEGATRON -eq 1 ]` is a test
    error, so the MindSpeed/Megatron install it gates never runs. verl merged GPU/NPU example scripts that
    switch on `${DEVICE}` under `set -u` but never set DEVICE; MindSpeed-RL renamed DEFAULT_YAML to DEFAULT_SH
    and kept `bash $DEFAULT_YAML`.

    Bad:
        set -euo pipefail
        case "${DEVICE}" in
            npu) export TASK_QUEUE_ENABLE=2 ;;
        esac

    Good:
        set -euo pipefail
        DEVICE=${DEVICE:-npu}
        case "${DEVICE}" in
            npu) export TASK_QUEUE_ENABLE=2 ;;
        esac

    Fix: give the variable a value or a default (`${NAME:-...}`), fix the name it was renamed to, or say that
    the caller must pass it (`${NAME:?set NAME}`).

    Reported only with evidence that the script was meant to set the variable: it sets a name that differs in
    the last part only (`DEFAULT_SH` for `DEFAULT_YAML`: a rename), or other scripts of the repository set the
    same variable themselves (a default they all give). A variable no script sets comes from the environment
    (a pod spec, the user) and is not reported.

    What counts as set: an assignment, export, `read`, loop or `${NAME:=...}` anywhere in the script, a
    `${NAME:-...}`/`${NAME:?...}` form anywhere, the repository scripts it sources, the scripts and CI steps that
    run it (exports, `NAME=value bash x.sh`, step and job `env:`), the scripts that source it by a path only they
    resolve (`. ${common_dir}/lib.sh`: a function library whose users set its inputs), and well-known variables
    (HOME, RANK, ASCEND_*, ...). Not reported: a script that defines names dynamically (`eval`, `export $(...)`,
    a sourced file that cannot be read), uses that tolerate empty (`"$X"` in an echo, `[ -z "$X" ]`), and under `set -u`
    a value that is not a choice (`MODEL_PATH=${WORK_DIR}/x`, an override): an input the caller must give, which
    `set -u` requires by design; a choice (a `case` subject, a test) is reported under `set -u` only when other
    scripts of the repository set that variable themselves (a flag no script sets comes from the environment: a
    pod spec, the user).
    """

    id = "NPU119"
    name = "variable-never-set"
    severity = Severity.ERROR
    title = "NPU script reads a variable nothing sets, where empty breaks it"
    kinds = frozenset({SHELL, NPU_SCRIPT})
    context_kinds = frozenset({SHELL, NPU_SCRIPT, WORKFLOW, DOCKERFILE})

    @classmethod
    def context_paths(cls, facts: Facts) -> tuple[str, ...]:
        return PYTHON_CALLER_GLOBS  # the Python build files whose `["sh", "x.sh"]` calls script_calls reads

    context_triggers = frozenset({SHELL, NPU_SCRIPT})

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if "$" not in src.text:
            return
        unit = script_unit(ctx, src)
        if unit is None:
            return
        if not _may_risk(src.text):
            return
        uses = list(_risky_uses(unit, src.text))
        if not uses:
            return
        script = ctx.shell(src)
        facts = ctx.facts.shell_env
        known, prefixes = set(facts.known), facts.known_prefixes
        # What the script itself sets, read off its parse (most uses are of these; the full set, with what it
        # sources, is derived only for a name that is not among them).
        own = {a.name for a in script.assignments} | set(_GUARDED.findall(src.text))
        # Names the script tests for emptiness (`[ -z "$X" ]`, `[ -n "$X" ]`): it knows they may be unset.
        tested = set(re.findall(r"-[znv]\s+\"?\$?\{?([A-Za-z_]\w*)", src.text))
        uses = [
            u
            for u in uses
            if u[0] not in own and u[0] not in known and not u[0].startswith(prefixes) and u[0] not in tested
        ]
        if not uses:
            return
        defined = defined_names(ctx, src.path, script)
        if defined is None:
            return
        outside: set[str] | None = None
        asked = False
        seen: set[str] = set()
        # Lines of arms for another device (`gpu)` of a `case "$DEVICE"`): they do not run on NPU.
        other = {n for st in script.statements if st.device == "other" for n in range(st.line, st.end_line + 1)}
        for name, line, how in uses:
            if line in other or name in defined or name in seen or name in provided_names(ctx):
                continue
            near = _near(name, defined)
            elsewhere = sorted(scripts_setting(ctx, name) - {src.path})
            if near is None and not elsewhere:
                continue  # no script of the repository sets it itself: the environment gives it (a pod, a user)
            if exported_by_a_script(ctx, name):
                continue  # a repository script exports it: this one may run under it
            if not asked:
                outside, asked = _caller_names(ctx, src.path), True
            if outside is None:
                return  # a caller that sources this script defines names dynamically
            if name in outside:
                continue
            if _set_where_named(ctx, src.path, name):
                continue
            seen.add(name)
            yield Hit(
                src.path,
                line,
                severity=Severity.WARNING if how.startswith("Empty, `cd`") else None,
                message=f"`${name}` is never set: not by this script (no assignment, export, read or default), nor a "
                f"script it sources, nor a script or CI step that runs it. {how}"
                + (f" Was `{near}` meant (the name this script does set)?" if near else "")
                + (f" ({elsewhere[0]} sets `{name}` itself.)" if elsewhere and not near else "")
                + f" Set it, give it a default (`${{{name}:-...}}`), or require it with `${{{name}:?set {name}}}`.",
            )


_RUNS_A_VARIABLE = lazyre.compile(r"(?:bash|sh|source|\.|cd|python3?)[ \t]+(?:-\S+[ \t]+)*\$")
_COMMAND_VARIABLE = lazyre.compile(r"^[ \t]*\$\{?[A-Za-z_]", re.M)
_NOUNSET_ANYWHERE = lazyre.compile(r"set[ \t]+(?:-[a-zA-Z]*u[a-zA-Z]*\b|-o[ \t]+nounset\b)")
_NUMERIC = lazyre.compile(r"-(?:eq|ne|gt|ge|lt|le)[ \t]")


def _may_risk(text: str) -> bool:
    """The cheap no of `_risky_uses`: no use of a kind it reports is in the text."""
    if _RUNS_A_VARIABLE.search(text) or _COMMAND_VARIABLE.search(text) or _NUMERIC.search(text):
        return True
    return _NOUNSET_ANYWHERE.search(text) is not None and ("case" in text or "[" in text or "test " in text)


def _risky_uses(unit: ShellUnit, text: str) -> Iterator[tuple[str, int, str]]:
    """(name, line, what happens) of each unguarded read whose empty value breaks the script."""
    # Lines under `set -u`: from a `set -u` (or -euo ...) to a `set +u`.
    nounset: set[int] = set()
    on_from: int | None = None
    for ll in lex(unit.source).lines if _NOUNSET_ANYWHERE.search(text) else ():
        if _NOUNSET.search(ll.text):
            on_from = ll.line if on_from is None else on_from
        elif re.search(r"(?:^|[;&|]\s*)set\s+\+[a-zA-Z]*u", ll.text):
            on_from = None
        if on_from is not None:
            nounset.update(range(ll.line, ll.end_line + 1))
        # A `case` on the variable under set -u: the script means to choose a branch by it, and aborts instead.
        m = _CASE_SUBJECT.search(ll.text)
        if m and ll.line in nounset:
            for name in unguarded_refs(m.group(1)):
                yield name, ll.line, _ABORTS
    for cmd in unit_shell(unit).commands:
        words = cmd.words
        if not words:
            continue
        first = _REF_WORD.match(words[0].raw)
        if first and not words[0].raw.startswith('"'):
            yield first.group(1), words[0].line, "Empty, the command this word names is not run at all."
        name = words[0].unquoted
        if name in ("[", "[[", "test") and cmd.line in nounset:
            for w in words[1:]:  # a test under set -u: the script chooses by the variable, and aborts instead
                for ref in unguarded_refs(w.raw):
                    yield ref, w.line, _ABORTS
        if name in _RUNS and len(words) > 1:
            arg = next((w for w in words[1:] if not w.raw.startswith("-")), None)
            m = _REF_WORD.match(arg.raw) if arg is not None else None
            # `cd "$X"` with X empty is `cd ""`, which bash runs as a no-op: the script stays where it is.
            if m and arg is not None and not (name == "cd" and arg.raw.startswith('"')):
                yield m.group(1), arg.line, f"Empty, `{name}` gets no path (`{name} {arg.raw}` runs on nothing)."
        if name in ("[", "test"):
            for k, w in enumerate(words[1:-1], start=1):
                m = re.fullmatch(r"\$\{?([A-Za-z_]\w*)\}?", w.raw)
                if m and (words[k + 1].raw in _NUMERIC_TEST or words[k - 1].raw in _NUMERIC_TEST):
                    yield (
                        m.group(1),
                        w.line,
                        f"Unquoted and empty, it leaves `{' '.join(x.raw for x in words)}` without an operand: "
                        "the test fails with an error and the branch it guards never runs.",
                    )


def _caller_names(ctx: Context, path: str) -> set[str] | None:
    """Names the callers give the script: their exports (scripts), `NAME=value` before the call, and the
    `env:` of the CI steps, jobs and workflows that run it."""
    from npu_review.checks.analysis.workflows import workflow

    calls = calls_of(ctx, path)
    names: set[str] = set()
    for user in sourced_through_a_variable(ctx, path):
        # A library sourced by a path the call graph cannot resolve: what its users define, it sees.
        src = ctx.source(user)
        theirs = None if src is None else defined_names(ctx, user, ctx.shell(src))
        if theirs is None:
            return None
        names.update(theirs)
    if not calls:
        return names
    for call in calls:
        src = ctx.source(call.caller)
        if src is None:
            continue
        if call.where == "script" and call.how != "source":
            # A script that runs this one passes on what it exports before the call.
            caller = ctx.shell(src)
            names.update(a.name for a in caller.assignments if a.line < call.line and a.exported)
        if call.how == "source" and call.where == "script":
            # A sourcing caller shares every name it defines, those of the files it sources too.
            theirs = defined_names(ctx, call.caller, ctx.shell(src))
            if theirs is None:
                return None  # it defines names we cannot see: any of them may be this one
            names.update(theirs)
        line = src.line(call.line)
        names.update(re.findall(r"(?:^|\s)([A-Za-z_]\w*)=", line))
        if call.where == "run":
            wf = workflow(ctx, call.caller)
            if wf is None:
                continue
            names.update(wf.env)
            for job in wf.jobs.values():
                if job.node.line <= call.line <= job.node.end_line:
                    names.update(job.env)
                    for step in job.steps:
                        if step.node.line <= call.line <= step.node.end_line:
                            names.update(step.env)
        if call.where == "dockerfile":
            names.update(p.name for i in ctx.dockerfile(src).of("ENV", "ARG") for p in i.pairs)
    return names


_CALLER_TEXT = (".sh", ".bash", ".yml", ".yaml")


def _set_where_named(ctx: Context, path: str, name: str) -> bool:
    """A line of a shell script or YAML file of the tree runs the script by its file name with `NAME=value` before
    it: a caller the call graph cannot place (a vendored copy's workflow under `verl-release-v0.7.0/.github/`,
    naming `tests/special_npu/x.sh` from the copy's root) that sets the name (atomrun39/verl_scripts, rs-r49,
    judged false)."""
    base = path.rsplit("/", 1)[-1]
    callers = ctx.memo(
        ("npu119-named-by", "head", base),
        lambda: ctx.paths_mentioning([base], [p for p in ctx.head_paths() if p.endswith(_CALLER_TEXT) and p != path]),
    )
    assign = re.compile(rf"(?:^|[\s;&|(\"'])(?:export[ \t]+)?{re.escape(name)}=\S*[^\n]*{re.escape(base)}")
    for caller in callers:
        src = ctx.source(caller)
        if src is not None and assign.search(src.text):
            return True
    return False


def _near(name: str, defined: set[str]) -> str | None:
    """A set name that shares all but the last `_` part with `name` (DEFAULT_SH for DEFAULT_YAML)."""
    stem = name.rsplit("_", 1)[0] + "_" if "_" in name else None
    if stem is None:
        return None
    found = sorted(d for d in defined if d.startswith(stem) and d != name and d.count("_") == name.count("_"))
    return found[0] if len(found) == 1 else None
