"""NPU404: setuptools' `packages` list names an Ascend package but not a subpackage its own modules import."""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from npu_review.checks import ascend, lazyre
from npu_review.checks.context import Context
from npu_review.checks.facts import Facts
from npu_review.checks.kinds import PYPROJECT, PYTHON
from npu_review.checks.model import Related, Severity
from npu_review.checks.rule import Hit, Rule

# The files that configure a setuptools build, in the folder of the build.
_CONFIG_GLOBS = (
    "setup.py",
    "**/setup.py",
    "setup.cfg",
    "**/setup.cfg",
    "pyproject.toml",
    "**/pyproject.toml",
    "MANIFEST.in",
    "**/MANIFEST.in",
)
# Commands that, overridden, may copy files into the build by themselves.
_COPYING_COMMANDS = frozenset({"build_py", "install", "install_lib", "bdist_wheel"})
_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})
_IDENT = lazyre.compile(r"\A[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class _Config:
    path: str  # setup.py or pyproject.toml
    lines: tuple[int, ...]  # the lines of the `packages` setting
    root: str  # the folder the packages' folders are under ("" for the repository's root)
    packages: tuple[str, ...]
    how: str  # the setting, as the message names it
    data_patterns: tuple[str, ...]  # every package_data pattern
    extensions: tuple[str, ...]  # the dotted names of ext_modules


@dataclass(frozen=True)
class _Import:
    path: str
    line: int
    text: str
    missing: tuple[str, ...]  # the unlisted subpackages it needs, outermost first


class SubpackageNotPackaged(Rule):
    """setuptools' `packages` is a literal list (setup.py `packages=[...]`, pyproject.toml `[tool.setuptools]
    packages = [...]`) that names an Ascend package but not one of its subpackages (a folder under it with an
    `__init__.py`), and a module of a listed package imports that subpackage (`import pkg.sub`, `from pkg.sub
    import x`, `from pkg import sub`, `from .sub import x`).

    Why: setuptools installs exactly the packages `packages` names: a package is one folder, not the tree under
    it, and its subpackages are shipped only when listed too (setuptools' package-discovery guide lists
    `['mypkg', 'mypkg.subpkg1', 'mypkg.subpkg2']`; `find_packages()` or automatic discovery, used only when
    `packages` is not given, find them). The wheel built from `packages=['vllm_ascend']` had no
    `vllm_ascend/ops/`, and importing vLLM with the plugin installed failed with ModuleNotFoundError, while the
    source checkout, where the folder exists, worked.

    Bad (`vllm_ascend/__init__.py` and `vllm_ascend/ops/__init__.py` in the tree):
        # vllm_ascend/platform.py
        from vllm_ascend.ops import layernorm
        # setup.py
        from setuptools import setup
        setup(name="vllm_ascend", packages=["vllm_ascend"])

    Good:
        # vllm_ascend/platform.py
        from vllm_ascend.ops import layernorm
        # setup.py
        from setuptools import find_packages, setup
        setup(name="vllm_ascend", packages=find_packages(exclude=("tests*",)))

    Fix: list the subpackage (`"vllm_ascend.ops"`), or let setuptools find them:
    `packages=find_packages(exclude=("tests*",))` (`[tool.setuptools.packages.find]` in pyproject.toml).

    Where: the setup.py and pyproject.toml files of the repository (packages under their own folder, or under
    `src/` with `package_dir={"": "src"}`), for the packages named like an Ascend one (every package in a
    repository about Ascend as a whole). Not reported: `packages` computed (find_packages, a variable), another
    `package_dir` mapping, `**kwargs` to setup(), an overridden build_py / install command, a folder without
    `__init__.py` (a namespace package), a subpackage only unlisted modules import (tests/), an import guarded
    by `try: ... except ImportError` or `if TYPE_CHECKING:`, a subpackage that a `package_data` pattern or an
    extension module puts in the wheel, and a build that ships the whole tree as package data
    (include_package_data with a MANIFEST.in or a version-control file finder such as setuptools-scm: setuptools
    then warns "Package ... is absent from the `packages` configuration" and still installs it).
    """

    id = "NPU404"
    name = "subpackage-not-packaged"
    severity = Severity.ERROR
    title = "setuptools' packages list leaves out a subpackage the package imports: the wheel fails on that import"
    kinds = frozenset({PYTHON, PYPROJECT})
    context_kinds = frozenset()

    @classmethod
    def context_paths(cls, facts: Facts) -> tuple[str, ...]:
        return _CONFIG_GLOBS

    @classmethod
    def context_after(cls, facts: Facts) -> tuple[tuple[str, ...], frozenset[str]]:
        # A change to the build's configuration is checked against every module of the packages it lists.
        return _CONFIG_GLOBS, frozenset({PYTHON})

    def check_project(self, ctx: Context) -> Iterable[Hit]:
        if not ctx.audit and not any(ctx.kindmap.candidates(p) & self.kinds for p in ctx.changeset.changes):
            return  # the App reads the build's files only after a change to a Python file or a pyproject.toml
        paths = ctx.head_paths()
        configs = [c for path in paths for c in _configs(ctx, path, paths)]
        if not configs:
            return
        everywhere = ctx.ascend_only()
        marks = ascend.markers(ctx.facts.ascend_content)
        inits = frozenset(p for p in paths if p == "__init__.py" or p.endswith("/__init__.py"))
        for cfg in configs:
            listed = frozenset(cfg.packages)
            wanted = [
                p
                for p in cfg.packages
                if (everywhere or ascend.is_ascend_package(p.split(".")[0], marks))
                and _folder(cfg.root, p) + "/__init__.py" in inits
            ]
            if not wanted:
                continue
            unlisted = _unlisted(cfg, listed, inits)
            if not unlisted:
                continue
            # Every module of the listed packages on a change to the build's configuration (or in an audit);
            # else the modules the change touched, the only ones the App fetches then.
            whole = ctx.audit or any(ctx.touched(p) for p in _config_files(cfg, paths))
            imports: list[_Import] = []
            for package in wanted:
                folder = _folder(cfg.root, package)
                for path in paths:
                    if posixpath.dirname(path) != folder or not path.endswith(".py"):
                        continue
                    if not whole and not ctx.touched(path):
                        continue
                    imports.extend(_imports(ctx, path, package, unlisted))
            if not imports:
                continue
            yield from _hit(ctx, cfg, imports)


def _hit(ctx: Context, cfg: _Config, imports: list[_Import]) -> Iterator[Hit]:
    missing: dict[str, _Import] = {}
    for imp in imports:
        for name in imp.missing:
            missing.setdefault(name, imp)
    places = [(cfg.path, n) for n in cfg.lines] + [(i.path, i.line) for i in imports]
    at = next(((p, n) for p, n in places if ctx.introduces(p, n)), None)
    if at is None:
        if not ctx.audit:
            return
        at = (cfg.path, cfg.lines[0])
    names = sorted(missing)
    first = missing[names[0]]
    listed = ", ".join(f"`{p}`" for p in cfg.packages[:3]) + (", ..." if len(cfg.packages) > 3 else "")
    shown = [f"`{n}`" for n in names[:3]]
    if len(names) > 3:
        shown.append(f"{len(names) - 3} more")
    unnamed = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
    where = "" if at == (cfg.path, cfg.lines[0]) else f" ({cfg.path}:{cfg.lines[0]})"
    them = f'`"{names[0]}"`' if len(names) == 1 else "them"
    find = "`[tool.setuptools.packages.find]`" if cfg.path.endswith(".toml") else "`find_packages()`"
    yield Hit(
        at[0],
        at[1],
        f"{cfg.how}{where} lists {listed} but not {unnamed}, which {first.path}:{first.line} imports "
        f"(`{first.text}`): setuptools installs only the packages listed, so the built wheel has no "
        f"{names[0].replace('.', '/')}/ and that import fails with ModuleNotFoundError, while the source checkout "
        f"works. List {them} too, or let setuptools find the subpackages ({find}).",
        related=tuple(Related(p, n) for p, n in dict.fromkeys(places) if (p, n) != at),
        cause=f"{cfg.path}:{','.join(names)}",
    )


def _folder(root: str, package: str) -> str:
    return posixpath.join(root, *package.split(".")) if root else package.replace(".", "/")


def _unlisted(cfg: _Config, listed: frozenset[str], inits: frozenset[str]) -> frozenset[str]:
    """The dotted names of the regular packages (an `__init__.py` all the way down) under a listed package that
    the list leaves out and nothing else ships."""
    prefix = cfg.root + "/" if cfg.root else ""
    out: set[str] = set()
    for init in inits:
        if not init.startswith(prefix):
            continue
        parts = init[len(prefix) :].split("/")[:-1]
        if len(parts) < 2 or not all(_IDENT.match(p) for p in parts):
            continue
        name = ".".join(parts)
        if name in listed:
            continue
        # The nearest listed ancestor, every folder between it and this one a regular package.
        chain_ok = False
        for k in range(len(parts) - 1, 0, -1):
            if ".".join(parts[:k]) in listed:
                chain_ok = all(
                    _folder(cfg.root, ".".join(parts[:j])) + "/__init__.py" in inits for j in range(k, len(parts))
                )
                break
        if not chain_ok:
            continue
        if any(e == name or e.startswith(name + ".") for e in cfg.extensions):
            continue
        if any("**" in pat or parts[-1] in pat.split("/") for pat in cfg.data_patterns):
            continue
        out.add(name)
    return frozenset(out)


def _config_files(cfg: _Config, paths: list[str]) -> list[str]:
    folder = posixpath.dirname(cfg.path)
    names = ("setup.py", "setup.cfg", "pyproject.toml", "MANIFEST.in")
    return [p for p in (posixpath.join(folder, n) for n in names) if p in paths]


# -- the configurations ----------------------------------------------------------------------------------------


def _configs(ctx: Context, path: str, paths: list[str]) -> Iterator[_Config]:
    base = posixpath.basename(path)
    if base == "setup.py":
        yield from _setup_py(ctx, path, paths)
    elif base == "pyproject.toml":
        cfg = _pyproject(ctx, path, paths)
        if cfg is not None:
            yield cfg


def _strings(node: ast.expr | None) -> tuple[str, ...] | None:
    """A literal list or tuple of strings."""
    if not isinstance(node, (ast.List, ast.Tuple)):
        return None
    out = []
    for elt in node.elts:
        if not isinstance(elt, ast.Constant) or not isinstance(elt.value, str):
            return None
        out.append(elt.value)
    return tuple(out)


def _is_setup(node: ast.Call) -> bool:
    func = node.func
    return (isinstance(func, ast.Name) and func.id == "setup") or (
        isinstance(func, ast.Attribute) and func.attr == "setup" and isinstance(func.value, ast.Name)
    )


def _setup_py(ctx: Context, path: str, paths: list[str]) -> Iterator[_Config]:
    src = ctx.source(path)
    if src is None or "packages" not in src.text:
        return
    tree = ctx.python_ast(src)
    if tree is None:
        return
    folder = posixpath.dirname(path)
    pyproject = posixpath.join(folder, "pyproject.toml")
    if pyproject in paths and not _setuptools_backend(_load_toml(ctx, pyproject) or {}):
        return  # another build backend builds the wheel: setup.py is not what pip runs
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not _is_setup(node):
            continue
        kw = {k.arg: k for k in node.keywords}
        if None in kw or "packages" not in kw:
            continue  # **kwargs may say anything
        packages = _strings(kw["packages"].value)
        if not packages:
            continue
        root = _package_root(folder, kw["package_dir"].value if "package_dir" in kw else None)
        if root is None:
            continue
        if "cmdclass" in kw and not _plain_commands(kw["cmdclass"].value):
            continue
        data = _data_patterns(kw["package_data"].value) if "package_data" in kw else ()
        extensions = _extension_names(kw["ext_modules"].value) if "ext_modules" in kw else ()
        if data is None or extensions is None:
            continue
        include: bool | None = None
        if "include_package_data" in kw:
            value = kw["include_package_data"].value
            include = value.value if isinstance(value, ast.Constant) and isinstance(value.value, bool) else True
        if _shipped_as_data(ctx, folder, paths, include):
            continue
        first = kw["packages"]
        end = first.value.end_lineno or first.value.lineno
        yield _Config(path, tuple(range(first.lineno, end + 1)), root, packages, "`packages=`", data, extensions)


def _package_root(folder: str, node: ast.expr | None) -> str | None:
    """The folder of the root package namespace: setup.py's own, or `{"": "src"}`'s; None for other maps."""
    if node is None:
        return folder
    if not isinstance(node, ast.Dict) or len(node.keys) != 1:
        return None
    key, value = node.keys[0], node.values[0]
    if not (isinstance(key, ast.Constant) and key.value == "" and isinstance(value, ast.Constant)):
        return None
    if not isinstance(value.value, str):
        return None
    return _join(folder, value.value)


def _join(folder: str, sub: str) -> str | None:
    sub = sub.strip().strip("/")
    if sub.startswith("./"):
        sub = sub[2:]
    if ".." in sub.split("/"):
        return None
    joined = posixpath.join(folder, sub) if sub not in ("", ".") else folder
    return joined.strip("/")


def _plain_commands(node: ast.expr) -> bool:
    """A literal cmdclass that overrides none of the commands that copy files into the build."""
    if not isinstance(node, ast.Dict):
        return False
    for key in node.keys:
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            return False
        if key.value in _COPYING_COMMANDS:
            return False
    return True


def _data_patterns(node: ast.expr) -> tuple[str, ...] | None:
    if not isinstance(node, ast.Dict):
        return None
    out: list[str] = []
    for value in node.values:
        pats = _strings(value)
        if pats is None:
            return None
        out.extend(pats)
    return tuple(out)


def _extension_names(node: ast.expr) -> tuple[str, ...] | None:
    if not isinstance(node, (ast.List, ast.Tuple)):
        return None
    out: list[str] = []
    for elt in node.elts:
        if not isinstance(elt, ast.Call) or not elt.args:
            return None
        name = elt.args[0]
        if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
            return None
        out.append(name.value)
    return tuple(out)


def _load_toml(ctx: Context, path: str) -> dict[str, object] | None:
    import tomllib  # here: only a build configured in pyproject.toml needs it

    src = ctx.source(path)
    if src is None:
        return None
    try:
        return tomllib.loads(src.text)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None


def _shipped_as_data(ctx: Context, folder: str, paths: list[str], include: bool | None) -> bool:
    """The build may install every file under a listed package as package data: include_package_data (set, or
    setuptools' default for a pyproject.toml build) with a MANIFEST.in or a version-control file finder."""
    texts: dict[str, str] = {}
    for name in ("setup.py", "setup.cfg", "pyproject.toml"):
        p = posixpath.join(folder, name)
        src = ctx.source(p) if p in paths else None
        if src is not None:
            texts[name] = src.text
    if include is None:
        m = re.search(r"(?im)^\s*include_package_data\s*=\s*(\S+)", texts.get("setup.cfg", ""))
        if m:
            include = m.group(1).lower() in ("true", "1", "yes", "on")
        else:
            pyproject = posixpath.join(folder, "pyproject.toml")
            data = _load_toml(ctx, pyproject) if pyproject in paths else None
            if data:
                tool = data.get("tool")
                setuptools = tool.get("setuptools") if isinstance(tool, dict) else None
                if data.get("project") or setuptools:
                    value = setuptools.get("include-package-data", True) if isinstance(setuptools, dict) else True
                    include = value is not False
    if not include:
        return False
    if posixpath.join(folder, "MANIFEST.in") in paths:
        return True
    text = _fold("\n".join(texts.values()))
    plugins = (_fold(p) for p in ctx.facts.python_packaging.file_finder_plugins)
    return "file_finders" in text or any(p in text for p in plugins)


def _fold(text: str) -> str:
    return text.lower().replace("-", "_")


def _pyproject(ctx: Context, path: str, paths: list[str]) -> _Config | None:
    src = ctx.source(path)
    if src is None or "packages" not in src.text or "setuptools" not in src.text:
        return None
    data = _load_toml(ctx, path)
    if not data:
        return None
    if not _setuptools_backend(data):
        return None
    tool = data.get("tool")
    table = tool.get("setuptools") if isinstance(tool, dict) else None
    if not isinstance(table, dict):
        return None
    packages = table.get("packages")
    if not isinstance(packages, list) or not packages or not all(isinstance(p, str) for p in packages):
        return None
    folder = posixpath.dirname(path)
    setup = posixpath.join(folder, "setup.py")
    if setup in paths:
        text = ctx.source(setup)
        if text is None or re.search(r"\bpackages\s*=", text.text) or "**" in text.text:
            return None  # setup.py may set its own list
    package_dir = table.get("package-dir")
    root: str | None = folder
    if package_dir is not None:
        if not isinstance(package_dir, dict) or list(package_dir) != [""] or not isinstance(package_dir[""], str):
            return None
        root = _join(folder, package_dir[""])
    if root is None:
        return None
    cmdclass = table.get("cmdclass", {})
    if not isinstance(cmdclass, dict) or _COPYING_COMMANDS & set(cmdclass):
        return None
    if table.get("ext-modules"):
        return None
    package_data = table.get("package-data", {})
    if not isinstance(package_data, dict):
        return None
    data_patterns: list[str] = []
    for pats in package_data.values():
        if not isinstance(pats, list) or not all(isinstance(p, str) for p in pats):
            return None
        data_patterns.extend(pats)
    include = table.get("include-package-data", True) is not False
    if _shipped_as_data(ctx, folder, paths, include):
        return None
    line = _toml_packages_line(src.text)
    if line is None:
        return None
    return _Config(path, line, root, tuple(packages), "`[tool.setuptools] packages`", tuple(data_patterns), ())


def _setuptools_backend(data: dict[str, object]) -> bool:
    """pyproject.toml leaves the build to setuptools (its backend, or none named: pip's legacy default)."""
    system = data.get("build-system")
    backend = system.get("build-backend") if isinstance(system, dict) else None
    return not isinstance(backend, str) or backend.startswith("setuptools")


def _toml_packages_line(text: str) -> tuple[int, ...] | None:
    """The lines of `packages = [...]` in the `[tool.setuptools]` table."""
    lines = text.splitlines()
    inside = False
    for n, line in enumerate(lines, 1):
        stripped = line.strip()
        if stripped.startswith("["):
            inside = stripped.replace(" ", "") == "[tool.setuptools]"
            continue
        if inside and re.match(r"packages\s*=", stripped):
            end = n
            depth = stripped.count("[") - stripped.count("]")
            while depth > 0 and end < len(lines):
                end += 1
                depth += lines[end - 1].count("[") - lines[end - 1].count("]")
            return tuple(range(n, end + 1))
    return None


# -- the imports ----------------------------------------------------------------------------------------------


def _imports(ctx: Context, path: str, package: str, unlisted: frozenset[str]) -> Iterator[_Import]:
    src = ctx.source(path)
    if src is None:
        return
    tree = ctx.python_ast(src)
    if tree is None:
        return
    for node in _unguarded_imports(tree.body):
        for name in _imported(node, package):
            parts = name.split(".")
            missing = tuple(
                dict.fromkeys(".".join(parts[:k]) for k in range(1, len(parts) + 1) if ".".join(parts[:k]) in unlisted)
            )
            if missing:
                yield _Import(path, node.lineno, ast.unparse(node), missing)
                break


def _imported(node: ast.Import | ast.ImportFrom, package: str) -> Iterator[str]:
    """The dotted names an import statement needs (a module whose name is `from`-imported may be a package)."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
        return
    if node.level:
        base = package.split(".")
        if node.level - 1 >= len(base):
            return
        base = base[: len(base) - (node.level - 1)]
        module = ".".join([*base, node.module] if node.module else base)
    elif node.module:
        module = node.module
    else:
        return
    for alias in node.names:
        if alias.name != "*":
            yield f"{module}.{alias.name}"
    yield module


def _unguarded_imports(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements, anywhere in the module, but those under `try: ... except ImportError` or
    `if TYPE_CHECKING:`."""
    for stmt in body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            yield stmt
        elif isinstance(stmt, ast.Try) or (hasattr(ast, "TryStar") and isinstance(stmt, ast.TryStar)):
            if not any(_catches_import_error(h) for h in stmt.handlers):
                yield from _unguarded_imports(stmt.body)
            for h in stmt.handlers:
                yield from _unguarded_imports(h.body)
            yield from _unguarded_imports(stmt.orelse)
            yield from _unguarded_imports(stmt.finalbody)
        elif isinstance(stmt, ast.If) and _type_checking(stmt.test):
            yield from _unguarded_imports(stmt.orelse)
        else:
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list):
                    yield from _unguarded_imports([s for s in inner if isinstance(s, ast.stmt)])
            if isinstance(stmt, ast.Match):
                for case in stmt.cases:
                    yield from _unguarded_imports(case.body)


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    for t in types:
        name = t.attr if isinstance(t, ast.Attribute) else t.id if isinstance(t, ast.Name) else ""
        if name in _IMPORT_ERRORS:
            return True
    return False


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )
