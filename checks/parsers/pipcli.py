"""`pip install` / `pip uninstall` command lines (also `python -m pip`, `uv pip`) with their operands sorted out."""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from npu_review.checks import lazyre
from npu_review.checks.parsers.requirements import Requirement, parse_requirement
from npu_review.checks.parsers.sh import Command, Word

# pip options that take a value (a separate word unless written `--opt=value` or `-Xvalue`).
_PIP_VALUE_OPTS = frozenset(
    {"-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-i", "--index-url", "--extra-index-url"}
    | {"-f", "--find-links", "-t", "--target", "--prefix", "--root", "--trusted-host", "--platform", "--abi"}
    | {"--python-version", "--implementation", "--upgrade-strategy", "--src", "-C", "--config-settings"}
    | {"--global-option", "--install-option", "--progress-bar", "--cache-dir", "--log", "--timeout", "--retries"}
    | {"--proxy", "--cert", "--client-cert", "--exists-action", "--report", "--only-binary", "--no-binary"}
    | {"--python", "--group"}
)
_PIP_GLOBAL_VALUE_OPTS = frozenset(
    {"--cache-dir", "--log", "--timeout", "--retries", "--proxy", "--cert", "--client-cert", "--exists-action"}
    | {"--python", "--trusted-host", "-i", "--index-url"}
)


@dataclass(frozen=True)
class PipCall:
    """`pip install …` / `pip uninstall …` (also `python -m pip`, `uv pip`) with its operands sorted out."""

    verb: str
    packages: tuple[tuple[Requirement, Word], ...]  # named requirements
    files: tuple[Word, ...]  # -r / --requirement
    editables: tuple[Word, ...]  # -e / --editable
    others: tuple[Word, ...]  # local paths, wheels, URLs, unexpanded `$X` words
    options: tuple[tuple[str, str | None, Word], ...]  # (option, value, word)
    no_deps: bool
    cmd: Command

    def option_values(self, *names: str) -> list[str]:
        return [v for o, v, _ in self.options if o in names and v is not None]


_PIP = lazyre.compile(r"pip(?:3(?:\.\d+)?)?")
_PYTHON = lazyre.compile(r"python(?:3(?:\.\d+)?)?")


def pip_call(cmd: Command) -> PipCall | None:
    """Read a pip command; None when `cmd` is not one (or names no verb)."""
    words = cmd.words[cmd.start :]
    if not words:
        return None
    # The program first, from its word alone: most commands are not pip, and cmd.argv unquotes every word.
    prog = words[0].unquoted.rsplit("/", 1)[-1]
    if _PIP.fullmatch(prog):
        i = 1
    elif _PYTHON.fullmatch(prog) or prog == "uv":
        i = 0
    else:
        return None
    argv = cmd.argv
    if i == 0:
        if prog != "uv" and argv[1:3] == ("-m", "pip"):
            i = 3
        elif prog == "uv" and argv[1:2] == ("pip",):
            i = 2
        else:
            return None
    while i < len(argv) and argv[i].startswith("-"):  # global options before the verb
        opt = argv[i].split("=", 1)[0]
        i += 2 if opt in _PIP_GLOBAL_VALUE_OPTS and "=" not in argv[i] else 1
    if i >= len(argv):
        return None
    verb = argv[i]
    packages: list[tuple[Requirement, Word]] = []
    files: list[Word] = []
    editables: list[Word] = []
    others: list[Word] = []
    options: list[tuple[str, str | None, Word]] = []
    i += 1
    while i < len(words):
        w = words[i]
        a = w.unquoted
        if a.startswith("-") and not w.quoted and len(a) > 1:
            name, eq, value = a.partition("=")
            val: str | None = value if eq else None
            if not eq and not a.startswith("--") and len(a) > 2 and a[:2] in ("-r", "-e", "-c", "-i", "-f", "-t"):
                name, val = a[:2], a[2:]  # `-e.`, `-rrequirements.txt`
            elif not eq and name in _PIP_VALUE_OPTS and i + 1 < len(words):
                i += 1
                val = words[i].unquoted
                w = words[i]
            options.append((name, val, w))
            if name in ("-r", "--requirement") and val is not None:
                files.append(_value_word(w, val))
            elif name in ("-e", "--editable") and val is not None:
                editables.append(_value_word(w, val))
            i += 1
            continue
        req = parse_requirement(a) if "$" not in a and "`" not in a else None
        if req is not None:
            packages.append((req, w))
        else:
            others.append(w)
        i += 1
    no_deps = any(o == "--no-deps" for o, _, _ in options)
    return PipCall(verb, tuple(packages), tuple(files), tuple(editables), tuple(others), tuple(options), no_deps, cmd)


def _value_word(w: Word, value: str) -> Word:
    """The word that holds an option's value: `w` itself (`-r file`), or its tail (`-rfile`, `--requirement=file`)."""
    if w.unquoted == value:
        return w
    option = w.unquoted[: len(w.unquoted) - len(value)]
    if w.raw.startswith(option):
        return Word(w.raw[len(option) :], w.line, w.offset + len(option))
    return Word(shlex.quote(value), w.line, w.offset)
