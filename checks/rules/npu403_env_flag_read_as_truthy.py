"""NPU403: a build script tests an environment variable's raw string for truth, and the CI sets it to "FALSE"."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from npu_review.checks import lazyre
from npu_review.checks.analysis.workflows import workflow_paths
from npu_review.checks.context import Context
from npu_review.checks.facts import Facts
from npu_review.checks.kinds import ASCEND_DOCKERFILE, ASCEND_WORKFLOW, DOCKERFILE, NPU_SCRIPT, SHELL, WORKFLOW
from npu_review.checks.model import Related, Severity
from npu_review.checks.rule import Hit, Rule

# The Python files that build or set up, where such a read decides what gets built (analysis.scripts reads the
# same ones for `["sh", ...]` lists).
_READER_GLOBS = ("setup.py", "**/setup.py", "**/build*.py", "ci/**/*.py", "**/ci/**/*.py")
# A value that means "off" to the person who wrote it, and is a non-empty string to Python.
_OFF = r"(?i:false|0|no|off)"
_NAME = lazyre.compile(r"\A[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class _Read:
    var: str  # the environment variable
    path: str
    line: int  # the line of the truth test
    how: str  # `os.environ.get("X")`, as written in the message


@dataclass(frozen=True)
class _Set:
    path: str
    line: int
    value: str


class EnvFlagReadAsTruthy(Rule):
    """A build script reads an environment variable with `os.environ.get("X")` (or `os.getenv`) and tests the
    string for truth, while a script, workflow or Dockerfile of the repository sets `X` to an "off" value
    (`FALSE`, `false`, `0`, `no`, `off`).

    Why: an environment variable is a string, and every non-empty string is true in Python. `X=FALSE` then
    does what `X=TRUE` does: torch_npu's CI exported `DISABLE_INSTALL_TORCHAIR=FALSE` to build torchair, and
    setup.py's `if not DISABLE_TORCHAIR:` skipped it, so no torchair was built until the test was fixed.

    Bad:
        # ci/build.sh
        export DISABLE_INSTALL_TORCHAIR=FALSE
        # setup.py
        import os
        DISABLE_TORCHAIR = os.environ.get("DISABLE_INSTALL_TORCHAIR")
        if not DISABLE_TORCHAIR:
            build_torchair()

    Good:
        # ci/build.sh
        export DISABLE_INSTALL_TORCHAIR=FALSE
        # setup.py
        import os
        DISABLE_TORCHAIR = os.environ.get("DISABLE_INSTALL_TORCHAIR", "FALSE").upper() == "TRUE"
        if not DISABLE_TORCHAIR:
            build_torchair()

    Fix: compare the value (`.upper() == "TRUE"`, `in ("1", "ON", "TRUE")`), or unset the variable instead of
    setting it to an "off" value.

    Where: the Python build files (setup.py, build*.py, files under ci/) that read the variable into a name (or
    test the call itself) with no default or an empty one, and test it with `if`, `not`, `and` / `or`, `while`
    or a conditional expression; the settings are shell assignments and exports, workflow `env:` entries and
    Dockerfile `ENV`, in the repository's Ascend files (all of them in a project about Ascend as a whole). A
    value that is compared or converted anywhere in the file is not reported.
    """

    id = "NPU403"
    name = "env-flag-read-as-truthy"
    severity = Severity.WARNING
    title = "An environment flag's raw string is tested for truth while the CI sets it to an 'off' value"
    kinds = frozenset({SHELL, NPU_SCRIPT, WORKFLOW, ASCEND_WORKFLOW, DOCKERFILE, ASCEND_DOCKERFILE})
    context_kinds = frozenset({SHELL, NPU_SCRIPT, WORKFLOW, ASCEND_WORKFLOW, DOCKERFILE, ASCEND_DOCKERFILE})

    @classmethod
    def context_paths(cls, facts: Facts) -> tuple[str, ...]:
        return _READER_GLOBS

    def check_project(self, ctx: Context) -> Iterable[Hit]:
        reads = [r for path in ctx.paths_matching(_READER_GLOBS) for r in _reads(ctx, path)]
        if not reads:
            return
        wanted = {r.var for r in reads}
        sets: dict[str, list[_Set]] = {}
        for s_var, found in _settings(ctx, wanted):
            sets.setdefault(s_var, []).append(found)
        for read in reads:
            where = sets.get(read.var)
            if not where:
                continue
            first = where[0]
            places = [(read.path, read.line), *((s.path, s.line) for s in where)]
            at = next(((p, n) for p, n in places if ctx.introduces(p, n)), None)
            if at is None:
                if not ctx.audit:
                    continue
                at = (read.path, read.line)
            more = f" (and {len(where) - 1} more place{'s' if len(where) > 2 else ''})" if len(where) > 1 else ""
            yield Hit(
                at[0],
                at[1],
                f"`{read.var}` is read with `{read.how}` and tested for truth ({read.path}:{read.line}), but "
                f"{first.path}:{first.line}{more} sets it to `{first.value}`: a non-empty string, so Python takes "
                f"it as true and `{read.var}={first.value}` acts as if it were set to true. Compare the value "
                '(`.upper() == "TRUE"`), or unset the variable instead.',
                related=tuple(Related(p, n) for p, n in places if (p, n) != at),
                cause=read.var,
            )


def _reads(ctx: Context, path: str) -> list[_Read]:
    src = ctx.source(path)
    if src is None or ("environ" not in src.text and "getenv" not in src.text):
        return []
    tree = ctx.python_ast(src)
    if tree is None:
        return []
    return _find_reads(path, tree)


def _env_call(node: ast.AST) -> str | None:
    """`os.environ.get("X")` / `os.getenv("X")` (no default, or None or ""): the variable."""
    if not isinstance(node, ast.Call) or not node.args or node.keywords:
        return None
    func = node.func
    name = ""
    if isinstance(func, ast.Attribute) and func.attr == "get" and isinstance(func.value, ast.Attribute):
        name = "environ.get" if func.value.attr == "environ" else ""
    elif isinstance(func, ast.Attribute) and func.attr == "getenv":
        name = "getenv"
    if not name:
        return None
    first = node.args[0]
    if not isinstance(first, ast.Constant) or not isinstance(first.value, str) or not _NAME.match(first.value):
        return None
    if len(node.args) > 2:
        return None
    if len(node.args) == 2:
        default = node.args[1]
        if not (isinstance(default, ast.Constant) and default.value in (None, "")):
            return None
    return first.value


def _find_reads(path: str, tree: ast.Module) -> list[_Read]:
    bound: dict[str, tuple[str, str]] = {}  # name -> (variable, how)
    assigned: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    assigned[target.id] = assigned.get(target.id, 0) + 1
                    var = _env_call(node.value)
                    if var is not None and len(node.targets) == 1:
                        bound[target.id] = (var, ast.unparse(node.value))
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name):
            assigned[node.target.id] = assigned.get(node.target.id, 0) + 2  # rebound: not the raw string
    names = {n: v for n, v in bound.items() if assigned.get(n) == 1}
    # A name used any other way than in a truth test (compared, converted, passed on) is not the raw string's
    # only use: the file may well parse it there.
    tested: list[tuple[str, int]] = []
    other: set[str] = set()
    direct: list[_Read] = []
    truth_ids: set[int] = set()
    for node in ast.walk(tree):
        for test in _truth_tests(node):
            for leaf in _leaves(test):
                truth_ids.add(id(leaf))
                if isinstance(leaf, ast.Name) and leaf.id in names:
                    tested.append((leaf.id, leaf.lineno))
                var = _env_call(leaf)
                if var is not None:
                    direct.append(_Read(var, path, leaf.lineno, ast.unparse(leaf)))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Name)
            and node.id in names
            and isinstance(node.ctx, ast.Load)
            and id(node) not in truth_ids
        ):
            other.add(node.id)
    out = list(direct)
    seen: set[str] = set()
    for name, line in tested:
        if name in other or name in seen:
            continue
        seen.add(name)
        var, how = names[name]
        out.append(_Read(var, path, line, how))
    return out


def _truth_tests(node: ast.AST) -> Iterator[ast.expr]:
    if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
        yield node.test
    elif isinstance(node, ast.comprehension):
        yield from node.ifs


def _leaves(test: ast.expr) -> Iterator[ast.expr]:
    """The operands a truth test takes as booleans: through `not`, `and` and `or`."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        yield from _leaves(test.operand)
    elif isinstance(test, ast.BoolOp):
        for value in test.values:
            yield from _leaves(value)
    else:
        yield test


def _settings(ctx: Context, wanted: set[str]) -> Iterator[tuple[str, _Set]]:
    """Each `VAR=<off>` of a wanted variable in the repository's Ascend scripts, workflows and Dockerfiles."""
    pattern = re.compile(
        r"(?:^|[\s;&|(])(?:export\s+|ENV\s+|-\s*)?(?P<var>" + "|".join(sorted(map(re.escape, wanted))) + r")"
        r"\s*(?:=|:\s*)(?P<q>['\"]?)(?P<value>" + _OFF + r")(?P=q)(?=\s|;|&|\)|$)",
        re.M,
    )
    everywhere = ctx.ascend_only()
    paths = [
        *ctx.paths_of_kind(SHELL),
        *workflow_paths(ctx, "head"),
        *ctx.paths_of_kind(DOCKERFILE),
    ]
    for path in ctx.paths_mentioning(sorted(wanted), dict.fromkeys(paths)):
        src = ctx.source(path)
        if src is None:
            continue
        if not everywhere and not (src.kinds & {NPU_SCRIPT, ASCEND_WORKFLOW, ASCEND_DOCKERFILE}):
            continue
        for m in pattern.finditer(src.text):
            line = src.text.count("\n", 0, m.start("var")) + 1
            yield m.group("var"), _Set(path, line, m.group("value"))
