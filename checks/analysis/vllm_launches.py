"""Every vLLM server start in a file that runs on Ascend, whatever its layout: shell scripts, shell code blocks of
Markdown and reST docs, YAML test configs (`server_cmd:`) and Python `LLM(...)` calls (parsed with `ast`), in
Python files and in the Python code blocks of docs.

    for launch in vllm_launches(ctx, src):
        launch.args                       # the options (checks.parsers.sh.launchers.Arg), in order
        launch.env.get("TASK_QUEUE_ENABLE")   # EnvSeen(value or None when unknown, lines) or None (not set)
        resolve(launch.args, ctx.facts.vllm_cli)   # checks.parsers.vllm_cli: eager, configs

A shell script counts where its NPU view does (checks.parsers.shell.npu_view), or where it exports
TASK_QUEUE_ENABLE (read by torch_npu only) and selects no other device; a docs block, YAML or Python file where
the repository is Ascend-only or the file's text has an Ascend marker (`ascend_content.script_markers`,
`install_markers`), for a docs block also TASK_QUEUE_ENABLE. Parsed once per file and revision.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Literal

from npu_review.checks import ascend
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import DOCS, NPU_SCRIPT, PYTHON, SHELL, YAML
from npu_review.checks.parsers.codeblocks import SHELL_LANGUAGES, Block, console_commands, shell_blocks
from npu_review.checks.parsers.markdown import flavor_of
from npu_review.checks.parsers.sh.launchers import Arg
from npu_review.checks.parsers.shell import UNKNOWN, ShellScript, View, npu_view, parse
from npu_review.checks.parsers.vllm_cli import python_arg_lists, python_calls, yaml_commands

__all__ = [
    "DOC_LANGUAGES",
    "DOC_PYTHON_LANGUAGES",
    "EnvSeen",
    "Launch",
    "ascend_text",
    "doc_command_blocks",
    "doc_shell_blocks",
    "vllm_launches",
]

# Docs code blocks read as commands: the shell ones, and `console` blocks (their `$ ` lines).
DOC_LANGUAGES = SHELL_LANGUAGES | {"console", "shell-session"}
# Docs code blocks read as Python (their `LLM(...)` calls); `pycon` blocks hold prompts and output, left out.
DOC_PYTHON_LANGUAGES = frozenset({"python", "py", "python3"})

# Environment variables the launch rules ask about (besides the facts' task_queue.env).
_TORCHAIR_ENV = "VLLM_ENABLE_GRAPH_MODE"


@dataclass(frozen=True)
class EnvSeen:
    """An environment variable a launch gets: `value` None when it cannot be told (unresolved, or set in an arm
    that may not run); `lines`: where it is set and where its value comes from."""

    value: str | None
    line: int
    lines: tuple[int, ...]


@dataclass(frozen=True)
class Launch:
    path: str
    line: int  # the command's first line (the call's, for Python)
    args: tuple[Arg, ...]
    env: dict[str, EnvSeen]
    where: str  # "shell", "docs", "yaml", "python" (a call's keywords), "python-args" (a list of CLI words)


def vllm_launches(ctx: Context, src: SourceFile, rev: str = "head") -> list[Launch]:
    # Memoised per file with its text test: four rules ask for every file, most of which start no server.
    return ctx.parsed("vllm-launches", src, lambda text: _collect(ctx, src) if _may_launch(ctx, text) else [], rev=rev)


def _may_launch(ctx: Context, text: str) -> bool:
    """The quick no: every launch `_collect` finds has one of these in the file's text."""
    cli = ctx.facts.vllm_cli

    def needles() -> tuple[str, ...]:
        return ("vllm", "LLM(", *cli.yaml_command_keys, *(o for o in cli.json_options if o.startswith("--")))

    return any(needle in text for needle in ctx.memo(("vllm-launch-needles", "head", ""), needles))


def _names(ctx: Context) -> tuple[str, ...]:
    return (ctx.facts.task_queue.env, _TORCHAIR_ENV)


def _collect(ctx: Context, src: SourceFile) -> list[Launch]:
    kinds = src.kinds
    try:
        if flavor_of(src.path) is not None and DOCS in kinds:
            return _docs(ctx, src)
        if SHELL in kinds or NPU_SCRIPT in kinds:
            return _shell(ctx, src)
        if YAML in kinds and any(k in src.text for k in ctx.facts.vllm_cli.yaml_command_keys):
            return _yaml(ctx, src)
        if PYTHON in kinds and src.path.endswith(".py"):
            return _python(ctx, src)
    except (RecursionError, ValueError):  # pragma: no cover - defensive: odd input degrades to nothing
        return []
    return []


def ascend_text(ctx: Context, text: str) -> bool:
    """The repository is Ascend-only, or the text has an Ascend marker."""
    if ctx.ascend_only():
        return True
    m = ascend.markers(ctx.facts.ascend_content)
    return ascend.has_script_marker(text, m)


def _from_view(path: str, view: View, names: tuple[str, ...], where: str) -> list[Launch]:
    out: list[Launch] = []
    for a in view.argparse_launches:
        if a.entry.engine != "vllm":
            continue
        env: dict[str, EnvSeen] = {}
        for name in names:
            prefix = next((p for p in reversed(a.prefix) if p[0] == name), None)
            if prefix is not None:  # `NAME=value vllm serve ...`
                env[name] = EnvSeen(prefix[1].strip() if prefix[1] is not None else None, prefix[2], (prefix[2],))
                continue
            e = view.env(name, a.index)
            if e is None:
                continue
            known = e.exported is True and isinstance(e.value, str) and e.value is not UNKNOWN
            env[name] = EnvSeen(e.value.strip() if known and isinstance(e.value, str) else None, e.line, e.lines)
        out.append(Launch(path, a.line, a.args, env, where))
    return out


def _shell(ctx: Context, src: SourceFile) -> list[Launch]:
    script = ctx.shell(src)
    launchers = ctx.facts.launchers
    view = npu_view(script, src.kinds, ctx.facts.ascend_values.device_key, launchers)
    if view is None:
        if not _exports_task_queue(ctx, script) or ascend.selects_other_device(src.text):
            return []
        view = script.view(True, launchers)
    return _from_view(src.path, view, _names(ctx), "shell")


def _exports_task_queue(ctx: Context, script: ShellScript) -> bool:
    name = ctx.facts.task_queue.env
    return any(a.name == name and a.exported for a in script.assignments)


def _docs(ctx: Context, src: SourceFile) -> list[Launch]:
    flavor = flavor_of(src.path)
    if flavor is None:
        return []
    blocks = [
        b if b.language in SHELL_LANGUAGES else console_commands(b)
        for b in doc_command_blocks(ctx, src)
        if any("vllm" in t for _, t in b.lines)
    ]
    out: list[Launch] = _doc_python(ctx, src, flavor)
    if not blocks:
        return out
    doc_is_ascend = ascend_text(ctx, src.text)
    for block in blocks:
        first = block.lines[0][0]
        text = "\n" * (first - 1) + "\n".join(t for _, t in block.lines) + "\n"
        script = parse(text)
        if script.error is not None:
            continue
        if not doc_is_ascend and not _exports_task_queue(ctx, script):
            continue
        out.extend(_from_view(src.path, script.view(True, ctx.facts.launchers), _names(ctx), "docs"))
    return out


def _doc_python(ctx: Context, src: SourceFile, flavor: Literal["md", "rst"]) -> list[Launch]:
    """The `LLM(...)` calls of the Python code blocks of an Ascend doc (each block parsed on its own, at its lines)."""
    facts = ctx.facts.vllm_cli
    if not any(f"{c}(" in src.text for c in facts.python_calls) or not ascend_text(ctx, src.text):
        return []
    out: list[Launch] = []
    for block in shell_blocks(src.text, flavor, DOC_PYTHON_LANGUAGES):
        if not any(f"{c}(" in t for _, t in block.lines for c in facts.python_calls):
            continue
        first = block.lines[0][0]
        text = "\n" * (first - 1) + "\n".join(t for _, t in block.lines) + "\n"
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue  # a fragment (`...`, an elided argument list): not code that runs as written
        out += [Launch(src.path, line, args, {}, "python") for line, args in python_calls(tree, facts)]
    return out


def doc_command_blocks(ctx: Context, src: SourceFile) -> list[Block]:
    """The doc's shell and console code blocks (memoised per file)."""
    flavor = flavor_of(src.path)
    if flavor is None:
        return []
    return ctx.parsed("command-blocks", src, lambda text: shell_blocks(text, flavor, DOC_LANGUAGES))


def doc_shell_blocks(ctx: Context, src: SourceFile) -> list[Block]:
    """The doc's shell code blocks, `shell_blocks(text, flavor)`: those of `doc_command_blocks` in a shell
    language (the scan is the same, the language only picks the blocks), memoised per file."""
    return ctx.parsed(
        "shell-blocks", src, lambda _text: [b for b in doc_command_blocks(ctx, src) if b.language in SHELL_LANGUAGES]
    )


def _yaml(ctx: Context, src: SourceFile) -> list[Launch]:
    if not ascend_text(ctx, src.text) and not any(
        re.search(p, src.text) for p in ctx.facts.vllm_cli.yaml_ascend_markers
    ):
        return []
    doc = ctx.yaml(src)  # the key the other readers of YAML use
    names = _names(ctx)
    out: list[Launch] = []
    for cmd in yaml_commands(doc, ctx.facts.vllm_cli):
        env = {n: EnvSeen(v.strip(), line, (line,)) for n, (v, line) in cmd.env.items() if n in names}
        out.append(Launch(src.path, cmd.line, cmd.args, env, "yaml"))
    return out


def _python(ctx: Context, src: SourceFile) -> list[Launch]:
    facts = ctx.facts.vllm_cli
    calls = any(f"{c}(" in src.text for c in facts.python_calls)
    lists = any(f'"{o}' in src.text for o in facts.json_options if o.startswith("--"))
    if not (calls or lists) or not ascend_text(ctx, src.text):
        return []
    try:
        tree = ast.parse(src.text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    out = [Launch(src.path, line, args, {}, "python") for line, args in python_calls(tree, facts)] if calls else []
    if lists:  # server command lines built in Python: their strings are what the server gets
        out += [Launch(src.path, line, args, {}, "python-args") for line, args in python_arg_lists(tree, facts)]
    return out
