"""NPU215: a CI matrix entry names a test config file (`config_file_path` under `config_base_path`) that does not
exist."""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

from npu_review.checks import globs, lazyre
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.facts import Facts
from npu_review.checks.kinds import WORKFLOW, YAML, in_ci_folders
from npu_review.checks.model import ChangeStatus, Severity
from npu_review.checks.parsers.gha.workflow import job_blocks
from npu_review.checks.rule import Hit, Rule

if TYPE_CHECKING:
    from npu_review.checks.parsers.yamlmarks import Node

FILE_KEY = "config_file_path"
BASE_KEY = "config_base_path"
TESTS_KEY = "tests"
TEST_FILE = lazyre.compile(r"(?:^|/)(?:test_[^/]*|[^/]*_test)\.py$")
# Where CI test matrices live: the App fetches them when a change deletes test files.
CONFIG_GLOBS = in_ci_folders("**/*.yaml", "**/*.yml")


class CiTestConfigMissing(Rule):
    """A CI test entry points at a config file that is not in the repository.

    Why: nightly and weekly test matrices (vLLM-Ascend's `.github/workflows/configs/*_config.yaml`, or a
    workflow's `strategy.matrix.include`) name each case's config as `config_file_path` inside
    `config_base_path`. When the file was renamed, moved to another base directory or misspelled (paths are
    case-sensitive on the runner), the job fails only when the schedule runs it, after the runner and the
    model download were paid for. vllm-ascend shipped such entries twice in a month
    (`Kimi-K2.6-W4A8-64k-1k-TPOT50-PD.yaml` under the weekly base path exists only under the nightly one).

    Bad:
        - name: Kimi-K2.6-W4A8-64k-1k-TPOT50-PD
          config_file_path: Kimi-K2.6-W4A8-64k-1k-TPOT50-PD.yaml
          config_base_path: tests/e2e/weekly/multi_node/external_dp/config   # the file is under nightly/

    Good:
        - name: Kimi-K2.6-W4A8-64k-1k-TPOT50-PD
          config_file_path: Kimi-K2.6-W4A8-64k-1k-TPOT50-PD.yaml
          config_base_path: tests/e2e/nightly/multi_node/external_dp/config

    Fix: point the entry at the file as it is named at head (the message lists where a file of that name is).

    A list without base paths (the loader searches its own directories) is judged by where its other entries'
    files are: an entry whose file is under none of them (only elsewhere, or nowhere) is reported when at
    least three of its siblings, and four in five, are found under one directory three levels deep, unless a
    workflow that reads the list passes a `config_base_path` the file is in.

    A reusable-workflow call that passes a literal `config_base_path` and takes `config_file_path` from its
    matrix (`${{ matrix.test_config.config_file_path }}`) is judged per matrix entry under that base; when none of
    the entries' files is there and most are under one other folder, the base path is reported once, with that
    folder (vllm-ascend's weekly single-node job pointed at the multi-node config folder).

    A change that deletes (or moves) the last test files of a directory that a `tests:` entry of a CI matrix
    under `.github/` still names is reported on that entry: pytest collects nothing and exits 5.

    Not reported: entries whose base path comes from elsewhere (a reusable workflow's input default: not
    resolved), values with `${{ }}` expressions, and entries whose path cannot be read as a repository path.
    """

    id = "NPU215"
    name = "ci-test-config-missing"
    severity = Severity.WARNING
    title = "CI test config file named by a matrix entry does not exist"
    kinds = frozenset({YAML, WORKFLOW})
    # The workflows that read a list without base paths may pass one (`config_base_path: dir`) to the loader.
    context_kinds = frozenset({WORKFLOW})

    @classmethod
    def context_paths(cls, facts: Facts) -> tuple[str, ...]:
        return CONFIG_GLOBS

    def check_project(self, ctx: Context) -> Iterable[Hit]:
        """A change that deletes the last test files of a directory a CI matrix's `tests:` still names."""
        if ctx.audit:
            return
        gone = [
            c.old_path or c.path
            for c in ctx.changeset.changes.values()
            if c.status in (ChangeStatus.DELETED, ChangeStatus.RENAMED) and TEST_FILE.search(c.old_path or c.path)
        ]
        if not gone:
            return
        head = ctx.head_paths()
        for path in head:
            if not globs.match_any(path, CONFIG_GLOBS):
                continue
            src = ctx.source(path)
            if src is None or "tests:" not in src.text:
                continue
            doc = ctx.yaml(src)
            for _, node in doc.root.walk() if doc.root is not None else ():
                value = node.get(TESTS_KEY) if node.is_map else None
                if value is None or not value.is_scalar or "${{" in value.value:
                    continue
                target = value.value.strip().rstrip("/")
                if not target or " " in target or target.endswith(".py"):
                    continue
                emptied = [g for g in gone if g.startswith(target + "/")]
                if not emptied:
                    continue
                if any(p.startswith(target + "/") and TEST_FILE.search(p) for p in head):
                    continue
                yield Hit(
                    path,
                    value.line,
                    f"`{target}/` has no test files left after this change (it deletes `{emptied[0]}`): pytest "
                    "collects nothing there and the job fails (exit code 5). Remove the entry or point it at the "
                    "tests' new place.",
                    caused_by_change=True,
                )

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if FILE_KEY not in src.text:
            return
        doc = ctx.yaml(src)
        if doc.root is None:
            return
        called = _call_axes(doc.root, src.path) if BASE_KEY in src.text and ctx.kindmap.has(src.path, WORKFLOW) else {}
        yield from _without_base(src, ctx, doc.root, frozenset(id(axis) for axis in called))
        yield from _call_base(src, ctx, called)
        if BASE_KEY not in src.text:
            return
        for _, node in doc.root.walk():
            if not node.is_map:
                continue
            name_node, base_node = node.get(FILE_KEY), node.get(BASE_KEY)
            if name_node is None or base_node is None or not name_node.is_scalar or not base_node.is_scalar:
                continue
            name, base = name_node.value.strip(), base_node.value.strip()
            if not name or not base or "${{" in name + base or name.startswith("/") or base.startswith("/"):
                continue
            path = posixpath.normpath(posixpath.join(base, name))
            if path.startswith("..") or ctx.exists_at_head(path):
                continue
            leaf = posixpath.basename(path)
            elsewhere = [p for p in ctx.head_paths() if posixpath.basename(p) == leaf][:3]
            other_case = [p for p in ctx.head_paths() if p.lower() == path.lower()][:1]
            if other_case:
                hint = f" A file differs only in case: `{other_case[0]}` (paths are case-sensitive)."
            elif elsewhere:
                hint = " A file of that name is at " + ", ".join(f"`{p}`" for p in elsewhere) + ": wrong base path?"
            else:
                hint = ""
            yield Hit(
                src.path,
                name_node.line,
                f"`{path}` does not exist: this test entry's job fails when it runs.{hint}",
            )


_MATRIX_REF = lazyre.compile(r"\A\$\{\{\s*matrix\.([\w-]+)(?:\.([\w-]+))?\s*\}\}\Z")


def _call_axes(root: Node, path: str) -> dict[Node, tuple[Node, re.Match[str]]]:
    """The matrix lists whose entries name the config files of a reusable-workflow call with a literal
    `config_base_path` (`config_file_path: ${{ matrix.<list>.<field> }}`): list -> (base node, the reference)."""
    out: dict[Node, tuple[Node, re.Match[str]]] = {}
    for _, _, job in (entry for jobs in job_blocks(root, path) for entry in jobs.entries()):
        with_node = job.get("with") if job.is_map else None
        if with_node is None or not with_node.is_map:
            continue
        base_node, file_node = with_node.get(BASE_KEY), with_node.get(FILE_KEY)
        if base_node is None or file_node is None or not base_node.is_scalar or not file_node.is_scalar:
            continue
        base = base_node.value.strip()
        m = _MATRIX_REF.match(file_node.value.strip())
        if m is None or not base or "${{" in base or base.startswith("/"):
            continue
        axis = job.at("strategy", "matrix", m.group(1))
        if axis is not None and axis.is_seq:
            out[axis] = (base_node, m)
    return out


def _call_base(src: SourceFile, ctx: Context, called: dict[Node, tuple[Node, re.Match[str]]]) -> Iterable[Hit]:
    """A call's matrix files must be under the call's base path. When none of them is and they are together
    under another folder, the base path is the mistake: one finding on it; else one on each missing entry."""
    for axis, (base_node, m) in called.items():
        base = base_node.value.strip()
        names: list[tuple[str, Node]] = []
        for item in axis.items:
            node = item.get(m.group(2)) if m.group(2) and item.is_map else item if not m.group(2) else None
            if node is not None and node.is_scalar and node.value.strip() and "${{" not in node.value:
                names.append((node.value.strip(), node))
        if not names:
            continue
        missing = [(n, nd) for n, nd in names if not ctx.exists_at_head(posixpath.normpath(posixpath.join(base, n)))]
        if not missing:
            continue
        if len(missing) == len(names):
            where = Counter(
                posixpath.dirname(p)
                for n, _ in names
                for p in ctx.head_paths()
                if p == n or p.endswith("/" + n)
                if p.removesuffix(n).count("/") >= 1
            )
            if where:
                folder, count = where.most_common(1)[0]
                sub = posixpath.dirname(names[0][0])
                folder_dir = folder[: len(folder) - len(sub)].rstrip("/") if sub else folder
                if count * 2 >= len(names):
                    line = src.line(base_node.line)
                    trail = "/" if base.endswith("/") else ""
                    yield Hit(
                        src.path,
                        base_node.line,
                        f"None of the {len(names)} test configs this job's matrix names (`{names[0][0]}`, ...) is "
                        f"under `{base}`: {count} of them are under `{folder_dir}/`. Every entry's job fails when it "
                        "runs; wrong base path?",
                        suggestion=line.replace(base, folder_dir + trail, 1) if line.count(base) == 1 else None,
                    )
                    continue
        for n, node in missing:
            path = posixpath.normpath(posixpath.join(base, n))
            yield Hit(
                src.path,
                node.line,
                f"`{path}` does not exist (this entry's `{m.group(2) or m.group(1)}` under the call's "
                f"`{BASE_KEY}`, line {base_node.line}): this test entry's job fails when it runs.",
            )


MIN_SIBLINGS = 3  # entries of the list found in the repository before a missing one is judged
MIN_PREFIX_PARTS = 3  # their common directory must be this deep (`tests/e2e/nightly`) to say where files live


def _without_base(src: SourceFile, ctx: Context, root: Node, skip: frozenset[int] = frozenset()) -> Iterable[Hit]:
    """Lists of entries with a `config_file_path` and no base path (the loader searches its own directories):
    an entry whose file is under none of the directories where the list's other files are."""
    by_name: dict[str, list[str]] | None = None
    for _, seq in root.walk():
        if not seq.is_seq or id(seq) in skip:
            continue  # a call's matrix list is judged against the call's base path (_call_base)
        entries = [i for i in seq.items if i.is_map and i.get(FILE_KEY) is not None]
        if len(entries) <= MIN_SIBLINGS or any(i.get(BASE_KEY) is not None for i in seq.items if i.is_map):
            continue
        if by_name is None:
            by_name = {}
            for p in ctx.head_paths():
                by_name.setdefault(posixpath.basename(p), []).append(p)
        names = []
        for item in entries:
            node = item.get(FILE_KEY)
            if node is None or not node.is_scalar:
                continue
            name = node.value.strip()
            if name and "/" not in name and "${{" not in name and name.endswith((".yaml", ".yml")):
                names.append((name, node))
        found = {name: by_name.get(name, []) for name, _ in names}
        for name, node in names:
            # where the other entries' files are (each found once in the repository)
            others = [posixpath.dirname(ps[0]) for n, ps in found.items() if n != name and len(ps) == 1]
            tops = Counter("/".join(d.split("/")[:MIN_PREFIX_PARTS]) for d in others if d.count("/") >= 2)
            if not tops:
                continue
            top, count = tops.most_common(1)[0]
            if count < MIN_SIBLINGS or count * 5 < len(others) * 4:  # most of them under one directory
                continue
            dirs = {d for d in others if d == top or d.startswith(top + "/")}
            prefix = posixpath.commonpath(sorted(dirs))
            paths = found[name]
            if any(posixpath.dirname(p) in dirs or p.startswith(prefix + "/") for p in paths):
                continue
            if any(posixpath.dirname(p) in _bases_passed(ctx, src.path) for p in paths):
                continue  # a workflow that reads this list passes the base directory the file is in
            if paths:
                where = ", ".join(f"`{p}`" for p in paths[:3])
                hint = f" A file of that name is at {where}: under another base directory than the list's."
            else:
                lower = name.lower()
                other = [p for p in ctx.head_paths() if posixpath.basename(p).lower() == lower][:1]
                hint = f" A file differs only in case: `{other[0]}` (paths are case-sensitive)." if other else ""
            yield Hit(
                src.path,
                node.line,
                f"`{name}` is not under `{prefix}/`, where this list's other test configs are: this test entry's "
                f"job fails when it runs.{hint}",
            )


_PASSED_BASE = lazyre.compile(r"^\s*-?\s*" + BASE_KEY + r"\s*:\s*['\"]?([^'\"\s#$]+)", re.M)


def _bases_passed(ctx: Context, path: str) -> frozenset[str]:
    """The literal `config_base_path:` directories passed by the workflows that name this file."""

    def find() -> frozenset[str]:
        leaf = posixpath.basename(path)
        out: set[str] = set()
        for wf in ctx.paths_of_kind(WORKFLOW):
            text = ctx.text(wf)
            if text is None or leaf not in text or wf == path:
                continue
            out.update(posixpath.normpath(m.group(1)) for m in _PASSED_BASE.finditer(text))
        return frozenset(out)

    return ctx.memo(("npu215-bases", "head", path), find)
