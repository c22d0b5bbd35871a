"""CMake definitions a build passes (`-D<NAME>=<value>`), and the variables the repository's CMake files read.

- `cmake_reads(ctx)`: every CMakeLists.txt and *.cmake file of the head, read once: the names they read as
  variables (`${NAME}`, `$CACHE{NAME}`, a bare name in `if()`/`elseif()`/`while()`, `DEFINED NAME`,
  `option(NAME`, `cmake_dependent_option(NAME`, `set(NAME ... CACHE`) with where each is first read, and every
  word they mention at all (comments included: a name a CMake file documents is not unknown there).
- `python_definitions(text)`: the `-D` arguments a Python build script gives cmake: the elements of a list
  assigned, appended or added to a variable named like cmake's arguments (`cmake_args`), of a list whose first
  element is cmake itself (`[self.cmake, ...]`), and the words of a `"cmake ..."` command string. A definition
  built by a helper (`f"-D{name}={value}"` in `def add(args, name, value)`) is read at each call that gives the
  name as a literal, on the line of that literal.
- `unit_definitions(unit)`: the `-D` arguments of the `cmake` commands of a shell unit (a script, a `run:` step, a
  RUN), the ones an expanded variable or array holds (`cmake "${cmake_args[@]}"`, `cmake .. ${CUSTOM_OPTION}`)
  included.

A definition whose name is built from anything but a literal (a variable, an expression) is not read: its name is
unknown. `own_project` says whether the command configures the repository's own CMake project as far as can be
told: not when the unit fetched or unpacked another source tree before it (`git clone`, `wget`, `tar`), or moved
into an absolute folder.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_right
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from npu_review.checks import globs, lazyre
from npu_review.checks.analysis.scripts import ShellUnit, UnitCommand, unit_shell
from npu_review.checks.context import Context
from npu_review.checks.parsers import pyast
from npu_review.checks.parsers.sh import read_word, unquote

CMAKE_GLOBS = ("**/CMakeLists.txt", "**/*.cmake")

_NAME = lazyre.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_IDENT = lazyre.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Definition:
    """One `-D` argument: the variable it sets ("" when it cannot be told), the argument as written, its line."""

    name: str
    raw: str
    line: int
    malformed: bool = False  # `-DNAME` with no `=value`: cmake rejects the command line
    own_project: bool = True  # configures the repository's own CMake project (nothing else fetched first)
    via: str = ""  # the Python helper that builds it (`check_or_set_default_env`), "" when written out


# -- what the CMake files read --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CMakeReads:
    read: Mapping[str, tuple[str, int]]  # name -> (path, line) of its first read
    mentioned: frozenset[str]  # every word of the CMake files
    files: int = 0


_VAR_REF = lazyre.compile(r"\$(?:CACHE)?\{([A-Za-z_][A-Za-z0-9_]*)\}")
_DECLARED = lazyre.compile(r"(?im)^[ \t]*(?:option|cmake_dependent_option)[ \t]*\([ \t\n]*([A-Za-z_][A-Za-z0-9_]*)")
_SET_CACHE = lazyre.compile(r"(?is)\bset[ \t]*\([ \t\n]*([A-Za-z_][A-Za-z0-9_]*)\b[^()]*?\bCACHE\b")
_DEFINED = lazyre.compile(r"\bDEFINED[ \t]+(?:CACHE\{|ENV\{)?([A-Za-z_][A-Za-z0-9_]*)")
_CONDITION = lazyre.compile(r"(?im)^[ \t]*(?:if|elseif|while)[ \t]*\(")
_COMMENT = lazyre.compile(r"(?m)#.*$")
_QUOTED = lazyre.compile(r'"(?:[^"\\]|\\.)*"')
# Words of a condition that are its operators or constants, not variables.
_CONDITION_WORDS = frozenset(
    {"NOT", "AND", "OR", "DEFINED", "COMMAND", "POLICY", "TARGET", "TEST", "EXISTS", "IS_DIRECTORY", "IS_SYMLINK",
     "IS_ABSOLUTE", "IS_READABLE", "IS_WRITABLE", "IS_EXECUTABLE", "IS_NEWER_THAN", "MATCHES", "LESS", "GREATER",
     "EQUAL", "LESS_EQUAL", "GREATER_EQUAL", "STRLESS", "STRGREATER", "STREQUAL", "STRLESS_EQUAL",
     "STRGREATER_EQUAL", "VERSION_LESS", "VERSION_GREATER", "VERSION_EQUAL", "VERSION_LESS_EQUAL",
     "VERSION_GREATER_EQUAL", "PATH_EQUAL", "IN_LIST", "ON", "OFF", "YES", "NO", "TRUE", "FALSE", "Y", "N",
     "IGNORE", "NOTFOUND", "CACHE", "ENV"}
)  # fmt: skip


def cmake_reads(ctx: Context) -> CMakeReads:
    """What the head's CMake files read (built once per run)."""

    def build() -> CMakeReads:
        read: dict[str, tuple[str, int]] = {}
        mentioned: set[str] = set()
        files = 0
        for path in ctx.head_paths():
            if not globs.match_any(path, CMAKE_GLOBS):
                continue
            src = ctx.source(path)
            if src is None:
                continue
            files += 1
            text = src.text
            mentioned.update(_IDENT.findall(text))
            starts = [0] + [m.end() for m in re.finditer("\n", text)]
            for name, offset in _reads(text):
                if name not in read:
                    read[name] = (path, bisect_right(starts, offset))
        return CMakeReads(read, frozenset(mentioned), files)

    return ctx.memo(("cmake-reads", "head", ""), build)


def _reads(text: str) -> Iterator[tuple[str, int]]:
    code = _COMMENT.sub(lambda m: " " * len(m.group(0)), text)  # a `#` inside a string is rare in CMake files
    for rx in (_VAR_REF, _DECLARED, _SET_CACHE, _DEFINED):
        for m in rx.finditer(code):
            yield m.group(1), m.start(1)
    for m in _CONDITION.finditer(code):
        start = m.end()
        depth, i = 1, start
        while i < len(code) and depth:
            depth += {"(": 1, ")": -1}.get(code[i], 0)
            i += 1
        body = code[start : i - 1]
        bare = _QUOTED.sub(lambda q: " " * len(q.group(0)), body)
        bare = re.sub(r"\$(?:CACHE|ENV)?\{[^{}]*\}", lambda q: " " * len(q.group(0)), bare)
        for w in re.finditer(r"(?<![\w.$/-])[A-Za-z_][A-Za-z0-9_]*(?![\w.{/-])", bare):
            if w.group(0).upper() not in _CONDITION_WORDS:
                yield w.group(0), start + w.start()


# -- a `-D` argument ------------------------------------------------------------------------------------------------


def _definition(body: str, raw: str, line: int, own: bool, via: str = "") -> Definition | None:
    """`body` is what follows `-D` (the placeholder \\x01 stands for what cannot be known); None when the name
    cannot be told or it is not a name."""
    name_part, eq, _ = body.partition("=")
    if "\x01" in name_part or "$" in name_part or "`" in name_part:
        return None
    name = name_part.split(":", 1)[0].strip()
    if not _NAME.match(name):
        return None
    if not eq:
        return Definition(name, raw, line, malformed=True, own_project=own, via=via)
    return Definition(name, raw, line, own_project=own, via=via)


def _split_definitions(args: Sequence[tuple[str, int]], own: bool) -> Iterator[Definition]:
    """The definitions among cmake's arguments (text, line): `-DX=v`, `-DX:TYPE=v`, `-D X=v`."""
    k = 0
    while k < len(args):
        text, line = args[k]
        k += 1
        if not text.startswith("-D"):
            continue
        if text == "-D":
            if k >= len(args):
                continue
            body, line = args[k]
            k += 1
            raw = f"-D {body}"
        else:
            body, raw = text[2:], text
        d = _definition(body, raw.replace("\x01", "…"), line, own)
        if d is not None:
            yield d


# -- Python build scripts -------------------------------------------------------------------------------------------


def _cmake_args_name(node: ast.AST) -> bool:
    """A variable named like cmake's argument list (`cmake_args`, `self.cmake_cmd`), not a compiler's flags."""
    name = pyast.dotted(node).rsplit(".", 1)[-1].lower()
    return "cmake" in name and "flag" not in name and "cxx" not in name


def _cmake_program(node: ast.AST) -> bool:
    """cmake itself as a command's first word: `"cmake"`, `"/usr/bin/cmake"`, `self.cmake`, `cmake_bin`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.rsplit("/", 1)[-1] in ("cmake", "cmake3")
    name = pyast.dotted(node).rsplit(".", 1)[-1].lower()
    return name in ("cmake", "cmake3") or (
        name.startswith("cmake") and any(name.endswith(s) for s in ("bin", "exe", "executable", "path", "command"))
    )


_PERCENT = lazyre.compile(r"%[-#0 +]*\d*(?:\.\d+)?[sdrifx]")
_BRACES = lazyre.compile(r"\{[^{}]*\}")


@dataclass
class _Scope:
    params: tuple[str, ...] = ()
    method: bool = False
    name: str = ""


@dataclass
class _PyCollector:
    own: bool
    out: list[Definition] = field(default_factory=list)
    # helper name -> (param index (after self), template of the definition, line of the template)
    helpers: dict[str, list[tuple[int, str, str]]] = field(default_factory=dict)

    def text(self, node: ast.AST, scope: _Scope, params: list[str]) -> str:
        """The string an expression makes, \\x00 for a parameter of the enclosing function (named in `params`),
        \\x01 for anything else."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value.replace("\x00", "").replace("\x01", "")
        if isinstance(node, ast.JoinedStr):
            return "".join(self.text(v, scope, params) for v in node.values)
        if isinstance(node, ast.FormattedValue):
            if node.format_spec is None and node.conversion in (-1, 115):
                return self.text(node.value, scope, params)
            return "\x01"
        if isinstance(node, ast.Name) and node.id in scope.params:
            params.append(node.id)
            return "\x00"
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.text(node.left, scope, params) + self.text(node.right, scope, params)
        if (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Mod)
            and isinstance(node.left, ast.Constant)
            and isinstance(node.left.value, str)
        ):
            return _PERCENT.sub("\x01", node.left.value)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format"
            and isinstance(node.func.value, ast.Constant)
            and isinstance(node.func.value.value, str)
        ):
            return _BRACES.sub("\x01", node.func.value.value)
        return "\x01"

    def elements(self, node: ast.AST) -> list[ast.expr]:
        """The elements of a list expression (`[a, b]`, `[a] + [b]`); [] for anything else."""
        if isinstance(node, (ast.List, ast.Tuple)):
            return list(node.elts)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.elements(node.left) + self.elements(node.right)
        return []

    def args(self, nodes: Sequence[ast.expr], scope: _Scope) -> None:
        seq: list[tuple[str, int]] = []
        for n in nodes:
            if isinstance(n, ast.Starred):
                seq.append(("\x01", n.lineno))
                continue
            params: list[str] = []
            t = self.text(n, scope, params)
            if "\x00" in t:
                self.helper(t, params, scope)
                seq.append(("\x01", n.lineno))
                continue
            seq.append((t, n.lineno))
        self.out.extend(_split_definitions(seq, self.own))

    def helper(self, template: str, params: list[str], scope: _Scope) -> None:
        """A definition whose name is one parameter of the function that builds it: read at the calls."""
        if not template.startswith("-D") or not scope.name:
            return
        name_part = template[2:].partition("=")[0]
        if name_part.count("\x00") != 1 or "\x01" in name_part:
            return
        param = params[0]  # the first placeholder is the one in the name
        rest = template[2 + len(name_part) :].replace("\x00", "\x01")
        self.helpers.setdefault(scope.name, []).append((scope.params.index(param), param, "-D" + name_part + rest))

    def walk(self, tree: ast.Module) -> None:
        self._body(tree.body, _Scope())

    def _body(self, stmts: Sequence[ast.stmt], scope: _Scope) -> None:
        for stmt in stmts:
            self._node(stmt, scope)

    def _node(self, node: ast.AST, scope: _Scope) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            params = tuple(a.arg for a in node.args.posonlyargs + node.args.args)
            method = bool(params) and params[0] in ("self", "cls")
            inner = _Scope(params[1:] if method else params, method, node.name)
            self._body(node.body, inner)
            return
        if isinstance(node, ast.ClassDef):
            self._body(node.body, _Scope())
            return
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            added = not isinstance(node, ast.AugAssign) or isinstance(node.op, ast.Add)
            if node.value is not None and added and any(_cmake_args_name(t) for t in targets):
                self.args(self.elements(node.value), scope)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _cmake_args_name(node.func.value):
            attr = node.func.attr
            if attr == "append" and len(node.args) == 1:
                self.args(node.args, scope)
            elif attr == "insert" and len(node.args) == 2:
                self.args(node.args[1:], scope)
            elif attr == "extend" and len(node.args) == 1:
                self.args(self.elements(node.args[0]), scope)
        if isinstance(node, (ast.List, ast.Tuple)) and node.elts and _cmake_program(node.elts[0]):
            self.args(node.elts[1:], scope)
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], (ast.Constant, ast.JoinedStr)):
            command = self.text(node.args[0], _Scope(), [])  # `os.system("cmake .. -DX=1")`
            if _CMAKE_LINE.match(command):
                words = _shell_words(command)
                self.out.extend(_split_definitions([(w, node.args[0].lineno) for w in words[1:]], self.own))
        for child in ast.iter_child_nodes(node):
            self._node(child, scope)

    def calls(self, tree: ast.Module) -> None:
        """The definitions helpers build, at each call that names the variable with a literal."""
        if not self.helpers:
            return
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = pyast.callee_name(node)
            for index, param, template in self.helpers.get(name, ()):
                arg: ast.AST | None = node.args[index] if index < len(node.args) else None
                if arg is None:
                    arg = next((k.value for k in node.keywords if k.arg == param), None)
                if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
                    continue
                body = template[2:].replace("\x00", arg.value, 1)
                raw = "-D" + body.replace("\x01", "…")
                d = _definition(body, raw, arg.lineno, self.own, via=name)
                if d is not None:
                    self.out.append(d)


_CMAKE_LINE = lazyre.compile(r"[ \t]*(?:\S*/)?cmake3?[ \t]+\S")
_FETCH_PY = lazyre.compile(r"""["']clone["']|\bgit clone\b|urlretrieve|\bwget\b""")


def python_definitions(text: str) -> list[Definition]:
    """The `-D` arguments a Python build script gives cmake, in the order written (not memoised: see
    `ctx.parsed`)."""
    if "-D" not in text or "cmake" not in text.lower():
        return []
    tree = pyast.parse(text)
    if tree is None:
        return []
    c = _PyCollector(own=_FETCH_PY.search(text) is None)
    c.walk(tree)
    c.calls(tree)
    return sorted(set(c.out), key=lambda d: (d.line, d.raw))


def _shell_words(text: str) -> list[str]:
    out, i, n = [], 0, len(text)
    while i < n:
        if text[i] in " \t\n":
            i += 1
            continue
        end = max(read_word(text, i, " \t\n"), i + 1)
        out.append(unquote(text[i:end]))
        i = end
    return out


# -- shell ----------------------------------------------------------------------------------------------------------

_EXPANSION = lazyre.compile(r"\"?\$\{?([A-Za-z_][A-Za-z0-9_]*)(?:\[[@*]\])?\}?\"?\Z")
_ASSIGN = lazyre.compile(r"([A-Za-z_][A-Za-z0-9_]*)\+?=")
_DECLARERS = frozenset({"local", "export", "declare", "typeset", "readonly"})
# Commands after which a unit works in another source tree than the repository's own.
_FETCHERS = frozenset({"wget", "curl", "tar", "unzip", "svn", "hg"})
# `cmake` modes that configure nothing (their `-D` is not a cache definition of a project).
_NOT_CONFIGURE = frozenset({"--build", "-E", "--install", "--open", "--help", "--version", "--find-package"})


def unit_definitions(unit: ShellUnit, foreign: bool = False) -> list[Definition]:
    """The `-D` arguments of the unit's cmake commands. `foreign`: the unit already works in another source tree
    (an earlier RUN of its Dockerfile fetched one)."""
    if "-D" not in unit.source.text:
        return []
    cmds = unit_shell(unit).commands
    values = _assigned(cmds)
    out: list[Definition] = []
    for cmd in cmds:
        words = list(cmd.words)
        while words and (words[0].raw in _DECLARERS or (_ASSIGN.match(words[0].raw) and len(words) > 1)):
            words = words[1:]
        if not words:
            continue
        program = words[0].unquoted.rsplit("/", 1)[-1]
        if program in _FETCHERS or (program == "git" and any(w.raw == "clone" for w in words[1:3])):
            foreign = True
            continue
        if program == "cd" and len(words) > 1 and words[1].unquoted.startswith(("/", "~")):
            foreign = True
            continue
        if program not in ("cmake", "cmake3") or any(w.unquoted in _NOT_CONFIGURE for w in words[1:]):
            continue
        args: list[tuple[str, int]] = []
        for w in words[1:]:
            m = _EXPANSION.match(w.raw)
            if m is not None and m.group(1) in values:
                args.extend(values[m.group(1)])
            elif m is not None or "$" in w.raw.split("=", 1)[0]:
                args.append(("\x01", w.line))
            else:
                args.append((w.unquoted if "$" not in w.raw else _unquote_keep(w.raw), w.line))
        out.extend(_split_definitions(args, not foreign))
    return list(dict.fromkeys(out))  # a variable expanded by several commands: each of its words once


def _unquote_keep(raw: str) -> str:
    """A word with an expansion: unquoted, its `$...` kept (so that a name part with `$` stays unknown)."""
    return unquote(raw)


def _assigned(cmds: Sequence[UnitCommand]) -> dict[str, list[tuple[str, int]]]:
    """Variable -> the words every assignment of the unit gives it (`X="-DA=1 -DB=2"`, `X=(-DA=1 ...)`,
    `X+=(...)`, `X="${X} -DC=3"`), each with its line: what `$X` / `${X[@]}` hands cmake."""
    out: dict[str, list[tuple[str, int]]] = {}
    for cmd in cmds:
        for w in cmd.words:
            m = _ASSIGN.match(w.raw)
            if m is None or w.quoted:
                continue
            rest = w.raw[m.end() :]
            items: list[tuple[str, int]] = []
            if rest.startswith("(") and rest.rstrip().endswith(")"):
                inner = rest[1 : rest.rstrip().rfind(")")]
                base = w.line + w.raw[: m.end() + 1].count("\n")
                i = 0
                while i < len(inner):
                    if inner[i] in " \t\n":
                        i += 1
                        continue
                    if inner[i] == "#":  # a comment line inside the array
                        j = inner.find("\n", i)
                        i = len(inner) if j < 0 else j
                        continue
                    end = max(read_word(inner, i, " \t\n"), i + 1)
                    items.append((unquote(inner[i:end]), base + inner.count("\n", 0, i)))
                    i = end
            else:
                for part in unquote(rest).split():
                    if re.fullmatch(r"\$\{?" + m.group(1) + r"\}?", part):
                        continue  # `X="${X} -DC=3"`: what X held, read from its own assignments
                    items.append((part, w.line))
            out.setdefault(m.group(1), []).extend(items)
    return out
