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
import re
from dataclasses import dataclass

from npu_review.checks.context import Context, SourceFile
from npu_review.checks.parsers.sh import Word

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


# -- the defaults a script's options take, and what a caller passes ----------------------------------------------


@dataclass(frozen=True)
class OptionDefault:
    """One `add_argument(...)` of a script, with the default it takes when the caller passes nothing."""

    options: tuple[str, ...]  # its option strings (`-dt`, `--device_target`)
    dest: str  # the attribute it sets (`device_target`)
    default: str | None  # the default when it is a string literal (None: none given, or not a literal)
    line: int  # the line of the default's value (of the call when there is no `default=`)
    call_line: int  # the line of `add_argument(`


def option_defaults(ctx: Context, src: SourceFile) -> dict[str, OptionDefault]:
    """The options the script's own `add_argument` calls define, by each option string, with their defaults. An
    option string defined twice in the file (two parsers, one per mode) is left out: which default applies is
    not known. Read whole parser or not (`parse_known_args`, a parser built in a function): a default is the
    value a caller that leaves the option out gets, wherever the parser is assembled."""
    if not src.path.endswith(".py") or "add_argument" not in src.text:
        return {}
    return ctx.parsed("pyargs-defaults", src, lambda _text: _option_defaults(ctx, src))


def _option_defaults(ctx: Context, src: SourceFile) -> dict[str, OptionDefault]:
    tree = ctx.python_ast(src)
    if tree is None:
        return {}
    out: dict[str, OptionDefault] = {}
    twice: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or _attr(node.func) != "add_argument":
            continue
        names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if not names or len(names) != len(node.args) or not all(n.startswith("-") for n in names):
            continue  # a positional argument, or names built at run time
        value = next((kw.value for kw in node.keywords if kw.arg == "default"), None)
        default = value.value if isinstance(value, ast.Constant) and isinstance(value.value, str) else None
        given = next((kw.value for kw in node.keywords if kw.arg == "dest"), None)
        longs = [n for n in names if n.startswith("--")]
        dest = (longs or names)[0].lstrip("-").replace("-", "_")
        if isinstance(given, ast.Constant) and isinstance(given.value, str):
            dest = given.value
        line = value.lineno if value is not None else node.lineno
        item = OptionDefault(tuple(names), dest, default, line, node.lineno)
        for name in names:
            if name in out:
                twice.add(name)
            out[name] = item
    return {k: v for k, v in out.items() if k not in twice}


@dataclass(frozen=True)
class DeviceChoice:
    """What a script hands to what chooses its device (the facts' `device_defaults`: `set_context(device_target=
    ...)`, `ms.set_device(...)`, `torch.device(...)`)."""

    literals: tuple[tuple[str, int], ...]  # (value, line) of each string literal it hands there
    names: frozenset[str]  # the names and attributes the other values are made of (`args.device_target`)


def device_choice(ctx: Context, src: SourceFile) -> DeviceChoice:
    """The values the script chooses its device with: literals (a hard-coded device) and the names of the others."""
    if not src.path.endswith(".py"):
        return DeviceChoice((), frozenset())
    facts = ctx.facts.device_defaults
    keywords, calls = frozenset(facts.device_keywords), frozenset(facts.device_calls)

    def build(_text: str) -> DeviceChoice:
        tree = ctx.python_ast(src)
        if tree is None:
            return DeviceChoice((), frozenset())
        literals: list[tuple[str, int]] = []
        names: set[str] = set()
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            given = [kw.value for kw in node.keywords if kw.arg in keywords]
            if _attr(node.func) in calls and node.args:
                given.append(node.args[0])
            for value in given:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    literals.append((value.value, value.lineno))
                    continue
                for part in ast.walk(value):
                    if isinstance(part, (ast.Name, ast.Attribute)):
                        names.add(_attr(part))
        return DeviceChoice(tuple(sorted(literals, key=lambda item: item[1])), frozenset(names))

    return ctx.parsed("pyargs-devices", src, build)


def passes_option(iface: PyInterface | None, options: tuple[str, ...], words: tuple[Word, ...]) -> bool:
    """Whether a command's words after the script (`FileRef.args`) may set the option of these option strings:
    one of them, `--opt=value`, a prefix argparse expands to it (unless the parser turns abbreviations off), or
    anything unknown (`"$@"`, a variable alone where an option may stand: it may hold the option)."""
    long = [o for o in options if o.startswith("--")]
    short = [o for o in options if not o.startswith("--")]
    abbrev = iface is None or iface.abbrev
    after_option = False  # the word before was an option without `=value`: this one may be its value
    for word in words:
        if word.raw in ("|", "||", "&&", ";", "&"):
            break
        text = word.unquoted
        if text.startswith("-") and text != "-":
            name = text.split("=", 1)[0]
            if name in options or any(text.startswith(s) for s in short if len(s) == 2):
                return True
            expands = name.startswith("--") and len(name) > 2 and any(o.startswith(name) for o in long)
            if abbrev and expands and (iface is None or name not in iface.options):
                return True  # `--device` for `--device_target`, unless the parser has a `--device` of its own
            after_option = "=" not in text
            continue
        if "$" in word.raw and not after_option and _WHOLE_VARIABLE.fullmatch(word.raw.strip("\"'")):
            return True  # `$ARGS`, `"$@"`: what it holds is not known
        after_option = False
    return False


_WHOLE_VARIABLE = re.compile(r"\$(?:[@*]|\{?[A-Za-z_]\w*(?:\[[@*]\])?\}?)")
