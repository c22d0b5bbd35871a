"""NPU118: an NPU script, an Ascend job's `run:` or an Ascend doc names a repository file that does not exist (or
that the change deletes)."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator

from npu_review.checks import kinds, lazyre
from npu_review.checks.analysis.references import (
    GITIGNORES,
    FileRef,
    ModuleRef,
    ascend_command_refs,
    callers_of,
    close_name,
    is_dir,
    is_npu_config,
    links_a_copy,
    module_refs,
    own_packages,
    same_name_elsewhere,
)
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.facts import Facts
from npu_review.checks.kinds import ASCEND_WORKFLOW, DOCS, MARKUP, NPU_SCRIPT, SHELL, WORKFLOW, YAML
from npu_review.checks.model import ChangeStatus, Related, Severity
from npu_review.checks.rule import Hit, Rule

_WHAT = {
    "script": "the script",
    "python": "the Python file",
    "pytest": "the test path",
    "patch": "the patch",
    "requirements": "the requirements file",
    "install": "the folder to install",
    "cd": "the folder",
    "config": "the Hydra config",
    "config-file": "the config file",
}
_MAX_LISTED = 5
# A name a guide leaves for the reader to fill in (`finetune_qwen3vl_xxB.sh`: the model's size; `<model>.yaml`;
# `your_config.json`), or the reader's own file a guide has them write (`config/my_agent.yaml`): no file of the
# repository is meant to have it.
_PLACEHOLDER = lazyre.compile(
    r"(?i)(?:^|[/_.-])x{2,}[a-z]?(?=$|[/_.-])|<[^<>/]+>|(?:^|[/_-])(?:your|my)[_-]"
    # the one the reader adds: `test_new_op.py` (a guide to adding an operator)
    r"|(?:^|[/_-])new[_-](?:op|operator|kernel|model|layer|module|feature)s?(?=$|[/_.-])"
)


class NamedFileMissing(Rule):
    """A command in an NPU script, an Ascend CI job or an Ascend install doc names a file of this repository that
    does not exist, so the command fails where it runs.

    Why: scripts, CI steps and install guides name the repository's files (`bash tests/special_npu/x.sh`,
    `source scripts/env.sh`, `python x.py`, `git apply patches/x.patch`, `pip install -r requirements-npu.txt`,
    `cd examples/x`, Hydra's `--config-name` (and an app's own `--config_path P --config_name N` that it hands to
    Hydra; where P stays unknown, `$(dirname $0)`, only a name no YAML file of the repository has), a launcher's
    `--config_file x.yaml`, a trainer's
    `--deepspeed ds.json`, any option named for a config with a config file's name as its value, such as a
    server's `--optimize_config_path rules/x.yaml`). Files move, and what names them is rarely updated in the same
    change: a CI step that runs a deleted script fails the NPU job, a launch script's default config that was
    renamed makes every run fail at start, and a guide that `git apply`s a patch from the wrong folder stops every
    reader. verl deleted `tests/special_npu/run_fully_async_policy.sh` while `e2e_ascend.yml` still ran it;
    MindSpeed-RL's launch script defaulted to a config `grpo_trainer_qwen25_32b_A3` that `configs/` did not have,
    and an NPU test entry script ran `./test_vllm_engine.py`, which is beside the script but not in the folder
    the test runner starts it from.

    A command behind a launch wrapper is read as the command it runs, the wrapper's own options skipped: `nohup
    python train.py &`, `mpirun -n 8 -x PATH python ./tools/train.py`, `taskset -c 0-23 python x.py`, `numactl
    --cpunodebind=0 python x.py`, `timeout 600 bash run.sh`, `stdbuf -oL python x.py`, `time python x.py`, `env
    A=1 python x.py`, and wrappers in a row (`nohup taskset -c 0-23 python x.py &`), when it runs a Python, a
    launcher, a shell with its script, or a script by its path. Not read: a wrapper that runs it in another folder
    or from one string (`mpirun -wdir D`, `env -C D`, `env -S '...'`), `taskset -p PID`, and a command after an
    option of the wrapper not known to be a flag or to take a value (the word after it may be that value).

    A name is resolved from where its command runs: the repository root or the script's (doc's) own folder, the
    folder a preceding `cd` entered (into a clone of this repository the doc made: its root, even where the
    repository has a folder of that name, its package; a `cd -` goes back to where the commands ran before the
    last `cd`, as torchtitan-npu's torch.compile guide does after installing a backend from its clone before
    `bash run_train.sh`), a step's `working-directory`; a script that its callers
    (another script, a CI job, a `find ... -name` loop) run from another folder is judged from theirs. A path in a
    clone of this repository (`../MindSpeed-RL/x`, `/vllm-workspace/vllm-ascend/x`) is a path of this repository. A
    name is judged only when it reads as a path into this repository: a clone of it precedes it, or a folder at
    least two levels deep of the path exists (`tests/special_npu/`). On a change, a file the change deletes that
    such a command still names is reported on that command's line, even where the change did not touch it (all
    such commands of a change are one cause, one comment); so is
    a `cd` into a folder the change moves as a whole (every file it renames out of the folder keeps its place
    under one new folder, and nothing is left in the old one: pypto's guide kept `cd examples/hello_world` when
    its examples were renumbered `00_hello_world`), with the folder's new path.

    A bare entry script a launcher runs (`torchrun pretrain_gpt_v2.py`, `python train_new.py`) that no file of the
    repository has, though the script's folder is unknown to the rule, is reported when its name is the name that
    this script or a shell script beside it launches (`pretrain_gpt.py`) with a version or scratch word added
    (`_v2`, `_new`, `_old`, `_bak`, `_backup`, `_tmp`, `_copy`, `_debug`): its author's working copy, which nobody
    else has. MindSpeed's ST scripts ran `pretrain_gpt_v2.py` (twice, in two changes) beside the `pretrain_gpt.py`
    of every other script of the folder, Megatron-LM's entry script that the tests run from its tree. Not
    reported: a script that names the copy anywhere else than in its launches (writes it, copies it, explains it
    in a comment), one an earlier command makes (`cp x.py x_v2.py`) or the repository ignores, a copy whose
    original name no script of the folder launches (`infer_v2.py` alone), and a name a file of the repository
    has (in any folder: where it runs from is this rule's other check).

    An NPU config (a YAML file whose folder or name says NPU or Ascend) that names a class or module of this
    repository's own package by its import path (`worker_cls: pkg.worker.npu.NPUWorker`) names a file too: the
    module must exist. A change that renames or deletes the module and leaves such a config naming it is reported
    on the config's line (vllm-omni's NPU stage configs kept a scheduler path the change renamed for its GPU ones).

    Bad:
        # tests/special_npu/run_e2e.sh
        export HCCL_CONNECT_TIMEOUT=1800
        bash tests/special_npu/run_qwen3_06b_grpo.sh     # renamed to run_qwen3_06b_grpo_npu.sh

    Good:
        # tests/special_npu/run_e2e.sh
        export HCCL_CONNECT_TIMEOUT=1800
        bash tests/special_npu/run_qwen3_06b_grpo_npu.sh

    Not reported either: a file the doc tells the reader to write (`name the script x.sh`, `新建 x.sh`) or names
    and then gives the whole text of (a code block that starts with `#!`), one the paragraph before the command
    tells the reader to fetch and put in place (`download x.py from <upstream> and put it in scripts/`,
    `下载x.py脚本，放置于scripts文件夹下`), one the doc shows as the example of
    a naming convention (`Naming style and startup: examples/mcore/<model>/evaluate_xxx.sh`, `命名风格`), and one
    whose copy at a release the lines before the command link (`# script: https://gitcode.com/Ascend/X/blob/26.0.0/
    examples/a.sh`): also when the change deletes the file (a release retiring scripts its docs keep naming). A
    name left for the reader (`_xxB`, `<model>`, `your_config.json`, `test_new_op.py`) or naming the reader's own file
    (`config/my_agent_exp.yaml`, in a guide to plugging in one's own agent) is no file of the repository. A design
    or planning doc (a dated doc under `specs/`, `plans/`, `rfcs/`, `proposals/`, or one whose head says `Status:
    Draft`, `Approved`, ...) shows the commands of the files its plan will create: its commands are not read.

    Fix: name the file where it is now (the message says where a file of that name is, or the close name), or
    drop the command.

    Silent on: names with unresolved parts (`$VAR` nobody sets, `${{ }}`, globs), names after a `cd -` back to a
    folder that is not known (one `cd "$DIR"` entered, another project's clone, or none: a CI step's first `cd -`
    is a new shell's), absolute paths outside a clone of this repository, paths an earlier command of the same
    script, job or doc makes (`mkdir`, `git clone`, `wget -O`, an extracted archive, a build), other repositories'
    paths (a first folder this repository lacks, a clone of another project), git submodules, paths the
    repository's `.gitignore` files ignore (made on the reader's machine), and a doc or workflow line naming by its
    path a file the change renames or deletes (NPU502 reports those; a bare name run from the file's folder, `cd
    recipes/x` then `python x.py`, is this rule's, with the file's new name).
    """

    id = "NPU118"
    name = "named-file-missing"
    severity = Severity.WARNING
    title = "Script, CI step or install doc names a repository file that does not exist"
    kinds = frozenset({SHELL, NPU_SCRIPT, ASCEND_WORKFLOW, DOCS, MARKUP, YAML})
    # The scripts and jobs that run a script (its working directory), and every place that may name a file the
    # change deletes (an NPU config naming a module among them).
    context_kinds = frozenset({SHELL, NPU_SCRIPT, ASCEND_WORKFLOW, WORKFLOW, DOCS, MARKUP, YAML})
    # A doc or a workflow needs no other file (a README edit fetches no script); a script needs its callers, and a
    # change that deletes or renames a file reads everything anyway.
    context_triggers = frozenset({SHELL, NPU_SCRIPT})

    @classmethod
    def context_paths(cls, facts: Facts) -> tuple[str, ...]:
        # Submodules (their files are not in the tree), and what the repository ignores (made on the reader's machine).
        return (".gitmodules", *GITIGNORES)

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if YAML in src.kinds and is_npu_config(src.path):
            for m in module_refs(ctx, src):
                if not m.resolves and (ctx.audit or ctx.is_added_line(m.source, m.line)):
                    yield _module_hit(m, _gone(ctx))
        refs = list(ascend_command_refs(ctx, src))
        if not refs:
            return
        gone = _gone(ctx)
        # One finding per missing path (a folder misspelled in three commands is one cause).
        by_path: dict[str, list[FileRef]] = {}
        examples: set[str] = set()  # paths the doc shows as a naming example: every mention of them is one
        for r in refs:
            meant = r.meant or _gone_of(r, gone) is not None  # a path of this repository until this change
            if (
                r.missing
                and meant
                and not _PLACEHOLDER.search(r.text)
                and not _doc_names_it_to_write(src, r)
                and not _instance_of_a_placeholder(src, r)
            ):
                by_path.setdefault(r.candidates[0], []).append(r)
                if _shown_on_purpose(src, r):
                    examples.add(r.candidates[0])
        for path, group in by_path.items():
            if path in examples:
                continue
            first = group[0]
            if _reported_by_npu502(ctx, src, first, gone):
                continue
            yield _hit(ctx, first, group[1:], gone)
        if kinds.SHELL in src.kinds:
            yield from _run_elsewhere(ctx, src, refs)
            yield from _working_copies(ctx, src, refs)

    def check_project(self, ctx: Context) -> Iterable[Hit]:
        """Commands the change leaves naming a file it deletes (or, in scripts, renames), on unchanged lines."""
        if ctx.audit:
            return
        gone = _gone(ctx)
        if not gone:
            return
        yield from _modules_gone(ctx, gone)
        folders: dict[str, set[str]] = {}  # a name -> the folders of the files it names that the change removes
        for g in gone:
            base = posixpath.basename(g)
            # A Hydra config is named without its extension (`--config-name x` for `x.yaml`).
            for n in (base, base.rsplit(".", 1)[0]) if base.endswith((".yaml", ".yml")) else (base,):
                folders.setdefault(n, set()).add(posixpath.dirname(g))
        # The files that name one of them, found by the tree's own search where it has one, and that can reach its
        # folder (a change that moves 200 files of a 20,000-file model zoo parsed 1,600 docs and scripts of the tree
        # here, each naming some `train.py` or `README.md`: 8 of its 16 s).
        for path in ctx.paths_mentioning(sorted(folders), list(_sources(ctx))):
            src = ctx.source(path)
            if src is None or not _may_reach(path, src.text, folders):
                continue
            by_old: dict[str, list[FileRef]] = {}
            for r in ascend_command_refs(ctx, src):
                if not r.missing or ctx.is_added_line(r.source, r.line):
                    continue  # an added line: check_file reports it
                old = _gone_of(r, gone)
                if old is None:
                    continue
                if _shown_on_purpose(src, r) or _doc_names_it_to_write(src, r):
                    continue  # kept on purpose, or a file the reader is to write
                if gone[old] is not None and not ctx.kindmap.has(path, SHELL) and "/" in r.text and r.how != "cd":
                    continue  # a rename a doc or a workflow names by its path: NPU502's (a bare name that an
                    # earlier `cd` puts in the renamed folder, `cd examples/x` then `python3 x.py`, is this rule's)
                by_old.setdefault(old, []).append(r)
            for group in by_old.values():  # one finding per file and deleted path
                yield _hit(ctx, group[0], group[1:], gone, caused=True)


def _dotted(module_file: str, packages: dict[str, str]) -> str | None:
    """`pkg/sched/scheduler.py` -> `pkg.sched.scheduler` when `pkg` is one of this repository's packages."""
    path = module_file.removesuffix("/__init__.py").removesuffix(".py")
    if path == module_file or not path:
        return None
    parts = path.split("/")
    if parts[0] == "src":
        parts = parts[1:]
    return ".".join(parts) if parts and parts[0] in packages else None


def _modules_gone(ctx: Context, gone: dict[str, str | None]) -> Iterator[Hit]:
    """NPU configs the change leaves naming a module it deletes or renames, on lines it did not touch."""
    packages = own_packages(ctx)
    dotted = [d for old in gone if (d := _dotted(old, packages)) is not None]
    if not dotted:
        return
    configs = [p for p in ctx.head_paths() if is_npu_config(p) and ctx.kindmap.has(p, YAML)]
    for path in ctx.paths_mentioning(dotted, configs):
        src = ctx.source(path)
        if src is None:
            continue
        for m in module_refs(ctx, src):
            if m.resolves or ctx.is_added_line(m.source, m.line):
                continue  # an added line: check_file reports it
            if any(m.dotted == d or m.dotted.startswith(d + ".") for d in dotted):
                yield _module_hit(m, gone, caused=True)


def _module_hit(m: ModuleRef, gone: dict[str, str | None], caused: bool = False) -> Hit:
    moved = ""
    for old, new in gone.items():
        if old in (m.module, m.module.removesuffix(".py") + "/__init__.py"):
            moved = f" The change {f'renames `{old}` to `{new}`' if new else f'deletes `{old}`'}."
    return Hit(
        m.source,
        m.line,
        f"`{m.dotted}` names a module of this repository that does not exist (`{m.module}`), so it cannot be "
        f"imported where this NPU config is used.{moved} Name the module where the class is now.",
        caused_by_change=caused,
    )


def _may_reach(path: str, text: str, folders: dict[str, set[str]]) -> bool:
    """A file that names a removed file's name can mean that file only if it can reach its folder: it sits in that
    folder or above it or below it (a bare `bash run.sh`, `../run.sh`, `cd sub && bash run.sh`), or its text names
    the folder (`scripts/run.sh`, `cd ../examples`, `DIR=examples; bash $DIR/run.sh`)."""
    here = posixpath.dirname(path)
    for name, where in folders.items():
        if name not in text:
            continue
        for folder in where:
            if (
                not folder
                or not here
                or folder == here
                or folder.startswith(here + "/")
                or here.startswith(folder + "/")
            ):
                return True
            if posixpath.basename(folder) in text:
                return True
    return False


def _sources(ctx: Context) -> Iterator[str]:
    """Every file whose commands the rule reads: shell scripts, Ascend workflows, docs."""
    for path in ctx.head_paths():
        if ctx.kindmap.candidates(path) & {SHELL, WORKFLOW, ASCEND_WORKFLOW, DOCS, MARKUP}:
            yield path


def _gone(ctx: Context) -> dict[str, str | None]:
    """Files the change deletes (-> None) or renames (-> the new path)."""
    if ctx.audit:
        return {}

    def build() -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        for c in ctx.changeset.changes.values():
            if c.status == ChangeStatus.DELETED:
                out[c.path] = None
            elif c.status == ChangeStatus.RENAMED and c.old_path:
                out[c.old_path] = c.path
        out.update(_folders_moved(ctx, out))
        return out

    return ctx.memo(("npu118-gone", "", ""), build)


def _folders_moved(ctx: Context, files: dict[str, str | None]) -> dict[str, str]:
    """Folders the change moves as a whole: every file it renames out of the folder keeps its place under one new
    folder (`examples/hello_world/x.py` -> `examples/00_hello_world/x.py`), and nothing is left under the old one
    at head. A `cd examples/hello_world` elsewhere then enters a folder that is gone."""
    targets: dict[str, set[str]] = {}
    for old, new in files.items():
        if new is None:
            continue
        old_parts, new_parts = old.split("/"), new.split("/")
        # The common tail (the file's name and the folders under the moved one) is kept; what differs is the move.
        k = 0
        while k < min(len(old_parts), len(new_parts)) - 1 and old_parts[-1 - k] == new_parts[-1 - k]:
            k += 1
        if k == 0:
            continue  # the file itself was renamed
        # The folder that moved and each folder under it down to the file's own (`a/x` -> `b/x` for a/x/f.py).
        for j in range(k):
            old_dir = "/".join(old_parts[: len(old_parts) - k + j])
            new_dir = "/".join(new_parts[: len(new_parts) - k + j])
            if old_dir and new_dir:
                targets.setdefault(old_dir, set()).add(new_dir)
    out: dict[str, str] = {}
    for old_dir, news in targets.items():
        if len(news) == 1 and not is_dir(ctx, old_dir):  # else files are left in it: it is still there
            out[old_dir] = next(iter(news))
    return out


def _reported_by_npu502(ctx: Context, src: SourceFile, r: FileRef, gone: dict[str, str | None]) -> bool:
    """NPU502 reports a doc or workflow line the change adds that names a file the change deletes or renames."""
    if kinds.SHELL in src.kinds:
        return False
    if r.how == "cd":
        return False  # a folder the change moves: NPU502 reports files' paths only
    return any(p in gone for p in r.candidates) and ctx.is_added_line(src.path, r.line)


def _instance_of_a_placeholder(src: SourceFile, r: FileRef) -> bool:
    """The doc names the path's folder with a placeholder below it (`tests/st/testcase/<testcase>/`): the path
    (`tests/st/testcase/fused_add_sub`) is its example, one the reader makes (hw-native-sys/pto-isa's operator
    skill, rs-r55, judged false)."""
    if kinds.DOCS not in src.kinds:
        return False
    parent = posixpath.dirname(r.text.strip("/"))
    return bool(parent) and any(f"{parent}/{mark}" in src.text for mark in ("<", "{", "${", "[", "xxx"))


# A guide that has the reader write the file it then runs: "you can name the script `x.sh`", "可命名为`x.sh`".
_TO_WRITE = r"(?:\bnamed?\b|\bcall(?:ed)?\b|\bsave[ds]? (?:it )?as\b|\bcreate[ds]?\b|\bwrite\b|命名为|新建|创建|保存为)"


def _doc_names_it_to_write(src: SourceFile, r: FileRef) -> bool:
    """A doc's text before the command tells the reader to write (name, create, save as) the file the command
    runs, or names the file and then gives its whole text (a code block that starts with `#!`): its missing file
    is the reader's to make."""
    if kinds.DOCS not in src.kinds:
        return False
    name = posixpath.basename(r.text)
    base = re.escape(name)
    told = re.compile(rf"{_TO_WRITE}[^`\n]{{0,100}}`[^`\n]*{base}`", re.IGNORECASE)
    named = re.compile(rf"`[^`\n]*{base}`")
    fetched = re.compile(
        rf"{_TO_FETCH}[^\n]{{0,120}}(?<![\w.-]){base}(?![\w.-])|(?<![\w.-]){base}(?![\w.-])[^\n]{{0,60}}{_TO_FETCH}",
        re.IGNORECASE,
    )
    last = min(r.line, len(src.lines) + 1)
    for n in range(1, last):
        line = src.line(n)
        if told.search(line):
            return True
        if named.search(line) and _script_text_follows(src, n, last):
            return True
        if n >= r.command_line - _FETCH_REACH and name in line and fetched.search(line):
            return True
    return False


# A guide that has the reader fetch the file from elsewhere and put it in place before the command: "download
# `setup_x.py` from <upstream> and put it in `scripts/`", "下载setup_x.py脚本，放置于scripts文件夹下" (Ascend's
# community projects, rs-r81, judged false). Read in the paragraph before the command.
_TO_FETCH = (
    r"(?:\bdownload(?:ed|s)?\b|\bfetch(?:ed)?\b|\bobtain(?:ed)?\b|\bcop(?:y|ied)\b|\bplace[ds]?\b|\bput\b"
    r"|下载|获取|拷贝|复制|放置|放到|放在|放入|移动到|上传)"
)
_FETCH_REACH = 15


# A doc that shows how a project's scripts are named, with one name as the example (`Naming style and startup:
# examples/mcore/<model>/evaluate_xxx.sh`, `命名风格及启动方法`): the example need not be a file of this release.
_NAMING = lazyre.compile(
    r"(?i)\bnaming (?:conventions?|styles?|rules?|schemes?|patterns?)\b|命名(?:规则|风格|方式|规范|格式)"
)


def _naming_example(src: SourceFile, r: FileRef) -> bool:
    """The lines just before the command (the paragraph or comment that introduces it) say it shows a naming
    convention."""
    if kinds.DOCS not in src.kinds and kinds.MARKUP not in src.kinds:
        return False
    return any(_NAMING.search(src.line(n)) for n in range(max(1, r.command_line - 6), r.command_line + 1))


def _shown_on_purpose(src: SourceFile, r: FileRef) -> bool:
    """A doc names the file on purpose: as the example of a naming convention, or under a link to a release's copy."""
    return _naming_example(src, r) or _links_a_copy(src, r)


def _links_a_copy(src: SourceFile, r: FileRef) -> bool:
    """The command's lines, or those just before it, link the missing file at a release (a doc's pointer)."""
    if kinds.DOCS not in src.kinds and kinds.MARKUP not in src.kinds:
        return False
    return links_a_copy(src, r.line, r.candidates, before=max(6, r.line - r.command_line + 6))


def _script_text_follows(src: SourceFile, n: int, last: int) -> bool:
    """After line `n` (and blank lines), a code block opens whose first line is a `#!` line: a script's text."""
    k = n + 1
    while k < last and not src.line(k).strip():
        k += 1
    return k + 1 < last and src.line(k).lstrip().startswith(("```", "~~~")) and src.line(k + 1).startswith("#!")


def _gone_of(r: FileRef, gone: dict[str, str | None]) -> str | None:
    """The file the change deletes or renames that `r` names: one of its candidates, or for a config whose folder
    is unknown (`--config_path $(dirname $0)`), the one of its name."""
    old = next((p for p in r.candidates if p in gone), None)
    if old is None and r.how == "config" and not r.note:
        base = posixpath.basename(r.candidates[0])
        old = next((g for g in gone if posixpath.basename(g) == base), None)
    return old


_GONE = "commands naming the files the change deletes or moves"


def _hit(ctx: Context, r: FileRef, more: list[FileRef], gone: dict[str, str | None], caused: bool = False) -> Hit:
    path = r.candidates[0]
    what = _WHAT.get(r.how, "the file")
    old = _gone_of(r, gone)
    if r.how == "config":
        at = f" (line {r.command_line})" if r.command_line != r.line else ""
        where = f"in {r.note}, where the Hydra app looks for its configs" if r.note else "anywhere in the repository"
        head = (
            f"`{r.option or '--config-name'} {r.text}`{at}: there is no `{posixpath.basename(path)}` {where}, so the "
            "run stops before it starts."
        )
    else:
        shown = [r.candidates[0], r.candidates[-1]] if len(r.candidates) > 1 else [r.candidates[0]]
        where = " or ".join(f"`{p}`" for p in shown)
        head = f"`{r.text}`: {what} {where} does not exist in the repository, so the command fails where it runs."
        if r.command_line != r.line:
            head = head.replace("so the command", f"so the command on line {r.command_line}")
    hint = ""
    suggestion = None
    if old is not None:
        new = gone[old]
        moved = "moves it to" if r.how == "cd" else "renames it to"
        hint = f" This change {'deletes it' if new is None else f'{moved} `{new}`'}."
        if new is not None:
            suggestion = _replace(ctx, r, posixpath.relpath(new, posixpath.dirname(old)), old)
    else:
        guess = next((g for p in r.candidates if (g := close_name(ctx, p)) is not None), None)
        if guess is not None:
            hint = f" Did you mean `{guess}`?"
        else:
            elsewhere = [p for p in same_name_elsewhere(ctx, path) if p != path]
            if elsewhere:
                hint = " A file of that name is at " + ", ".join(f"`{p}`" for p in elsewhere) + "."
    listed = ""
    if more:
        lines = ", ".join(str(m.line) for m in more[:_MAX_LISTED]) + (" ..." if len(more) > _MAX_LISTED else "")
        listed = f" Also named on line {lines}."
    return Hit(
        r.source,
        r.line,
        head + hint + listed,
        suggestion=suggestion,
        related=tuple(Related(m.source, m.line, f"also names {r.text}") for m in more),
        caused_by_change=caused,
        # The commands a change leaves naming the files it deletes or moves are one decision left undone (a
        # release retiring scripts its guides still run): one cause, whichever files. A repository path written out
        # (`scripts/ray_cluster/start.sh`, not `./run.sh`) that several guides name is one missing file: one cause.
        cause=_GONE if old is not None else _missing_path_cause(r.text),
    )


def _missing_path_cause(text: str) -> str | None:
    """`missing <path>` for a name written from the repository's root with a folder; None (the message decides)
    for a name relative to where the command runs (`./run.sh`, `run.sh`), which may be another file in each guide."""
    if "/" not in text or text.startswith(("./", "../", "/", "$")):
        return None
    return f"missing {text}"


def _replace(ctx: Context, r: FileRef, new_tail: str, old: str) -> str | None:
    """The line with the deleted file's name replaced by the new one's, when the old name is spelled out once."""
    src = ctx.source(r.source)
    if src is None:
        return None
    line = src.line(r.line)
    base_old, base_new = posixpath.basename(old), posixpath.basename(new_tail)
    if posixpath.dirname(new_tail) not in ("", "."):
        return None
    if r.how == "config" and r.text == posixpath.splitext(base_old)[0]:
        # a Hydra config named without its extension: the new name without it too
        base_old, base_new = r.text, posixpath.splitext(base_new)[0]
    if line.count(base_old) != 1:
        return None
    return line.replace(base_old, base_new)


def _run_elsewhere(ctx: Context, src: SourceFile, refs: list[FileRef]) -> Iterator[Hit]:
    """A name found only beside the script, in a script that its callers run from another folder."""
    folder = posixpath.dirname(src.path)
    candidates = [r for r in refs if r.via_folder and r.how in ("python", "script", "patch", "requirements")]
    if not candidates:
        return
    callers = callers_of(ctx, src.path)
    if not callers or any(not c.cwd or folder in c.cwd for c in callers):
        return  # run from its own folder by some caller, or from an unknown one
    seen: set[str] = set()
    for r in candidates:
        if r.text in seen:
            continue
        seen.add(r.text)
        caller = callers[0]
        cwd = " or ".join(f"`{c or '.'}`" for c in caller.cwd)
        name = r.text.removeprefix("./")
        yield Hit(
            src.path,
            r.line,
            f"`{r.text}` is looked up in the folder the script runs in, not in the script's own folder "
            f"`{folder}` where it is: `{caller.path}` (line {caller.line}) runs this script from {cwd}, so the "
            f'command fails there. Name it from the script\'s folder: `"$(dirname "$0")/{name}"`.',
        )


# The name of someone's working copy of an entry script: the script's name with a version or scratch word added
# (`pretrain_gpt_v2.py` for `pretrain_gpt.py`, `train_new.py`, `train_bak.py`).
_WORKING_COPY = lazyre.compile(r"(.+)_(?:v\d+|new|old|bak|backup|tmp|copy|debug)")
_SH_LAUNCH = r"(?:^|[\s;&|(])(?:python[\d.]*|torchrun|deepspeed)\b[^\n#]*?[\s/]{name}\b"


def _working_copies(ctx: Context, src: SourceFile, refs: list[FileRef]) -> Iterator[Hit]:
    """A bare `x_v2.py` (`x_new.py`, `x_bak.py`) a launcher runs that no file of the repository has and no earlier
    command makes, where this script or a script beside it runs `x.py` by the same bare name: the author's own
    working copy, which no one else has (MindSpeed's ST scripts ran `pretrain_gpt_v2.py` beside the
    `pretrain_gpt.py` of every other script of the folder). `x.py` itself may be another checkout's (Megatron's
    entry scripts, run from its tree): the copy's name is judged against the name the scripts use, not the tree."""
    for r in refs:
        name = r.text.removeprefix("./")
        if r.how != "python" or not r.missing or r.meant or "/" in name or not name.endswith(".py"):
            continue
        m = _WORKING_COPY.fullmatch(name[: -len(".py")])
        if m is None or _PLACEHOLDER.search(name) or same_name_elsewhere(ctx, name, 1):
            continue
        if not (ctx.audit or ctx.is_added_line(r.source, r.line)):
            continue
        launches = {q.line for q in refs if q.how == "python" and q.text == r.text}
        if any(name in line and n not in launches for n, line in enumerate(src.lines, 1)):
            continue  # named elsewhere in the script too: written there (`cat > x_v2.py`), copied, explained
        meant = m.group(1) + ".py"
        where = _launched_beside(ctx, src, refs, meant)
        if where is None:
            continue
        yield Hit(
            src.path,
            r.line,
            f"`{r.text}`: no file of that name is in the repository and no command before makes it, while "
            f"{where} runs `{meant}`: `{name}` reads as a working copy of it that only its author has, so the "
            f"command fails where it runs. Did you mean `{meant}`?",
        )


def _launched_beside(ctx: Context, src: SourceFile, refs: list[FileRef], name: str) -> str | None:
    """Where `name` is run by a launcher by its bare name: this script (`line N`) or a shell script of its folder."""
    for r in refs:
        if r.how == "python" and r.text.removeprefix("./") == name:
            return f"this script (line {r.line})"
    folder = posixpath.dirname(src.path)
    launch = re.compile(_SH_LAUNCH.format(name=re.escape(name)), re.MULTILINE)
    for path in ctx.head_paths():
        if posixpath.dirname(path) != folder or path == src.path or not ctx.kindmap.has(path, kinds.SHELL):
            continue
        other = ctx.source(path)
        if other is not None and launch.search(other.text.replace("\\\n", " ")):
            return f"`{path}` beside it"
    return None
