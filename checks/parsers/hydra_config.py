"""verl's flattened Hydra configs (`verl/trainer/config/_generated_*.yaml`): which keys exist, and their defaults.

The generated files are what `print_cfg.py --cfg job` prints for `ppo_trainer` (with `model_engine=...`): the
composed config that Hydra checks overrides against in struct mode. A `Schema` answers three questions for a
dotted key: does it exist (`status`), what is its default (`default`, following `${oc.select:other,dflt}`
interpolations), and on which line it is defined. Which generated file a launch command uses is decided by
`config_file_for` from its entry point, `--config-name` and `model_engine=` choice; anything it cannot map is
None (the rules then stay silent).

Pure and bounded: the text is composed by `yamlmarks.parse` (safe loader, node and depth limits), never executed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

from npu_review.checks import lazyre
from npu_review.checks.facts.schema import HydraSchema
from npu_review.checks.parsers import yamlmarks
from npu_review.checks.parsers.shell import Invocation
from npu_review.checks.parsers.yamlmarks import Node

Status = Literal["exists", "missing", "unknown"]

# `${oc.select:a.b.c,default}` or `${a.b.c}` (absolute paths only; relative `${.x}` are not followed)
_SELECT = lazyre.compile(r"\A\$\{oc\.select:\s*([A-Za-z_][\w.]*)\s*(?:,(.*))?\}\Z", re.S)
_PLAIN = lazyre.compile(r"\A\$\{([A-Za-z_][\w.]*)\}\Z")
_MAX_HOPS = 8


@dataclass(frozen=True)
class Default:
    """A key's default: the YAML scalar text (`None` for YAML null) and the line that defines it."""

    value: str | None
    line: int
    path: str  # the file it was read from


@dataclass
class Schema:
    """One generated config file, composed once."""

    path: str
    root: Node
    # Every top-level name the composed config can have (`root_names`), None when that is not known: a first
    # segment the file lacks is then 'missing' only when it is not among them either.
    top: frozenset[str] | None = None

    def node(self, key: str) -> tuple[Status, Node | None]:
        """('exists', node) when the dotted key is in the config; ('missing', None) when its parent is a
        mapping without it, or it is a first segment neither the file nor `top` has; ('unknown', None) when the
        walk meets something that is not a plain mapping (a null, an interpolation, a list) or the first segment
        is not a key the file shows and `top` is not known."""
        node: Node | None = self.root
        parts = key.split(".")
        for i, part in enumerate(parts):
            if node is None or not node.is_map:
                return "unknown", None
            child = node.get(part)
            if child is None:
                # The generated files leave out what precedes `actor_rollout_ref` (hydra, model_engine):
                # an unknown top-level name is evidence of a missing key only against the primary config's.
                if i == 0 and (self.top is None or part in self.top):
                    return "unknown", None
                return "missing", None
            node = child
        return "exists", node

    def status(self, key: str) -> Status:
        return self.node(key)[0]

    def default(self, key: str) -> Default | None:
        """The key's default scalar, interpolations followed; None when absent, unknown or not a scalar."""
        return self._default(key, 0)

    def _default(self, key: str, hops: int) -> Default | None:
        if hops > _MAX_HOPS:
            return None
        target = self.redirect(key)
        if target is not None:
            ref, fallback = target
            found = self._default(ref, hops + 1)
            if found is None and fallback is not None:
                return Default(fallback.value, fallback.line, self.path)
            return found
        status, node = self.node(key)
        if status != "exists" or node is None or not node.is_scalar:
            return None
        value = None if _is_null(node) else node.value
        return Default(value, node.line, self.path)

    def redirect(self, key: str) -> tuple[str, Default | None] | None:
        """When the key (or one of its ancestors) is an interpolation `${oc.select:other,dflt}`: the key it
        stands for (`other` + the rest of the path) and the literal fallback (for the key itself only)."""
        node: Node | None = self.root
        parts = key.split(".")
        for i, part in enumerate(parts):
            if node is None or not node.is_map:
                return None
            node = node.get(part)
            if node is None:
                return None
            if node.is_scalar and node.style is None:
                m = _SELECT.match(node.value.strip()) or _PLAIN.match(node.value.strip())
                if m:
                    rest = parts[i + 1 :]
                    ref = ".".join([m.group(1), *rest])
                    fallback = None
                    # (`==`, not `is`: a match's `.re` is the compiled pattern, _SELECT its stand-in, checks.lazyre)
                    if not rest and m.re == _SELECT and m.group(2) is not None:
                        text = m.group(2).strip()
                        fallback = Default(None if text.lower() in ("null", "none", "~") else text, node.line, "")
                    return ref, fallback
        return None

    def leaves(self) -> Iterator[tuple[str, Node]]:
        """Every scalar with its dotted key, in document order."""
        for path, node in self.root.walk():
            if node.is_scalar and path and all(isinstance(p, str) for p in path):
                yield ".".join(str(p) for p in path), node


def _is_null(node: Node) -> bool:
    return node.style is None and node.value in ("null", "Null", "NULL", "~", "")


def load(path: str, text: str) -> Schema | None:
    """The schema of one generated config file, or None when it is not a readable mapping."""
    return from_doc(path, yamlmarks.parse(text))


def from_doc(path: str, doc: yamlmarks.YamlDoc) -> Schema | None:
    """`load` of a file already composed with `yamlmarks.parse` (shared with the other rules that read it)."""
    if doc.root is None or not doc.root.is_map:
        return None
    return Schema(path, doc.root)


# -- which file a command uses ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConfigChoice:
    """How a launch command picks its config: the generated file that describes it, or why none does."""

    file: str | None
    reason: str = ""  # when `file` is None: what could not be mapped
    name: str | None = None  # the primary config's name (`ppo_trainer`), when `file` is known


def _option(args: tuple[str, ...], names: Iterable[str], at: Iterable[int] | None = None) -> tuple[bool, str | None]:
    """(present, value as written) of `--name X` / `--name=X`; the last one wins. `at`: the indexes of the only
    words of `args` that may be one (in order)."""
    found, value = False, None
    names = tuple(names)
    for k in range(len(args)) if at is None else at:
        word = args[k]
        bare = word.strip("\"'")
        if not bare.startswith(names):
            continue  # both tests below need `bare` to start with a name (most words of a command do not)
        for name in names:
            if bare == name:
                found, value = True, (args[k + 1] if k + 1 < len(args) else None)
            elif bare.startswith(name + "="):
                found, value = True, word.split("=", 1)[1]
    return found, value


def _clean(value: str | None) -> str | None:
    if value is None or "$" in value or "`" in value:
        return None
    return value.strip().strip("\"'").strip()


_GROUP_CHOICE = lazyre.compile(r"\A[\"']?(\+{0,2})([A-Za-z_][\w/@-]*)=(.*)\Z", re.S)


def config_file_for(inv: Invocation, facts: HydraSchema) -> ConfigChoice:
    """The generated config file describing the config `inv` runs with (the facts' `hydra_schema`)."""
    entry_points, files, engines = facts.entry_points, facts.files, facts.model_engine_files
    args = inv.args
    module = inv.module
    if module is None:
        for word in args:
            bare = word.strip("\"'")
            if bare.endswith(".py") and "/" in bare:
                module = bare.removesuffix(".py").replace("/", ".").lstrip(".")
                break
    if module is None or module not in entry_points:
        return ConfigChoice(None, f"entry point {module or inv.launcher!r} is not mapped to a config")
    name: str | None = entry_points[module]
    at = [k for k, word in enumerate(args) if "-c" in word]  # every name of the three options has it
    has_path, path = _option(args, ("--config-path", "-cp"), at)
    if has_path and _clean(path) not in facts.config_paths:
        return ConfigChoice(None, f"--config-path {path!r} is not the entry point's config folder")
    if _option(args, ("--config-dir", "-cd"), at)[0]:
        return ConfigChoice(None, "--config-dir adds config groups")
    has_name, raw_name = _option(args, ("--config-name", "-cn"), at)
    if has_name:
        name = _clean(raw_name)
        if name is None:
            return ConfigChoice(None, f"--config-name {raw_name!r} cannot be resolved")
        name = name.removesuffix(".yaml").removesuffix(".yml")
    engine: str | None = None
    for word in args[1:]:
        if word.startswith("-"):
            continue
        m = _GROUP_CHOICE.match(word)
        if not m or "." in m.group(2):
            continue
        group, value = m.group(2), _clean(m.group(3))
        if group == "model_engine":
            if value is None:
                return ConfigChoice(None, "model_engine cannot be resolved")
            engine = value
        else:  # another config group (`data=...`, `actor@actor_rollout_ref.actor=...`) reshapes the config
            return ConfigChoice(None, f"the config group {group!r} is chosen on the command line")
    if name is None or name not in files:
        return ConfigChoice(None, f"config {name!r} has no generated reference file")
    target = files[name]
    if engine is not None:
        if name not in facts.engine_configs:
            return ConfigChoice(None, f"model_engine={engine} with config {name!r}")
        if engine not in engines:
            return ConfigChoice(None, f"model_engine={engine} has no generated reference file")
        target = engines[engine]
    return ConfigChoice(target, name=name)


# -- which names the composed config's root can have ---------------------------------------------------------

_MAX_DEFAULTS_DEPTH = 4
# A group file that places anything at the root (`# @package _global_`, a nested default `...@_global_`).
_GLOBAL = lazyre.compile(r"_global_")
_GLOBAL_FILE = lazyre.compile(r"(?:[ \t]*(?:#[^\n]*)?\n)*?[ \t]*#\s*@package\s+_global_[ \t]*\n")


def root_names(
    folder: str, name: str, read: Callable[[str], tuple[str, Node | None] | None], listing: Iterable[str]
) -> frozenset[str] | None:
    """The top-level names the config `name` (`<folder>/<name>.yaml`) composes: its own keys, the package of each
    group of its defaults list (`data@data: x` -> `data`, `model_engine: dp` -> `model_engine`), and the names of
    the plain configs it lists (merged at its root), recursively. None when that cannot be known: a file that
    cannot be read, a `_global_` package, a `_here_` or interpolated package, or a group folder with a file that
    names the `_global_` package (`listing`: the repository's paths; `read(path)`: the file's text and YAML
    root, None when absent)."""
    paths = list(listing)
    names: set[str] = set()

    def visit(config: str, depth: int) -> bool:
        found = read(f"{folder}/{config}.yaml")
        root = found[1] if found is not None else None
        if root is None or not root.is_map or depth > _MAX_DEFAULTS_DEPTH:
            return False
        defaults = None
        for key, _, value in root.entries():
            if key == "defaults":
                defaults = value
            else:
                names.add(key)
        if defaults is None:
            return True
        if not defaults.is_seq:
            return False
        for item in defaults.items:
            if item.is_scalar:
                entry = item.value.strip()
                if entry == "_self_":
                    continue
                if "@" in entry or "/" in entry or "$" in entry or not visit(entry, depth + 1):
                    return False
                continue
            entries = list(item.entries())
            if not item.is_map or len(entries) != 1:
                return False
            key = entries[0][0].strip()
            for word in ("override ", "optional "):
                key = key.removeprefix(word).strip()
            group, _, package = key.partition("@")
            group = group.strip("/")
            if "$" in key or not group or package.startswith(("_global_", "_here_")):
                return False
            prefix = f"{folder}/{group}/"
            for path in paths:
                if path.startswith(prefix) and path.endswith((".yaml", ".yml")):
                    found = read(path)
                    if found is None:
                        return False
                    text, top = found
                    if not _GLOBAL.search(text):
                        continue
                    # A whole file at the root (`# @package _global_` over plain keys: `model_engine: dp`) adds
                    # its keys; anything else placed there cannot be followed.
                    header = _GLOBAL_FILE.match(text)
                    if header is None or top is None or not top.is_map:
                        return False
                    keys = [k for k, _, _ in top.entries()]
                    if "defaults" in keys or "_global_" in text[header.end() :]:
                        return False
                    names.update(keys)
            names.add((package or group.replace("/", ".")).split(".")[0])
        return True

    return frozenset(names) if visit(name, 0) else None
