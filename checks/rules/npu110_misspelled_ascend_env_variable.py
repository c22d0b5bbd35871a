"""NPU110: an Ascend environment variable is set under a misspelled name, so nothing reads it."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from rapidfuzz.distance import Levenshtein

from npu_review.checks import globs, lazyre
from npu_review.checks.analysis.vllm_launches import doc_shell_blocks
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.facts import Facts
from npu_review.checks.kinds import DOCKERFILE, DOCS, NPU_SCRIPT, PYTHON, SHELL, WORKFLOW, YAML
from npu_review.checks.model import Severity
from npu_review.checks.parsers.markdown import flavor_of
from npu_review.checks.parsers.sh import ASSIGNMENT, LogicalLine, Source, commands
from npu_review.checks.rule import Hit, Rule

# A project's own registry of variables (vLLM-Ascend's `vllm_ascend/envs.py` style): its names are real there.
REGISTRY_GLOBS = ("**/envs.py",)
# YAML mappings whose keys are environment variables (workflows, test configs, k8s/compose-like files).
ENV_KEYS = frozenset({"env", "envs", "environment", "env_vars", "extra_env", "envVars"})
_EXPORT_ARG = lazyre.compile(r"([A-Za-z_][A-Za-z0-9_-]*)(?:\+?=|$)")
_REGISTRY_NAME = lazyre.compile(r"""["']([A-Z][A-Z0-9_]{3,})["']\s*:""")


@dataclass(frozen=True)
class _Set:
    name: str
    line: int
    read: bool = False  # the code reads the name (os.getenv) rather than setting it
    value: str | None = None  # the value set, when it is a plain literal (YAML env mappings, `export X=v`)


def _normal(name: str) -> str:
    return re.sub("_+", "_", name.replace("-", "_"))


class MisspelledAscendEnvVariable(Rule):
    """An Ascend, HCCL, torch_npu or vLLM-Ascend environment variable is set under a name nothing reads.

    Why: a misspelled variable is silently ignored: `export ASCEND_RT_VISIBLE_DEVICE=0,1` (no final S)
    leaves every NPU visible, `VLLM-ASCEND_BALANCE_SCHEDULING: "1"` (a hyphen) or
    `VLLM_ASCEND_ENABLE__FUSED_MC2` (two underscores) leave the feature off while the test or tutorial claims
    to measure it. vllm-ascend's docs and nightly test configs carried all three for months. A misspelled read
    (`os.getenv("HCCL_CONECT_TIMEOUT")`) is as silent: the user sets the real name and the code never sees it.

    An upper-case name is reported when it is not a known variable but reads as one: with `-` taken as `_`
    and runs of `_` as one it is a known name (warning), or it starts like an Ascend variable (`ASCEND_`,
    `HCCL_`, `VLLM_ASCEND_`, `ATB_`, `TORCH_NPU_`, …), has 12 characters or more, and is close to exactly one
    known name. How close grows with the name's length: two edits for any such name, three from 24
    characters (`HCCL_RDMA_PCI_DIRCT_POST_NOSTRIC` for `HCCL_RDMA_PCIE_DIRECT_POST_NOSTRICT`); up to one edit per
    ten characters it is a warning, beyond that a notice. The known names are facts read from their sources
    (the `env_*` sections: CANN's runtime docs and code, HCCL's, ATB's, torch_npu's docs and code, vLLM-Ascend's
    `envs.py` through its history, the container runtime, Mooncake; `npu-review facts` names each source), the
    hand list `ascend_env.known`, and the names the repository's own `envs.py` registers.

    A change that renames a variable in the repository's own `envs.py` (`VLLM_LLMDD_RPC_PORT` to
    `VLLM_ASCEND_LLMDD_RPC_PORT`: the old name with its family added, or respelled) leaves every script, CI
    env, Dockerfile and doc that still sets the old name setting nothing: those lines are reported although the
    change does not touch them (vllm-ascend's PD edge-case test went on starting prefill and decode with their
    own ports under the old name, so both got the default). Only an old name of an Ascend family (or of the
    upstream prefix the family extends) that no other component reads is taken: not one upstream vLLM reads
    (`VLLM_HOST_IP`), not a generic name (`MAX_JOBS`), not one a changed Python file still names, and not a
    variable dropped without a successor (a leftover, not a break).

    Where: `export`/`NAME=value` in shell scripts and in shell code blocks of docs, `env:`/`envs:` mappings of
    YAML files (workflows, test configs), Dockerfile `ENV`, Python `os.environ[...]`, `os.environ.get/
    setdefault/pop/update`, `os.getenv`, `os.putenv` and `monkeypatch.setenv` with a literal name, and every
    mention in docs prose, tables and other code blocks (a variable reference page written as text).

    Bad:
        # tests/e2e/run_npu.sh
        export ASCEND_RT_VISIBLE_DEVICE=0,1
        export HCCL_RDMA_PCI_DIRCT_POST_NOSTRIC=1
        # tests/e2e/nightly/configs/Qwen3-8B.yaml
        envs:
          VLLM-ASCEND_BALANCE_SCHEDULING: "1"

    Good:
        # tests/e2e/run_npu.sh
        export ASCEND_RT_VISIBLE_DEVICES=0,1
        export ASCEND_VISIBLE_DEVICES=0,1   # ascend-docker-runtime's own variable, not a typo
        export HCCL_RDMA_PCIE_DIRECT_POST_NOSTRICT=1   # rare, and real
        # tests/e2e/nightly/configs/Qwen3-8B.yaml
        envs:
          VLLM_ASCEND_BALANCE_SCHEDULING: "1"

    Fix: use the name the message suggests. When the name meant is one vLLM-Ascend no longer reads (its
    `envs.py` had dropped it by the day of the change: `env_vllm_ascend.retired`), correcting the spelling turns
    nothing on: that is a notice that advises deleting the line (unless the repository's own `envs.py` still
    registers the name). Of two spellings both used, the one still read is suggested first. A value equal to the
    real variable's default, or none of the values its registry entry's comment numbers (`# 0: ...`, `# 1: ...`,
    `# 0, or not set: ...`), makes it a notice: correcting the name would change nothing, or something no one
    documented.

    The value of torch_npu's allocator variable is names too (`PYTORCH_NPU_ALLOC_CONF=expandable_segments:True,
    max_split_size_mb:128`, facts `npu_alloc_conf`, read from torch_npu's allocator config parser): a key it
    does not know but nearly spells (`expandable_segment`), or a boolean key's value other than `True` or
    `False` as spelled (`expandable_segments:true`, `:FALSE`, `:1`), stops the process at its first NPU
    allocation ("Unrecognized key", "Expected a single True/False argument"): an error, wherever the value is
    set (scripts, ENV, YAML env, Python, docs). A key named like none it knows may be a newer release's, and is
    left alone.

    Not reported: lower-case names (shell variables such as `vllm_ascend_version=…`), names outside the
    Ascend families (`VLLM_*` of upstream vLLM, `CUDA_*`, API constants such as `ACL_SUCCESS` far from any
    variable), names shorter than 12 characters, names close to two known ones, variables a shell script only
    reads, names given by an expression (`os.environ[name]`), names the repository's `envs.py` defines, and a
    name the same file reads back (`export CPU_AFFINITY_CONF="${CPU_AFFINITY_COMF}"`: a variable of its own). A
    known name with an underscore added (`HCCL_ENTRY_LOG_ENABLE_`, the way a JSON config switches a key off) is
    a notice.
    """

    id = "NPU110"
    name = "misspelled-ascend-env-variable"
    severity = Severity.WARNING
    title = "Misspelled Ascend environment variable"
    kinds = frozenset({SHELL, NPU_SCRIPT, DOCS, YAML, WORKFLOW, DOCKERFILE, PYTHON})

    context_kinds = frozenset()  # its project pass reads other files only after a registry change (context_after)

    @classmethod
    def context_paths(cls, facts: Facts) -> tuple[str, ...]:
        return REGISTRY_GLOBS

    @classmethod
    def context_after(cls, facts: Facts) -> tuple[tuple[str, ...], frozenset[str]]:
        return REGISTRY_GLOBS, STALE_KINDS

    def check_project(self, ctx: Context) -> Iterable[Hit]:
        """The files a registry rename leaves behind: the change renames a variable in the repository's own
        `envs.py`, and a file it does not touch still sets the old name, which nothing reads any more."""
        if ctx.audit:
            return  # an audit introduces no rename; check_file reads every file against the registry as it is
        renamed = _renamed_in_change(ctx)
        if not renamed:
            return
        found = re.compile(
            r"(?<![A-Za-z0-9_$\{-])(" + "|".join(re.escape(n) for n in sorted(renamed)) + r")(?:=|:(?:[ \t]|$))"
            r"|(?:\bexport|^[ \t]*ENV)[ \t]+(" + "|".join(re.escape(n) for n in sorted(renamed)) + r")\b"
        )
        for path in ctx.candidate_paths(STALE_KINDS):
            if ctx.touched(path):
                continue  # the change's own files: check_file reads them
            src = ctx.source(path)
            if src is None or not src.kinds & STALE_KINDS or not any(n in src.text for n in renamed):
                continue
            for n, line in enumerate(src.lines, 1):
                for m in found.finditer(line):
                    old = m.group(1) or m.group(2)
                    new, registry = renamed[old]
                    yield Hit(
                        path,
                        n,
                        f"`{old}` is set here, but this change renames it to `{new}` in `{registry}`: nothing reads "
                        f"`{old}` any more, so the setting is silently ignored. Set `{new}` instead.",
                        caused_by_change=True,
                        cause=f"{old}->{new}",
                    )

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        alloc = ctx.facts.npu_alloc_conf
        if any(v in src.text for v in alloc.variables):
            yield from _alloc_conf(src, ctx)
        facts = ctx.facts.ascend_env
        if src.kinds == {PYTHON} and not _python_may_report(src.text, facts.families):
            return  # most Python files name no Ascend variable: no upper-casing of their text
        text = src.text.upper().replace("-", "_")
        for stem in _stems(ctx):
            if stem in text:
                break
        else:
            return
        known = _known(ctx)
        for found in _names_set(src, ctx):
            verdict = _verdict(found.name, known, ctx)
            if verdict is None:
                continue
            if not found.read and re.search(rf"\$\{{?{re.escape(found.name)}\b", src.text):
                continue  # the file reads it itself (`export CPU_AFFINITY_CONF="${CPU_AFFINITY_COMF}"`): a variable
            if not found.read and _read_by_the_project(ctx, found.name, src.path):
                continue  # the project's own code names it: its own variable, not a misspelling
            suggestion, distance, sure = verdict
            if found.name.strip("_") == suggestion and found.name != suggestion:
                # `HCCL_ENTRY_LOG_ENABLE_`: a known name with an underscore added, in JSON (no comments) the way to
                # switch a setting off on purpose; said as a notice, not asked to be fixed
                yield Hit(
                    src.path,
                    found.line,
                    f"`{found.name}` is `{suggestion}` with an underscore added: nothing reads it. If it switches "
                    f"`{suggestion}` off on purpose, say so; else write `{suggestion}`.",
                    severity=Severity.NOTICE,
                )
                continue
            also = _sibling(suggestion, known) if distance in (_DROPPED, _RENAMED) else None
            retired = _retired(ctx)
            if also is not None and suggestion in retired and also not in retired:
                suggestion, also = also, suggestion  # the spelling still read first
            if suggestion in retired and (also is None or also in retired):
                # the name meant is one the component no longer reads: correcting the spelling turns nothing on
                yield Hit(
                    src.path,
                    found.line,
                    f"`{found.name}` is not a known variable, and the name it is closest to, `{suggestion}`, is one "
                    "vLLM-Ascend no longer reads (its `envs.py` dropped it): the line sets nothing either way. "
                    "Delete it, or set the variable that does its job in the vLLM-Ascend release you run.",
                    severity=Severity.NOTICE,
                )
                continue
            shown = f"`{suggestion}`" if also is None else f"`{suggestion}` (or `{also}`: both spellings were used)"
            default = None if found.read or found.value is None else _registry_defaults(ctx).get(suggestion)
            if default is not None and _same_value(found.value, default):
                sure = False  # the real variable's default is this value: the misspelling changes nothing today
            how = "is not a known variable" if distance else f"is `{suggestion}` misspelled"
            near = f" ({_EDITS.get(distance, f'{distance} edits')} from `{suggestion}`)" if distance else ""
            if distance == _DROPPED:
                how, near = "is not a variable the upstream package reads", f" (`{suggestion}` without its family)"
            elif distance == _RENAMED:
                how = "is no longer a variable of this repository"
                near = f" (its `envs.py` registers `{suggestion}` instead)"
            why = (
                "the code reads a name nothing sets, so a setting of the real one is never seen"
                if found.read
                else "nothing reads it, so the setting is silently ignored"
            )
            if default is not None and _same_value(found.value, default):
                why += f" (the value is `{suggestion}`'s default, so nothing changes until the default does)"
            value = None if found.read else found.value
            choices = None if value is None else _registry_choices(ctx).get(suggestion)
            if choices and value is not None and value.strip().strip("\"'") not in choices:
                # the registry lists the values the variable takes, and this is none of them: what the corrected
                # name would do is not known (vLLM-Ascend's `VLLM_ASCEND_ENABLE_NZ` takes 0, 1 or 2; "3" was set)
                sure = False
                why += (
                    f" (`{value}` is none of the values `{suggestion}` documents: "
                    f"{', '.join(f'`{c}`' for c in choices)})"
                )
            after = (
                ""
                if found.read
                else " The corrected name turns the setting on: check that the value is one it accepts."
            )
            yield Hit(
                src.path,
                found.line,
                f"`{found.name}` {how}{near}: {why}. Did you mean {shown}?{after}",
                severity=None if sure else Severity.NOTICE,
            )


# A value of torch_npu's allocator variable, wherever it is set: `X=v` (shell, ENV, docs), `ENV X v`, `X: v`
# (YAML), `environ["X"] = v`, `setdefault("X", v)`; the value is a `key:value` list, quoted or not.
_ALLOC_VALUE = (
    r"""["']?\]?[ \t]*(?:=|:|,|[ \t])[ \t]*["']?"""
    # key:value pairs, each value written out: a placeholder (`<True/False>`, `${X}`, `True/False`) is no value
    r"""([A-Za-z_]\w*:[\w.+-]+(?:,[ \t]*[A-Za-z_]\w*:[\w.+-]+)*)(?![\w<>/{}$|])"""
)


def _alloc_conf(src: SourceFile, ctx: Context) -> Iterator[Hit]:
    """torch_npu's allocator setting (`PYTORCH_NPU_ALLOC_CONF=expandable_segments:True`) with a key it does not
    know but nearly spells, or a boolean key's value other than `True` / `False` (the parser compares exactly):
    torch_npu stops the process at its first NPU allocation ("Unrecognized key", "Expected a single True/False
    argument")."""
    facts = ctx.facts.npu_alloc_conf
    keys = frozenset(facts.keys)
    names = "|".join(re.escape(v) for v in facts.variables)
    for m in re.finditer(rf"\b({names}){_ALLOC_VALUE}", src.text):
        line = src.text.count("\n", 0, m.start(2)) + 1
        for item in m.group(2).split(","):
            key, _, value = item.strip().partition(":")
            if key not in keys:
                near = [k for k in facts.keys if Levenshtein.distance(key.lower(), k, score_cutoff=2) <= 2]
                if len(near) == 1:
                    yield Hit(
                        src.path,
                        line,
                        f"`{m.group(1)}` sets `{key}`, which torch_npu's allocator does not know: it stops the "
                        f'process at the first NPU allocation ("Unrecognized key"). Did you mean `{near[0]}`?',
                        severity=Severity.ERROR,
                        cause=f"{m.group(1)} {key}",
                    )
                continue
            if key in facts.bool_keys and value not in ("True", "False"):
                fixed = {"true": "True", "1": "True", "false": "False", "0": "False"}.get(value.lower())
                hint = f" Write `{key}:{fixed}`." if fixed else " Write `True` or `False`."
                yield Hit(
                    src.path,
                    line,
                    f"`{m.group(1)}` gives `{key}` the value `{value}`: torch_npu takes only `True` or `False`, "
                    'spelled so, and stops the process at the first NPU allocation ("Expected a single True/False '
                    f'argument for {key}").{hint}',
                    severity=Severity.ERROR,
                    cause=f"{m.group(1)} {key}:{value}",
                )


# The files where a variable renamed in a registry may still be set under its old name (Python aside: every
# Python file would be fetched after each change of `envs.py`, and a test's `monkeypatch.setenv` is read when changed).
STALE_KINDS = frozenset({SHELL, NPU_SCRIPT, DOCS, YAML, WORKFLOW, DOCKERFILE})


def _renamed_in_change(ctx: Context) -> dict[str, tuple[str, str]]:
    """old name -> (new name, registry path) for each variable the change renames in a registry of its own
    (`envs.py`): the base registers the old name and the head no registry does, the same file at head registers
    a new name that is the old one with its Ascend family added (`VLLM_X` -> `VLLM_ASCEND_X`, `X` ->
    `VLLM_ASCEND_X`) or respelled (one or two edits), and the old name is of an Ascend family (or of the upstream
    prefix the family extends) yet read by no other component the facts know (upstream vLLM among them), nor
    named as a literal by a Python file the change leaves or writes."""
    prefixes = ctx.facts.env_prefixes
    families = tuple(ctx.facts.ascend_env.families)
    f = ctx.facts
    others = frozenset(prefixes.upstream).union(
        *(s.names for s in (f.env_cann, f.env_hccl, f.env_atb, f.env_torch_npu, f.env_ecosystem))
    )
    head_registry = _registry(ctx)
    out: dict[str, tuple[str, str]] = {}
    for path, change in ctx.changeset.changes.items():
        if not globs.match_any(path, REGISTRY_GLOBS):
            continue
        base = ctx.source(change.old_path or path, "base")
        head = ctx.source(path)
        if base is None or head is None:
            continue
        before = frozenset(_REGISTRY_NAME.findall(base.text))
        after = frozenset(_REGISTRY_NAME.findall(head.text))
        added = after - before
        for old in sorted(before - head_registry):
            if old in others or not old.startswith(families + tuple(prefixes.dropped_family)):
                continue
            new = [n for n in added if _renames(old, n, ctx.facts)]
            if len(new) == 1 and not _still_named(ctx, old):
                out[old] = (new[0], path)
    return out


def _renames(old: str, new: str, facts: Facts) -> bool:
    """`new` is `old` with an Ascend family added, or `old` respelled (as many edits as NPU110 takes for a sure
    misspelling of a name that long: one up to 19 characters)."""
    if any(new == family + old for family in facts.ascend_env.families):
        return True
    for up, family in facts.env_prefixes.dropped_family.items():
        if old.startswith(up) and not old.startswith(family) and new == family + old[len(up) :]:
            return True
    edits = max(1, len(old) // facts.ascend_env.chars_per_sure_edit)
    return len(old) >= facts.ascend_env.min_length and Levenshtein.distance(old, new, score_cutoff=edits) <= edits


def _still_named(ctx: Context, name: str) -> bool:
    """A changed Python file names the variable as a string literal at head (the code may still read it)."""
    quoted = (f'"{name}"', f"'{name}'")
    for path in ctx.changeset.changes:
        if not ctx.kindmap.has(path, PYTHON) or globs.match_any(path, REGISTRY_GLOBS):
            continue
        src = ctx.source(path)
        if src is not None and any(q in src.text for q in quoted):
            return True
    return False


_EDITS = {1: "one edit", 2: "two edits", 3: "three edits"}
# Verdicts that are not a spelling distance: an Ascend variable with its family dropped (`VLLM_X` for
# `VLLM_ASCEND_X`), and a name the repository's own registry renamed to its family's.
_DROPPED = -1
_RENAMED = -2


def known_names(facts: Facts) -> frozenset[str]:
    """Every real variable the facts know: the hand list and the sourced sections (CANN, HCCL, ATB, torch_npu,
    vLLM-Ascend, the container runtime and Mooncake)."""
    f = facts
    sections = (f.env_cann, f.env_hccl, f.env_atb, f.env_torch_npu, f.env_vllm_ascend, f.env_ecosystem)
    return frozenset(f.ascend_env.known).union(*(s.names for s in sections))


def _known(ctx: Context) -> frozenset[str]:
    return ctx.memo(("npu110-known", "head", ""), lambda: known_names(ctx.facts) | _registry(ctx))


def _retired(ctx: Context) -> frozenset[str]:
    """Names a component had dropped by the day of the review (facts), unless this repository's own registry
    has them."""

    def build() -> frozenset[str]:
        day = ctx.review_date()
        dropped = ctx.facts.env_vllm_ascend.retired
        return frozenset(k for k, d in dropped.items() if d <= day) - _registry(ctx)

    return ctx.memo(("npu110-retired", "head", ""), build)


_CODE_FILES = (".py", ".sh", ".bash")


def _read_by_the_project(ctx: Context, name: str, path: str) -> bool:
    """Another file of the repository's code reads the variable in a way this rule does not judge: listed in a
    Python table its loader reads (hanxindou/hccl-agent's `ENV_FIELDS`, read with `os.environ[...]` and exported as
    the real `HCCL_OP_EXPANSION_MODE`: sweep-r22, judged false), or read in a shell script (`$NAME`, `${NAME`)."""

    def find() -> bool:
        candidates = [p for p in ctx.head_paths() if p.endswith(_CODE_FILES) and p != path]
        quoted = re.compile(
            rf"""(\b(?:getenv|setenv|putenv|delenv|setdefault|get|pop)[ \t]*\([ \t]*|\[[ \t]*)?["']"""
            rf"""{re.escape(name)}["']([ \t]*:)?"""
        )
        shell_read = re.compile(rf"\$\{{?{re.escape(name)}\b")
        for other in ctx.paths_mentioning([name], candidates):
            src = ctx.source(other)
            if src is None:
                continue
            if not other.endswith(".py"):
                if shell_read.search(src.text):
                    return True
                continue
            # A quoted name listed as data (a table of the variables a loader reads: `{"mode": "X"}`, `("X",
            # "Y")`), not used directly (`getenv("X")`, `environ["X"]`, `setdefault("X", v)`: this rule judges
            # those itself) nor a key of `environ.update({"X": v})`.
            if any(m.group(1) is None and m.group(2) is None for m in quoted.finditer(src.text)):
                return True
        return False

    return ctx.memo(("npu110-read-by-project", "head", name), find)


def _registry_files(ctx: Context) -> list[SourceFile]:
    """The repository's own registries of variables (`envs.py`), found once per run."""

    def build() -> list[SourceFile]:
        found = (ctx.source(p) for p in ctx.paths_matching(REGISTRY_GLOBS))
        return [src for src in found if src is not None]

    return ctx.memo(("npu110-registry-files", "head", ""), build)


def _registry(ctx: Context) -> frozenset[str]:
    """The names the repository's own registries (`envs.py`) define."""

    def build() -> frozenset[str]:
        return frozenset(name for src in _registry_files(ctx) for name in _REGISTRY_NAME.findall(src.text))

    return ctx.memo(("npu110-registry", "head", ""), build)


def _family_heads(families: tuple[str, ...]) -> tuple[str, ...]:
    """The first word of each family long enough that one edit in it is still the family (`ASCEND`)."""
    return tuple(dict.fromkeys(h for f in families if len(h := f.split("_", 1)[0]) >= 5))


def _other_verdict(norm: str, known: frozenset[str], ctx: Context) -> tuple[str, int, bool] | None:
    """A name outside the Ascend families: an Ascend variable with its family dropped (`VLLM_X` upstream does
    not read, for `VLLM_ASCEND_X`), or with one edit in the family's first word (`ASCEBD_RT_VISIBLE_DEVICES`)."""
    prefixes = ctx.facts.env_prefixes
    facts = ctx.facts.ascend_env
    if len(norm) < facts.min_length:  # `VLLM_COMMIT`: short names are a project's own as often as not
        return None
    for upstream, family in prefixes.dropped_family.items():
        if norm.startswith(upstream) and not norm.startswith(family) and norm not in prefixes.upstream:
            meant = family + norm[len(upstream) :]
            registry = _registry(ctx)
            if meant in registry and norm not in registry and norm in known:
                return meant, _RENAMED, True
            if meant in known and norm not in known:
                return meant, _DROPPED, True
            return None
    head, sep, _ = norm.partition("_")
    if not sep:
        return None
    heads = ctx.memo(("npu110-heads", "", ""), lambda: _family_heads(tuple(facts.families)))
    if head in heads or not any(Levenshtein.distance(head, h, score_cutoff=1) == 1 for h in heads):
        return None
    close = [k for k in known if Levenshtein.distance(norm, k, score_cutoff=1) == 1]
    return (close[0], 1, True) if len(close) == 1 else None


def _verdict(name: str, known: frozenset[str], ctx: Context) -> tuple[str, int, bool] | None:
    """(the known name meant, edits away (0 when only the spelling of `-`, `_` or case differs), whether that is
    close enough for a warning), or None."""
    if name != name.upper():  # lower-case names are the shell's own variables
        return None
    facts = ctx.facts.ascend_env
    norm = _normal(name)
    if not norm.startswith(tuple(facts.families)):
        if name in known and not any(name.startswith(p) for p in ctx.facts.env_prefixes.dropped_family):
            return None
        if norm != name and norm in known:
            return norm, 0, True
        return _other_verdict(norm, known, ctx)
    if name in known:
        return None
    if norm in known:
        return norm, 0, True
    if len(norm) < facts.min_length:
        return None
    # The distance grows with the name's length: a long name is still recognisable three edits away.
    allowed = min(facts.max_distance, max(facts.base_distance, len(norm) // facts.chars_per_edit))
    best: list[tuple[int, str]] = []
    for k in known:
        d = Levenshtein.distance(norm, k, score_cutoff=allowed)
        if d <= allowed:
            best.append((d, k))
    if not best:
        return None
    low = min(d for d, _ in best)
    closest = [k for d, k in best if d == low]
    if len(closest) != 1:
        return None
    low = max(low, 1)
    return closest[0], low, low <= max(1, len(norm) // facts.chars_per_sure_edit)


def _stems(ctx: Context) -> tuple[str, ...]:
    """What a file that may set a name with a verdict has in its text upper-cased, `-` read as `_`: a family
    without its last `_`, or a dropped family's prefix. Those that hold another are left out (`VLLM_ASCEND` holds
    `ASCEND`): a text with one has the other, and the test runs on most files' whole texts."""

    def make() -> tuple[str, ...]:
        stems = [f[:-1] for f in ctx.facts.ascend_env.families] + list(ctx.facts.env_prefixes.dropped_family)
        return tuple(dict.fromkeys(s for s in stems if not any(o != s and o in s for o in stems)))

    return ctx.memo(("npu110-stems", "head", ""), make)


def _names_set(src: SourceFile, ctx: Context) -> Iterator[_Set]:
    flavor = flavor_of(src.path)
    if flavor is not None:
        keep = _may_report(ctx)
        shell_lines: set[int] = set()
        for block in doc_shell_blocks(ctx, src):
            shell_lines.update(n for n, _ in block.lines)
            yield from _shell_names(Source.lines(block.lines), keep)
        yield from _prose_names(src, ctx, shell_lines)
        return
    if PYTHON in src.kinds:
        yield from _python_names(src, ctx)
        return
    if SHELL in src.kinds or NPU_SCRIPT in src.kinds:
        yield from _shell_names(Source.file(src.text), _may_report(ctx))
    elif DOCKERFILE in src.kinds:
        for instr in ctx.dockerfile(src).of("ENV"):
            for pair in instr.pairs:
                yield _Set(pair.name, pair.line)
    elif YAML in src.kinds or WORKFLOW in src.kinds:
        text = src.text
        if "\\" not in text and (not any(k in text for k in ENV_KEYS) or not _yaml_may_report(ctx, text)):
            return  # a key is in the text as written unless a double-quoted key's escapes spell it
        doc = ctx.yaml(src)
        if doc.root is None:
            return
        for path, node in doc.root.walk():
            if node.is_map and path and path[-1] in ENV_KEYS:
                for key, key_node, value_node in node.entries():
                    value = value_node.value if value_node is not None and value_node.is_scalar else None
                    yield _Set(key, key_node.line, value=None if value is None else str(value))


# Python that names an environment variable: os.environ[...], os.environ.get/setdefault/pop/update, os.getenv,
# os.putenv, monkeypatch.setenv / delenv.
_PY_KEYWORDS = ("environ", "getenv", "putenv", "setenv", "delenv")
# A literal name given to one of them: `environ["X"]` (a read unless assigned), `environ.get("X")`,
# `os.getenv("X")` (reads), `environ.setdefault("X", v)`, `os.putenv("X", v)`, `monkeypatch.setenv("X", v)`.
_PY_NAME = lazyre.compile(
    r"""(?<![\w])(?:(environ)[ \t]*\[|environ\.(get|pop|setdefault)[ \t]*\(|(getenv|putenv|setenv|delenv)[ \t]*\()"""
    r"""[ \t]*[rbuRBU]?(["'])([A-Za-z_][A-Za-z0-9_-]*)\4(?:[ \t]*\](?P<store>[ \t]*=(?!=)))?"""
)
# `os.environ.update({"X": v, ...})` and `os.environ.update(X=v)`.
_PY_UPDATE = lazyre.compile(r"\benviron\.update[ \t]*\(([^)]*)\)", re.S)
_PY_KEY = lazyre.compile(r"""(["'])([A-Za-z_][A-Za-z0-9_-]*)\1[ \t]*:|\b([A-Za-z_]\w*)[ \t]*=(?!=)""")
_READS = frozenset({"get", "pop", "getenv"})


def _python_may_report(text: str, families: tuple[str, ...]) -> bool:
    """The quick no for Python: no environment access, or no string that starts like an Ascend family (its first
    four characters, so that `"VLLM-ASCEND_X"` counts) unless `environ.update(NAME=...)` names one bare."""
    if not any(k in text for k in _PY_KEYWORDS):
        return False
    if "environ.update" in text:  # as _PY_UPDATE spells it
        return True
    return _quoted_family(families).search(text) is not None


@functools.lru_cache(maxsize=4)
def _quoted_family(families: tuple[str, ...]) -> re.Pattern[str]:
    """A quote and the first four characters of a family: one scan of the text (36 substring searches were a
    third of this rule's time on verl's Python)."""
    starts = "|".join(sorted({re.escape(f[:4]) for f in families}))
    return re.compile(f"[\"'](?:{starts})")


def _python_names(src: SourceFile, ctx: Context) -> Iterator[_Set]:
    """The variables Python code reads or sets by a literal name: `os.environ["X"]`, `os.environ.get("X")`,
    `os.environ.setdefault("X", v)`, `os.environ.update({"X": v})` / `update(X=v)`, `os.getenv("X")`,
    `os.putenv("X", v)`, `monkeypatch.setenv("X", v)`. A misspelled read is as silent as a misspelled set: the
    user sets the real name and the code never sees it. Read from the text (no parse: most files that name
    `environ` have nothing to report, and the names are literals)."""
    text = src.text

    def line_of(offset: int) -> int:
        return text.count("\n", 0, offset) + 1

    found: list[tuple[int, _Set]] = []
    for keyword in _PY_KEYWORDS:  # str.find runs where a regex scan of the whole text would crawl
        i = text.find(keyword)
        while i != -1:
            m = _PY_NAME.match(text, i)
            if m is not None:
                call = m.group(2) or m.group(3)
                read = (call in _READS) if call else m.group("store") is None
                found.append((m.start(5), _Set(m.group(5), line_of(m.start(5)), read)))
            i = text.find(keyword, i + len(keyword))
    for _, item in sorted(found, key=lambda f: f[0]):
        yield item
    for m in _PY_UPDATE.finditer(text):
        for k in _PY_KEY.finditer(m.group(1)):
            name = k.group(2) or k.group(3)
            offset = m.start(1) + (k.start(2) if k.group(2) else k.start(3))
            yield _Set(name, line_of(offset))


# A markdown-escaped underscore (`HCCL\_BUFFSIZE`) is an underscore.
_MD_ESCAPE = lazyre.compile(r"\\(?=[_-])")


def _prose_names(src: SourceFile, ctx: Context, skip: set[int]) -> Iterator[_Set]:
    """Names mentioned in a doc's prose, tables and non-shell code blocks (a variable reference page written as
    text, a table of settings, a YAML or Python example): every run that reads as a misspelled variable, on
    the lines the shell blocks (read as shell above) do not cover."""
    candidates, relevant = _relevance(ctx)
    for n, line in enumerate(src.lines, 1):
        if n in skip or not line.strip():
            continue
        if "\\" in line:
            line = _MD_ESCAPE.sub("", line)
        for m in candidates.finditer(line):
            if relevant(m.group(), False):
                yield _Set(m.group(), n)


# The quick no for a logical line of shell, so that the commands of most lines are never built. A name set there
# (below) is a whole run of [A-Za-z0-9_-] in the line's text: an assignment's name starts a word and ends at
# `=`, `+=` or `[`; an export's argument starts a word, and its name, unquoted, ends at `=` or the word's end.
# Only quotes or backslashes inside an export's argument can join pieces into a name (`export "ASCEND"_X=1`),
# so a line with an export-like word (quotes and backslashes taken out) and one of them is read in full. A name
# with a verdict has no lower-case letter, and `-`, `__` or a family at its start (`_verdict`: without the
# first two its normal form is itself, not known, so it must start with a family); `NAME[i]=` sets `NAME[i]`,
# whose verdict needs a family at the start of NAME. `_candidates` finds those runs.
_EXPORTISH = lazyre.compile(r"(?<![^ \t\r\n;&|()<>])(?:export|declare|typeset|env)(?![^ \t\r\n;&|()<>])")
_QUOTING = str.maketrans("", "", "\\'\"")


def _candidates(families: tuple[str, ...]) -> re.Pattern[str]:
    """Whole runs of [A-Z0-9_-] that start with a letter or `_` (as names do) and then a family, or that have a
    `-` or `__`. The first character is matched before the look-behind, so that the scan skips fast to where
    a run may start."""
    first = "A-Z_" + "".join(re.escape(f[0]) for f in families if f)
    family = "|".join(f"(?<={re.escape(f[0])}){re.escape(f[1:])}" for f in families if f)
    return re.compile(
        rf"[{first}](?<![A-Za-z0-9_-][{first}])(?:{family}|(?<=_)_|[A-Z0-9_]*(?:-|__))[A-Z0-9_-]*(?![A-Za-z0-9_-])"
        # a first word of 4 to 8 capitals, then `_` (a dropped family's prefix, a misspelled family's first word)
        r"|(?<![A-Za-z0-9_-])[A-Z][A-Z0-9]{3,7}_[A-Z0-9_-]{3,}(?![A-Za-z0-9_-])"
    )


def _relevance(ctx: Context) -> tuple[re.Pattern[str], Callable[[str, bool], bool]]:
    """`_candidates` for the facts, and whether a run found may get a verdict (`True` for `NAME[i]`: whether
    `NAME[i]` may), memoised per run."""
    known = _known(ctx)
    families = tuple(ctx.facts.ascend_env.families)
    candidates = ctx.memo(("npu110-candidates", "head", ""), lambda: _candidates(families))
    runs: dict[tuple[str, bool], bool] = ctx.memo(("npu110-runs", "head", ""), dict)

    def relevant(run: str, indexed: bool) -> bool:
        found = runs.get((run, indexed))
        if found is None:
            found = runs[(run, indexed)] = _verdict(run, known, ctx) is not None or (
                indexed and _normal(run).startswith(families)
            )
        return found

    return candidates, relevant


def _may_report(ctx: Context) -> Callable[[LogicalLine], bool]:
    """Whether a logical line may set a name that gets a verdict (a superset: see `_candidates`)."""
    candidates, relevant = _relevance(ctx)
    # Scripts repeat most of their short lines (exports, `set -x`, ...): the answer is a function of the text.
    answers: dict[str, bool] = ctx.memo(("npu110-lines", "head", ""), dict)

    def keep(ll: LogicalLine) -> bool:
        text = ll.text
        found = answers.get(text)
        if found is not None:
            return found
        if ("'" in text or '"' in text or "\\" in text) and _EXPORTISH.search(text.translate(_QUOTING)):
            found = True
        else:
            found = any(relevant(m.group(), text[m.end() : m.end() + 1] == "[") for m in candidates.finditer(text))
        if len(text) <= _REMEMBERED:
            answers[text] = found
        return found

    return keep


_REMEMBERED = 200  # longer lines (a launch command with its overrides) rarely repeat


# A plain key that ends here (`NAME: value`, `NAME:` at the end of a line) is the whole run before it.
_KEY_END = lazyre.compile(r":(?:[ \t\r\n]|\Z)")


def _yaml_may_report(ctx: Context, text: str) -> bool:
    """The quick no for a YAML file without backslash escapes: a key with a verdict is written as it is, and
    starts a run of [A-Za-z0-9_-] (a plain scalar starts after a blank or an indicator, a quoted one after its
    quote) that `_candidates` finds; a key there is that run when `: ` follows it, else it may go on."""
    candidates, relevant = _relevance(ctx)
    return any(not _KEY_END.match(text, m.end()) or relevant(m.group(), False) for m in candidates.finditer(text))


def _shell_names(source: Source, keep: Callable[[LogicalLine], bool]) -> Iterator[_Set]:
    for cmd in commands(source, keep=keep):
        for word in cmd.words[: cmd.start]:  # the names of cmd.assignments(), without unquoting the values
            m = ASSIGNMENT.match(word.raw)
            if m and not word.quoted:
                yield _Set(word.raw[: m.end()].rstrip("=").rstrip("+"), word.line)
        start = cmd.start
        name = cmd.words[start].unquoted if start < len(cmd.words) else ""  # cmd.name, the other words left quoted
        if name in ("export", "declare", "typeset", "env"):
            for word in cmd.words[start + 1 :]:
                m = _EXPORT_ARG.match(word.unquoted)
                if m is None or word.raw.startswith("-") or (name == "env" and "=" not in word.raw):
                    continue
                value = word.unquoted.split("=", 1)[1] if "=" in word.unquoted else None
                yield _Set(m.group(1), word.line, value=None if value is None or "$" in value else value)


def _sibling(name: str, known: frozenset[str]) -> str | None:
    """The one other known name one edit from `name` (a project that renamed a misspelled variable knows both)."""
    close = [k for k in known if k != name and Levenshtein.distance(name, k, score_cutoff=1) == 1]
    return close[0] if len(close) == 1 else None


# `"NAME": lambda: ... os.getenv("NAME", default)` in a registry (vLLM-Ascend's envs.py style).
_REGISTRY_DEFAULT = lazyre.compile(
    r"""["']([A-Z][A-Z0-9_]{3,})["']\s*:\s*lambda\s*:[^\n]*?(?:getenv|environ\.get)\(\s*["']\1["']\s*,\s*"""
    r"""(?:["']([^"'\n]*)["']|([0-9]+|True|False|None))"""
)


def _registry_defaults(ctx: Context) -> dict[str, str]:
    """NAME -> its default, as the repository's own registries state it."""

    def build() -> dict[str, str]:
        out: dict[str, str] = {}
        for src in _registry_files(ctx):
            for m in _REGISTRY_DEFAULT.finditer(src.text):
                out.setdefault(m.group(1), m.group(2) if m.group(2) is not None else m.group(3))
        return out

    return ctx.memo(("npu110-defaults", "head", ""), build)


# The numbered choices a registry's comment gives above a variable (`# 0: close nz;` / `# 2: enable nz ...`), the
# default's among them however it is said (`# 0, or not set: ...`, `# 0 (default): ...`: vLLM-Ascend's
# VLLM_ASCEND_ENABLE_FUSED_MC2, whose config asserts 0 or 1; a "2" under a misspelled name was advised to turn on,
# which stops the server: all-r10, judged false).
_CHOICE = lazyre.compile(r"^\s*#\s*([0-9]+)\s*(?:,?\s*(?:or\s+)?(?:not\s+set|unset|\(?default\)?))?\s*:")


def _registry_choices(ctx: Context) -> dict[str, tuple[str, ...]]:
    """NAME -> the values the comment right above its registry entry numbers (`# 0: ...`, `# 1: ...`), when it
    numbers two or more."""

    def build() -> dict[str, tuple[str, ...]]:
        out: dict[str, tuple[str, ...]] = {}
        for src in _registry_files(ctx):
            comment: list[str] = []
            for line in src.lines:
                key = _REGISTRY_NAME.match(line.lstrip())  # an entry's key starts its line
                if key is not None:
                    if len(comment) >= 2:
                        out.setdefault(key.group(1), tuple(comment))
                    comment = []
                elif line.lstrip().startswith("#"):
                    m = _CHOICE.match(line)
                    if m is not None:
                        comment.append(m.group(1))
                else:
                    comment = []
        return out

    return ctx.memo(("npu110-choices", "head", ""), build)


def _same_value(value: str | None, default: str) -> bool:
    if value is None:
        return False
    a, b = value.strip().strip("\"'").lower(), default.strip().lower()
    truthy = {"1", "true"}
    falsy = {"0", "false", "", "none"}
    return a == b or (a in truthy and b in truthy) or (a in falsy and b in falsy)
