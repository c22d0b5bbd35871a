"""Shell launch scripts: assignments, `case`/`if` device branches, variables and launches with their overrides.

The parser reads bash the way launch scripts use it and never raises: what it cannot follow becomes
`UNKNOWN`, which rules must treat as "don't know, stay silent".

API (everything below is a plain dataclass; nothing here touches the file system or the environment):

    script = parse(text)                       # ShellScript: structure only, values not resolved yet
    view = npu_view(script, src.kinds, facts.ascend_values.device_key, facts.launchers)
                                               # the script as it runs on Ascend, or None (a GPU-only script)
    for inv in view.invocations:               # each Hydra launch (`python3 -m verl... a.b=1`, torchrun ...)
        eff = inv.effective("actor_rollout_ref.rollout.enforce_eager")
        as_bool(eff.value)                     # True / False / None (absent, unknown or not a bool)
        eff.override.line                      # physical line of the override that decided it (last one wins)
    view.env("TASK_QUEUE_ENABLE", inv)         # the exported value that command sees (EnvValue or None)
    view.variable("TP", inv)                   # any shell variable there (exported or not)
    view.calls                                 # every plain command (`bash x.sh`, `source env.sh`, ...)
    view.argparse_launches                     # commands of declared argparse launchers (`vllm serve --x 1`)
    script.assignments, script.npu_arms        # definitions (export, NAME=, ${X:=d}, for, read) and NPU arms

Layers:
 1. The shell layer (`checks.parsers.sh`): logical lines (continuations joined, multi-line quotes, arrays and
    `$( )` kept together, comments dropped, heredoc bodies skipped) and their tokens.
 2. `parse(text)`: statements (simple commands and array assignments) with the stack of
    `if`/`case`/loop/function arms around each one. An arm whose test compares a device variable
    (`DEVICE`, `device_name`, ...) with `npu` is an NPU arm; with another device (`gpu`, `cuda`) an OTHER arm.
 3. `ShellScript.view(npu, launchers)`: replays the statements in order. The NPU view skips OTHER arms and treats
    NPU arms as taken; every other arm (and loop or function body) is conditional: a value assigned in
    a conditional arm that differs from the value before it makes the variable UNKNOWN where it is used
    outside that arm. Bash arrays are expanded into the commands that use `"${NAME[@]}"`, in command order,
    so that `Invocation.effective()` follows Hydra's "last override wins". What counts as a launch is the
    project's data (`launchers` in the facts: entry points and their style), not this module's.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from npu_review.checks import lazyre
from npu_review.checks.fastinit import fast_init
from npu_review.checks.parsers.sh import (
    REDIRECT,
    ArrayWord,
    LogicalLine,
    Op,
    Source,
    Token,
    Word,
    lex,
    unquote,
)
from npu_review.checks.parsers.sh import logical_lines as _logical_lines
from npu_review.checks.parsers.sh.launchers import ArgparseLaunch, ArgWord, Launchers, argparse_args, argparse_options

__all__ = [
    "UNKNOWN",
    "Arm",
    "Assignment",
    "Call",
    "Effective",
    "EnvValue",
    "Invocation",
    "LogicalLine",
    "Override",
    "ShellScript",
    "Statement",
    "Unknown",
    "Value",
    "View",
    "Word",
    "as_bool",
    "as_int",
    "hydra_str",
    "is_npu_capable",
    "logical_lines",
    "npu_view",
    "parse",
    "split_override",
]


# -- the UNKNOWN sentinel ----------------------------------------------------------------------------------


class Unknown:
    """A value the parser could not resolve. It has no truth value on purpose: compare with `is UNKNOWN`."""

    _instance: Unknown | None = None

    def __new__(cls) -> Unknown:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __bool__(self) -> bool:
        raise TypeError("UNKNOWN has no truth value; test `value is UNKNOWN` first")


UNKNOWN: Final = Unknown()
Value = str | Unknown

Device = Literal["npu", "other"]

# Names of shell variables that select the device (DEVICE, device_name, TARGET_DEVICE, DEVICE_TYPE, ...).
_DEVICE_VAR = lazyre.compile(r"(?i)([a-z0-9]+_)?device(_name|_type)?\Z")
_NPU_VALUES = frozenset({"npu", "ascend", "huawei"})
_OTHER_VALUES = frozenset({"gpu", "cuda", "nvidia", "cpu", "rocm", "amd", "xpu", "hpu", "mps"})

# A Hydra override: optional +, ++ or ~, then a dotted key (at least one dot), then `=VALUE`.
_HYDRA_KEY = lazyre.compile(r"(\+\+|\+|~)?([a-z_]\w*(?:\.\w+)+)\Z")
_SHELL_ASSIGN = lazyre.compile(r"([A-Za-z_]\w*)(\[[^\]]*\])?(\+?)=")
_NAME = lazyre.compile(r"[A-Za-z_]\w*\Z")

_KEYWORDS_START = frozenset({"if", "then", "elif", "else", "fi", "case", "esac", "for", "while", "until"})


# -- small value helpers -------------------------------------------------------------------------------------


def hydra_str(value: Value | None) -> Value | None:
    """The value as Hydra reads a plain string: outer whitespace and one pair of matching quotes removed."""
    if value is None or value is UNKNOWN:
        return value
    assert isinstance(value, str)
    v = value.strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
        v = v[1:-1].strip()
    return v


def as_bool(value: Value | None) -> bool | None:
    """Hydra's reading of a boolean: True/False for true/false in any case, None for absent/unknown/other."""
    v = hydra_str(value)
    if not isinstance(v, str):
        return None
    low = v.lower()
    if low == "true":
        return True
    if low == "false":
        return False
    return None


def as_int(value: Value | None) -> int | None:
    v = hydra_str(value)
    if not isinstance(v, str):
        return None
    try:
        return int(v, 10)
    except ValueError:
        return None


# -- layers 1 and 2: logical lines and tokens come from the shell layer (checks.parsers.sh) ------------------

_REDIR = REDIRECT


def logical_lines(text: str) -> list[LogicalLine]:
    """The logical lines of a shell script (see `checks.parsers.sh.LogicalLine`); never raises."""
    return _logical_lines(Source.file(text))


# -- layer 2: statements and arms ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Arm:
    """One branch of an `if`/`case`/`&&` test, a loop body or a function body."""

    id: int
    device: Device | None  # "npu"/"other" when the arm's test compares a device variable, else None
    conditional: bool  # False only for a pure device test (taken or skipped as a whole by the NPU view)
    line: int


@fast_init
@dataclass(frozen=True)
class _Assign:
    name: str
    raw: str
    line: int
    append: bool  # NAME+=VALUE
    word: Word | None = None


@fast_init
@dataclass(frozen=True)
class Statement:
    """A simple command or a bare assignment, with the arms around it."""

    index: int
    line: int
    end_line: int
    words: tuple[Word, ...]  # command words (leading NAME=VALUE words excluded)
    assigns: tuple[_Assign, ...]  # leading NAME=VALUE words
    arrays: tuple[ArrayWord, ...]  # NAME=( ... ) / NAME+=( ... )
    arms: tuple[Arm, ...]
    for_var: str = ""  # set on the synthetic statement that assigns a `for` variable

    @property
    def device(self) -> Device | None:
        return _device_of(self.arms)


def _device_of(arms: Iterable[Arm]) -> Device | None:
    devs = {a.device for a in arms}
    if "other" in devs:
        return "other"
    if "npu" in devs:
        return "npu"
    return None


@dataclass
class _Frame:
    kind: str  # if, case, loop, brace, function, subshell, andlist
    state: str = ""
    arm: Arm | None = None
    cond: list[str] = field(default_factory=list)
    device_case: bool = False
    arm_devices: list[Device | None] = field(default_factory=list)
    for_var: str = ""
    for_items: tuple[Word, ...] = ()


_CMP = lazyre.compile(
    r"""\$\{?(?P<var>[A-Za-z_]\w*)(?::?[-=][^}]*)?\}?["']?\s*(?P<op>==|=|!=)\s*["']?(?P<val>[\w*.-]+)"""
)
_CMP_REV = lazyre.compile(
    r"""["']?(?P<val>[A-Za-z][\w*.-]*)["']?\s*(?P<op>==|=|!=)\s*["']?\$\{?(?P<var>[A-Za-z_]\w*)"""
)
_SEPARATORS = frozenset({";", "&&", "||", "|", "|&", "&", ";;", ";&", ";;&"})


def _value_device(value: str) -> Device | None:
    v = value.lower().strip("*\"' ")
    if v in _NPU_VALUES:
        return "npu"
    if v in _OTHER_VALUES:
        return "other"
    return None


def _classify_test(cond: str) -> tuple[Device | None, bool]:
    """(device of the arm a test opens, whether the test also depends on something else)."""
    found: list[tuple[Device, str]] = []
    rest = cond
    for rx in (_CMP, _CMP_REV):
        for m in rx.finditer(cond):
            if not _DEVICE_VAR.match(m.group("var")):
                continue
            dev = _value_device(m.group("val"))
            if dev is not None:
                found.append((dev, m.group("op")))
                rest = rest.replace(m.group(0), " ", 1)
    if len(found) != 1 or "||" in cond:
        return None, True
    dev, op = found[0]
    if op == "!=":
        dev = "other" if dev == "npu" else "npu"
    # A guard like `[ -n "$device_name" ]` is harmless; any other test keeps the arm conditional.
    rest = re.sub(r"-n\s+\S+", " ", rest)
    rest = re.sub(r"[\s\[\]\"';&]|\b(then|if|elif|test)\b", "", rest)
    return dev, bool(rest)


def _case_arm_device(patterns: list[str]) -> Device:
    for p in patterns:
        for alt in p.split("|"):
            if _value_device(alt) == "npu":
                return "npu"
    return "other"


class _Builder:
    """Walks tokens, keeps the if/case/loop/function stack and emits statements. Tolerates broken nesting."""

    def __init__(self) -> None:
        self.stack: list[_Frame] = []
        self.statements: list[Statement] = []
        self.next_arm = 0
        self.function_pending = False
        self.all_arms: list[Arm] = []

    def _new_arm(self, device: Device | None, conditional: bool, line: int) -> Arm:
        self.next_arm += 1
        arm = Arm(self.next_arm, device, conditional, line)
        self.all_arms.append(arm)
        return arm

    def arms(self) -> tuple[Arm, ...]:
        if not self.stack:  # (most statements)
            return ()
        return tuple(f.arm for f in self.stack if f.arm is not None)

    def _top(self, kind: str) -> _Frame | None:
        for f in reversed(self.stack):
            if f.kind == kind:
                return f
        return None

    def _unwind_to(self, frame: _Frame) -> None:
        while self.stack and self.stack[-1] is not frame:
            self.stack.pop()

    def _pop(self, kind: str) -> None:
        f = self._top(kind)
        if f is not None:
            self._unwind_to(f)
            self.stack.pop()

    def _in_case_pattern(self, cur: list[Token]) -> bool:
        top = self.stack[-1] if self.stack else None
        if top is None or top.kind != "case" or top.state not in ("in", "pattern"):
            return False
        return not any(isinstance(t, Op) and t.text == ")" for t in cur)

    def _in_if_cond(self) -> _Frame | None:
        top = self.stack[-1] if self.stack else None
        return top if top is not None and top.kind == "if" and top.state == "cond" else None

    # token stream --------------------------------------------------------------------------------------------
    def feed(self, toks: Sequence[Token]) -> None:
        """One logical line."""
        cur: list[Token] = []
        for t in toks:
            if not isinstance(t, Op):
                cur.append(t)
                continue
            if t.text in ("(", ")", "|") and self._in_case_pattern(cur):
                cur.append(t)
                continue
            if t.text in _SEPARATORS:
                last = self.command(cur)
                cur = []
                cond = self._in_if_cond()
                if cond is not None:
                    cond.cond.append(t.text)
                elif t.text in ("&&", "||") and last is not None:
                    self._open_andlist([w.raw for w in last if isinstance(w, Word)], t.text, t.line)
                    continue
                if t.text in (";", ";;", ";&", ";;&", "&", "|", "|&"):
                    self._close_andlists()
                if t.text in (";;", ";&", ";;&"):
                    self._case_arm_end()
                continue
            if t.text == "(":
                if len(cur) == 1 and isinstance(cur[0], Word) and _NAME.match(cur[0].raw):
                    cur.append(t)  # name() { ... }
                    continue
                self.command(cur)
                cur = []
                self.stack.append(_Frame("subshell"))
                continue
            if t.text == ")":
                if cur and isinstance(cur[-1], Op) and cur[-1].text == "(":
                    cur.append(t)
                    continue
                if self._top("subshell") is not None:
                    self.command(cur)
                    cur = []
                    self._pop("subshell")
                    continue
                cur.append(t)
                continue
            cur.append(t)  # a redirection
        self.command(cur)
        self._close_andlists()

    def _open_andlist(self, test: list[str], op: str, line: int) -> None:
        """`[ "$DEVICE" = npu ] && export X=1`: what follows runs only when the test holds (or fails, `||`)."""
        if test[:1] not in (["["], ["[["], ["test"]):
            if self.stack and self.stack[-1].kind == "andlist":
                return
            self.stack.append(_Frame("andlist", arm=self._new_arm(None, True, line)))
            return
        dev, extra = _classify_test(" ".join(test))
        if op == "||" and dev is not None:
            dev = "other" if dev == "npu" else "npu"
        self.stack.append(_Frame("andlist", arm=self._new_arm(dev, dev is None or extra, line)))

    def _close_andlists(self) -> None:
        while self.stack and self.stack[-1].kind == "andlist":
            self.stack.pop()

    def command(self, toks: list[Token]) -> list[Token] | None:
        """One simple command; returns its tokens when it is a plain command (for `&&` tests)."""
        if not toks:
            return None
        top = self.stack[-1] if self.stack else None
        first = toks[0]
        word0 = first.raw if isinstance(first, Word) else ""
        if top is not None and top.kind == "case" and top.state in ("in", "pattern"):
            self._case_head(top, toks)
            return None
        cond = self._in_if_cond()
        if cond is not None and word0 != "then":
            cond.cond.append(" ".join(t.raw if isinstance(t, Word) else t.text for t in toks))
            self._emit(toks)
            return None
        if word0 in ("if", "then", "elif", "else", "fi", "case", "esac", "for", "while", "until", "do", "done"):
            self._keyword(word0, toks)
            return None
        if word0 in ("{", "}", "function", "!"):
            self._keyword(word0, toks)
            return None
        if (
            len(toks) >= 3
            and _NAME.match(word0)
            and isinstance(toks[1], Op)
            and toks[1].text == "("
            and isinstance(toks[2], Op)
            and toks[2].text == ")"
        ):
            self.function_pending = True
            self.command(toks[3:])
            return None
        self._emit(toks)
        return toks

    def _keyword(self, word0: str, toks: list[Token]) -> None:
        line = toks[0].line
        rest = toks[1:]
        if word0 == "!":
            self.command(rest)
            return
        if word0 == "if":
            self.stack.append(_Frame("if", state="cond"))
        elif word0 == "elif":
            f = self._top("if")
            if f is not None:
                self._unwind_to(f)
                f.arm, f.state, f.cond = None, "cond", []
        elif word0 == "then":
            f = self._top("if")
            if f is not None:
                self._unwind_to(f)
                dev, extra = _classify_test(" ".join(f.cond))
                f.arm_devices.append(dev)
                f.arm = self._new_arm(dev, dev is None or extra, line)
                f.state = "body"
        elif word0 == "else":
            f = self._top("if")
            if f is not None:
                self._unwind_to(f)
                other: Device | None = None
                if f.arm_devices and None not in f.arm_devices:
                    if "npu" in f.arm_devices:
                        other = "other"
                    elif len(f.arm_devices) == 1:
                        other = "npu"  # `if [ "$DEVICE" = gpu ] ... else ...`: the else arm is the NPU one
                f.arm = self._new_arm(other, other is None, line)
                f.state = "body"
        elif word0 == "fi":
            self._pop("if")
        elif word0 == "case":
            subject = rest[0].raw if rest and isinstance(rest[0], Word) else ""
            m = re.search(r"\$\{?([A-Za-z_]\w*)", subject)
            device_case = bool(m and _DEVICE_VAR.match(m.group(1)))
            self.stack.append(_Frame("case", state="in", device_case=device_case))
            rest = rest[1:]
            if rest and isinstance(rest[0], Word) and rest[0].raw == "in":
                self.stack[-1].state = "pattern"
                rest = rest[1:]
        elif word0 == "esac":
            self._pop("case")
        elif word0 in ("for", "while", "until"):
            frame = _Frame("loop", state="head")
            self.stack.append(frame)
            if word0 == "for":
                name = rest[0].raw if rest and isinstance(rest[0], Word) else ""
                if _NAME.match(name):
                    frame.for_var = name
                    if len(rest) >= 2 and isinstance(rest[1], Word) and rest[1].raw == "in":
                        frame.for_items = tuple(t for t in rest[2:] if isinstance(t, Word))
                    else:
                        frame.for_items = (Word('"$@"', line),)
                rest = []
        elif word0 == "do":
            f = self._top("loop")
            if f is not None:
                self._unwind_to(f)
                f.arm = self._new_arm(None, True, line)
                f.state = "body"
                if f.for_var:
                    self.statements.append(
                        Statement(len(self.statements), line, line, f.for_items, (), (), self.arms(), f.for_var)
                    )
        elif word0 == "done":
            self._pop("loop")
        elif word0 == "function":
            self.function_pending = True
            rest = rest[1:]
            while rest and isinstance(rest[0], Op) and rest[0].text in ("(", ")"):
                rest = rest[1:]
        elif word0 == "{":
            if self.function_pending:
                self.stack.append(_Frame("function", arm=self._new_arm(None, True, line)))
                self.function_pending = False
            else:
                self.stack.append(_Frame("brace"))
        elif word0 == "}":
            for k in range(len(self.stack) - 1, -1, -1):
                if self.stack[k].kind in ("brace", "function"):
                    del self.stack[k:]
                    break
        self.command(rest)

    def _case_head(self, frame: _Frame, toks: list[Token]) -> None:
        # [in] [(] pattern [| pattern]... ) [command...]    or    esac
        i = 0
        if frame.state == "in":
            if isinstance(toks[0], Word) and toks[0].raw == "in":
                i = 1
            frame.state = "pattern"
        head = toks[i] if i < len(toks) else None
        if isinstance(head, Word) and head.raw == "esac":
            self._pop("case")
            self.command(toks[i + 1 :])
            return
        patterns: list[str] = []
        line = toks[i].line if i < len(toks) else 0
        closed = False
        while i < len(toks):
            t = toks[i]
            i += 1
            if isinstance(t, Op) and t.text == ")":
                closed = True
                break
            if isinstance(t, Word):
                patterns.append(t.raw)
        if not closed:
            return
        if frame.device_case:
            frame.arm = self._new_arm(_case_arm_device(patterns), False, line)
        else:
            frame.arm = self._new_arm(None, True, line)
        frame.state = "body"
        self.command(toks[i:])

    def _case_arm_end(self) -> None:
        f = self._top("case")
        if f is not None:
            self._unwind_to(f)
            f.arm, f.state = None, "pattern"

    def _emit(self, toks: list[Token]) -> None:
        words: list[Word] = []
        assigns: list[_Assign] = []
        arrays: list[ArrayWord] = []
        skip_next = False
        for t in toks:
            if isinstance(t, Op):
                skip_next = _REDIR.fullmatch(t.text) is not None
                continue
            if skip_next:
                skip_next = False
                continue
            if isinstance(t, ArrayWord):
                arrays.append(t)
                continue
            if not words:
                m = _SHELL_ASSIGN.match(t.raw)
                if m:
                    if not m.group(2):
                        assigns.append(_Assign(m.group(1), t.raw[m.end() :], t.line, bool(m.group(3)), t))
                    continue
            words.append(t)
        if not (words or assigns or arrays):
            return
        lines = [t.line for t in toks]
        lines += [t.end_line for t in toks if isinstance(t, ArrayWord)]
        self.statements.append(
            Statement(
                len(self.statements),
                min(lines),
                max(lines),
                tuple(words),
                tuple(assigns),
                tuple(arrays),
                self.arms(),
            )
        )


# -- results --------------------------------------------------------------------------------------------------


@fast_init
@dataclass(frozen=True)
class Assignment:
    """A place where a shell variable is defined (with or without a value known to the parser)."""

    name: str
    raw: str | None  # the value as written; None for `read`, `for`, arrays and `export NAME`
    line: int
    kind: str  # assign, prefix, export, local, declare, typeset, readonly, default, for, read, array
    exported: bool
    arms: tuple[Arm, ...]
    index: int  # order of the statement

    @property
    def device(self) -> Device | None:
        return _device_of(self.arms)


@fast_init
@dataclass(frozen=True)
class Override:
    """One Hydra override token (`+a.b=c`, `a.b.c=${X}`, `~a.b`)."""

    prefix: str  # "", "+", "++" or "~"
    key: str  # without the prefix
    raw: str | None  # the value as written, quotes kept (None for a bare `~key`)
    value: Value | None  # the value after shell expansion and quote removal (None for a bare `~key`)
    line: int  # physical line of the token
    text: str  # the whole token as written
    array: str | None = None  # the bash array that carried it
    conditional: bool = False  # added in an arm that may not run before the command
    sources: tuple[int, ...] = ()  # lines of the shell assignments its value came from

    def matches(self, key: str, suffix: bool = False) -> bool:
        """Same key (prefix ignored); with `suffix`, also a longer key ending in `.key`."""
        return self.key == key or (suffix and self.key.endswith("." + key))

    @property
    def lines(self) -> tuple[int, ...]:
        """Its own line, then the lines of the assignments its value came from."""
        return (self.line, *(s for s in self.sources if s != self.line))


@dataclass(frozen=True)
class Effective:
    """What Hydra ends up with for one key in one command (the last override wins)."""

    value: Value | None  # None: absent (the config default applies) or deleted with `~`
    present: bool | None  # None: set only in an arm that may not run
    override: Override | None  # the last override of the key
    overrides: tuple[Override, ...] = ()  # every override that touched the key, in Hydra order


@dataclass(frozen=True)
class EnvValue:
    """A shell variable as a command sees it."""

    name: str
    value: Value
    line: int  # line of the assignment that decided it
    exported: bool | None  # None: exported only in an arm that may not run
    sources: tuple[int, ...] = ()  # further lines the value came from

    @property
    def lines(self) -> tuple[int, ...]:
        return (self.line, *(s for s in self.sources if s != self.line))


_ABSENT = object()


def _dict_lookup(value: Value | None, path: str) -> object:
    """`path` (a.b) inside a dict-valued override: _ABSENT when not spelled out, UNKNOWN when unreadable."""
    v = hydra_str(value)
    if not isinstance(v, str) or not v.startswith("{"):
        return UNKNOWN
    import yaml  # (here: a script with no dict-valued override does not import PyYAML)

    try:
        data = yaml.safe_load(v)
    except Exception:
        return UNKNOWN
    for part in path.split("."):
        if not isinstance(data, dict):
            return UNKNOWN
        if part not in data:
            return _ABSENT
        data = data[part]
    if isinstance(data, bool):
        return "True" if data else "False"
    if data is None:
        return "null"
    if isinstance(data, dict | list):
        return UNKNOWN
    return str(data)


@dataclass(frozen=True)
class Invocation:
    """A command that passes Hydra overrides (`python3 -m verl...`, torchrun, `ray job submit -- ...`)."""

    line: int
    end_line: int
    launcher: str  # the program (`python3`, `torchrun`; the first element of a `"${LAUNCH[@]}"` array)
    module: str | None  # the `-m` module, when there is one
    overrides: tuple[Override, ...]  # in Hydra order: command order with arrays expanded
    passes_args: bool  # `"$@"` is passed on: the caller may add overrides
    index: int  # order of the statement
    prefix_env: tuple[EnvValue, ...] = ()  # NAME=VALUE words in front of the command
    # Every word of the command as written, arrays expanded, in command order (launcher first, `"$@"` left
    # out): options such as `--config-name X` and config-group choices such as `model_engine=megatron`.
    args: tuple[str, ...] = ()

    def find(self, key: str, suffix: bool = False) -> list[Override]:
        return [o for o in self.overrides if o.matches(key, suffix)]

    def effective(self, key: str, suffix: bool = False) -> Effective:
        """Hydra's value of `key` (with `suffix`: of any key ending in `.key`); the last override wins.

        A dict-valued override of an ancestor (`...compilation_config='{cudagraph_mode: FULL}'`) counts for
        the keys it spells out; one that cannot be read makes the key UNKNOWN. An override added in an arm
        that may not run makes the value UNKNOWN unless it repeats the value before it.
        """
        value: Value | None = None
        present: bool | None = False
        last: Override | None = None
        used: list[Override] = []
        tail = "." + key
        for o in self.overrides:
            okey = o.key
            if okey == key or (suffix and okey.endswith(tail)):  # o.matches(key, suffix)
                new: Value | None = None if o.prefix == "~" else o.value
            elif (  # key.startswith(o.key + "."), without building that string
                not suffix and o.prefix != "~" and key.startswith(okey) and key[len(okey) : len(okey) + 1] == "."
            ):
                found = _dict_lookup(o.value, key[len(o.key) + 1 :])
                if found is _ABSENT:
                    continue
                new = found if isinstance(found, str) else UNKNOWN
            else:
                continue
            used.append(o)
            last = o
            new_present = new is not None
            if not o.conditional:
                value, present = new, new_present
                continue
            if value != new:
                value = UNKNOWN
            if present is not new_present:
                present = None
        return Effective(value, present, last, tuple(used))

    def value(self, key: str, suffix: bool = False) -> Value | None:
        return self.effective(key, suffix).value


@dataclass
class _VarEvent:
    name: str
    index: int
    value: Value | None  # None: unset
    exported: bool
    line: int
    branches: tuple[int, ...]
    sources: tuple[int, ...] = ()
    export_only: bool = False  # `export NAME`: marks it exported, keeps the value
    # A string of overrides (`ARGS="a.b=1 c.d=2"`) that `$ARGS` word-splits into a command: its overrides.
    pieces: tuple[Override, ...] | None = None


@dataclass
class _ArrayEvent:
    index: int
    append: bool
    elements: tuple[Override | None, ...]  # None: an element that is not an override
    words: tuple[str, ...]
    branches: tuple[int, ...]
    lines: tuple[int, ...] = ()  # of each element


def _resolve(events: Sequence[_VarEvent], index: int, branches: tuple[int, ...]) -> EnvValue | None:
    """The variable at statement `index` inside `branches`: an assignment in an arm that does not enclose
    the use and changes the value makes it UNKNOWN."""
    found = _resolve_fields(events, index, branches)
    return None if found is None else EnvValue(*found)


def _resolve_fields(
    events: Sequence[_VarEvent], index: int, branches: tuple[int, ...]
) -> tuple[str, Value, int, bool | None, tuple[int, ...]] | None:
    """`_resolve` as the fields of its EnvValue, for `_Expander.lookup`, which needs no EnvValue."""
    value: Value | None = None
    exported: bool | None = False
    line = 0
    sources: tuple[int, ...] = ()
    defined = False
    name = ""
    for e in events:
        if e.index >= index:
            break
        name = e.name
        certain = e.branches == branches[: len(e.branches)]
        if e.export_only:
            if certain:
                exported = True
            elif exported is False:
                exported = None
            continue
        if certain:
            value, line, sources, defined = e.value, e.line, e.sources, True
            if e.exported:
                exported = True
            continue
        if not defined or value != e.value:
            value = UNKNOWN
        line, sources, defined = e.line, (*sources, *e.sources), True
        if e.exported and exported is False:
            exported = None
    if not defined or value is None:
        return None
    return name, value, line, exported, sources


_VAR_REF = lazyre.compile(r"[A-Za-z_]\w*|[0-9@*#?$!-]")
_PARAM = lazyre.compile(r"([A-Za-z_]\w*|[0-9]+)(?:(:?[-=?+])(.*))?", re.S)
_BRACED_NAME = lazyre.compile(r"\$\{([A-Za-z_]\w*)\}")
# Runs of characters `_Expander.expand` copies as they are: all but quotes, `\\`, backticks and `$`
# (inside double quotes a single quote is one of them).
_EXPAND_RUN = lazyre.compile(r"[^'\"\\`$]+")
_EXPAND_RUN_DQ = lazyre.compile(r"[^\"\\`$]+")


class _Expander:
    """Quote removal and parameter expansion of one word, against the variables seen by one statement."""

    def __init__(self, events: dict[str, list[_VarEvent]], index: int, branches: tuple[int, ...]) -> None:
        self.events = events
        self.index = index
        self.branches = branches
        self.sources: list[int] = []

    def lookup(self, name: str) -> Value | None:
        events = self.events.get(name)
        if events is None:  # never assigned
            return None
        found = _resolve_fields(events, self.index, self.branches)
        if found is None:
            return None
        _name, value, line, _exported, sources = found
        self.sources.append(line)  # the EnvValue's `lines`
        if sources:
            self.sources.extend(s for s in sources if s != line)
        return value

    def take_sources(self) -> tuple[int, ...]:
        if not self.sources:  # most words use no variable
            return ()
        out = tuple(dict.fromkeys(self.sources))
        self.sources = []
        return out

    def _param(self, body: str) -> Value:
        """The inside of `${...}`: NAME, NAME:-word, NAME:=word, NAME:+word, NAME:?msg (and without colon)."""
        m = _PARAM.fullmatch(body)
        if not m:
            return UNKNOWN  # ${#X}, ${X/a/b}, ${X,,}, ${A[@]}, ${X:0:2}: not followed
        name, op, arg = m.group(1), m.group(2), m.group(3) or ""
        val = None if name.isdigit() else self.lookup(name)
        if op is None:
            return UNKNOWN if val is None else val
        if val is UNKNOWN:
            return UNKNOWN
        empty = val is None or (op.startswith(":") and val == "")
        kind = op[-1]
        if kind in "-=":
            return self.expand(arg) if empty else val  # type: ignore[return-value]
        if kind == "+":
            return "" if empty else self.expand(arg)
        return UNKNOWN if val is None else val  # ${X:?msg}: the caller must set it

    def expand(self, word: str) -> Value:
        """The word's value, or UNKNOWN if any part of it cannot be known."""
        if _EXPAND_RUN.fullmatch(word):  # no quote, escape or expansion: the word is its own value
            return word
        out: list[str] = []
        i, n = 0, len(word)
        dq = False
        while i < n:
            run = (_EXPAND_RUN_DQ if dq else _EXPAND_RUN).match(word, i)
            if run is not None:  # characters that stand for themselves, copied in one slice
                out.append(run.group())
                i = run.end()
                if i == n:
                    break
            c = word[i]
            if c == "'" and not dq:
                j = word.find("'", i + 1)
                if j < 0:
                    return UNKNOWN
                out.append(word[i + 1 : j])
                i = j + 1
            elif c == '"':
                dq = not dq
                i += 1
            elif c == "\\":
                if i + 1 < n:
                    nxt = word[i + 1]
                    if dq and nxt not in '$`"\\':
                        out.append("\\")
                    out.append(nxt)
                i += 2
            elif c == "`" or word.startswith("$(", i):
                return UNKNOWN
            elif (ref := _BRACED_NAME.match(word, i)) is not None:  # ${NAME}: what _param does for it
                v = self.lookup(ref.group(1))
                if not isinstance(v, str):
                    return UNKNOWN
                out.append(v)
                i = ref.end()
            elif word.startswith("${", i):
                j = closing_brace(word, i + 2)
                if j < 0:
                    return UNKNOWN
                v = self._param(word[i + 2 : j])
                if not isinstance(v, str):
                    return UNKNOWN
                out.append(v)
                i = j + 1
            elif c == "$":
                m = _VAR_REF.match(word, i + 1)
                if not m:
                    out.append("$")
                    i += 1
                    continue
                if not _NAME.match(m.group(0)):
                    return UNKNOWN  # $1, $@, $?, ...
                v2 = self.lookup(m.group(0))
                if not isinstance(v2, str):
                    return UNKNOWN
                out.append(v2)
                i = m.end()
            else:
                out.append(c)
                i += 1
        return UNKNOWN if dq else "".join(out)


_BRACE_RUN = lazyre.compile(r"[^'\"\\{}]+")  # characters `closing_brace` steps over outside quotes


def closing_brace(word: str, i: int) -> int:
    """The `}` closing a `${` whose body starts at `i` (quotes and nested `${ }` followed), -1 when none."""
    depth, n, quote = 1, len(word), ""
    while i < n:
        if quote:  # nothing but the same quote ends it
            j = word.find(quote, i)
            if j < 0:
                return -1
            quote = ""
            i = j + 1
            continue
        run = _BRACE_RUN.match(word, i)
        if run is not None:
            i = run.end()
            if i == n:
                return -1
        c = word[i]
        if c in "'\"":
            quote = c
        elif c == "\\":
            i += 1
        elif c == "{" and i > 0 and word[i - 1] == "$":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


_KEY_RUN = lazyre.compile(r"[\w.+~'\"]*")  # always matches


@functools.lru_cache(maxsize=16384)  # a pure function of the text; the two views split the same words
def split_override(text: str) -> tuple[str, str, str | None] | None:
    """(prefix, key, raw value) when the shell word is a Hydra override, else None.

    Quotes around the key are tolerated (`"+a.b=${X}"`); `pkg.name==1.0` (a pip pin) is not an override.
    """
    n = len(text)
    # The key: letters, digits (str.isalnum, as `\w` less `_`), `_.+~`, and quotes, which are left out.
    run = _KEY_RUN.match(text)
    i = run.end() if run is not None else 0
    if i < n and text[i] != "=":
        return None
    m = _HYDRA_KEY.match(text[:i].replace("'", "").replace('"', ""))
    if not m:
        return None
    prefix = m.group(1) or ""
    if i >= n:
        return (prefix, m.group(2), None) if prefix == "~" else None
    raw = text[i + 1 :]
    if raw.startswith("="):
        return None
    lead = text[: len(text) - len(text.lstrip("'\""))]
    if lead and raw.endswith(lead[0]) and raw.count(lead[0]) % 2 == 1:
        raw = raw[:-1]  # "a.b=c": the closing quote pairs with the one before the key
    return prefix, m.group(2), raw


_ARRAY_REF = lazyre.compile(r"\"?\$\{([A-Za-z_]\w*)\[[@*]\]\}\"?")
_ARGS = frozenset({'"$@"', "$@", '"$*"', "$*", '"${@}"', "${@}"})


@dataclass(frozen=True)
class Call:
    """A plain command of the view (not an assignment): `bash x.sh`, `source env.sh`, `ray start ...`."""

    program: str  # first word as written, path stripped (`bash`, `source`, `.`, `python3`)
    argument: str  # first argument that is not an option, as written ("" when none)
    words: tuple[str, ...]  # every word as written
    line: int
    index: int  # order of the statement (usable as `at=` in View.env / View.variable)


@dataclass
class View:
    """One reading of a script: on NPU (`npu=True`, other-device arms skipped) or on any device."""

    npu: bool
    invocations: list[Invocation]
    overrides: list[Override]  # every override in the view, in source order, whether a command uses it or not
    calls: list[Call] = field(default_factory=list)  # every plain command, in order
    # commands of the argparse-style launchers declared (`vllm serve --tensor-parallel-size 2`), in order
    argparse_launches: list[ArgparseLaunch] = field(default_factory=list)
    _events: dict[str, list[_VarEvent]] = field(default_factory=dict, repr=False)
    _branches: dict[int, tuple[int, ...]] = field(default_factory=dict, repr=False)
    _assignments: list[Assignment] = field(default_factory=list, repr=False)

    @property
    def assignments(self) -> list[Assignment]:
        """The assignments this view runs (other-device arms left out of the NPU view), in source order."""
        return self._assignments

    def _at(self, at: Invocation | int | None) -> tuple[int, tuple[int, ...]]:
        if isinstance(at, Invocation):
            return at.index, self._branches.get(at.index, ())
        if isinstance(at, int):
            return at, self._branches.get(at, ())
        return 1 << 62, ()

    def variable(self, name: str, at: Invocation | int | None = None) -> EnvValue | None:
        """The shell variable seen by `at` (an invocation or a statement index; default: the script's end)."""
        index, branches = self._at(at)
        return _resolve(self._events.get(name, ()), index, branches)

    def env(self, name: str, at: Invocation | int | None = None) -> EnvValue | None:
        """The exported variable seen by `at` (default: the last invocation, else the script's end).

        None when it is not exported there (or only assigned); `value` is UNKNOWN when it cannot be resolved.
        """
        if at is None and self.invocations:
            at = self.invocations[-1]
        if isinstance(at, Invocation):
            for e in at.prefix_env:
                if e.name == name:
                    return e
        res = self.variable(name, at)
        if res is None or res.exported is False:
            return None
        return res

    def value_of(self, key: str, suffix: bool = False) -> Value | None:
        """The key over every invocation: their common value, UNKNOWN when they differ, None when unset."""
        values = [inv.effective(key, suffix).value for inv in self.invocations]
        known = [v for v in values if v is not None]
        if not known:
            return None
        first = known[0]
        return first if all(v == first for v in values) else UNKNOWN


@dataclass
class ShellScript:
    """A parsed script: its logical lines and statements. Values are resolved by `view()`."""

    text: str
    logical: list[LogicalLine]
    statements: list[Statement]
    comment_breaks: list[int]  # commented-out physical lines met inside a `\` continuation
    heredocs: list[tuple[int, int]]  # physical line ranges of heredoc bodies (skipped)
    arms: list[Arm] = field(default_factory=list)  # every if/case/loop/function arm, in source order
    error: str | None = None  # set when the parser gave up; the script then looks empty
    _views: dict[tuple[bool, Launchers], View] = field(default_factory=dict, repr=False)
    _assignments: tuple[Assignment, ...] | None = field(default=None, repr=False, compare=False)
    _capable: dict[tuple[str, Launchers], bool] = field(default_factory=dict, repr=False, compare=False)

    @property
    def assignments(self) -> list[Assignment]:
        """Every assignment in source order, in every arm (see `View.assignments` for one reading)."""
        return list(self._all_assignments())

    def _all_assignments(self) -> tuple[Assignment, ...]:
        """`assignments`, built once (several rules and both views ask)."""
        if self._assignments is None:
            self._assignments = tuple(_assignments(self.statements))
        return self._assignments

    @property
    def npu_arms(self) -> list[Arm]:
        """Arms that run only on NPU (`npu)` of a device case, `if [ "$DEVICE" = npu ]`, ...)."""
        return [a for a in self.arms if a.device == "npu"]

    def view(self, npu: bool, launchers: Launchers) -> View:
        """The script as it runs on NPU (`npu=True`) or on any device (`npu=False`), its launches recognised
        with the project's `launchers` (the facts' `launchers` section); memoised."""
        key = (npu, launchers)
        v = self._views.get(key)
        if v is None:
            twin = self._views.get((not npu, launchers))
            if twin is not None and not any(a.device is not None for a in self.arms):
                # No arm tests the device: both readings run the same statements in the same arms.
                v = dataclasses.replace(twin, npu=npu)
            else:
                try:
                    v = _simulate(self, npu, launchers)
                except Exception:  # pragma: no cover - defensive: degrade to "nothing known"
                    v = View(npu, [], [])
            self._views[key] = v
        return v


# Scripts whose parse (and memoised views) outlive a rule's use of the file: cross-file rules (NPU101's sourced
# scripts, NPU104's and NPU106's callers) read most scripts again after the engine released them.
PARSED_SCRIPTS = 256


@functools.lru_cache(maxsize=PARSED_SCRIPTS)
def parse(text: str) -> ShellScript:
    """Parse a shell script (memoised: a pure function of the text). Never raises: on trouble the result is
    empty and `error` says why."""
    try:
        lexed = lex(Source.file(text))
        builder = _Builder()
        for toks in lexed.tokens():
            builder.feed(toks)
        return ShellScript(
            text,
            list(lexed.lines),
            builder.statements,
            list(lexed.comment_breaks),
            list(lexed.heredocs),
            builder.all_arms,
        )
    except Exception as exc:  # pragma: no cover - defensive: a parser bug must not sink a review
        return ShellScript(text, [], [], [], [], error=f"{type(exc).__name__}: {exc}")


_DECLARERS = ("export", "declare", "typeset", "local", "readonly")


def _assignments(statements: Iterable[Statement]) -> Iterator[Assignment]:
    for st in statements:
        if st.for_var:
            yield Assignment(st.for_var, None, st.line, "for", False, st.arms, st.index)
            continue
        words = st.words
        cmd = words[0].raw if words else ""
        for a in st.assigns:
            kind = "prefix" if words else "assign"
            yield Assignment(a.name, a.raw, a.line, kind, kind == "prefix", st.arms, st.index)
        exported = cmd == "export" or (cmd in _DECLARERS and any("x" in w.raw for w in words if w.raw.startswith("-")))
        for arr in st.arrays:
            yield Assignment(arr.name, None, arr.line, "array", exported, st.arms, st.index)
        if cmd in _DECLARERS:
            for w in st.words[1:]:
                if w.raw.startswith("-"):
                    continue
                m = _SHELL_ASSIGN.match(w.raw)
                if m and not m.group(2):
                    yield Assignment(m.group(1), w.raw[m.end() :], w.line, cmd, exported, st.arms, st.index)
                elif _NAME.match(w.raw):
                    yield Assignment(w.raw, None, w.line, cmd, exported, st.arms, st.index)
        elif cmd == "read":
            for w in st.words[1:]:
                if _NAME.match(w.raw):
                    yield Assignment(w.raw, None, w.line, "read", False, st.arms, st.index)
        for w in words:
            for name, default in _default_assigns(w.raw):
                yield Assignment(name, default, w.line, "default", False, st.arms, st.index)
        for arr in st.arrays:
            for w in arr.elements:
                for name, default in _default_assigns(w.raw):
                    yield Assignment(name, default, w.line, "default", False, st.arms, st.index)
        for a in st.assigns:
            for name, default in _default_assigns(a.raw):
                yield Assignment(name, default, a.line, "default", False, st.arms, st.index)


_ASSIGN_DEFAULT = lazyre.compile(r"\$\{([A-Za-z_]\w*):?=([^}]*)\}")


@functools.lru_cache(maxsize=16384)  # both views ask for every word, and words repeat across scripts
def _default_assigns(text: str) -> tuple[tuple[str, str], ...]:
    """(NAME, default) of each `${NAME:=default}` / `${NAME=default}` in a word."""
    if "${" not in text:  # a quick no
        return ()
    return tuple((m.group(1), m.group(2)) for m in _ASSIGN_DEFAULT.finditer(text))


def _simulate(script: ShellScript, npu: bool, launchers: Launchers) -> View:
    """Replay the statements of one view in order: variables, arrays, then the commands that use them."""
    events: dict[str, list[_VarEvent]] = {}
    arrays: dict[str, list[_ArrayEvent]] = {}
    invocations: list[Invocation] = []
    calls: list[Call] = []
    argparse_launches: list[ArgparseLaunch] = []
    argparse_entries = launchers.of_style("argparse")
    seen_overrides: dict[tuple[int, str], Override] = {}
    branches_at: dict[int, tuple[int, ...]] = {}
    allexport = False
    statements = [st for st in script.statements if not (npu and st.arms and st.device == "other")]

    def branches_of(st: Statement) -> tuple[int, ...]:
        if not st.arms:  # (most statements)
            return ()
        if npu:  # NPU arms that test only the device are taken: they are not branches in this view
            return tuple(a.id for a in st.arms if a.device is None or a.conditional)
        return tuple(a.id for a in st.arms)

    def add(ev: _VarEvent) -> None:
        events.setdefault(ev.name, []).append(ev)

    def make_override(w: Word, exp: _Expander, array: str | None) -> Override | None:
        if "=" not in w.raw and "~" not in w.raw:
            return None  # split_override's answer: neither `key=value` nor `~key`
        parts = split_override(w.raw)
        if parts is None:
            return None
        prefix, key, raw = parts
        value: Value | None = None
        if raw is not None:
            full = exp.expand(w.raw)
            value = full.split("=", 1)[1] if isinstance(full, str) and "=" in full else UNKNOWN
        o = Override(prefix, key, raw, value, w.line, w.raw, array, False, exp.take_sources())
        seen_overrides.setdefault((o.line, o.text), o)
        return o

    for st in statements:
        br = branches_of(st)
        branches_at[st.index] = br
        exp = _Expander(events, st.index, br)
        words = [w.raw for w in st.words]
        cmd = words[0] if words else ""

        if st.for_var:
            items = [exp.expand(w.raw) for w in st.words]
            value: Value = items[0] if len(items) == 1 and isinstance(items[0], str) else UNKNOWN
            add(_VarEvent(st.for_var, st.index, value, False, st.line, br, exp.take_sources()))
            continue
        if cmd == "set":
            if any(w == "-a" or (w.startswith("-") and "a" in w and not w.startswith("--")) for w in words[1:]):
                allexport = True
            if "allexport" in words and "-o" in words:
                allexport = True
            if "+a" in words:
                allexport = False

        # ${NAME:=default} assigns NAME when it is unset
        for w in st.words:
            if "${" not in w.raw:
                continue  # (what _default_assigns says first)
            for name, default in _default_assigns(w.raw):
                if exp.lookup(name) is None:
                    add(_VarEvent(name, st.index, exp.expand(default), False, w.line, br))

        for arr in st.arrays:
            elems = tuple(make_override(w, exp, arr.name) for w in arr.elements)
            texts = tuple(w.raw for w in arr.elements)
            lines = tuple(w.line for w in arr.elements)
            arrays.setdefault(arr.name, []).append(_ArrayEvent(st.index, arr.append, elems, texts, br, lines))

        prefix_env: list[EnvValue] = []
        for a in st.assigns:
            val = exp.expand(a.raw)
            if a.append:
                before = exp.lookup(a.name)
                val = UNKNOWN if before is UNKNOWN or val is UNKNOWN else f"{before or ''}{val}"
            srcs = exp.take_sources()
            if words:  # NAME=VALUE cmd: only that command sees it
                prefix_env.append(EnvValue(a.name, val, a.line, True, srcs))
            else:
                pieces = _string_pieces(a, exp, seen_overrides) if a.word is not None else None
                add(_VarEvent(a.name, st.index, val, allexport, a.line, br, srcs, pieces=pieces))

        if cmd in _DECLARERS:
            flags = [w for w in words[1:] if w.startswith("-")]
            exported = cmd == "export" or any("x" in f for f in flags)
            for w in st.words[1:]:
                if w.raw.startswith("-"):
                    continue
                am = _SHELL_ASSIGN.match(w.raw)
                if am and not am.group(2):
                    val = exp.expand(w.raw[am.end() :])
                    if am.group(3):
                        before = exp.lookup(am.group(1))
                        val = UNKNOWN if before is UNKNOWN or val is UNKNOWN else f"{before or ''}{val}"
                    ev = _VarEvent(am.group(1), st.index, val, exported or allexport, w.line, br, exp.take_sources())
                    add(ev)
                elif _NAME.match(w.raw) and exported:
                    add(_VarEvent(w.raw, st.index, None, True, w.line, br, export_only=True))
            continue
        if cmd == "read":
            for w in st.words[1:]:
                if _NAME.match(w.raw):
                    add(_VarEvent(w.raw, st.index, UNKNOWN, False, w.line, br))
            continue
        if cmd == "unset":
            for w in st.words[1:]:
                if _NAME.match(w.raw):
                    add(_VarEvent(w.raw, st.index, None, False, w.line, br))
                    arrays.pop(w.raw, None)
            continue
        if not words:
            continue
        if cmd == "exit" and not br:
            break  # an exit this view always reaches (e.g. `npu) echo "unsupported"; exit 1 ;;`) ends the script
        argument = next((w for w in words[1:] if not w.startswith("-")), "")
        calls.append(Call(cmd.strip("\"'").rsplit("/", 1)[-1], argument, tuple(words), st.line, st.index))

        inv = _invocation(st, br, exp, arrays, make_override, prefix_env, launchers)
        if inv is not None:
            invocations.append(inv)
        elif argparse_entries:
            skip = 0
            while skip < len(words) - 1 and words[skip].strip("\"'").rsplit("/", 1)[-1] in launchers.wrappers:
                skip += 1  # `nohup vllm serve ...`
            own = words[skip:]
            program = own[0].strip("\"'").rsplit("/", 1)[-1]
            module = own[own.index("-m", 0, len(own) - 1) + 1].strip("\"'") if "-m" in own[:-1] else None
            entry = next((e for e in argparse_entries if e.names(program, module, own)), None)
            if entry is not None:
                cmd_words = st.words[skip + 1 :]
                args = [(unquote(w.raw), w.line) for w in cmd_words]
                known = argparse_args(_argparse_words(cmd_words, st.index, br, exp, arrays))
                prefix = tuple((e.name, e.value if isinstance(e.value, str) else None, e.line) for e in prefix_env)
                argparse_launches.append(
                    ArgparseLaunch(program, st.line, argparse_options(args), entry, known, st.index, prefix)
                )

    # overrides carried by arrays that were built but maybe never expanded still belong to the view
    overrides = sorted(seen_overrides.values(), key=lambda o: (o.line, o.text))
    # every statement runs in this view (no arm for another device): the script's own list
    whole = len(statements) == len(script.statements)
    view_assignments = list(script._all_assignments()) if whole else list(_assignments(statements))
    return View(npu, invocations, overrides, calls, argparse_launches, events, branches_at, view_assignments)


def _argparse_words(
    words: Sequence[Word], index: int, br: tuple[int, ...], exp: _Expander, arrays: dict[str, list[_ArrayEvent]]
) -> list[ArgWord]:
    """The words an argparse launcher receives: quotes removed, variables expanded, `"${ARRAY[@]}"` replaced by
    its elements (those added in an arm that may not run marked conditional); None where a word is unknown."""
    out: list[ArgWord] = []
    for w in words:
        raw = w.raw
        if "$" not in raw:
            value = exp.expand(raw)
            out.append((value if isinstance(value, str) else None, w.line, False, False, False))
            continue
        am = _ARRAY_REF.fullmatch(raw)
        if am:
            if not any(ev.index < index for ev in arrays.get(am.group(1), [])):
                out.append((None, w.line, False, True, True))  # an array this script does not fill
                continue
            for text, line, cond in _array_words(arrays.get(am.group(1), []), index, br):
                value = exp.expand(text)
                out.append((value if isinstance(value, str) else None, line, cond, "$" in text, False))
            exp.take_sources()
            continue
        value = exp.expand(raw)
        exp.take_sources()
        quoted = raw.startswith('"') and raw.endswith('"')
        if not quoted and _SCALAR_REF.fullmatch(raw):
            if isinstance(value, str):  # `$ARGS` unquoted: split into words (no quote removal inside)
                out.extend((piece, w.line, False, True, False) for piece in value.split())
            else:
                out.append((None, w.line, False, True, bool(_ARG_LIST_NAME.search(raw))))
            continue
        opaque = value is UNKNOWN and raw in _ARGS
        out.append((value if isinstance(value, str) else None, w.line, False, True, opaque))
    return out


# Names of variables that hold several arguments (`$EXTRA_ARGS`, `${SERVE_OPTS}`): unknown, they may hold any.
_ARG_LIST_NAME = lazyre.compile(r"(?i)args|opts|options|flags|params|extra")


def _array_words(events: Sequence[_ArrayEvent], index: int, branches: tuple[int, ...]) -> list[tuple[str, int, bool]]:
    """The array's element words at statement `index`: (text as written, line, added conditionally)."""
    content: list[tuple[str, int, bool]] = []
    for ev in events:
        if ev.index >= index:
            break
        certain = ev.branches == branches[: len(ev.branches)]
        lines = ev.lines or tuple(0 for _ in ev.words)
        items = [(t, n, not certain) for t, n in zip(ev.words, lines, strict=False)]
        if ev.append:
            content.extend(items)
        elif certain:
            content = items
        else:
            content = [(t, n, True) for t, n, _c in content] + items
    return content


def _invocation(
    st: Statement,
    br: tuple[int, ...],
    exp: _Expander,
    arrays: dict[str, list[_ArrayEvent]],
    make_override: Callable[[Word, _Expander, str | None], Override | None],
    prefix_env: list[EnvValue],
    launchers: Launchers,
) -> Invocation | None:
    """The command as a Hydra launch: a declared Hydra entry point, or (with `hydra_any_command`) any command
    but the `not_launchers` that passes overrides. None otherwise."""
    flat: list[tuple[str, Override | None]] = []  # (word text, override) in command order
    passes_args = False
    for k, w in enumerate(st.words):
        if "$" in w.raw:  # array and variable references and "$@" all have one
            am = _ARRAY_REF.fullmatch(w.raw)
            if am:
                for o, text, cond in _array_content(arrays.get(am.group(1), []), st.index, br):
                    flat.append((text, _with_conditional(o, cond) if o is not None else None))
                continue
            sm = _SCALAR_REF.fullmatch(w.raw)
            if sm and k > 0:
                pieces = _pieces_of(exp, sm.group(1) or sm.group(2))
                if pieces:
                    flat.extend((o.text, o) for o in pieces)
                    continue
            if w.raw in _ARGS:
                passes_args = True
                continue
        flat.append((w.raw, make_override(w, exp, None) if k > 0 else None))
    if not flat:
        return None
    launcher = flat[0][0].strip("\"'")
    program = launcher.rsplit("/", 1)[-1]
    if flat[0][1] is not None or program in launchers.never:
        return None
    texts = [t for t, _o in flat]
    try:  # the word after the first `-m` that has one
        module: str | None = texts[texts.index("-m", 0, len(texts) - 1) + 1].strip("\"'")
    except ValueError:
        module = None
    overrides = tuple(o for _t, o in flat[1:] if o is not None)
    if not (overrides and launchers.hydra_any_command) and not any(
        e.names(program, module, texts) for e in launchers.of_style("hydra")
    ):
        return None
    return Invocation(
        st.line, st.end_line, launcher, module, overrides, passes_args, st.index, tuple(prefix_env), tuple(texts)
    )


_SCALAR_REF = lazyre.compile(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))")


def _pieces_of(exp: _Expander, name: str) -> tuple[Override, ...] | None:
    """The overrides an unquoted `$NAME` splits into, when NAME holds a string of overrides.

    Only a string assigned where the command is sure to see it counts (no later assignment in an arm that
    may not run); the pieces keep their own values, UNKNOWN ones included.
    """
    decided: _VarEvent | None = None
    for ev in exp.events.get(name, ()):
        if ev.index >= exp.index:
            break
        if ev.export_only:
            continue
        decided = ev if ev.branches == exp.branches[: len(ev.branches)] else None
    return None if decided is None else decided.pieces


def _string_pieces(a: _Assign, exp: _Expander, seen: dict[tuple[int, str], Override]) -> tuple[Override, ...] | None:
    """`ARGS="a.b=1 \\ c.d=${X}"`: the overrides that `$ARGS` (unquoted) will pass, with their lines."""
    raw = a.raw
    if len(raw) < 2 or raw[0] not in "'\"" or raw[-1] != raw[0] or "=" not in raw[1:-1]:
        return None
    assert a.word is not None
    base = len(a.word.raw) - len(raw) + 1
    quote = raw[0]
    out: list[Override] = []
    for m in re.finditer(r"\S+", raw[1:-1]):
        piece = m.group(0)
        ref = _SCALAR_REF.fullmatch(piece)
        if ref:  # ARGS="$ARGS more.key=1": keep what ARGS held
            out.extend(_pieces_of(exp, ref.group(1) or ref.group(2)) or ())
            continue
        parts = split_override(piece)
        if parts is None:
            continue
        prefix, key, raw_value = parts
        value: Value | None = None
        if raw_value is not None:
            full = exp.expand(piece) if quote == "'" else exp.expand(f'"{piece}"')
            if quote == "'":
                full = piece
            value = full.split("=", 1)[1] if isinstance(full, str) and "=" in full else UNKNOWN
        line = a.word.line_at(base + m.start())
        o = Override(prefix, key, raw_value, value, line, piece, None, False, exp.take_sources())
        seen.setdefault((o.line, o.text), o)
        out.append(o)
    return tuple(out) or None


def _with_conditional(o: Override, cond: bool) -> Override:
    if cond == o.conditional:
        return o
    return Override(o.prefix, o.key, o.raw, o.value, o.line, o.text, o.array, cond, o.sources)


def _array_content(
    events: Sequence[_ArrayEvent], index: int, branches: tuple[int, ...]
) -> list[tuple[Override | None, str, bool]]:
    """The array's elements at statement `index`: (override or None, text, added conditionally)."""
    content: list[tuple[Override | None, str, bool]] = []
    for ev in events:
        if ev.index >= index:
            break
        certain = ev.branches == branches[: len(ev.branches)]
        items = [(o, t, not certain) for o, t in zip(ev.elements, ev.words, strict=False)]
        if ev.append:
            content.extend(items)
        elif certain:
            content = items
        else:  # reset in an arm that may not run: both the old and the new elements are "maybe"
            content = [(o, t, True) for o, t, _c in content] + items
    return content


# -- NPU context ----------------------------------------------------------------------------------------------


def is_npu_capable(script: ShellScript, device_key: str, launchers: Launchers) -> bool:
    """True when a generic script runs on NPU: it has an NPU arm, a device variable that defaults to
    `npu`, or it passes `npu` to the launcher's device override (`device_key`, e.g. `trainer.device`)."""
    if script.npu_arms:
        return True
    key = (device_key, launchers)
    found = script._capable.get(key)
    if found is None:
        found = script._capable[key] = _npu_capable(script, device_key, launchers)
    return found


_QUOTES = str.maketrans("", "", "'\"")


def _npu_capable(script: ShellScript, device_key: str, launchers: Launchers) -> bool:
    # The quick no, without replaying the script: every variable of a view is one the script assigns (see
    # `_assignments`), and an override's key is in a logical line's text once quotes are taken out.
    if not any(_DEVICE_VAR.match(a.name) for a in script._all_assignments()) and not any(
        device_key in ll.text.translate(_QUOTES) for ll in script.logical
    ):
        return False
    view = script.view(False, launchers)
    for name, evs in view._events.items():
        if _DEVICE_VAR.match(name) and any(isinstance(e.value, str) and _value_device(e.value) == "npu" for e in evs):
            return True
    return any(o.key == device_key and hydra_str(o.value) == "npu" for o in view.overrides)


def npu_view(script: ShellScript, kinds: Iterable[str], device_key: str, launchers: Launchers) -> View | None:
    """The NPU reading of a script, or None when the script never runs on NPU (GPU-only scripts).

    A script whose path marks it as NPU (kind `npu_script`) is NPU throughout, minus arms for another
    device; a generic shell script only when `is_npu_capable` (`device_key`: the facts' `ascend_values.device_key`).
    """
    if script.error is not None:
        return None
    if "npu_script" in set(kinds) or is_npu_capable(script, device_key, launchers):
        return script.view(True, launchers)
    return None
