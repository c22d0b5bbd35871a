"""Shell scripts as a graph: which repository script a `bash x.sh` / `source x.sh` names, and what the scripts
that run another one define before the call (so a variable a caller exports is not "undefined" in the callee)."""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from npu_review.checks import lazyre
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.fastinit import fast_init
from npu_review.checks.kinds import NPU_SCRIPT, SHELL
from npu_review.checks.parsers.codeblocks import SHELL_LANGUAGES, shell_blocks
from npu_review.checks.parsers.markdown import flavor_of
from npu_review.checks.parsers.sh import (
    PREFIX_WORDS,
    REDIRECT,
    ArrayWord,
    Op,
    Source,
    Token,
    Word,
    commands,
    lex,
    unquote,
)
from npu_review.checks.parsers.shell import ShellScript, View, closing_brace

if TYPE_CHECKING:
    from npu_review.checks.parsers.dockerfile import Instruction
    from npu_review.checks.parsers.gha.workflow import Job, Step

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
    from npu_review.checks.analysis.references import normpath  # imported here: it brings the workflow models

    tree = ctx.changeset.head
    for cand in candidates:
        norm = normpath(cand)
        if norm and tree.exists(norm):
            return norm
    return None


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
                target = resolve_script(ctx, path, argument) or _only_one_named(ctx, argument)
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


def _only_one_named(ctx: Context, argument: str) -> str | None:
    """`./x.sh` that resolves from neither the root nor the caller's folder (the caller is run from the folder
    that holds x.sh): the repository's only script of that name, if there is exactly one."""
    arg = argument.strip("\"'").removeprefix("./")
    if not arg or "/" in arg or "$" in arg:
        return None
    named = ctx.memo(("scripts-by-name", "head", ""), lambda: _scripts_by_name(ctx))
    found = named.get(arg, ())
    return found[0] if len(found) == 1 else None


def _scripts_by_name(ctx: Context) -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for path in ctx.paths_of_kind(SHELL):
        out.setdefault(path.rsplit("/", 1)[-1], []).append(path)
    return {k: tuple(v) for k, v in out.items()}


# -- shell units: the shell text of Ascend files, one Source each ------------------------------------------------
#
# The shell rules (NPU114-NPU120, NPU317) read four kinds of shell: an NPU script, a `run:` step of an Ascend
# workflow job, a shell-form RUN of an Ascend Dockerfile, and a shell code block of an Ascend doc. Each is one
# `ShellUnit`: a Source the sh layer lexes once (checks.parsers.sh.lex memoises it), and where it came from.


@fast_init
@dataclass(frozen=True)
class ShellUnit:
    path: str
    source: Source
    where: str  # "script", "run" (a workflow step), "dockerfile" (a RUN) or "docs" (a code block)
    line: int  # the first physical line


def script_unit(ctx: Context, src: SourceFile) -> ShellUnit | None:
    """The script as a unit when it runs on NPU (checks.analysis.device.npu_reading), else None."""
    from npu_review.checks.analysis.device import npu_reading

    if NPU_SCRIPT not in src.kinds and npu_reading(ctx, src) is None:
        return None
    return ShellUnit(src.path, Source.file(src.text), "script", 1)


def step_unit(path: str, step: Step) -> ShellUnit | None:
    """A workflow step's `run:` text as a unit (None for a `uses:` step)."""
    if step.run is None:
        return None
    lines = step.run.text_lines()
    if not lines:
        return None
    return ShellUnit(path, Source.lines(lines), "run", lines[0][0])


def ascend_step_unit(ctx: Context, path: str, job: Job, step: Step) -> ShellUnit | None:
    """`step_unit` of a step whose job runs on NPU (or whose workflow's Ascend jobs cannot be told apart), else
    None: what the shell rules read of a workflow, as `script_unit` is of a script."""
    from npu_review.checks.analysis.device import ascend_jobs

    jobs = ascend_jobs(ctx, path)
    if jobs is not None and job.id not in jobs:
        return None
    return step_unit(path, step)


def run_unit(path: str, instr: Instruction) -> ShellUnit | None:
    """A shell-form RUN as a unit (None for the exec form)."""
    from npu_review.checks.parsers.dockerfile import shell_source

    source = shell_source(instr)
    return None if source is None else ShellUnit(path, source, "dockerfile", instr.line)


# Words that start a line of shell in an unlabeled docs block: with every line starting with one of these (or an
# assignment), the block is shell, whatever its fence says.
_SHELLISH = frozenset(
    {
        "git", "cd", "pip", "pip3", "python", "python3", "bash", "sh", "source", ".", "export", "make", "cmake",
        "mkdir", "wget", "curl", "tar", "unzip", "apt", "apt-get", "yum", "dnf", "docker", "conda", "ls", "cp",
        "mv", "rm", "ln", "chmod", "echo", "sed", "sudo", "uv", "torchrun", "vllm", "ray", "npu-smi", "pushd",
        "popd", "unset", "set", "if", "for", "while", "then", "else", "fi", "do", "done", "#",
    }
)  # fmt: skip
_MYST_OPTION = lazyre.compile(r"[ \t]*:[\w-]+:")
_SUBSTITUTION = lazyre.compile(r"\|([A-Za-z_][\w-]*)\|")
_ASSIGN_WORD = lazyre.compile(r"[A-Za-z_]\w*=")
# Python in a block labeled shell: imports, definitions, and `if x:` / `else:` / `try:` headers (shell ends none of
# its `if`/`for`/`while` lines with a colon).
_PYTHON_LINE = lazyre.compile(
    r"[ \t]*(?:from [\w.]+ import |import [\w.]+[ \t]*(?:#.*)?$|def \w+\(|class \w+[(:]"
    r"|(?:if|elif|while|for|with) [^;#\n]*:[ \t]*(?:#.*)?$|(?:else|try|finally|except[^:\n]*):[ \t]*(?:#.*)?$)"
)


def doc_is_ascend(ctx: Context, src: SourceFile) -> bool:
    """The doc's commands run on Ascend: the repository is Ascend-only, or the doc has an Ascend marker
    (memoised; a rule asks only once a block of the doc looks worth its while). A doc that merely names Ascend
    is `checks.analysis.references.doc_names_ascend`."""
    from npu_review.checks.analysis.vllm_launches import ascend_text

    return ctx.parsed("doc-is-ascend", src, lambda text: ascend_text(ctx, text))


def doc_units(ctx: Context, src: SourceFile) -> list[ShellUnit]:
    """The shell code blocks of a doc (rules of Ascend material ask `doc_is_ascend` too):
    blocks labeled bash/sh/shell/zsh, and unlabeled ones whose every line starts with a command of an install
    guide (`git`, `cd`, `pip`, ...). MyST option lines (`:substitutions:`) are blanked and `|name|`
    substitutions read as a word. Memoised per file; the labeled blocks are the ones every docs rule shares
    (checks.analysis.vllm_launches.doc_command_blocks)."""
    from npu_review.checks.analysis.vllm_launches import doc_command_blocks

    flavor = flavor_of(src.path)
    if flavor is None:
        return []

    def build(text: str) -> list[ShellUnit]:
        blocks = [b for b in doc_command_blocks(ctx, src) if b.language in SHELL_LANGUAGES]
        # Each labeled block has one fence with a language and one without; an unlabeled block two without.
        if flavor == "md" and text.count("```") > 2 * len(_INFO_FENCE.findall(text)):
            blocks += shell_blocks(text, flavor, frozenset({""}))  # a fence without a language opens one
        if not blocks:
            return []
        out: list[ShellUnit] = []
        for block in sorted(blocks, key=lambda b: b.lines[0][0] if b.lines else 0):
            lines = list(block.lines)
            k = 0
            while k < len(lines) and (_MYST_OPTION.match(lines[k][1]) or not lines[k][1].strip()):
                lines[k] = (lines[k][0], "")
                k += 1
            if (block.language == "" and not _looks_like_shell(lines)) or any(_PYTHON_LINE.match(t) for _, t in lines):
                continue  # an unlabeled block of something else, or Python in a block labeled shell
            # (a table row pasted from a tool's output, `| Tasks |Version|...|Stderr|`, keeps its bars: it is output,
            # and reads as such only whole)
            lines = [(n, _SUBSTITUTION.sub(r"_\1_", t) if "|" in t and not _table_row(t) else t) for n, t in lines]
            if any(t.strip() for _, t in lines):
                out.append(ShellUnit(src.path, Source.lines(lines), "docs", lines[0][0]))
        return out

    return ctx.parsed("shell-units", src, build)


def _table_row(text: str) -> bool:
    """A line that starts and ends with `|`: a table row, never a command (none starts with a pipe)."""
    stripped = text.strip()
    return len(stripped) > 1 and stripped[0] == "|" and stripped[-1] == "|"


_INFO_FENCE = lazyre.compile(r"```[ \t]*[A-Za-z{]")
_DOC_BLOCK_LANGUAGES = SHELL_LANGUAGES | {""}


def _looks_like_shell(lines: list[tuple[int, str]]) -> bool:
    seen = False
    for _n, text in lines:
        stripped = text.strip()
        if not stripped:
            continue
        first = stripped.split(None, 1)[0]
        if first.startswith("#"):
            continue
        if first not in _SHELLISH and not _ASSIGN_WORD.match(first):
            return False
        seen = True
    return seen


# -- simple commands of a unit, with the structure around them ---------------------------------------------------


@fast_init
@dataclass(frozen=True)
class UnitCommand:
    """A simple command of a unit: its words (redirections and their targets left out, leading reserved words
    `then`/`do`/`!`/... taken off), the operator after it, and whether another command follows it on the same
    logical line."""

    words: tuple[Word, ...]
    op: str  # ";", "&&", "||", "|", "&", ";;" or "" (the end of its logical line)
    more_on_line: bool
    line_index: int  # which logical line of the unit

    @property
    def name(self) -> str:
        return self.words[0].unquoted if self.words else ""

    @property
    def line(self) -> int:
        return self.words[0].line


@dataclass(frozen=True)
class StructureError:
    """An `if`/`case`/loop the shell cannot parse: `what` says how, `line` where it opened (or the stray word),
    `glued` a word that begins with the missing reserved word (`thenX=1`), when one was seen."""

    what: str  # "no-then", "no-do", "unclosed", "stray", "unclosed-quote", "no-arm-end" (a case arm without `;;`),
    # "leading-operator" (a line that starts with `|`, `&&`: the command before it ended), "crossed" (an `if`, `case`
    # or loop still open at the closer of the construct around it)
    keyword: str  # the construct: if, case, for, while, until, select; or the stray word; or the quote
    line: int
    end_line: int  # where the shell notices (the `fi`/`else`/`done`, or the unit's last line)
    glued: Word | None = None
    closer: str = ""  # "crossed": the `fi`, `done` or `esac` the shell stops at


@dataclass(frozen=True)
class UnitShell:
    commands: tuple[UnitCommand, ...]
    errors: tuple[StructureError, ...]


_RESERVED_PREFIX = frozenset({"then", "do", "else", "elif", "!", "{", "time"})
_SEPARATOR_OPS = frozenset({";", "&&", "||", "|", "|&", "&", ";;", ";&", ";;&"})
_GLUED = lazyre.compile(r"(then|do|else)(?=[A-Za-z_$\"'])")


def unit_shell(unit: ShellUnit) -> UnitShell:
    """The unit's simple commands and structure errors (memoised on the source)."""
    return _unit_shell(unit.source)


@functools.lru_cache(maxsize=256)
def _unit_shell(source: Source) -> UnitShell:
    lexed = lex(source)
    walker = _Walker(source.text, source.base)
    for k, toks in enumerate(lexed.tokens()):
        walker.line(k, toks)
    last = lexed.lines[-1].end_line if lexed.lines else 1
    errors = walker.finish(last)
    if lexed.unclosed_quote is not None:
        # The open quote swallowed the rest of the text: the constructs left open at its end lost their closers
        # to it, one cause (the shell stops at the end of the text, on the quote).
        quote, line = lexed.unclosed_quote
        errors = [e for e in errors if e.what != "unclosed" or e.line > line]
        errors.append(StructureError("unclosed-quote", quote, line, last))
    return UnitShell(tuple(walker.out), tuple(errors))


@dataclass
class _Frame:
    keyword: str
    line: int
    state: str  # if: cond/body; loop: head/body; case: pattern/body
    glued: Word | None = None


@dataclass(frozen=True)
class ShellEvent:
    """One step of a unit's structure in order, as `_Walker` reads it (for `no_argument_values`): a reserved word
    (`if`, `then`, `elif`, `else`, `fi`, `while`, `until`, `for` with its head, `do`, `done`, `case` with its
    subject, `pattern` with its words, `arm-end`, `esac`), a function definition (`function` with its name), a
    brace (`{`, `}`) or a simple command (`command`, with the operator after it and whether a subshell's `(` is
    open around it)."""

    what: str
    words: tuple[Word, ...] = ()
    op: str = ""
    nested: bool = False


class _Walker:
    """Reads the tokens of each logical line in order, splits them into simple commands and keeps the stack of
    `if`/`case`/loops, noting what the shell would reject (a missing `then`/`do`, a construct left open). With
    `events`, it also notes the structure in order there (ShellEvent)."""

    def __init__(self, text: str, base: int, events: list[ShellEvent] | None = None) -> None:
        self.text, self.base = text, base
        self.events = events
        self.out: list[UnitCommand] = []
        self.stack: list[_Frame] = []
        self.errors: list[StructureError] = []
        self.parens = 0  # `(` of subshells and groups still open, across lines
        self.in_test = False  # a `[[` left open at a line's end: the test goes on (bash reads on past newlines)
        self.last_line = 0  # the last physical line of the logical lines read so far (comments left out)

    def line(self, index: int, toks: Sequence[Token]) -> None:
        n = len(toks)
        # has_word[i]: a word comes at or after token i (another command follows on the line)
        has_word = [False] * (n + 1)
        for j in range(n - 1, -1, -1):
            has_word[j] = has_word[j + 1] or not isinstance(toks[j], Op)
        words: list[Word] = []
        skip_target = False
        first = True  # no command ended yet on this line
        lead = toks[0] if n else None
        if (
            isinstance(lead, Op)
            and lead.text in _LEADING_OPS
            and self.out
            and not self.in_test
            and not (lead.text == "|" and self._case_state() == "pattern")
            and not self._after_blanked_backslash(lead.offset - self.base)
            and self._operator_line(lead.offset - self.base)
        ):
            # `| tee log` on the line after a command that ended (its `\` lost): bash stops here ("syntax error
            # near unexpected token"), before running anything after
            self.errors.append(StructureError("leading-operator", lead.text, lead.line, lead.line))
        i = 0
        while i < n:
            t = toks[i]
            if isinstance(t, Op):
                text = t.text
                nxt = toks[i + 1] if i + 1 < n else None
                if text == "(" and isinstance(nxt, Op) and nxt.text == "(" and (not words or words[-1].raw == "for"):
                    i = _skip_arithmetic(toks, i + 2)  # `(( x = 1 ))`, `for ((...))`: arithmetic, not commands
                    continue
                if text == "(" and isinstance(nxt, Op) and nxt.text == ")" and len(words) == 1:
                    self._note("function", words)
                    words = []  # `name() {`: a function definition
                    i += 2
                    continue
                if text == ")" and self._case_state() == "pattern":
                    self._note("pattern", words)
                    words = []  # the pattern list before `)`
                    self.stack[-1].state = "body"
                elif text == ")" and not self.parens and first and words and self._case_state() == "body":
                    # `b)` opening a line of an arm's body, no `(` open: the arm before it has no `;;`, and the
                    # shell stops at this `)` ("syntax error near unexpected token"). Read on as the next arm. The
                    # error is on the arm's last line (where its `;;` belongs), the pattern's line its end.
                    arm_end = self.last_line or words[0].line
                    self.errors.append(StructureError("no-arm-end", "case", arm_end, words[0].line))
                    words = []
                elif text in _SEPARATOR_OPS:
                    if self._case_state() == "pattern" and text == "|":
                        pass  # `a|b)`: alternatives of a pattern
                    else:
                        self.command(words, text, has_word[i + 1], index)
                        words = []
                        first = False
                elif REDIRECT.fullmatch(text):
                    skip_target = not isinstance(nxt, Op)
                elif text == "(":
                    self.parens += 1  # a subshell or a group: its `)` may come on a later line
                elif text == ")" and self.parens:
                    self.parens -= 1
                # other `(` / `)`: a function's `()`: no word, no end of a command
                i += 1
                continue
            if skip_target:
                skip_target = False
                i += 1
                continue
            if isinstance(t, ArrayWord):
                words.append(Word(t.raw, t.line, t.offset))
                i += 1
                continue
            if self.in_test or (t.raw == "[[" and all(w.raw in _BEFORE_TEST for w in _after_function(words))):
                closed = False
                while i < n:  # a test up to `]]`: its `&&`, `||`, `(` are the test's, not separators
                    x = toks[i]
                    if isinstance(x, Word):
                        words.append(x)
                        if x.raw == "]]" or (x.raw.endswith("]]") and len(words) > 1 and words[-2].raw == "=~"):
                            closed = True  # (a regex operand may hold its `]]`: `=~ 'x']]`)
                            break
                    i += 1
                self.in_test = not closed
                i += 1
                continue
            words.append(t)
            i += 1
        self.command(words, "", False, index)
        if n:
            self.last_line = max(self.last_line, *(_end_line(t) for t in toks))

    def _line_before(self, offset: int) -> tuple[str, str]:
        """The physical line holding `offset` and the one before it ("" at the first line)."""
        start = self.text.rfind("\n", 0, max(offset, 0)) + 1
        end = self.text.find("\n", start)
        here = self.text[start : end if end >= 0 else len(self.text)]
        before = self.text[self.text.rfind("\n", 0, start - 1) + 1 : start - 1] if start else ""
        return here, before

    def _operator_line(self, offset: int) -> bool:
        """The line at `offset` reads as an operator and a command (`| tee log`, `&& pytest`), not as output
        pasted into a shell block: a table row (`| a | b |`) or a directory tree (`|-- configs`)."""
        return _OPERATOR_LINE.match(self._line_before(offset)[0]) is not None

    def _after_blanked_backslash(self, offset: int) -> bool:
        """The physical line before `offset`'s ends with `\\` and blanks: the command was meant to go on, and
        NPU111 reports the blank that ended it (one cause, one comment)."""
        before = self._line_before(offset)[1]
        stripped = before.rstrip(" \t")
        return stripped != before and stripped.endswith("\\")

    def _note(self, what: str, words: Sequence[Word] = (), op: str = "") -> None:
        if self.events is not None:
            self.events.append(ShellEvent(what, tuple(words), op, self.parens > 0))

    def _case_state(self) -> str:
        top = self.stack[-1] if self.stack else None
        return top.state if top is not None and top.keyword == "case" else ""

    def command(self, words: list[Word], op: str, more: bool, index: int) -> None:
        k = 0
        while k < len(words):
            w = words[k]
            raw = w.raw
            state = self._case_state()
            if state == "in":
                self.stack[-1].state = "pattern"
                if raw == "in":
                    k += 1
                    continue
                state = "pattern"
            if state == "pattern" and raw != "esac":
                # a pattern list (its `)` ends it in the line walk); one that reaches here was not ended so (a
                # `case x in a) ...` on one line): its arms are not read
                self._note("unparsed", words[k:])
                return
            if raw in _EVENT_WORDS:
                self._note(raw, words[k : k + 2] if raw == "case" else words[k:] if raw in _LOOPS else ())
            if raw == "if":
                self.stack.append(_Frame("if", w.line, "cond"))
            elif raw in ("while", "until"):
                self.stack.append(_Frame(raw, w.line, "cond"))
            elif raw in ("for", "select"):
                self.stack.append(_Frame(raw, w.line, "head"))
                if raw == "for" and k + 1 < len(words) and words[k + 1].raw == "do":
                    k += 1  # `for ((i = 0; i < n; i++)) do`: the arithmetic head was skipped, `do` follows
                    continue
                return  # `for x in a b c`: the head, no command
            elif raw == "case":
                self.stack.append(_Frame("case", w.line, "in"))
                k += 2  # the subject
                continue
            elif raw == "then":
                f = self._find(("if",))
                if f is None:
                    self._stray(w)
                elif f.state != "cond":
                    self._error(f, w)
                else:
                    f.state = "body"
            elif raw in ("elif", "else"):
                f = self._find(("if",))
                if f is None:
                    self._stray(w)
                elif f.state != "body":
                    self._error(f, w)
                elif raw == "elif":
                    f.state = "cond"
            elif raw == "fi":
                f = self._find(("if",))
                if f is None:
                    self._stray(w)
                else:
                    if f.state != "body":
                        self._error(f, w)
                    self._pop(f, w)
            elif raw == "do":
                f = self._find(_LOOPS)
                if f is None:
                    self._stray(w)
                elif f.state == "body":
                    self._error(f, w)
                else:
                    f.state = "body"
            elif raw == "done":
                f = self._find(_LOOPS)
                if f is None:
                    self._stray(w)
                else:
                    if f.state != "body":
                        self._error(f, w)
                    self._pop(f, w)
            elif raw == "esac":
                f = self._find(("case",))
                if f is None:
                    self._stray(w)
                else:
                    self._pop(f, w)
            elif raw == "function":
                self._note("function", words[k + 1 : k + 2])
                k += 2  # `function name {`: the name is no command
                continue
            elif raw in ("{", "}"):
                self._note(raw)
            elif raw not in ("!", "time"):
                top = self.stack[-1] if self.stack else None
                if top is not None and top.state in ("cond", "head") and top.glued is None and _GLUED.match(raw):
                    top.glued = w
                self.out.append(UnitCommand(tuple(words[k:]), op, more, index))
                self._note("command", words[k:], op)
                break
            k += 1
        if op in (";;", ";&", ";;&"):
            self._note("arm-end")
            f = self._find(("case",))
            if f is not None:
                self._unwind(f)
                f.state = "pattern"

    def _find(self, keywords: tuple[str, ...]) -> _Frame | None:
        for f in reversed(self.stack):
            if f.keyword in keywords:
                return f
        return None

    def _unwind(self, frame: _Frame) -> None:
        while self.stack and self.stack[-1] is not frame:
            self.stack.pop()

    def _pop(self, frame: _Frame, at: Word) -> None:
        """Close `frame` at the word `at`; a construct opened inside it and still open is one the shell rejects
        there (`if ... else ... done`: the `fi` is missing, bash stops at the `done`)."""
        while self.stack and self.stack[-1] is not frame:
            inner = self.stack.pop()
            if not any(e.line == inner.line and e.keyword == inner.keyword for e in self.errors):
                self.errors.append(StructureError("crossed", inner.keyword, inner.line, at.line, closer=at.raw))
        if self.stack:
            self.stack.pop()

    def _error(self, frame: _Frame, at: Word) -> None:
        what = "no-then" if frame.keyword == "if" else "no-do"
        if not any(e.line == frame.line and e.keyword == frame.keyword for e in self.errors):
            self.errors.append(StructureError(what, frame.keyword, frame.line, at.line, frame.glued))

    def _stray(self, w: Word) -> None:
        self.errors.append(StructureError("stray", w.raw, w.line, w.line))

    def finish(self, last: int) -> list[StructureError]:
        for f in self.stack:
            what = "unclosed"
            if f.keyword == "if" and f.state == "cond":
                what = "no-then"
            elif f.keyword in _LOOPS and f.state != "body":
                what = "no-do"
            if not any(e.line == f.line and e.keyword == f.keyword for e in self.errors):
                self.errors.append(StructureError(what, f.keyword, f.line, last, f.glued))
        return self.errors


def _end_line(tok: Token) -> int:
    """The physical line a token ends on (a quoted word may span lines)."""
    if isinstance(tok, ArrayWord):
        return tok.end_line
    if isinstance(tok, Word):
        return tok.line_at(len(tok.raw) - 1)
    return tok.line


_LOOPS = ("for", "while", "until", "select")
# The reserved words ShellEvent notes (`for`/`select` with their head, `case` with its subject).
_EVENT_WORDS = frozenset({"if", "then", "elif", "else", "fi", "do", "done", "esac", "case", *_LOOPS})
_LEADING_OPS = frozenset({"|", "||", "&&", "|&"})


def _after_function(words: list[Word]) -> list[Word]:
    """The words after `function name` (and its `()`), which open a function's body, when the line starts so."""
    if words and words[0].raw == "function":
        return [w for w in words[2:] if w.raw != "()"]
    return words


_OPERATOR_LINE = lazyre.compile(r"[ \t]*(?:\|\||&&|\|&|\|)[ \t]+[\w./$\"'-](?!.*\|[ \t]*$)")
_BEFORE_TEST = _RESERVED_PREFIX | {"if", "while", "until"}  # words a `[[` test may follow in its command


def _skip_arithmetic(toks: Sequence[Token], i: int) -> int:
    """The index after the `))` that closes an arithmetic `((` whose body starts at `i`."""
    depth = 0
    n = len(toks)
    while i < n:
        t = toks[i]
        if isinstance(t, Op) and t.text == "(":
            depth += 1
        elif isinstance(t, Op) and t.text == ")":
            if depth == 0:
                after = toks[i + 1] if i + 1 < n else None
                if isinstance(after, Op) and after.text == ")":
                    return i + 2
                return i + 1
            depth -= 1
        i += 1
    return n


# -- who runs which repository script, how, with what ------------------------------------------------------------


@dataclass(frozen=True)
class ScriptCall:
    """A caller running (or sourcing) a repository script."""

    caller: str  # the caller's path
    line: int
    target: str  # the script's repository path
    how: str  # "bash", "sh" (the program named), "exec" (`./x.sh`), "source" (`source`/`.`), "python-sh"
    args: tuple[Word, ...]  # the words after the script
    where: str  # "script", "run", "dockerfile", "python"
    followed: bool  # more work runs after the call in the caller (later commands, steps or instructions)
    image_os: str = ""  # for a Dockerfile RUN: the base image's OS when known ("ubuntu", "openeuler", ...)


_SHELL_PROGRAMS = frozenset({"bash", "sh", "source", ".", "dash", "zsh"})
_PY_SH_CALL = lazyre.compile(r"""\[\s*["'](sh|bash)["']\s*,([^\]]*)\]""")
_PY_LITERAL = lazyre.compile(r"""["']([^"'\s]+)["']""")


def script_calls(ctx: Context) -> dict[str, list[ScriptCall]]:
    """Every call of a repository script from a shell script, a workflow step, a Dockerfile RUN or a Python
    `subprocess` argument list (`["sh", os.path.join(..., "x.sh")]`), by the called script's path. Built once
    per run from the head tree."""
    return ctx.memo(("script-calls", "head", ""), lambda: _script_calls(ctx))


def touched_script_names(ctx: Context) -> set[str]:
    """The file names (`gen.sh`) of the shell scripts the change touches, under their new and old paths: a script
    is always called by its file name, so these are what a caller of a touched script names."""
    return {
        p.rsplit("/", 1)[-1]
        for change in ctx.changeset.changes.values()
        for p in (change.path, change.old_path)
        if p and p.endswith((".sh", ".bash"))
    }


def change_script_calls(ctx: Context) -> dict[str, list[ScriptCall]]:
    """The calls of `script_calls` whose caller or called script the change touches (every call in an audit). Only
    the callers the change touches, or whose text names a touched file's name, are read: a call names its script
    with a literal file name (see resolve_script), so no other file can call a touched script."""
    if ctx.audit:
        return script_calls(ctx)

    def build() -> dict[str, list[ScriptCall]]:
        names = sorted(touched_script_names(ctx))
        touched = ctx.changeset.touched_paths

        def callers(paths: Iterable[str]) -> list[str]:
            """The files of `paths` that can be callers: the touched ones, and those whose text names a touched
            script (found without reading the others where the tree can search), in their order."""
            paths = list(paths)
            chosen = set(touched.intersection(paths))
            chosen.update(ctx.paths_mentioning(names, [p for p in paths if p not in chosen] if chosen else paths))
            return [p for p in paths if p in chosen]

        out: dict[str, list[ScriptCall]] = {}
        for target, calls in _script_calls(ctx, callers).items():
            kept = [c for c in calls if ctx.touched(target) or ctx.touched(c.caller)]
            if kept:
                out[target] = kept
        return out

    return ctx.memo(("change-script-calls", "head", ""), build)


def _script_calls(
    ctx: Context, callers: Callable[[Iterable[str]], list[str]] | None = None
) -> dict[str, list[ScriptCall]]:
    """Every script call from the shell scripts, workflows, Dockerfiles and Python build files; only from those
    `callers(paths)` keeps of each family when given (a change reads no file that cannot be a caller)."""

    def among(paths: Iterable[str]) -> Iterable[str]:
        return paths if callers is None else callers(paths)

    from npu_review.checks.analysis.workflows import workflow, workflow_paths
    from npu_review.checks.kinds import DOCKERFILE

    out: dict[str, list[ScriptCall]] = {}

    def add(call: ScriptCall) -> None:
        out.setdefault(call.target, []).append(call)

    for path in among(ctx.paths_of_kind(SHELL)):
        src = ctx.source(path)
        if src is None:
            continue
        text = src.text
        if not may_call_script(text):
            continue
        unit = ShellUnit(path, Source.file(text), "script", 1)
        for call in _unit_calls(ctx, unit, False):
            add(call)
    for path in among(workflow_paths(ctx, "head")):
        src = ctx.source(path)
        if src is None or not may_call_script(src.text):
            continue
        wf = workflow(ctx, path)
        if wf is None:
            continue
        for job in wf.jobs.values():
            for k, step in enumerate(job.steps):
                step_shell = step_unit(path, step)
                if step_shell is None or not may_call_script(step_shell.source.text):
                    continue
                for call in _unit_calls(ctx, step_shell, k + 1 < len(job.steps)):
                    add(call)
    for path in among(ctx.paths_of_kind(DOCKERFILE)):
        src = ctx.source(path)
        if src is None or not may_call_script(src.text):
            continue
        from npu_review.checks.analysis.stacks import cann_image

        df = ctx.dockerfile(src)
        instrs = list(df.instructions)
        os_name = ""
        for k, instr in enumerate(instrs):
            if instr.keyword == "FROM" and instr.image is not None:
                os_name = _image_os(instr.image.image, instr.image.tag, cann_image)
            run_shell = run_unit(path, instr) if instr.keyword == "RUN" else None
            if run_shell is None or not may_call_script(run_shell.source.text):
                continue
            later = any(i.keyword in ("RUN", "CMD", "ENTRYPOINT") for i in instrs[k + 1 :])
            for call in _unit_calls(ctx, run_shell, later):
                add(_with_os(call, os_name))
    for path in among(ctx.paths_matching(PYTHON_CALLER_GLOBS)):
        src = ctx.source(path)
        if src is None or ".sh" not in src.text:
            continue
        for m in _PY_SH_CALL.finditer(src.text):
            parts = [p for p in _PY_LITERAL.findall(m.group(2))]
            script = next((p for p in parts if p.endswith(".sh")), None)
            if script is None:
                continue
            suffix = "/".join(parts[: parts.index(script) + 1]).lstrip("./")
            found = [p for p in ctx.head_paths() if p == suffix or p.endswith("/" + suffix)]
            if len(found) != 1:
                continue
            line = src.text.count("\n", 0, m.start()) + 1
            add(ScriptCall(path, line, found[0], "python-sh" if m.group(1) == "sh" else "bash", (), "python", True))
    return out


_SCRIPT_NAME = lazyre.compile(r"\.(?:sh|bash)\b")
# What comes before a script's name on its line when the name is run: a shell that runs or sources it, or a path
# at the start of a command (`./x.sh`, `scripts/x.sh`).
_RUNS_BEFORE = lazyre.compile(
    r"(?:.*[\s;&|(])?(?:(?:bash|sh|dash|zsh|source|\.)[ \t]+(?:-\S+[ \t]+)*\S*|[^\s;&|()]*/[^\s;&|()]*)"
)


def unit_script_calls(ctx: Context, unit: ShellUnit) -> list[ScriptCall]:
    """The repository scripts one unit (a workflow step, a RUN) runs, read from that unit alone."""
    if not may_call_script(unit.source.text):
        return []
    return list(_unit_calls(ctx, unit, False))


def may_call_script(text: str) -> bool:
    """The cheap no of script_calls: the text names no `.sh` file where a command runs or sources it."""
    for m in _SCRIPT_NAME.finditer(text):
        start = text.rfind("\n", 0, m.start()) + 1
        if _RUNS_BEFORE.fullmatch(text, start, m.start()):
            return True
    return False


_SH_BEFORE = lazyre.compile(r"(?:.*[\s;&|(\"'])?(?:sh|dash)[ \t]+(?:-\S+[ \t]+)*[^\s;&|()]*")
_PY_SH_LIST = lazyre.compile(r"""\[\s*["'](sh|dash|bash)["']\s*,[^\]]*?([\w.-]+\.sh)["']""")


def calls_of(ctx: Context, path: str) -> list[ScriptCall]:
    """`script_calls(ctx)[path]`, without building the call graph when the script's file name is named nowhere
    (most scripts are run by hand, or by nothing in the repository)."""
    if not _name_use(ctx, path.rsplit("/", 1)[-1])[0]:
        return []
    return script_calls(ctx).get(path, [])


def runs_with_sh(ctx: Context, name: str) -> bool:
    """Something runs the script file `name` (`gen.sh`) with `sh` or `dash` (a script, a CI step, a Dockerfile,
    a Python `["sh", ...]` list): the cheap test that lets NPU317 skip every other script without building the
    call graph."""
    return _name_use(ctx, name)[1]


def _name_use(ctx: Context, name: str) -> tuple[bool, bool]:
    """(a shell script, workflow, Dockerfile or Python build file names the script file `name`, one runs it
    with sh). An audit asks for every script: one pass over every text answers them all; a change asks for the
    few it touches: only the texts that contain the name are read."""
    if ctx.audit:
        named, with_sh = _script_names(ctx)
        return name in named, name in with_sh

    def find() -> tuple[bool, bool]:
        named, with_sh = _names_in(_texts(ctx, name))
        return name in named, name in with_sh

    return ctx.memo(("script-name-use", "head", name), find)


def _texts(ctx: Context, needle: str | None = None) -> Iterator[str]:
    """The texts that may name a script (shell scripts, workflows, Dockerfiles), in turn; with a needle, only
    those that contain it (found without reading the others where the tree can search)."""
    from npu_review.checks.analysis.workflows import workflow_paths
    from npu_review.checks.kinds import DOCKERFILE

    groups = [list(ctx.paths_of_kind(SHELL)), [*workflow_paths(ctx, "head"), *ctx.paths_of_kind(DOCKERFILE)]]
    for paths in groups:
        for path in paths if needle is None else ctx.paths_mentioning([needle], paths):
            src = ctx.source(path)
            if src is not None:
                yield src.text
    for path in ctx.head_paths():
        if _python_caller_path(path):
            src = ctx.source(path)
            if src is not None and ".sh" in src.text and (needle is None or needle in src.text):
                yield "\0" + src.text  # a Python file: its `["sh", "x.sh"]` lists


def _names_in(texts: Iterable[str]) -> tuple[frozenset[str], frozenset[str]]:
    named: set[str] = set()
    with_sh: set[str] = set()
    for text in texts:
        if text.startswith("\0"):
            for m in _PY_SH_LIST.finditer(text):
                named.add(m.group(2))
                if m.group(1) != "bash":
                    with_sh.add(m.group(2))
            continue
        for m in _SCRIPT_NAME.finditer(text):
            i = j = m.start()
            while j > 0 and (text[j - 1].isalnum() or text[j - 1] in "_.+-"):
                j -= 1
            if j == i:
                continue
            file = text[j:i] + m.group(0)
            named.add(file)
            start = text.rfind("\n", 0, i) + 1
            if "sh" in text[start:i] and _SH_BEFORE.fullmatch(text, start, i):
                with_sh.add(file)
    return frozenset(named), frozenset(with_sh)


def _script_names(ctx: Context) -> tuple[frozenset[str], frozenset[str]]:
    """(the file names of `.sh` / `.bash` scripts that a shell script, workflow, Dockerfile or Python build file
    names, those of them it runs with sh), from one pass over the `.sh` in those texts."""
    return ctx.memo(("script-names", "head", ""), lambda: _names_in(_texts(ctx)))


def _with_os(call: ScriptCall, os_name: str) -> ScriptCall:
    return ScriptCall(call.caller, call.line, call.target, call.how, call.args, call.where, call.followed, os_name)


# Python files that build or set up, where a `["sh", "x.sh"]` argument list is looked for: the rules that read
# script_calls declare these as context paths (the App fetches them), never every Python file.
PYTHON_CALLER_GLOBS = ("*.py", "**/setup.py", "**/build*.py", "ci/**/*.py", "**/ci/**/*.py")


@functools.lru_cache(maxsize=1)
def _python_caller_regex() -> re.Pattern[str]:
    from npu_review.checks import globs

    found = globs.compile_any(PYTHON_CALLER_GLOBS)
    assert found is not None
    return found


def _python_caller_path(path: str) -> bool:
    return path.endswith(".py") and _python_caller_regex().match(path) is not None


def _image_os(image: str, tag: str | None, cann_image: object) -> str:
    """The OS of a base image when its name says it: "cann" (a CANN image: bash is its shell), "ubuntu",
    "debian", "openeuler", or "" (unknown)."""
    ref = f"{image}:{tag}" if tag else image
    found = cann_image(ref)  # type: ignore[operator]
    low = ref.lower() if found is None else (found.os or "")
    for name in ("openeuler", "ubuntu", "debian", "centos", "euleros"):
        if name in low:
            return name
    base = image.rsplit("/", 1)[-1]
    if base == "python" and tag and "alpine" not in tag:
        return "debian"
    return ""


_MOVES = lazyre.compile(r"(?:^|[;&|(]|\bthen|\bdo)[ \t]*(?:cd|pushd)[ \t]", re.M)


def _unit_calls(ctx: Context, unit: ShellUnit, later: bool) -> Iterator[ScriptCall]:
    """The unit's script calls. Only the lines that name a script where a command runs it are read (continued
    lines joined), not the whole unit: most of a CI step or a script is something else."""
    text = unit.source.text
    for m in _SCRIPT_NAME.finditer(text):
        start = text.rfind("\n", 0, m.start()) + 1
        if not _RUNS_BEFORE.fullmatch(text, start, m.start()):
            continue
        if text[start : m.start()].lstrip().startswith("#"):
            continue  # a comment line
        end = text.find("\n", m.end())
        end = len(text) if end < 0 else end
        while end < len(text) and text[start:end].rstrip().endswith("\\"):  # a continued command
            nxt = text.find("\n", end + 1)
            end = len(text) if nxt < 0 else nxt
        first = unit.source.line_at(start)
        pieces = Source.lines((first + k, piece) for k, piece in enumerate(text[start:end].split("\n")))
        followed = later or bool(text[end:].strip())
        moved = _MOVES.search(text, 0, start) is not None  # a `cd` before: relative paths are not followed
        for call in _line_calls(ctx, unit, pieces, moved):
            yield ScriptCall(*call, followed=followed)


def _line_calls(
    ctx: Context, unit: ShellUnit, source: Source, moved: bool
) -> Iterator[tuple[str, int, str, str, tuple[Word, ...], str]]:
    for cmd in commands(source):
        words = cmd.words
        if words and words[0].raw in ("cd", "pushd"):
            moved = True
            continue
        i = 0
        while i < len(words) - 1 and re.match(r"[A-Za-z_]\w*=", words[i].raw):
            i += 1
        own = [w for w in words[i:] if w.raw not in PREFIX_WORDS]
        if not own:
            continue
        prog = own[0].unquoted
        base = prog.rsplit("/", 1)[-1]
        how = ""
        script_at = -1
        if base in _SHELL_PROGRAMS:
            j = 1
            while j < len(own) and own[j].raw.startswith("-"):
                j += 1
            if j < len(own) and own[j].unquoted.endswith((".sh", ".bash")):
                how = "source" if base in ("source", ".") else ("sh" if base in ("sh", "dash") else "bash")
                script_at = j
        elif prog.endswith((".sh", ".bash")) and ("/" in prog):
            how, script_at = "exec", 0
        if script_at < 0:
            continue
        if moved and not own[script_at].raw.lstrip("\"'").startswith(("$", "/")):
            continue
        target = resolve_script(ctx, unit.path if unit.where == "script" else "", own[script_at].raw)
        if target is None or target == unit.path:
            continue
        yield unit.path, own[script_at].line, target, how, tuple(own[script_at + 1 :]), unit.where


# -- bash-only syntax ----------------------------------------------------------------------------------------------

# `${x^^}`, `${x,,}`, `${x/a/b}`, `${x:1:2}` (not `${x:-d}`), `${!x}`, `${a[0]}`, `${#a[@]}`
_BASH_EXPANSION = lazyre.compile(
    r"\$\{(?:[A-Za-z_]\w*(?:\^\^?|,,?|/[^}]*|:[0-9][^}]*|: +-[^}]*)|![A-Za-z_]|#?[A-Za-z_]\w*\[)"
)
_BASH_REDIRECTS = {"<<<": "a here-string `<<<`", "&>": "`&>`", "&>>": "`&>>`", "|&": "`|&`"}
_ARRAY_ASSIGN = lazyre.compile(r"[A-Za-z_]\w*\+?=\(")
_FUNCTION_KEYWORD = lazyre.compile(r"(?:^|[;&|{(]\s*)function\s+[A-Za-z_]")


def _arithmetic_at(toks: Sequence[Token], k: int) -> bool:
    """`((` starts a command at token k."""
    nxt = toks[k + 1] if k + 1 < len(toks) else None
    prev = toks[k - 1] if k > 0 else None
    return (
        isinstance(nxt, Op)
        and nxt.text == "("
        and (prev is None or (isinstance(prev, Op) and prev.text in _SEPARATOR_OPS))
    )


def bashisms(unit: ShellUnit) -> list[tuple[int, str]]:
    """(line, what) of each construct of bash that POSIX sh (dash) rejects or reads otherwise: `[[`, `==` in
    `[ ]`, `source`, `function f`, arrays, `${x^^}`-style expansions, `<<<`, `&>`, `|&`, `(( ))`."""
    out: list[tuple[int, str]] = []
    lexed = lex(unit.source)
    for ll, toks in zip(lexed.lines, lexed.tokens(), strict=True):
        if _FUNCTION_KEYWORD.search(ll.text):
            out.append((ll.line, "the `function` keyword"))
        for k, t in enumerate(toks):
            if isinstance(t, Op):
                if t.text in _BASH_REDIRECTS:
                    out.append((t.line, _BASH_REDIRECTS[t.text]))
                elif t.text == "(" and _arithmetic_at(toks, k):
                    out.append((t.line, "an arithmetic command `(( ))`"))
            elif isinstance(t, ArrayWord):
                out.append((t.line, "an array"))
            elif _BASH_EXPANSION.search(t.raw):
                out.append((t.line, f"the expansion `{_BASH_EXPANSION.search(t.raw).group(0)}...}}`"))  # type: ignore[union-attr]
    for cmd in unit_shell(unit).commands:
        name = cmd.words[0].raw if cmd.words else ""
        if name == "[[":
            out.append((cmd.line, "`[[ ]]`"))
        elif name == "source":
            out.append((cmd.line, "`source` (sh has only `.`)"))
        elif name in ("[", "test") and any(w.raw == "==" for w in cmd.words):
            out.append((cmd.line, "`==` inside `[ ]` (sh's test knows only `=`)"))
        elif _ARRAY_ASSIGN.match(name):
            out.append((cmd.line, "an array"))
    return sorted(set(out))


# -- what a script defines, and what it reads without a guard (NPU104, NPU119) -----------------------------------

_DECLARERS = frozenset({"export", "declare", "typeset", "local", "readonly"})
_NAME = lazyre.compile(r"[A-Za-z_]\w*\Z")
# `${NAME-x}`, `${NAME:-x}`, `=`, `?`, `+` forms: the script knows that NAME may be unset
_GUARDED = lazyre.compile(r"\$\{([A-Za-z_]\w*):?[-=?]")
_ARITH_ASSIGN = lazyre.compile(r"\(\(\s*([A-Za-z_]\w*)\s*(?:[-+*/%]?=|\+\+|--)")
_MAX_DEPTH = 3
_PLAIN = lazyre.compile(r"[^'\"\\$]+")  # all but what `unguarded_refs` looks at
_BRACED = lazyre.compile(r"#?([A-Za-z_]\w*)(.*)\Z", re.S)  # the inside of `${...}`
_GUARD_OP = lazyre.compile(r":?[-=?+]")
_REF = lazyre.compile(r"[A-Za-z_]\w*")


def unguarded_refs(word: str) -> Iterator[str]:
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


def defined_names(
    ctx: Context, path: str, script: ShellScript, depth: int = 0, visiting: frozenset[str] = frozenset()
) -> set[str] | None:
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
            more = defined_names(ctx, resolved, ctx.shell(other), depth + 1, visiting)
            if more is None:
                return None
            names |= more
    return {n for n in names if _NAME.match(n)}


# -- the options and positional parameters a script accepts -----------------------------------------------------


@dataclass(frozen=True)
class ScriptInterface:
    """What a script's own parser accepts: the patterns of its `case "$1" in` option loop (or `getopts`
    letters), whether anything else is rejected (its `*)` branch exits), and the variables its positional
    parameters go to (`NAME="${3:-x}"` -> {3: "NAME"})."""

    patterns: tuple[str, ...]
    rejects_others: bool
    slots: dict[int, str]
    line: int  # of the `case` that parses the options (0: none)
    # Options the script cannot do without: the variable an option's branch sets (`--cann-version)
    # CANN_VERSION="$2"`) is set nowhere else, has no default, and is read under `set -u`: pattern -> variable.
    required: dict[str, str] = field(default_factory=dict)
    # The `case` parses `getopts` letters (`c) ...`): its patterns are the `-c` options, a word `-j16` is `-j`
    # with its value, and a `--long` word is not judged.
    getopts: bool = False
    # The arguments go through GNU `getopt` first, which splits `-j16` into `-j 16` (and `-hv` into `-h -v`).
    splits_short: bool = False


_CASE_ARG = lazyre.compile(r"""case\s+["']?\$\{?(1|arg|opt|key|option|param)\}?["']?\s+in\b""")
_PATTERN = lazyre.compile(r"""[ \t]*\(?[ \t]*((?:[^\s()|;]+)(?:[ \t]*\|[ \t]*[^\s()|;]+)*)[ \t]*\)""")
_SLOT = lazyre.compile(
    r"""(?:^|[;\s])(?:local\s+|export\s+|readonly\s+)?([A-Za-z_]\w*)=["']?\$\{?([1-9][0-9]?)(?:[:}]|["'\s]|\Z)"""
)


# `$#` compared for equality with a count (`[ $# == 9 ]`, `[ "$#" -eq 5 ]`): the number it is compared with.
_ARGC_IS = lazyre.compile(r"\$\{?#\}?\"?\s*(?:==?|-eq)\s*\"?(\d+)")


def script_interface(ctx: Context, path: str) -> ScriptInterface | None:
    """The script's interface (memoised), None when it cannot be read."""
    return ctx.memo(("script-interface", "head", path), lambda: _interface(ctx, path))


def _interface(ctx: Context, path: str) -> ScriptInterface | None:
    src = ctx.source(path)
    if src is None:
        return None
    lines = src.lines
    patterns: list[str] = []
    rejects = False
    case_line = 0
    option_vars: dict[str, str] = {}  # variable -> the option whose branch sets it
    case_lines: set[int] = set()
    getopts = False
    loops = re.search(r"\$#|\"\$@\"|\$@|getopts|shift", src.text) is not None
    for i, text in enumerate(lines):
        if case_line == 0 and loops and _CASE_ARG.search(text):
            branches = list(_case_branches(lines, i))
            found = [p for _, _, opened in branches if opened is not None for p in opened]
            letters = "getopts" in src.text and bool(found) and all(len(p) == 1 for p in found if p not in ("*", "?"))
            if not letters and not any(p.startswith("-") for p in found):
                continue  # a `case` of something else (a key of `k=v` pairs): not the option parser
            getopts = letters
            case_line = i + 1
            current: list[str] = []
            for k, body, opened in branches:
                if opened is not None:
                    current = opened
                    patterns.extend(current)
                for v in _OPTION_VALUE.findall(body):
                    if current and current != ["*"]:
                        option_vars.setdefault(v, current[0])
                        case_lines.add(k)
                if current == ["*"] and re.search(r"\bexit\s+[1-9]|\busage\b|\bUnknown\b|\bInvalid\b", body, re.I):
                    rejects = True
    slots: dict[int, str] = {}
    if len(set(_ARGC_IS.findall(src.text))) < 2:
        named: dict[int, set[str]] = {}
        for text in lines:
            for m in _SLOT.finditer(text):
                slots.setdefault(int(m.group(2)), m.group(1))
                named.setdefault(int(m.group(2)), set()).add(m.group(1))
        if any(len(names) > 1 for names in named.values()):
            # One position read into two variables (`PRE_TRAINED=$4` in one branch, `ANNOTATION=$4` in another):
            # the script rearranges its positions by the call, so no slot is told (a MindSpore model zoo's launcher
            # swaps its 4th and 5th when the 4th is a checkpoint; rs-r41, judged false twice).
            slots = {}
    # (else the script reads its positions by how many arguments it gets, `if [ $# == 5 ]` ... `elif [ $# == 9 ]`:
    # which variable a slot fills depends on the call, so no slot is told)
    required: dict[str, str] = {}
    if option_vars and _NOUNSET_TEXT.search(src.text):
        for var, option in option_vars.items():
            elsewhere = any(
                re.search(rf"(?:^|[;&|\s]){var}=", text) for k, text in enumerate(lines) if k not in case_lines
            )
            if elsewhere or re.search(rf"\$\{{{var}:?[-=?+]", src.text):
                continue
            if re.search(rf"\$\{{?{var}\b(?!:?[-=?+])", src.text):
                required[option] = var
    if getopts:
        patterns = ["-" + p if p not in ("*", "?") else p for p in patterns]
    splits = re.search(r"\bgetopt[ \t]", src.text) is not None
    return ScriptInterface(tuple(patterns), rejects, slots, case_line, required, getopts, splits)


def _case_branches(lines: Sequence[str], at: int) -> Iterator[tuple[int, str, list[str] | None]]:
    """The lines of the `case` that starts on line index `at`, up to its `esac`: (index, text without its comment,
    the patterns of the branch the line opens at the top level, else None)."""
    depth = 0
    for k in range(at + 1, len(lines)):
        body = lines[k].split("#", 1)[0] if not lines[k].lstrip().startswith("#") else ""
        if re.match(r"\s*esac\b", body) and depth == 0:
            return
        if re.search(r"\bcase\b.*\bin\b", body):
            depth += 1
        if re.match(r"\s*esac\b", body):
            depth -= 1
        m = _PATTERN.match(body) if depth == 0 else None
        opened = m is not None and not re.match(r"\s*\$\(", body)
        yield k, body, [p.strip().strip("\"'") for p in m.group(1).split("|")] if m is not None and opened else None


_OPTION_VALUE = lazyre.compile(r"""([A-Za-z_]\w*)=["']?\$\{?2\b""")
_NOUNSET_TEXT = lazyre.compile(r"(?m)^[ \t]*set[ \t]+(?:-[a-zA-Z]*u[a-zA-Z]*\b|-o[ \t]+nounset\b)")


_PREFIX_BEFORE_SCRIPT = lazyre.compile(r"(?:^|[;&|]\s*)((?:[A-Za-z_]\w*=\S*\s+)+)(?:bash|sh|source|\.|\./)")


def provided_names(ctx: Context) -> frozenset[str]:
    """Variables the repository hands to its scripts from outside them: every Dockerfile ARG and ENV, every
    workflow, job and step `env:` key, and `NAME=value` before a script call in a `run:` step. (A name some
    repository script exports: `exported_by_a_script`.) A script that reads one of these without setting it may
    get it from a caller the call graph cannot see (a script copied into an image, a step's environment)."""
    return ctx.memo(("provided-names", "head", ""), lambda: frozenset(_provided(ctx)))


def _provided(ctx: Context) -> set[str]:
    from npu_review.checks.analysis.workflows import workflow, workflow_paths
    from npu_review.checks.kinds import DOCKERFILE

    out: set[str] = set()
    for path in ctx.paths_of_kind(DOCKERFILE):
        src = ctx.source(path)
        if src is not None and ("ARG" in src.text or "ENV" in src.text):
            out.update(p.name for i in ctx.dockerfile(src).of("ARG", "ENV") for p in i.pairs)
    for path in workflow_paths(ctx, "head"):
        wf = workflow(ctx, path)
        if wf is None:
            continue
        out.update(wf.env)
        for job in wf.jobs.values():
            out.update(job.env)
            for step in job.steps:
                out.update(step.env)
                if step.run is not None and "=" in step.run.value:
                    for m in _PREFIX_BEFORE_SCRIPT.finditer(step.run.value):
                        out.update(re.findall(r"([A-Za-z_]\w*)=", m.group(1)))
    return out


def shell_texts(ctx: Context) -> tuple[tuple[str, str], ...]:
    """(path, text) of every shell script at head, read once per run: the name searches below go over them, one
    pass for each name asked."""

    def read() -> tuple[tuple[str, str], ...]:
        out = []
        for path in ctx.paths_of_kind(SHELL):
            src = ctx.source(path)
            if src is not None:
                out.append((path, src.text))
        return tuple(out)

    return ctx.memo(("shell-texts", "head", ""), read)


def exported_by_a_script(ctx: Context, name: str) -> bool:
    """Some repository script exports `name` (`export NAME=...`, `export NAME`; comment lines left out)."""

    def find() -> bool:
        rx = re.compile(r"export[ \t]+(?:[^\n;&|#]*[ \t])?" + re.escape(name) + r"(?![\w])")
        for _path, text in shell_texts(ctx):
            if name not in text:
                continue
            for m in rx.finditer(text):
                if not text[text.rfind("\n", 0, m.start()) + 1 : m.start()].lstrip().startswith("#"):
                    return True
        return False

    return ctx.memo(("exported-by-a-script", "head", name), find)


def sourced_through_a_variable(ctx: Context, path: str) -> tuple[str, ...]:
    """The repository shell scripts that source a file of this script's name by a path the call graph cannot
    resolve (`. ${common_script_dir}/testcase_common.sh`, `source "$(dirname "$0")/../env.sh"`): a function
    library's users, which set its inputs before they source it."""
    name = path.rsplit("/", 1)[-1]
    source = re.compile(
        r"(?:^|[;&|({]|\bthen|\bdo|\belse)[ \t]*(?:\.|source)[ \t]+[\"']?[^\s;&|]*[$`][^\s;&|]*/"
        + re.escape(name)
        + r"(?![\w.-])",
        re.M,
    )

    def find() -> tuple[str, ...]:
        return tuple(p for p, text in shell_texts(ctx) if p != path and name in text and source.search(text))

    return ctx.memo(("sourced-through-a-variable", "head", path), find)


def scripts_setting(ctx: Context, name: str) -> frozenset[str]:
    """The repository shell scripts that assign `name` or give it a default (`NAME=`, `${NAME:-d}`,
    `${NAME:=d}`): what the repository's scripts set for themselves (comment lines left out; `NAME=$NAME`, which
    passes the caller's value on, sets nothing)."""

    def find() -> frozenset[str]:
        assign = re.compile(re.escape(name) + r"\+?=")
        default = re.compile(r"\$\{" + re.escape(name) + r":?[-=]")
        # `NAME='$NAME'` (in a `docker exec ... bash -c "..."`) passes the caller's value on: it sets nothing.
        passed_on = re.compile(r"""['"]?\$(?:""" + re.escape(name) + r"|\{" + re.escape(name) + r"""\})['"]?(?:\s|$)""")
        found: set[str] = set()
        for path, text in shell_texts(ctx):
            if name not in text:
                continue
            if default.search(text):
                found.add(path)
                continue
            for m in assign.finditer(text):
                i = m.start()
                line = text[text.rfind("\n", 0, i) + 1 : i]
                if passed_on.match(text, m.end()):
                    continue
                if (i == 0 or text[i - 1] in " \t\n;&|(") and not line.lstrip().startswith("#"):
                    found.add(path)
                    break
        return frozenset(found)

    return ctx.memo(("scripts-setting", "head", name), find)


# -- what a script's variables hold when it is run with no arguments -----------------------------------------------

# Possible values of a variable: a set of literal texts, or None when it cannot be told (a command's output, the
# caller's environment, an assignment in a function or a loop that may run).
Values = frozenset[str] | None
_POSITIONAL = "@"  # the state's key for the positional parameters: {""} while none are given, None after `set --`
_MAX_VALUES = 16


class NoArgState:
    """The variables a script has set on one path through it: possible values and the line that set them last."""

    def __init__(self, vals: dict[str, Values] | None = None, lines: dict[str, int] | None = None) -> None:
        self.vals: dict[str, Values] = {_POSITIONAL: frozenset({""})} if vals is None else vals
        self.lines: dict[str, int] = {} if lines is None else lines

    def copy(self) -> NoArgState:
        return NoArgState(dict(self.vals), dict(self.lines))

    def set(self, name: str, value: Values, line: int) -> None:
        self.vals[name] = value
        self.lines[name] = line


def _merge(states: Sequence[NoArgState]) -> NoArgState | None:
    """The state after one of `states` (the paths out of an `if` or `case`): a variable set on some paths and not
    on the others holds the caller's value there, which is unknown."""
    if not states:
        return None
    out = NoArgState({}, {})
    for name in dict.fromkeys(k for s in states for k in s.vals):
        found: set[str] = set()
        value: Values = None
        if all(name in s.vals and s.vals[name] is not None for s in states):
            for s in states:
                found |= s.vals[name] or frozenset()
            value = frozenset(found) if len(found) <= _MAX_VALUES else None
        out.vals[name] = value
        out.lines[name] = max((s.lines[name] for s in states if name in s.lines), default=0)
    return out


def _product(parts: Sequence[Values]) -> Values:
    out: set[str] = {""}
    for part in parts:
        if part is None:
            return None
        out = {a + b for a in out for b in part}
        if len(out) > _MAX_VALUES:
            return None
    return frozenset(out)


_PARAM = lazyre.compile(r"(?P<name>[A-Za-z_]\w*|\d+|[@*#?$!-])(?P<op>:?[-=+?])?", re.S)
_BARE = lazyre.compile(r"\$(?:([A-Za-z_]\w*)|(\d|[@*#?$!-]))")


def _lookup(state: NoArgState, name: str) -> Values:
    """A parameter's values: `$1`..`$9`, `$@`, `$*` are empty while no argument was given, `$#` is 0; a variable the
    script has not set is the caller's (unknown)."""
    positional = state.vals.get(_POSITIONAL)
    if (name.isdigit() and name != "0") or name in ("@", "*"):
        return positional
    if name == "#":
        return None if positional is None else frozenset({"0"})
    if not (name[:1].isalpha() or name[:1] == "_"):
        return None
    return state.vals.get(name)


def expand_no_args(raw: str, state: NoArgState) -> Values:
    """The values of a shell word as written (quotes kept) in `state`; None for what cannot be told (`$(...)`,
    backticks, arithmetic, `${x%...}`, a variable the script has not set)."""
    parts: list[Values] = []
    lit: list[str] = []
    i, n = 0, len(raw)
    quote = ""
    while i < n:
        c = raw[i]
        if quote == "'":
            if c == "'":
                quote = ""
            else:
                lit.append(c)
            i += 1
            continue
        if c == "\\" and i + 1 < n:
            lit.append(raw[i + 1])
            i += 2
            continue
        if c == '"':
            quote = "" if quote == '"' else '"'
            i += 1
            continue
        if c == "'" and not quote:
            quote = "'"
            i += 1
            continue
        if c == "`":
            return None
        if c != "$":
            lit.append(c)
            i += 1
            continue
        parts.append(frozenset({"".join(lit)}))
        lit = []
        if raw.startswith("$(", i) or raw.startswith("$[", i):
            return None
        if raw.startswith("${", i):
            end = closing_brace(raw, i + 2)
            if end < 0:
                return None
            value = _param(raw[i + 2 : end], state)
            if value is None:
                return None
            parts.append(value)
            i = end + 1
            continue
        m = _BARE.match(raw, i)
        if m is None:
            lit.append(c)
            i += 1
            continue
        parts.append(_lookup(state, m.group(1) or m.group(2)))
        i = m.end()
    parts.append(frozenset({"".join(lit)}))
    return _product(parts)


def _param(body: str, state: NoArgState) -> Values:
    """`${body}`: a parameter, or one with a default (`${1:-x}`, `${X-y}`, `${X:=y}`) or an alternative (`:+`)."""
    m = _PARAM.match(body)
    if m is None:
        return None
    name, op = m.group("name"), m.group("op")
    if op is None:
        return _lookup(state, name) if m.end() == len(body) else None
    word = expand_no_args(body[m.end() :], state)
    value = _lookup(state, name)
    if value is None or word is None:
        return None
    colon = op.startswith(":")
    kind = op[-1]
    if kind == "?":
        return value
    unset = name.isdigit() or name in ("@", "*")  # no argument was given: every positional parameter is unset
    out: set[str] = set()
    for v in value:
        empty = unset or (colon and v == "")
        if kind in "-=":
            out |= word if empty else {v}
        else:  # `+`: the alternative when set (and not empty with the colon)
            out |= {""} if empty else word
    return frozenset(out) if len(out) <= _MAX_VALUES else None


_TEST_UNARY = {"-z": lambda s: s == "", "-n": lambda s: s != ""}
_TEST_INT = {
    "-eq": lambda a, b: a == b,
    "-ne": lambda a, b: a != b,
    "-lt": lambda a, b: a < b,
    "-le": lambda a, b: a <= b,
    "-gt": lambda a, b: a > b,
    "-ge": lambda a, b: a >= b,
}


def _condition(cmds: Sequence[ShellEvent], state: NoArgState) -> bool | None:
    """Whether an `if`/`while` condition holds with no arguments given: one test of literal values (`[[ "$X" ==
    ON ]]`, `[ $# -eq 0 ]`, `[ -z "$1" ]`), `getopts` (false: no option to read), `true`/`false`; None for
    anything else."""
    if len(cmds) != 1:
        return None
    words = [w.raw for w in cmds[0].words]
    negate = False
    while words and words[0] == "!":
        negate, words = not negate, words[1:]
    if not words:
        return None
    found: bool | None = None
    if words[0] in ("true", ":") and len(words) == 1:
        found = True
    elif words[0] == "false" and len(words) == 1:
        found = False
    elif words[0] == "getopts":
        found = False if state.vals.get(_POSITIONAL) is not None else None
    elif words[0] in ("[", "[[", "test"):
        found = _test(words, state)
    if found is None:
        return None
    return found != negate


def _test(words: list[str], state: NoArgState) -> bool | None:
    double = words[0] == "[["
    if words[0] != "test":
        if words[-1] != ("]]" if double else "]"):
            return None
        words = words[:-1]
    args: list[tuple[str, str]] = []  # (value, the word as written)
    for raw in words[1:]:
        if raw in ("&&", "||", "-a", "-o", "(", ")"):
            return None
        value = expand_no_args(raw, state)
        if value is None or len(value) != 1:
            return None
        text = next(iter(value))
        if not double and text == "" and '"' not in raw and "'" not in raw:
            continue  # an unquoted empty expansion is no word in `[`
        args.append((text, raw))
    if len(args) == 1:
        return args[0][0] != ""
    if len(args) == 2:
        op, arg = args[0][0], args[1][0]
        if op == "!":
            return arg == ""
        check = _TEST_UNARY.get(op)
        return check(arg) if check is not None else None
    if len(args) == 3:
        left, op, right = args[0][0], args[1][0], args[2][0]
        if op in ("=", "=="):
            if double and any(ch in args[2][1] for ch in "*?[") and args[2][1][:1] not in ("'", '"'):
                return fnmatch.fnmatchcase(left, right)  # `[[ x == a* ]]`: a pattern
            return left == right
        if op == "!=":
            return left != right
        compare = _TEST_INT.get(op)
        if compare is not None and re.fullmatch(r"-?\d+", left) and re.fullmatch(r"-?\d+", right):
            return compare(int(left), int(right))
    return None


@dataclass
class _NoArgFrame:
    kind: str  # "if", "loop", "case", "function", "group"
    before: NoArgState | None  # the state where it opened (None: on no path)
    phase: str = "cond"  # "cond"/"head" (the condition's commands come), "body"
    cond: list[ShellEvent] = field(default_factory=list)
    head: tuple[Word, ...] = ()
    outcomes: list[NoArgState] = field(default_factory=list)
    decided: bool = False  # a branch before was taken for sure
    entered: bool = False  # the loop's body may run
    assigned: set[str] = field(default_factory=set)  # names a loop's body sets
    subject: Values = None  # the case's word


# Commands that set the variables named in their arguments (`export X=1`, `declare -x X=1`).
_SETS = lazyre.compile(r"[A-Za-z_]\w*\+?=")
_ALL_ARGUMENTS = frozenset({'"$@"', "$@", '"$*"', "$*", '"${@}"', "${@}"})
_DECLARE = frozenset({"export", "declare", "typeset", "readonly", "local"})
_READS = frozenset({"read", "mapfile", "readarray", "getopts", "printf"})


def no_argument_state(
    text: str, sourced: Callable[[str], frozenset[str] | None]
) -> tuple[NoArgState | None, frozenset[str]]:
    """What the variables of a script hold at its end when it is run with no arguments, and the names its
    functions set (which a call may change at any point: unknown).

    Only literal values are followed, and only along what runs with no arguments: `while getopts` and loops over
    `"$@"` are not entered, `${1:-X}` gives X, an `if` or `case` whose test reads only known values takes its
    branch; an undecided one gives each variable the values of every branch (unknown where a branch leaves it
    to the caller). A loop that may run makes what it sets unknown; `source` of a file makes what it may set
    unknown (`sourced(word)`: those names, None for any); `eval` makes everything unknown. None: the script
    fails on every path (a usage check that needs an argument exits 1)."""
    events: list[ShellEvent] = []
    source = Source.file(text)
    lexed = lex(source)
    walker = _Walker(text, 0, events)
    for k, toks in enumerate(lexed.tokens()):
        walker.line(k, toks)
    cur: NoArgState | None = NoArgState()
    stack: list[_NoArgFrame] = []
    in_function: set[str] = set()
    finished: list[NoArgState] = []  # the states where the script exits (not with a failure)
    pending_function = False
    prev_op = ""

    def top(*kinds: str) -> _NoArgFrame | None:
        for f in reversed(stack):
            if f.kind in kinds:
                return f
        return None

    def close_branch(f: _NoArgFrame) -> None:
        nonlocal cur
        if cur is not None:
            f.outcomes.append(cur)
        cur = None

    def assign(name: str, value: Values, line: int) -> None:
        if any(f.kind == "function" for f in stack):
            in_function.add(name)
            return
        if cur is None:
            return
        cur.set(name, value, line)
        for f in stack:
            if f.kind == "loop":
                f.assigned.add(name)

    for ev in events:
        what = ev.what
        if pending_function and what != "{":
            pending_function = False
        if what == "command":
            f = stack[-1] if stack else None
            if f is not None and f.kind in ("if", "loop") and f.phase == "cond":
                f.cond.append(ev)
                prev_op = ev.op
                continue
            conditional = prev_op in ("&&", "||")
            piped = prev_op == "|" or ev.op == "|"
            prev_op = ev.op
            if ev.nested or piped:
                # a subshell's or a pipeline's part: its variables stay there (a case pattern's `(` may also
                # read as one: what it sets is unknown, not unchanged)
                _run_command(ev, cur, lambda n, v, ln: assign(n, None, ln), sourced, in_function, stack)
                continue
            before = cur.copy() if cur is not None and conditional else None
            _run_command(ev, cur, assign, sourced, in_function, stack)
            ends = bool(ev.words) and ev.words[0].raw in ("exit", "return") and not conditional
            if ends and cur is not None and not any(f.kind == "function" for f in stack):
                status = ev.words[1].unquoted if len(ev.words) > 1 else ""
                if not re.fullmatch(r"[1-9]\d*", status):
                    finished.append(cur)  # `exit`, `exit 0`, `exit $?`: the run may have done its work
                cur = None  # (`exit 1`: it failed, built nothing)
            if before is not None and cur is not None:
                cur = _merge([before, cur])
            continue
        prev_op = ""
        if what == "if":
            stack.append(_NoArgFrame("if", cur))
        elif what in ("while", "until"):
            stack.append(_NoArgFrame("loop", cur, head=ev.words[:1]))
        elif what in ("for", "select"):
            stack.append(_NoArgFrame("loop", cur, phase="head", head=ev.words))
        elif what in ("then", "elif", "else"):
            f = top("if")
            if f is None:
                continue
            if what == "then":
                held = _condition(f.cond, f.before) if f.before is not None else False
                f.cond, f.phase = [], "body"
                if f.before is None or f.decided or held is False:
                    cur = None
                else:
                    cur = f.before.copy()
                    f.decided = held is True
            elif what == "elif":
                close_branch(f)
                f.phase = "cond"
            else:
                close_branch(f)
                f.phase = "body"
                if f.before is not None and not f.decided:
                    cur = f.before.copy()
                f.decided = True
        elif what in ("fi", "esac"):
            f = top("if" if what == "fi" else "case")
            if f is None:
                continue
            while stack and stack[-1] is not f:
                stack.pop()
            stack.pop()
            close_branch(f)
            if not f.decided and f.before is not None:
                f.outcomes.append(f.before)  # no branch was sure to run: the state before it is one outcome
            cur = _merge(f.outcomes)
        elif what == "do":
            f = top("loop")
            if f is None:
                continue
            f.entered = _may_enter(f, f.before) if f.before is not None else False
            f.phase = "body"
            cur = f.before.copy() if f.entered and f.before is not None else None
            if cur is not None and f.head and f.head[0].raw in ("for", "select") and len(f.head) > 1:
                assign(f.head[1].raw, None, f.head[1].line)
        elif what == "done":
            f = top("loop")
            if f is None:
                continue
            while stack and stack[-1] is not f:
                stack.pop()
            stack.pop()
            cur = f.before.copy() if f.before is not None else None
            if cur is not None and f.entered:
                for name in f.assigned:
                    assign(name, None, cur.lines.get(name, 0))
        elif what == "case":
            subject = expand_no_args(ev.words[1].raw, cur) if cur is not None and len(ev.words) > 1 else None
            stack.append(_NoArgFrame("case", cur, phase="pattern", subject=subject))
            cur = None
        elif what == "pattern":
            f = top("case")
            if f is None:
                continue
            close_branch(f)
            matched = _pattern_matches(f.subject, ev.words)
            if f.before is not None and not f.decided and matched is not False:
                cur = f.before.copy()
                f.decided = matched is True
        elif what == "arm-end":
            f = top("case")
            if f is not None:
                close_branch(f)
        elif what == "unparsed":
            f = top("case")
            if f is None or f.before is not None:
                return None, frozenset(in_function)  # arms the walk could not read, on a path that runs
        elif what == "function":
            pending_function = True
        elif what == "{":
            stack.append(_NoArgFrame("function" if pending_function else "group", cur, phase="body"))
            pending_function = False
        elif what == "}":
            f = top("function", "group")
            if f is None:
                continue
            while stack and stack[-1] is not f:
                stack.pop()
            stack.pop()
            if f.kind == "function":
                cur = f.before
    if stack:
        return None, frozenset(in_function)  # a construct left open: the shell rejects the script
    return _merge([*finished, *([cur] if cur is not None else [])]), frozenset(in_function)


def _may_enter(f: _NoArgFrame, state: NoArgState) -> bool:
    """Whether a loop's body may run with no arguments: not `while getopts`, `while [ $# -gt 0 ]` or a `for`
    over `"$@"` (or over nothing)."""
    if f.head and f.head[0].raw in ("for", "select"):
        if len(f.head) < 2:
            return True  # `for ((...))`
        words = [w.raw for w in f.head[2:]]
        if not words or words[0] != "in":
            return state.vals.get(_POSITIONAL) is None  # `for x; do`: over the arguments
        for raw in words[1:]:
            if raw in _ALL_ARGUMENTS and state.vals.get(_POSITIONAL) is not None:
                continue  # no argument: no word
            value = expand_no_args(raw, state)
            if value is None or value != frozenset({""}) or raw[:1] in ("'", '"'):
                return True
        return False
    held = _condition(f.cond, state)
    until = bool(f.head) and f.head[0].raw == "until"
    return held is None or held != until


def _pattern_matches(subject: Values, words: tuple[Word, ...]) -> bool | None:
    """Whether a case arm's patterns match its subject (a single known text, literal patterns)."""
    if subject is None or len(subject) != 1:
        return None
    text = next(iter(subject))
    patterns = [w.raw for w in words if w.raw != "|"]
    if not patterns or any("$" in p or "`" in p for p in patterns):
        return None
    for p in patterns:
        for alt in p.split("|"):
            if any(q in alt for q in "'\"\\"):
                if unquote(alt) == text:  # a quoted pattern matches as written
                    return True
            elif alt and fnmatch.fnmatchcase(text, alt):
                return True
    return False


def _run_command(
    ev: ShellEvent,
    cur: NoArgState | None,
    assign: Callable[[str, Values, int], None],
    sourced: Callable[[str], frozenset[str] | None],
    in_function: set[str],
    stack: list[_NoArgFrame],
) -> None:
    """One simple command's effect on the variables."""
    words = list(ev.words)
    if not words:
        return
    k = 0
    prefix: list[Word] = []
    while k < len(words) and _SETS.match(words[k].raw) and not words[k].quoted:
        prefix.append(words[k])
        k += 1
    if k == len(words):  # only assignments: they set the script's variables
        for w in prefix:
            _assign_word(w, cur, assign)
        return
    name = words[k].raw
    args = words[k + 1 :]
    if name in _DECLARE:
        for w in args:
            if _SETS.match(w.raw):
                _assign_word(w, cur, assign)
        return
    if name == "unset":
        for w in args:
            if not w.raw.startswith("-"):
                assign(w.unquoted, frozenset({""}), w.line)
        return
    if name in _READS:
        for w in args:
            if re.fullmatch(r"[A-Za-z_]\w*", w.raw):
                assign(w.raw, None, w.line)
        return
    if name == "set" and _sets_arguments([w.raw for w in args]):
        assign(_POSITIONAL, None, words[k].line)
        return
    if name == "eval" or (name in ("source", ".") and args and sourced(args[0].raw) is None):
        if any(f.kind == "function" for f in stack):
            in_function.add("*")  # a function that may set anything
        elif cur is not None:
            for var in list(cur.vals):
                if var != _POSITIONAL:
                    assign(var, None, cur.lines.get(var, 0))
        return
    if name in ("source", ".") and args:
        for var in sourced(args[0].raw) or ():
            assign(var, None, words[k].line)


def _sets_arguments(args: list[str]) -> bool:
    """`set` with these arguments gives the script new positional parameters (`set -- a b`, `set a`), not only
    options (`set -euo pipefail`, `set +x`)."""
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            return i + 1 < len(args)
        if not a.startswith(("-", "+")) or len(a) < 2:
            return True
        if a[-1] == "o":
            i += 1  # `-o name`, `-euo pipefail`: the option's name
        i += 1
    return False


def _assign_word(w: Word, cur: NoArgState | None, assign: Callable[[str, Values, int], None]) -> None:
    m = _SETS.match(w.raw)
    if m is None:
        return
    name = w.raw[: m.end() - 1].rstrip("+")
    raw = w.raw[m.end() :]
    if w.raw[m.end() - 2 : m.end() - 1] == "+" or raw.startswith("("):
        assign(name, None, w.line)  # `X+=y`, an array
        return
    assign(name, expand_no_args(raw, cur) if cur is not None else None, w.line)
