"""vLLM server command lines and `LLM(...)` calls: what their options set, as vLLM reads them.

A launch is a list of argparse options (`checks.parsers.sh.launchers.Arg`), wherever it was written: a shell
script or a docs code block (the shell view's argparse launches), a YAML test config's `server_cmd` (a string
split as by shlex, or a list of arguments), or the keywords of a Python call (`enforce_eager=True` reads as
`--enforce-eager`, `compilation_config={...}` as `--compilation-config '<that dict as JSON>'`). Nothing is run.

    config = resolve(args, facts.vllm_cli)
    config.eager                 # True / False (graph mode, vLLM's default) / None (cannot tell)
    config.setting("compilation", "cudagraph_mode")   # Setting(value, line, conditional, option) or None
    json_problems(args, facts.vllm_cli)               # the JSON option values vLLM would refuse

The facts (`vllm_cli`) name the options; option names are read as vLLM's parser reads them (`--enforce_eager` is
`--enforce-eager`, `--compilation-config.cudagraph_mode FULL` sets one key).
"""

from __future__ import annotations

import ast
import json
import re
import shlex
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from npu_review.checks import lazyre
from npu_review.checks.facts.schema import VllmCli
from npu_review.checks.parsers.sh.launchers import Arg

if TYPE_CHECKING:
    from npu_review.checks.parsers import yamlmarks

__all__ = [
    "JsonProblem",
    "Resolved",
    "Setting",
    "YamlCommand",
    "fragments",
    "json_problems",
    "normalise",
    "python_arg_lists",
    "python_calls",
    "resolve",
    "yaml_commands",
]


def normalise(flag: str) -> tuple[str, str | None]:
    """(`--option-name`, dotted key or None): `--compilation_config.cudagraph_mode` -> (`--compilation-config`,
    `cudagraph_mode`). Underscores of the option name read as dashes (vLLM's FlexibleArgumentParser)."""
    name, dot, key = flag.partition(".")
    if name.startswith("--"):
        name = "--" + name[2:].replace("_", "-")
    return name, (key if dot else None)


@dataclass(frozen=True)
class Setting:
    """One key of a config as the launch sets it."""

    value: Any
    line: int
    conditional: bool
    option: str  # the option as written (`--compilation-config`, `-cc.cudagraph_mode`)


@dataclass
class Resolved:
    """What a launch's options decide (the last option of a kind wins, as in argparse)."""

    eager: bool | None = False  # None: cannot tell (unresolved, or set in an arm that may not run)
    eager_line: int | None = None
    no_graph: str | None = None  # another reason no graph is captured (`-O0`, `cudagraph_mode=NONE`, mode 0)
    unknown_config: set[str] = field(default_factory=set)  # configs given by a value that cannot be read
    configs: dict[str, dict[str, Setting]] = field(default_factory=dict)  # config -> key -> setting
    context_parallel: list[tuple[str, int, int]] = field(default_factory=list)  # (option, size, line)

    def setting(self, config: str, key: str) -> Setting | None:
        return self.configs.get(config, {}).get(key)


_LEVEL = lazyre.compile(r"-O(\d+)\Z")


def resolve(args: Sequence[Arg], facts: VllmCli) -> Resolved:
    out = Resolved()
    eager_flag = facts.eager_flag
    no_eager = "--no-" + eager_flag[2:]
    for a in args:
        name, key = normalise(a.flag)
        level = _LEVEL.match(a.flag)
        written = a.flag
        if level is not None:  # `-O3`: the level glued to its option
            name, key = "-O", None
            a = Arg("-O", level.group(1), a.line, a.line, True, a.conditional, a.via_variable)
        if not a.flag:  # an unknown word that may hold any option
            out.eager, out.eager_line = None, a.line
            out.unknown_config.update(facts.json_options.values())
            continue
        if name in (eager_flag, no_eager) and key is None:
            if a.conditional or not a.known:
                out.eager = None  # set in an arm that may not run, or through an unknown value
            elif name == no_eager:
                out.eager = False
            else:  # a word after the switch is the next positional; `--enforce-eager=false` is refused
                out.eager = a.value is None or a.value.lower() not in _FALSE or None
            out.eager_line = a.line
            continue
        if name in facts.optimization_flags and key is None and a.value is not None and a.value.strip().isdigit():
            if a.value.strip() in facts.no_graph_levels and not a.conditional:
                out.no_graph = written if level else f"{written} {a.value.strip()}"
            continue
        if name in facts.compilation_flags and key is None:
            values = _scalar(a.value) if a.known and a.value is not None else _UNREAD
            if values is not _UNREAD:
                config = out.configs.setdefault("compilation", {})
                config[facts.compilation_flags[name]] = Setting(values, a.value_line, a.conditional, a.flag)
            continue
        if name in facts.context_parallel_flags and key is None:
            if a.known and a.value is not None and a.value.strip().isdigit() and not a.conditional:
                out.context_parallel.append((a.flag, int(a.value.strip()), a.value_line))
            continue
        config_name = facts.json_options.get(name)
        if config_name is None:
            continue
        if key is not None:  # `--compilation-config.cudagraph_mode FULL`
            if a.known and a.value is not None:
                config = out.configs.setdefault(config_name, {})
                config[key] = Setting(_scalar(a.value), a.value_line, a.conditional, a.flag)
            continue
        if not a.known or a.value is None:
            out.unknown_config.add(config_name)
            continue
        if name in facts.json_only_when_braced and not a.value.lstrip().startswith("{"):
            continue
        parsed = _load(a.value)
        if not isinstance(parsed, dict):
            out.unknown_config.add(config_name)
            continue
        lines = _key_lines(a.value, a.value_line)
        # one JSON value replaces the whole config (argparse keeps the last)
        out.configs[config_name] = {
            k: Setting(v, lines.get(k, a.value_line), a.conditional, a.flag) for k, v in parsed.items()
        }
    compilation = out.configs.get("compilation", {})
    mode = compilation.get("cudagraph_mode")
    if mode is not None and isinstance(mode.value, str) and mode.value.upper() == "NONE" and not mode.conditional:
        out.no_graph = f"cudagraph_mode={mode.value}"
    for key in ("mode", "level"):
        s = compilation.get(key)
        if s is not None and s.value in (0, "0", "NONE") and not s.conditional:
            out.no_graph = f"compilation {key} {s.value}"
    return out


_TRUE = frozenset({"true", "1", "yes"})
_FALSE = frozenset({"false", "0", "no"})
_UNREAD = object()


def _scalar(text: str) -> Any:
    """A dotted option's value: JSON when it is (`[1, 2]`, `true`, `3`), else the text."""
    try:
        return json.loads(text)
    except ValueError:
        return text.strip()


def _load(text: str) -> Any:
    try:
        return json.loads(_HUMAN_NUMBER.sub(_expand_number, text))
    except (ValueError, RecursionError):
        return None


def _key_lines(text: str, first_line: int) -> dict[str, int]:
    """The line of each top-level key of a JSON object written over several lines."""
    if "\n" not in text:
        return {}
    out: dict[str, int] = {}
    for m in re.finditer(r'"((?:[^"\\]|\\.)*)"\s*:', text):
        out.setdefault(m.group(1), first_line + text.count("\n", 0, m.start()))
    return out


# vLLM expands bare numbers with a k/m/g/t (decimal) or K/M/G/T (binary) suffix outside strings before parsing.
_HUMAN_NUMBER = lazyre.compile(r'("(?:[^"\\]|\\.)*")|\b(\d+(?:\.\d+)?)([kKmMgGtT])\b')
_FACTORS = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def _expand_number(m: re.Match[str]) -> str:
    if m.group(1) is not None:
        return m.group(1)
    return str(int(float(m.group(2)) * _FACTORS[m.group(3)]))


# -- JSON values vLLM refuses -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class JsonProblem:
    arg: Arg
    line: int  # where the parser stops
    reason: str  # json's message, with line/column inside the value when it spans several lines
    hint: str  # "" or a sentence on the likely cause


# Placeholders of docs (`<model path>`, `...`, `{{ var }}`): not meant to run as written.
_PLACEHOLDER = lazyre.compile(r"<[^<>\n]*>|\.\.\.|\u2026|\{\{\s*[\w.]+\s*\}\}")
# A bare upper-case word outside strings (`{"max_size": N}`, `MAX_LEN`) or a `{name}` stands for a value to fill
# in; Python's True/False/None are not placeholders (they are a common mistake).
_CAPS_WORD = lazyre.compile(r"\b(?!(?:True|False|None|NaN|Infinity)\b)[A-Z][A-Z0-9_]*\b")
_NAMED_SLOT = lazyre.compile(r"\{[a-z_][a-z0-9_]*\}")
_STRINGS = lazyre.compile(r'"(?:[^"\\\n]|\\.)*"')


def json_problems(args: Sequence[Arg], facts: VllmCli) -> Iterator[JsonProblem]:
    """Values of the JSON options (`json_options`) that are not JSON after shell unquoting. Silent on values
    that cannot be read, go through a variable (`$X`: the caller decides), or hold a placeholder."""
    for a in args:
        name, key = normalise(a.flag)
        if key is not None or name not in facts.json_options:
            continue
        if not a.known or a.value is None or a.via_variable or "$" in a.value:
            continue
        text = a.value
        if name in facts.json_only_when_braced and not text.lstrip().startswith("{"):
            continue
        outside = _STRINGS.sub('""', text)
        if not text.strip() or _PLACEHOLDER.search(outside):
            continue
        text = _fill_placeholders(text)  # `N`, `{ep_size}`: a value to fill in; what is around it must still hold
        try:
            json.loads(_HUMAN_NUMBER.sub(_expand_number, text))
            continue
        except RecursionError:
            continue
        except ValueError as exc:
            err = exc
        pos = getattr(err, "pos", 0) or 0
        msg = getattr(err, "msg", str(err))
        inner_line = text.count("\n", 0, pos)
        column = pos - (text.rfind("\n", 0, pos) + 1) + 1
        where = f"line {inner_line + 1} column {column}" if "\n" in text else f"column {column}"
        yield JsonProblem(a, a.value_line + inner_line, f"{msg} at {where}", _hint(text))


def _fill_placeholders(text: str) -> str:
    """The text with each bare upper-case word and `{name}` outside strings replaced by 0 (same length kept)."""
    parts = re.split(r'("(?:[^"\\\n]|\\.)*")', text)
    for i in range(0, len(parts), 2):
        parts[i] = _NAMED_SLOT.sub(lambda m: "0".ljust(len(m.group(0))), parts[i])
        parts[i] = _CAPS_WORD.sub(lambda m: "0".ljust(len(m.group(0))), parts[i])
    return "".join(parts)


def _hint(text: str) -> str:
    outside = _STRINGS.sub('""', text)
    if re.search(r"\\[ \t]*\n", outside):
        return (
            "Inside single quotes a `\\` at the end of a line is kept as it is (it continues nothing): drop the "
            "backslashes, JSON may span lines."
        )
    if re.search(r"\b(True|False|None)\b", outside):
        return "Python's True/False/None are not JSON: write true/false/null."
    if "'" in text and '"' not in text:
        return "JSON strings need double quotes (the shell removed none: single quotes inside the value are kept)."
    if re.search(r",\s*[}\]]", outside):
        return "JSON allows no trailing comma."
    if re.search(r",\s*,", outside):
        return "Two commas in a row leave an empty element."
    if text.count('"') % 2:
        return "The double quotes do not pair up: one is missing or one is left over."
    if re.search(r"[{,]\s*[A-Za-z_][\w-]*\s*:", outside):
        return "Every key needs double quotes."
    return ""


def fragments(lines: Sequence[tuple[int, str]], facts: VllmCli) -> list[Arg]:
    """JSON options written in docs prose, inline code or a console block (`--additional-config '{...}'` on a
    line of its own): single-quoted values on one line, as options to judge with `json_problems`."""
    names = "|".join(re.escape(n) for n in sorted(facts.json_options, key=len, reverse=True))
    pattern = re.compile(rf"(?<![\w-])({names})(?:=|[ \t]+)'([^'\n]*)'")
    out: list[Arg] = []
    for n, text in lines:
        if "'" not in text:
            continue
        for m in pattern.finditer(text):
            out.append(Arg(m.group(1), m.group(2), n, n))
    return out


# -- YAML test configs ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class YamlCommand:
    """A server command of a YAML config: its arguments and the environment the config gives it."""

    line: int
    args: tuple[Arg, ...]
    env: dict[str, tuple[str, int]]  # name -> (value, line), from the env mappings on the way from the root


def yaml_commands(doc: yamlmarks.YamlDoc, facts: VllmCli) -> list[YamlCommand]:
    if doc.root is None:
        return []
    keys = set(facts.yaml_command_keys)
    out: list[YamlCommand] = []
    _walk(doc.root, keys, set(facts.yaml_env_keys), {}, out)
    return out


def _walk(
    node: yamlmarks.Node, keys: set[str], env_keys: set[str], env: dict[str, tuple[str, int]], out: list[YamlCommand]
) -> None:
    if node.is_map:
        here = dict(env)
        for name, _k, value in node.entries():
            if name in env_keys and value.is_map:
                for var, _vk, v in value.entries():
                    if v.is_scalar:
                        here[var] = (v.value, v.line)
        for name, _k, value in node.entries():
            if name in keys:
                args = _command_args(value)
                if args is not None:
                    out.append(YamlCommand(value.line, args, here))
            elif value.is_map or value.is_seq:
                _walk(value, keys, env_keys, here, out)
    elif node.is_seq:
        for item in node.items:
            if item.is_map or item.is_seq:
                _walk(item, keys, env_keys, env, out)


def _command_args(node: yamlmarks.Node) -> tuple[Arg, ...] | None:
    """The options of a command given as a list of arguments (each item one argv word) or as a string that the
    test harness splits like shlex; None when it is neither (or its quotes do not pair up)."""
    from npu_review.checks.parsers.sh.launchers import argparse_args

    if node.is_seq:
        words = [(i.value, i.line, False, "$" in i.value, False) for i in node.items if i.is_scalar]
        if len(words) != len(node.items) or not _is_vllm([w[0] for w in words]):
            return None
        return argparse_args(words)
    if not node.is_scalar:
        return None
    try:
        pieces = shlex.split(node.value)
    except ValueError:
        return None
    if not _is_vllm(pieces):
        return None
    source = node.source_lines()  # the document's lines: each word is placed by searching them in order
    first = node.line + (1 if node.style in ("|", ">") else 0)
    cursor = first
    placed: list[tuple[str | None, int, bool, bool, bool]] = []
    for piece in pieces:
        line = _find(source, piece, cursor, node.end_line)
        if line is not None:
            cursor = line
        placed.append((piece, line or cursor, False, "$" in piece, False))
    return argparse_args(placed)


def _is_vllm(words: Sequence[str]) -> bool:
    """A command that starts with an option (the arguments of a server the harness starts), `vllm`, or
    `python -m vllm...`: not another program's command line."""
    if not words or words[0].startswith("-"):
        return True
    program = words[0].rsplit("/", 1)[-1]
    if program == "vllm":
        return True
    return program.startswith("python") and len(words) > 2 and words[1] == "-m" and words[2].startswith("vllm")


def _find(source: list[str], piece: str, start: int, end: int) -> int | None:
    needle = piece.split("\n", 1)[0].strip()[:30]
    if not needle:
        return None
    for n in range(start, min(end, len(source)) + 1):
        if needle in source[n - 1]:
            return n
    return None


# -- Python ---------------------------------------------------------------------------------------------------


class _NotLiteral(Exception):
    pass


def python_calls(tree: ast.AST, facts: VllmCli) -> list[tuple[int, tuple[Arg, ...]]]:
    """(line, options) of each call of `python_calls` (`LLM(...)`, `vllm.LLM(...)`) whose keywords set
    `enforce_eager` or a config: literal values become the options the CLI would take, others are unknown."""
    calls = set(facts.python_calls)
    classes = dict(facts.python_config_classes)
    out: list[tuple[int, tuple[Arg, ...]]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if name not in calls:
            continue
        args: list[Arg] = []
        for kw in node.keywords:
            if kw.arg is None:
                continue
            flag = "--" + kw.arg.replace("_", "-")
            line = kw.value.lineno
            try:
                value = _literal(kw.value, classes)
            except _NotLiteral:
                args.append(Arg(flag, None, line, line, False))
                continue
            if isinstance(value, bool):
                args.append(Arg(flag if value else "--no-" + flag[2:], None, line, line))
            elif isinstance(value, dict | list | int | float | str) and not isinstance(value, bool):
                args.append(Arg(flag, json.dumps(value), line, line))
        if args:
            out.append((node.lineno, tuple(args)))
    out.sort(key=lambda x: x[0])
    return out


def python_arg_lists(tree: ast.AST, facts: VllmCli) -> list[tuple[int, tuple[Arg, ...]]]:
    """(line, options) of each list literal of command-line words that holds a vLLM JSON option or the eager
    switch (`server_args = ["--enforce-eager", "--compilation-config", '{...}']`): string items are words,
    any other item (`json.dumps(...)`, a name) an unknown word."""
    from npu_review.checks.parsers.sh.launchers import argparse_args

    names = {*facts.json_options, facts.eager_flag}
    out: list[tuple[int, tuple[Arg, ...]]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.List) or not node.elts:
            continue
        words: list[tuple[str | None, int, bool, bool, bool]] = []
        hit = False
        for e in node.elts:
            if isinstance(e, ast.Constant) and isinstance(e.value, str):
                words.append((e.value, e.lineno, False, "$" in e.value, False))
                hit = hit or normalise(e.value.partition("=")[0])[0] in names
            else:
                words.append((None, e.lineno, False, True, isinstance(e, ast.Starred)))
        if hit:
            out.append((node.lineno, argparse_args(words)))
    return out


def _literal(node: ast.AST, classes: dict[str, str]) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, str | int | float | bool):
        return node.value
    if isinstance(node, ast.Dict):
        out: dict[str, Any] = {}
        for k, v in zip(node.keys, node.values, strict=True):
            if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
                raise _NotLiteral
            out[k.value] = _literal(v, classes)
        return out
    if isinstance(node, ast.List | ast.Tuple):
        return [_literal(e, classes) for e in node.elts]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "CUDAGraphMode":
        return node.attr
    if isinstance(node, ast.Call):
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if name in classes and not node.args:
            return {kw.arg: _literal(kw.value, classes) for kw in node.keywords if kw.arg is not None}
    raise _NotLiteral
