"""The command-line options a repository Python script's `argparse` parser defines, when they can be told.

A guide, a launch script or a CI step runs the repository's own Python scripts with options (`python
tools/convert.py --pretrained-path x`); the script's parser rejects an option it does not define (`error:
unrecognized arguments`, exit 2) before doing anything. Whether an option is defined is known only when the
whole parser is in the script's own text: one `ArgumentParser(...)`, every `add_argument` with literal option
strings, the parser (or its groups) handed to no other function, no parent parsers, sub-commands or
`parse_known_args`, and no other argument library. Anything else is unknown (None): a parser assembled from
another module's options, Hugging Face's `HfArgumentParser`, Hydra, `fire`, `click`, a script that edits
`sys.argv` first.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from npu_review.checks.context import Context, SourceFile

# Text that says the options are not (all) in the parser this file builds.
_OTHER_PARSERS = (
    "parse_known_args",
    "parse_known_intermixed_args",
    "HfArgumentParser",
    "add_subparsers",
    "sys.argv",
    "import fire",
    "from fire",
    "import click",
    "from click",
    "import typer",
    "from typer",
    "hydra",
    "absl",
    "tyro",
    "jsonargparse",
    "simple_parsing",
    "from_cli",
    "REMAINDER",  # a positional that takes the rest of the line, options or not
)
_GROUPS = frozenset({"add_argument_group", "add_mutually_exclusive_group"})


@dataclass(frozen=True)
class PyInterface:
    """A script's whole `argparse` interface."""

    path: str
    line: int  # the line of `ArgumentParser(...)`
    options: frozenset[str]  # every `--long` option string the parser accepts (`--help` included unless turned off)
    abbrev: bool  # argparse accepts a unique prefix of a long option (`allow_abbrev`, on by default)

    def accepts(self, option: str) -> bool:
        """`--name` (without `=value`) is an option of the parser, or a prefix argparse expands to one."""
        if option in self.options:
            return True
        return self.abbrev and any(o.startswith(option) for o in self.options)


def python_interface(ctx: Context, src: SourceFile) -> PyInterface | None:
    """The interface of the Python script `src`, None when it has no parser this module can read whole."""
    if not src.path.endswith(".py") or "ArgumentParser" not in src.text or "add_argument" not in src.text:
        return None
    return ctx.parsed("pyargs", src, lambda _text: _interface(ctx, src))


def _interface(ctx: Context, src: SourceFile) -> PyInterface | None:
    text = src.text
    if any(word in text for word in _OTHER_PARSERS) or text.count("ArgumentParser(") != 1 or "parse_args(" not in text:
        return None
    tree = ctx.python_ast(src)
    if tree is None:
        return None
    parser_line = 0
    abbrev = True
    helps = True
    holders: set[str] = set()  # the names bound to the parser or its groups
    calls: list[ast.Call] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            calls.append(node)
        elif isinstance(node, ast.ClassDef) and any(_attr(b) == "ArgumentParser" for b in node.bases):
            return None  # a parser subclass: its behaviour is its own
        if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Call):
            continue
        called = _attr(node.value.func)
        if called == "ArgumentParser" or called in _GROUPS:
            if called == "ArgumentParser":
                parser_line = node.lineno
                for kw in node.value.keywords:
                    if kw.arg is None or kw.arg in ("parents", "prefix_chars"):
                        return None  # `**kwargs`, options inherited from other parsers, or other option marks
                    if kw.arg in ("allow_abbrev", "add_help"):
                        if not isinstance(kw.value, ast.Constant):
                            return None
                        if kw.arg == "allow_abbrev":
                            abbrev = bool(kw.value.value)
                        else:
                            helps = bool(kw.value.value)
            for target in node.targets:
                if isinstance(target, ast.Name):
                    holders.add(target.id)
                else:
                    return None
    if not parser_line or not holders:
        return None
    options: set[str] = {"--help"} if helps else set()
    for node in calls:
        for arg in [*node.args, *(kw.value for kw in node.keywords)]:
            if isinstance(arg, ast.Name) and arg.id in holders:
                return None  # the parser (or a group) handed to other code, which may add options
        if _attr(node.func) != "add_argument":
            continue
        names: list[str] = []
        for arg in node.args:
            if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
                return None  # a name built at run time, or `*names`
            names.append(arg.value)
        optional = [n for n in names if n.startswith("-")]
        options.update(n for n in optional if n.startswith("--"))
        action = next((kw.value for kw in node.keywords if kw.arg == "action"), None)
        if action is not None and _attr(action) == "BooleanOptionalAction":
            options.update("--no-" + n[2:] for n in optional if n.startswith("--"))
    return PyInterface(src.path, parser_line, frozenset(options), abbrev)


def _attr(node: ast.AST) -> str:
    """The last name of a call's target or a base class: `argparse.ArgumentParser` -> `ArgumentParser`."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""
