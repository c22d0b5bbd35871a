"""The reference graph of a revision: what names what, computed once per run and only when a rule asks.

- Files named by commands (`bash x.sh`, `source x`, `python x.py`, `git apply p.patch`, `pip install -r x`,
  `cd dir`, `pytest tests/x`, Hydra's `--config-path`/`--config-name`) in NPU scripts, in the `run:` blocks of
  workflow jobs and in the shell blocks of docs, each resolved against the directory the command runs in
  (`named_files`, `FileRef`); which scripts run which (`script_callers`).
- Workflows: the checkouts of each job and their `ref:` (`checkouts`), what shows that a workflow run is about a
  change under test (`change_refs`), the steps that need the repository's files (`repo_uses`), the values a
  job's matrix gives each key (`matrix_values`), and the runner labels the project's jobs use (`runner_labels`).

An unresolved value (`$VAR` nobody set, `${{ }}`, a folder made by an earlier command) is unknown, never missing.
"""

from __future__ import annotations

import bisect
import dataclasses
import difflib
import functools
import posixpath
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from npu_review.checks import lazyre
from npu_review.checks.analysis.workflows import workflow, workflow_at, workflow_paths
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.fastinit import fast_init
from npu_review.checks.parsers.gitcli import clone_operands
from npu_review.checks.parsers.sh import ASSIGNMENT, Command, Source, Word, commands

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

    from npu_review.checks.parsers.gha.workflow import Job, Step, Workflow
    from npu_review.checks.parsers.yamlmarks import Node

# -- the repository's own names and folders -------------------------------------------------------------------------


def norm_name(name: str) -> str:
    """`MindSpeed-RL`, `mindspeed_rl` -> `mindspeedrl`: how a clone folder and a package name compare."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


# Top-level packages that name a kind of folder rather than the project (`tests/__init__.py`): never a clone's name.
_GENERIC_FOLDERS = frozenset(
    {"test", "tests", "script", "scripts", "tool", "tools", "example", "examples", "benchmark", "benchmarks",
     "docs", "util", "utils", "config", "configs", "csrc", "thirdparty", "vendor", "plugins", "common"}
)  # fmt: skip


def own_names(ctx: Context) -> frozenset[str]:
    """The names a clone of this repository goes by (normalised): the repository's name when known, and its
    top-level Python packages (`vllm_ascend/` for a clone named `vllm-ascend`). From the paths alone."""

    def build() -> frozenset[str]:
        found: set[str] = set(own_packages(ctx))
        _, _, repo = ctx.changeset.repository.partition("/")
        if repo:
            found.add(repo)
        names = {norm_name(n) for n in found}
        return frozenset(n for n in names if len(n) >= 4 and n not in _GENERIC_FOLDERS)

    return ctx.memo(("refs-own-names", "head", ""), build)


def submodules(ctx: Context) -> tuple[str, ...]:
    """Folders of git submodules (their files are not in the tree: unknown, never missing)."""

    def build() -> tuple[str, ...]:
        src = ctx.source(".gitmodules") if ctx.changeset.head.exists(".gitmodules") else None
        if src is None:
            return ()
        return tuple(m.group(1).strip().strip("/") for m in re.finditer(r"(?m)^\s*path\s*=\s*(\S+)", src.text))

    return ctx.memo(("refs-submodules", "head", ""), build)


# The `.gitignore` files the App fetches for the rules that ask `git_ignored`: the root's and those of the three
# folder levels below it (a model zoo may keep one in each of hundreds of deeper folders; an unfetched one ignores
# nothing, so a finding stays).
GITIGNORES = (".gitignore", "*/.gitignore", "*/*/.gitignore", "*/*/*/.gitignore")


def git_ignored(ctx: Context, path: str) -> bool:
    """`path` is one the repository's `.gitignore` files ignore at head (the root's and those of the folders
    above it, the deeper deciding, as git reads them): a file made on the reader's machine (a build's output, an
    archive a script unpacks, a local notes folder), never committed, so a doc or script naming it names no
    missing file. Read with pathspec's gitignore matching."""
    decided: bool | None = None
    for folder in start_folders(posixpath.dirname(path)):
        spec = _ignore_spec(ctx, f"{folder}/.gitignore" if folder else ".gitignore")
        if spec is None:
            continue
        found = spec.check_file(path[len(folder) + 1 :] if folder else path).include
        if found is not None:
            decided = found
    return bool(decided)


def _ignore_spec(ctx: Context, path: str) -> GitIgnoreSpec | None:
    def build() -> GitIgnoreSpec | None:
        if not ctx.changeset.head.exists(path):
            return None
        src = ctx.source(path)
        if src is None:
            return None
        import pathspec  # (20 ms to import: only a run that meets a .gitignore pays it)

        return pathspec.GitIgnoreSpec.from_lines(src.text.splitlines())

    return ctx.memo(("refs-gitignore", "head", path), build)


def is_dir(ctx: Context, path: str) -> bool:
    return path == "" or ctx.is_head_dir(path)


def is_file(ctx: Context, path: str) -> bool:
    return path != "" and ctx.changeset.head.exists(path)


def exists(ctx: Context, path: str) -> bool:
    return is_file(ctx, path) or is_dir(ctx, path)


def in_submodule(ctx: Context, path: str) -> bool:
    return any(path == s or path.startswith(s + "/") for s in submodules(ctx))


def folder_entries(ctx: Context, folder: str) -> frozenset[str]:
    """The names of the files and sub-folders of `folder` at head (kept for the run): found on the range of the
    sorted paths under it, a sub-folder's range skipped once it is named, not by a pass over the tree."""

    def build() -> frozenset[str]:
        paths = ctx.head_paths()
        if not folder:
            # (a path that starts with `/` has two names in the root: "" and the one after it)
            out = {p.partition("/")[0] for p in paths}
            out.update(p[1:].partition("/")[0] for p in paths if p.startswith("/"))
            return frozenset(out)
        prefix = folder + "/"
        n = len(prefix)
        found: set[str] = set()
        i = bisect.bisect_left(paths, prefix)
        while i < len(paths) and paths[i].startswith(prefix):
            name, slash, _ = paths[i][n:].partition("/")
            found.add(name)
            # Every path under `name/` sorts before `name0` ("/" is the character before "0"): the next name.
            i = bisect.bisect_left(paths, prefix + name + "0", i + 1) if slash else i + 1
        return frozenset(found)

    return ctx.memo(("refs-folder-entries", "head", folder), build)


def normpath(path: str) -> str | None:
    """A repository-relative path with `.` and `..` folded; None when it climbs out of the repository."""
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
            continue
        parts.append(part)
    return "/".join(parts)


def join(folder: str, path: str) -> str | None:
    return normpath(f"{folder}/{path}" if folder else path)


def deepest_existing(ctx: Context, path: str) -> str:
    """The longest leading folder of `path` that exists at head ("" for the root)."""
    parts = path.split("/")
    for k in range(len(parts) - 1, 0, -1):
        head = "/".join(parts[:k])
        if is_dir(ctx, head):
            return head
    return ""


# A forge URL of a file at a ref (`https://gitcode.com/Ascend/X/blob/26.0.0/examples/a.sh`): the path after the ref.
_FILE_URL = lazyre.compile(r"https?://[^\s)\]>\"'`]+?/(?:-/)?(?:blob|raw|tree)/[^/\s]+/([^\s)\]>\"'`#?]+)")


def links_a_copy(src: SourceFile, line: int, paths: Iterable[str], before: int = 6) -> bool:
    """Line `line` of a doc, or one of the `before` lines above it, links one of `paths` at a ref of a forge:
    the doc points the reader at a release's copy of the file on purpose (`# script: https://gitcode.com/Ascend/X/
    blob/26.0.0/examples/a.sh` above `bash examples/a.sh`, kept when the release after it dropped the script)."""
    wanted = tuple(paths)
    for n in range(max(1, line - before), min(line, len(src.lines)) + 1):
        text = src.line(n)
        if "://" not in text:
            continue
        for m in _FILE_URL.finditer(text):
            linked = m.group(1).rstrip(".,;:")
            if any(linked == p or linked.endswith("/" + p) for p in wanted):
                return True
    return False


_DIGITS = lazyre.compile(r"\d+")
# A device as a word of a name: `run_cpu.sh` and `run_npu.sh` are two files, one letter apart.
_DEVICE = lazyre.compile(r"(?<![A-Za-z])(?:cpu|gpu|npu|xpu|mlu|dcu|tpu)(?![A-Za-z])", re.I)


_NAME_WORD = lazyre.compile(r"[A-Za-z0-9]+")


def word_replaced(a: str, b: str) -> bool:
    """A word of one file name swapped for another word in the other (`support_dcu_model_list` and
    `support_xpu_model_list`, `fsdp_dp_demo.py` and `fsdp_tp_demo.py`): another file, not a typo, however close the
    letters. A misspelled word (`lassification`, `classification`), a changed number (a version bump) or another
    extension is no swap."""
    wa = [w.lower() for w in _NAME_WORD.findall(posixpath.splitext(a)[0])]
    wb = [w.lower() for w in _NAME_WORD.findall(posixpath.splitext(b)[0])]
    if len(wa) != len(wb):
        return False
    return any(
        x != y and x.isalpha() and y.isalpha() and difflib.SequenceMatcher(None, x, y).ratio() < 0.75
        for x, y in zip(wa, wb, strict=True)
    )


def close_name(ctx: Context, path: str) -> str | None:
    """An existing path that differs from `path` by a typo in its first missing part (one letter, in a name of at
    least eight: `disaggregate_prefill_v1` for `disaggregated_prefill_v1`, `run_gpt-oss.sh` for `run_gpt_oss.sh`),
    the rest of the path followed. None when there is none or two, when the difference is only
    in numbers (`qwen25_7b` for `qwen25_32b` is another file) or in a device word (`run_cpu.sh`, `run_npu.sh`), or
    one name holds the other (`test_x.sh`, `x.sh`)."""
    from rapidfuzz.distance import Levenshtein

    parts = path.split("/")
    have = deepest_existing(ctx, path)
    k = len(have.split("/")) if have else 0
    if k >= len(parts):
        return None
    want = parts[k]
    if len(want) < 8:
        return None
    limit = 1
    close = [
        name
        for name in folder_entries(ctx, have)
        if abs(len(name) - len(want)) <= limit
        and Levenshtein.distance(want, name, score_cutoff=limit) <= limit
        and _DIGITS.sub("0", name) != _DIGITS.sub("0", want)
        and _DEVICE.sub("dev", name) != _DEVICE.sub("dev", want)
        and want not in name
        and name not in want
        and posixpath.splitext(name)[1] == posixpath.splitext(want)[1]
        and not word_replaced(want, name)
    ]
    if len(close) != 1:
        return None
    guess = "/".join([*([have] if have else []), close[0], *parts[k + 1 :]])
    return guess if exists(ctx, guess) else None


def same_name_elsewhere(ctx: Context, path: str, limit: int = 3) -> list[str]:
    """Files at head with the basename of `path` (a file moved to another folder)."""
    base = posixpath.basename(path)
    if not base or "." not in base:
        return []
    return ctx.paths_named(base)[:limit]


# -- commands: one shape for script statements, `run:` blocks and doc blocks --------------------------------------


@fast_init
@dataclass(frozen=True)
class Cmd:
    """A simple command: its words (leading `NAME=value` words left out) and those assignments."""

    words: tuple[Word, ...]
    assigns: tuple[tuple[str, str, int], ...]  # (name, value as written, line)
    line: int

    @property
    def argv(self) -> list[str]:
        return [w.unquoted for w in self.words]

    @property
    def program(self) -> str:
        return self.words[0].unquoted.rsplit("/", 1)[-1] if self.words else ""


def from_commands(found: Iterable[Command]) -> list[Cmd]:
    out: list[Cmd] = []
    for c in found:
        assigns = tuple(
            (name, w.raw[len(name) :].lstrip("+").removeprefix("="), w.line) for name, _, w in c.assignments()
        )
        words = c.words[c.start :]
        if words or assigns:
            out.append(Cmd(tuple(words), assigns, c.line))
    return out


def script_cmds(ctx: Context, src: SourceFile) -> list[Cmd]:
    """The statements of a shell script, those of arms for another device left out (the parse other rules share)."""

    def build() -> list[Cmd]:
        script = ctx.shell(src)
        if script.error is not None:
            return []
        out = []
        for st in script.statements:
            if st.device == "other":
                continue
            assigns = tuple((a.name, a.raw, a.line) for a in st.assigns)
            if st.words or assigns:
                out.append(Cmd(st.words, assigns, st.line))
        return out

    return ctx.parsed("refs-script-cmds", src, lambda _text: build())


def block_cmds(lines: Sequence[tuple[int, str]]) -> list[Cmd]:
    """The commands of shell text given as (physical line, text) pairs (a `run:` block, a doc's code block); the
    same block is read once per process whichever rule asks (NPU118, NPU223 and NPU226 read the same steps)."""
    return list(_block_cmds(tuple(lines))) if lines else []


@functools.lru_cache(maxsize=4096)
def _block_cmds(lines: tuple[tuple[int, str], ...]) -> tuple[Cmd, ...]:
    try:
        return tuple(from_commands(commands(Source.lines(lines))))
    except Exception:  # pragma: no cover - defensive: odd text degrades to nothing
        return ()


# -- values of shell words --------------------------------------------------------------------------------------------

# A script's own folder, as scripts spell it.
_SELF_DIR = lazyre.compile(
    r"""\A(?:\$\(\s*cd\s+["']?\$\(\s*dirname\s+["']?\$\{?(?:0|BASH_SOURCE(?:\[0\])?)\}?["']?\s*\)["']?"""
    r"""(?:\s*(?:&&|;)\s*pwd(?:\s+-P)?)?\s*\)"""
    r"""|\$\(\s*dirname\s+["']?\$\(\s*(?:readlink|realpath)(?:\s+-f)?\s+["']?\$\{?(?:0|BASH_SOURCE(?:\[0\])?)\}?["']?\s*\)["']?\s*\)"""
    r"""|\$\(\s*dirname\s+["']?\$\{?(?:0|BASH_SOURCE(?:\[0\])?)\}?["']?\s*\))\Z"""
)
SELF = "\x01self"  # stands for the script's own folder in a value
ROOT = "\x01root"  # the repository root (`$GITHUB_WORKSPACE`, `${{ github.workspace }}`)
_ROOT_VARS = frozenset({"GITHUB_WORKSPACE"})
_PARAM = lazyre.compile(r"\$\{([A-Za-z_]\w*|\d)(?:(:?[-=])((?:[^{}]|\{[^{}]*\})*))?\}|\$([A-Za-z_]\w*|\d)")


@dataclass
class Values:
    """Literal values of the variables a command sequence assigns once (one value each, or unknown), with the line
    each value was written on."""

    known: dict[str, tuple[str, int]] = field(default_factory=dict)
    unknown: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, cmds: Sequence[Cmd]) -> Values:
        seen: dict[str, set[str]] = {}
        first: dict[str, tuple[str, int]] = {}
        for c in cmds:
            pairs = list(c.assigns)
            if c.program in ("export", "local", "declare", "readonly", "typeset"):
                for w in c.words[1:]:
                    name, eq, value = w.raw.partition("=")
                    if eq and re.fullmatch(r"[A-Za-z_]\w*", name):
                        pairs.append((name, value, w.line))
            if c.program in ("read", "for"):
                for w in c.words[1:]:
                    if re.fullmatch(r"[A-Za-z_]\w*", w.raw):
                        seen.setdefault(w.raw, set()).update({"\x00a", "\x00b"})
                    if c.program == "for":
                        break
            for name, value, line in pairs:
                seen.setdefault(name, set()).add(value)
                first.setdefault(name, (value, line))
        out = cls()
        for name, vals in seen.items():
            if len(vals) == 1:
                out.known[name] = first[name]
            else:
                out.unknown.add(name)
        return out

    def expand(self, raw: str, depth: int = 0) -> tuple[str, int | None] | None:
        """The word's value (quotes removed) and the line of the literal text that decided it (None: as written
        here); None when a part of it is unknown. `$0`'s folder idioms become SELF, `$GITHUB_WORKSPACE` ROOT."""
        if depth > 4:
            return None
        text = raw
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
            if text[0] == "'":
                return text[1:-1], None
            text = text[1:-1]
        else:
            text = text.replace('"', "").replace("'", "")
        head = _leading_subst(text)
        if head is not None and _SELF_DIR.match(head):
            rest = self.expand(text[len(head) :], depth + 1) if text[len(head) :] else ("", None)
            return (SELF + rest[0], rest[1]) if rest is not None else None
        if "`" in text or "$(" in text or "$((" in text:
            return None
        out: list[str] = []
        origin: int | None = None
        pos = 0
        for m2 in _PARAM.finditer(text):
            out.append(text[pos : m2.start()])
            pos = m2.end()
            name = m2.group(1) or m2.group(4)
            op, default = m2.group(2), m2.group(3)
            value: tuple[str, int | None] | None = None
            if name in _ROOT_VARS:
                value = (ROOT, None)
            elif name in self.known and not name.isdigit():
                raw_value, line = self.known[name]
                inner = self.expand(raw_value, depth + 1)
                value = (inner[0], inner[1] if inner[1] is not None else line) if inner is not None else None
            elif op is not None and default is not None and (name.isdigit() or name not in self.unknown):
                inner = self.expand(default, depth + 1)
                value = inner
            if value is None:
                return None
            out.append(value[0])
            if value[1] is not None:
                origin = value[1]
        out.append(text[pos:])
        result = "".join(out)
        if "$" in result or ("{" in result and "}" in result):
            return None
        return result, origin


def _existing_depth(ctx: Context, cwd: str, text: str) -> int:
    """How many folders of the relative path `text`, followed from `cwd`, exist (`..` steps not counted)."""
    cur = cwd
    parts = [p for p in text.split("/") if p not in ("", ".")]
    depth = 0
    for k, part in enumerate(parts):
        if part == "..":
            if not cur:
                return 0
            cur = posixpath.dirname(cur)
            continue
        if k == len(parts) - 1:
            break
        nxt = f"{cur}/{part}" if cur else part
        if not is_dir(ctx, nxt):
            break
        depth += 1
        cur = nxt
    return depth


def _leading_subst(text: str) -> str | None:
    """The `$( … )` at the start of `text`, balanced, else None."""
    if not text.startswith("$("):
        return None
    depth = 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return text[: i + 1]
    return None


# -- files named by commands -------------------------------------------------------------------------------------------

# Programs that run a script given as their first operand, and those that source it.
SCRIPT_RUNNERS = frozenset({"bash", "sh", "zsh", "source", "."})
_PYTHON = lazyre.compile(r"python(?:3(?:\.\d+)?)?\Z")
_LAUNCHERS = frozenset({"torchrun", "deepspeed"})
# Commands that create the path they are given (so a later command may name it though the tree has no such file).
_MAKERS = frozenset({"mkdir", "touch", "ln", "cp", "mv", "rsync", "install"})
# pytest options that take a value in the next word.
_PYTEST_VALUE_OPTS = frozenset(
    {"-k", "-m", "-p", "-c", "-n", "-o", "-W", "--rootdir", "--timeout", "--durations", "--maxfail", "--junitxml",
     "--basetemp", "--deselect", "--ignore", "--ignore-glob", "--log-level", "--reruns", "--count", "--confcutdir",
     "--import-mode", "--tb", "--capture", "--dist", "--html", "--cov", "--cov-report", "--reruns-delay", "-r"}
)  # fmt: skip
_PY_VALUE_OPTS = frozenset({"-W", "-X", "-Q"})
# What a config file's name ends with (the value of a config-file option; anything else is a name or a dict).
_CONFIG_EXTENSIONS = (".json", ".yaml", ".yml", ".toml", ".cfg", ".ini")
# An option whose name says it takes a config (`--optimize_config_path`, `--model-config`, `--train_cfg`): beside
# the facts' list of launchers' and trainers' options, any program's. Its value counts only with a config file's
# extension and only when it reads as a path into this repository (FileRef's rules), like the listed ones'.
_CONFIG_OPTION = lazyre.compile(r"--?[A-Za-z0-9_.-]*(?:config|cfg)[A-Za-z0-9_.-]*", re.IGNORECASE)


# Launch wrappers: programs that run the command after their own options (`nohup python train.py &`, `mpirun -n 8
# python ./tools/train.py`, `taskset -c 0-23 python x.py`). For each, its options that take the next word as value
# (an option written `--opt=value` or `-oL` takes none), and how many operands come before the command (taskset's
# mask, timeout's duration). An option not listed is taken for a flag; the command after it must then read as one
# the Walker follows (a Python, a launcher, a shell with its script, a script path), else nothing is unwrapped.
_WRAPPER_VALUE_OPTS: dict[str, frozenset[str]] = {
    "nohup": frozenset(),
    "time": frozenset({"-f", "--format", "-o", "--output"}),
    "stdbuf": frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "taskset": frozenset(),
    "numactl": frozenset(
        {"-N", "-m", "-C", "-p", "-i", "-P", "-w", "--cpunodebind", "--membind", "--physcpubind", "--preferred",
         "--interleave", "--preferred-many", "--weighted-interleave", "--cpubind"}
    ),
    "env": frozenset({"-u", "--unset"}),
    "mpirun": frozenset(
        {"-n", "-np", "-c", "--n", "--np", "-x", "-H", "-host", "--host", "-hosts", "--hosts", "-hostfile",
         "--hostfile", "-machinefile", "--machinefile", "-f", "-N", "-npernode", "--npernode", "-ppn", "--ppn",
         "-npersocket", "--npersocket", "--map-by", "-map-by", "--bind-to", "-bind-to", "--rank-by", "-rank-by",
         "--prefix", "-prefix", "--output-filename", "-output-filename", "--launch-agent", "-launch-agent",
         "--report-bindings-file", "-bootstrap", "--bootstrap", "-iface", "--iface", "--cpu-set", "--cpus-per-proc",
         "--cpus-per-rank", "-cpus-per-proc", "-cpus-per-rank", "--timeout", "-timeout", "-am", "--am",
         "-tune", "--tune", "--display-map-file", "-errfile-pattern", "-outfile-pattern"}
    ),
}  # fmt: skip
_WRAPPER_VALUE_OPTS["mpiexec"] = _WRAPPER_VALUE_OPTS["mpirun"]
# mpirun's options that take two words (`-mca btl_tcp_if_include eth0`, MPICH's `-genv NAME value`).
_MPI_PAIR_OPTS = frozenset({"-mca", "--mca", "-gmca", "--gmca", "-genv", "-env", "--env"})
# Options by which a wrapper runs the command in another folder, reads it from one string or a file, or has none.
_WRAPPER_ELSEWHERE: dict[str, frozenset[str]] = {
    "mpirun": frozenset({"-wdir", "--wdir", "-wd", "-cwd", "--cwd", "-app", "--app", "-configfile"}),
    "env": frozenset({"-C", "--chdir", "-S", "--split-string"}),
    "taskset": frozenset({"-p", "--pid"}),
}
_WRAPPER_ELSEWHERE["mpiexec"] = _WRAPPER_ELSEWHERE["mpirun"]
# Operands before the command: taskset's mask (or `-c` list), timeout's duration.
_WRAPPER_OPERANDS = {"taskset": 1, "timeout": 1}


def _wrapped_start(argv: Sequence[str], k: int) -> int | None:
    """Where the command the wrapper `argv[k]` runs starts, its options and operands skipped; None when the
    wrapper has no command here (`taskset -p PID`) or runs it elsewhere (`mpirun -wdir D`, `env -C D`)."""
    prog = argv[k].rsplit("/", 1)[-1]
    value_opts = _WRAPPER_VALUE_OPTS[prog]
    elsewhere = _WRAPPER_ELSEWHERE.get(prog, frozenset())
    operands = _WRAPPER_OPERANDS.get(prog, 0)
    k += 1
    while k < len(argv):
        a = argv[k]
        if a == "--":
            k += 1
            break
        if prog == "env" and (a == "-" or ASSIGNMENT.match(a)):
            k += 1
            continue
        if a.startswith("-") and len(a) > 1:
            name = a.split("=", 1)[0]
            if name in elsewhere or (prog == "env" and re.fullmatch(r"-[A-Za-z]*[CS]\w*", a)):
                return None
            if prog in ("mpirun", "mpiexec") and name in _MPI_PAIR_OPTS:
                k += 3
            elif a in value_opts:
                k += 2
            else:
                k += 1
            continue
        if operands:
            operands -= 1
            k += 1
            continue
        break
    return k if k < len(argv) and not operands else None


def unwrapped(c: Cmd) -> Cmd:
    """The command a launch wrapper runs (`nohup python train.py --x 1 &`, `mpirun -n 8 python ./tools/train.py`,
    `timeout 600 bash run.sh`, wrappers in a row), when it is a Python, a launcher, a shell with its script or a
    script path; else `c` itself. Its assignments and line stay `c`'s."""
    argv = c.argv
    k = 0
    while k < len(argv) and argv[k].rsplit("/", 1)[-1] in _WRAPPER_VALUE_OPTS:
        nxt = _wrapped_start(argv, k)
        if nxt is None:
            return c
        k = nxt
    if k == 0 or k >= len(argv):
        return c
    prog = argv[k].rsplit("/", 1)[-1]
    script = "/" in argv[k] and argv[k].endswith((".sh", ".bash", ".py"))
    if not (_PYTHON.fullmatch(prog) or prog in _LAUNCHERS or prog in ("bash", "sh") or script):
        return c
    return Cmd(c.words[k:], c.assigns, c.line)


@dataclass(frozen=True)
class FileRef:
    """A file or folder a command names, resolved against where the command runs."""

    source: str  # the file that holds the command
    line: int  # the line of the name (or of the literal it came from)
    text: str  # the name as the command has it (after expansion)
    how: str  # script | exec (`./x.sh`, a guide's) | python | pytest | patch | requirements | install | cd | config
    candidates: tuple[str, ...]  # repository paths it may be (one per possible working directory)
    found: str | None  # the candidate that exists at head, None when none does
    meant: bool  # it reads as a path into this repository (see `_meant`)
    command_line: int  # the line of the command
    note: str = ""  # for a config: the config folder
    # Found only beside the file that holds the command (not from the root), before any `cd`: a script's own
    # folder is its working directory only when its callers run it from there (see `script_callers`).
    via_folder: bool = False
    candidates_cwd: tuple[str, ...] = ()  # the working directories the command may run in
    option: str = ""  # for a config: the option as the command writes it (`--config-name`, `--config_name`)
    args: tuple[Word, ...] = ()  # for a script run (Python or shell): the words after it (its own command line)
    guessed: bool = False  # found beside the guide only, where the commands before left the folder unknown

    @property
    def missing(self) -> bool:
        return self.found is None


@dataclass
class _State:
    """Where the commands run: the possible working directories (repository paths; empty: unknown), and what
    earlier commands made (so that naming it later is no mistake)."""

    cwd: tuple[str, ...]
    made: set[str] = field(default_factory=set)
    made_anywhere: set[str] = field(default_factory=set)  # base names made in an unknown folder
    opaque: set[str] = field(default_factory=set)  # folders whose contents an earlier command changed unknowably
    # Folders an earlier `git clone` of this repository made (`git clone .../ktransformers.git`): a `cd` into one
    # enters a clone's root, even where the repository has a folder of that name (its package).
    own_clones: set[str] = field(default_factory=set)
    # The last `cd` entered a folder an earlier command made (another project's clone, a download): the commands
    # after it run in that project, not in this repository.
    in_made: bool = False
    # Where the commands ran before the last `cd` (and whether that was inside what an earlier command made): a
    # `cd -` goes back there. None: no `cd` yet (or one whose folder before was not followed).
    before_cd: tuple[tuple[str, ...], bool] | None = None


class Walker:
    """Follows a command sequence (a script, the steps of a job, a doc's blocks in order) and yields the files it
    names. `cwd`: the working directories it may start in (repository paths, "" the root); `here`: the folder
    of the file that holds the commands (SELF in values)."""

    def __init__(self, ctx: Context, source: str, cwd: Sequence[str], here: str, values: Values) -> None:
        self.ctx = ctx
        self.source = source
        self.here = here
        self.values = values
        self.state = _State(tuple(dict.fromkeys(cwd)))
        self.start = self.state.cwd
        self.own = own_names(ctx)
        # A guide's reader runs its scripts from the guide's folder (or the root) when the steps before lose track
        # of where they are (a `cd` into an unknown folder): such a script is taken from there (`guessed`).
        self.guess_here = False

    # -- paths -----------------------------------------------------------------------------------------------
    def resolve(self, text: str) -> tuple[str, ...] | None:
        """The repository paths `text` may name from the current working directories; None when unknown."""
        if not text or any(ch in text for ch in "*?[]{}$`~<>|;&\x00") or "://" in text:
            return None
        if "\u2026" in text or any(len(part) > 2 and not part.strip(".") for part in text.split("/")):
            return None  # `tests/st/...`: a stand-in for the path the reader picks (hw-native-sys/simpler, rs-r77)
        if text.startswith(SELF):
            p = join(self.here, text[len(SELF) :].lstrip("/"))
            return (p,) if p is not None else None
        if text.startswith(ROOT):
            p = normpath(text[len(ROOT) :].lstrip("/"))
            return (p,) if p is not None else None
        stripped = self._own_prefixed(text)
        if stripped is not None:
            return (stripped,)
        if text.startswith("/"):
            return None
        if not self.state.cwd:
            return None
        out = []
        for c in self.state.cwd:
            p = join(c, text)
            if p is not None:
                out.append(p)
        return tuple(dict.fromkeys(out)) or None

    def _own_prefixed(self, text: str) -> str | None:
        """`../MindSpeed-RL/x/y`, `/vllm-workspace/vllm-ascend/x/y`, `vllm-ascend/x/y`: `x/y` in this repository,
        when a folder named like this repository precedes a path whose first folder exists at the root."""
        if not self.own:
            return None
        parts = [p for p in text.split("/") if p not in ("", ".")]
        for k in range(len(parts) - 2, -1, -1):
            if parts[k] == ".." or norm_name(parts[k]) not in self.own:
                continue
            if k == 0 and not text.startswith("/") and is_dir(self.ctx, parts[0]):
                return None  # `verl/trainer/x` in verl: a folder of the repository, not a clone of it
            if not all(p == ".." for p in parts[:k]) and not text.startswith("/"):
                return None
            rest = parts[k + 1 :]
            if rest and is_dir(self.ctx, rest[0]):
                return normpath("/".join(rest))
            return None
        return None

    def _own_root(self, text: str) -> bool:
        """The path ends in a folder named like this repository (`vllm-ascend`, `../MindSpeed-RL`,
        `/vllm-workspace/vllm-ascend/`): the root of a clone of it."""
        parts = [p for p in text.split("/") if p not in ("", ".")]
        if not parts or norm_name(parts[-1]) not in self.own:
            return False
        return text.startswith("/") or all(p == ".." for p in parts[:-1])

    def _made(self, path: str) -> bool:
        """`path` (a candidate) or a folder above it was made, or its folder's contents were changed unknowably."""
        st = self.state
        parts = path.split("/")
        for k in range(1, len(parts) + 1):
            if "/".join(parts[:k]) in st.made:
                return True
        for k in range(0, len(parts)):
            if "/".join(parts[:k]) in st.opaque:
                return True
        return posixpath.basename(path) in st.made_anywhere or parts[0] in st.made_anywhere

    def _meant(self, text: str, paths: tuple[str, ...], how: str) -> bool:
        """The name reads as a path into this repository: a clone of it precedes the path, at least two folders
        of the path exist from where the command runs (`tests/special_npu/`; one for a Hydra config folder), or
        it is a typo of a name beside it. A bare file name or a path whose first folder is missing may be
        anything else (a file made elsewhere, another repository's, a package layout assembled at build time)."""
        if self._own_prefixed(text) is not None:
            return True
        need = 1 if how == "config" else 2
        starts: tuple[str, ...]
        if text.startswith(SELF):
            starts, rest = (self.here,), text[len(SELF) :]
        elif text.startswith(ROOT):
            starts, rest = ("",), text[len(ROOT) :]
        else:
            starts, rest = self.state.cwd, text
        if any(_existing_depth(self.ctx, c, rest) >= need for c in starts):
            return True
        return any(close_name(self.ctx, p) is not None for p in paths)

    def ref(self, text: str, line: int, how: str, command_line: int, origin: int | None = None) -> FileRef | None:
        paths = self.resolve(text)
        if paths is None:
            return None
        if any(in_submodule(self.ctx, p) for p in paths):
            return None
        found = next((p for p in paths if exists(self.ctx, p)), None)
        if found is None and any(self._made(p) or git_ignored(self.ctx, p) for p in paths):
            return None  # made by an earlier step, or on the reader's machine (the repository ignores it)
        meant = found is not None or self._meant(text, paths, how)
        shown = text.replace(SELF, "$(dirname $0)").replace(ROOT, "$GITHUB_WORKSPACE")
        via_folder = (
            found is not None
            and self.state.cwd == self.start
            and self.here != ""
            and [p for p in paths if exists(self.ctx, p)] == [join(self.here, text)]
        )
        return FileRef(
            self.source,
            origin or line,
            shown,
            how,
            paths,
            found,
            meant,
            command_line,
            via_folder=via_folder,
            candidates_cwd=self.state.cwd,
        )

    # -- commands --------------------------------------------------------------------------------------------------
    def walk(self, cmds: Sequence[Cmd]) -> Iterator[FileRef]:
        for c in cmds:
            yield from self.command(c)

    def _value(self, w: Word) -> tuple[str, int | None] | None:
        return self.values.expand(w.raw)

    def command(self, c: Cmd) -> Iterator[FileRef]:
        if not c.words:
            return
        prog = c.program
        argv = c.argv
        words = c.words
        if prog in ("cd", "pushd"):
            yield from self._cd(c)
            return
        if prog == "popd":
            self.state.before_cd = (self.state.cwd, self.state.in_made)
            self.state.cwd = ()
            return
        yield from self._config_files(c)
        c = unwrapped(c)  # `nohup python x.py &`, `mpirun -n 8 python x.py`: the command it runs
        prog, argv, words = c.program, c.argv, c.words
        if prog in SCRIPT_RUNNERS:
            k = 1
            while k < len(argv) and argv[k].startswith("-"):
                if argv[k] in ("-c",):
                    return
                k += 1
            if k < len(words):
                named = [dataclasses.replace(r, args=c.words[k + 1 :]) for r in self._named(words[k], "script", c)]
                if self.guess_here and all(r.missing and not r.meant for r in named):
                    named = self._beside(words[k], c, k + 1, "script") or named
                yield from named
            return
        if self.guess_here and words[0].unquoted.endswith((".sh", ".bash")) and "/" in words[0].unquoted:
            # `./build.sh --pkg` in a guide: the script its reader runs, for the options it passes (NPU117); as a
            # name that must exist it is not judged (how "exec").
            named = [dataclasses.replace(r, args=c.words[1:]) for r in self._named(words[0], "exec", c)]
            if all(r.missing and not r.meant for r in named):
                named = self._beside(words[0], c, 1, "exec") or named
            yield from (r for r in named if not r.missing)
            return
        if _PYTHON.fullmatch(prog) or prog in _LAUNCHERS:
            yield from self._python(c)
            return
        if prog in ("pytest", "py.test"):
            yield from self._pytest(c, 1)
            return
        if prog == "git" and len(argv) > 2 and argv[1] in ("apply", "am"):
            for w in words[2:]:
                if not w.unquoted.startswith("-"):
                    yield from self._named(w, "patch", c)
            self._makes(c)
            return
        if prog in ("pip", "pip3", "uv") or (prog.startswith("pip3.")):
            yield from self._pip(c)
            return
        self._makes(c)

    def _config_files(self, c: Cmd) -> Iterator[FileRef]:
        """The config files a command's options name (`accelerate launch --config_file x.yaml`, a trainer's
        `--deepspeed ds_z3.json`, a server's `--optimize_config_path rules/x.yaml`): only a value with a config
        file's extension (`--deepspeed zero3` is a name)."""
        options = self.ctx.facts.shell_tools.config_file_options
        words = c.words
        for k in range(1, len(words)):
            a = words[k].unquoted
            name, eq, _ = a.partition("=")
            if name not in options and not _CONFIG_OPTION.fullmatch(name):
                continue
            if eq:
                value = self.values.expand(words[k].raw.split("=", 1)[1])
                line = words[k].line
            elif k + 1 < len(words):
                value = self._value(words[k + 1])
                line = words[k + 1].line
            else:
                continue
            if value is None or not value[0].lower().endswith(_CONFIG_EXTENSIONS):
                continue
            r = self.ref(value[0], line, "config-file", c.line, value[1])
            if r is not None:
                yield r

    def _named(self, w: Word, how: str, c: Cmd) -> Iterator[FileRef]:
        value = self._value(w)
        if value is None:
            return
        text, origin = value
        r = self.ref(text, w.line, how, c.line, origin)
        if r is not None:
            yield r

    def _cd(self, c: Cmd) -> Iterator[FileRef]:
        st = self.state
        here = (st.cwd, st.in_made)
        words = [w for w in c.words[1:] if not w.unquoted.startswith("-") or w.unquoted == "-"]
        if words and words[0].raw == "-":
            # `cd -`: back where the commands ran before the last `cd` (a guide's `cd torchair/x; pip install .;
            # cd -` returns to the repository before `bash run_train.sh`).
            st.cwd, st.in_made = st.before_cd if st.before_cd is not None else ((), False)
            st.before_cd = here
            return
        yield from self._enter(c)
        st.before_cd = here

    def _enter(self, c: Cmd) -> Iterator[FileRef]:
        was_made = self.state.in_made
        self.state.in_made = False
        words = [w for w in c.words[1:] if not w.unquoted.startswith("-") or w.unquoted == "-"]
        if not words:
            self.state.cwd = ()  # `cd` alone: the home folder
            return
        value = self._value(words[0])
        if value is None or value[0] == "-":
            self.state.cwd = ()
            return
        text, origin = value
        head, _, rest = text.strip("/").partition("/")
        # `cd cann-recipes-x/models/y` right after `git clone .../cann-recipes-x.git`: a folder of this repository's
        # own clone (the owner on GitCode may differ from GitHub's), not of what another project's clone made
        # (hicann/cann-recipes-spatial-intelligence's Hunyuan3D guide; the held-out draw's label it missed).
        own_folder = bool(rest) and not text.startswith(("/", "~", "$")) and head in self.state.own_clones
        paths = self.resolve(text)
        cloned = posixpath.basename(text.rstrip("/")) in self.state.own_clones
        if self._own_root(text) and (cloned or not any(is_dir(self.ctx, p) for p in paths or ())):
            st = self.state
            st.cwd = ("",)  # `cd vllm-ascend`, `cd /vllm-workspace/vllm-ascend`: a clone of this repository
            if st.own_clones:
                # In the clone, its own folder of that name (the package) is the repository's, not what the clone
                # made, and a `cd` of that name enters it.
                st.made = {p for p in st.made if posixpath.basename(p) not in st.own_clones}
                st.made_anywhere -= st.own_clones
                st.own_clones.clear()
            return
        first = text.strip("/").split("/", 1)[0]
        # A relative `cd` from inside what an earlier step made (another project's clone: `cd mindspore/model_zoo/x`,
        # then `mkdir -p data && cd data`) stays in it (JeffDing/MyAscendCode's README ran MindSpore's own
        # `eval.py` there; sweep-r23, judged false).
        inside = was_made and not text.startswith(("/", "~", "..", "$"))
        self.state.in_made = not own_folder and (
            inside or first in self.state.made_anywhere or any(self._made(p) for p in paths or ())
        )
        if paths is None:
            self.state.cwd = ()
            return
        r = self.ref(text, words[0].line, "cd", c.line, origin)
        found = [p for p in paths if is_dir(self.ctx, p)]
        if not found and self.state.cwd != self.start and not text.startswith(("/", "~", "$")):
            # Not there from where the commands before left the reader, but there from where the text starts: a
            # guide's blocks are often alternatives, each from the start ("Install: cd mllm-kernel; pip install .",
            # then "Editable install: cd mllm-kernel; pip install -e ."; rs-r78, judged false as a missing folder).
            here, self.state.cwd = self.state.cwd, self.start
            again = self.resolve(text)
            self.state.cwd = here
            found = [p for p in again or () if is_dir(self.ctx, p)]
            if found:
                self.state.cwd = tuple(found)
                return
        if r is not None and r.missing:
            yield r
        self.state.cwd = tuple(found)

    def _python(self, c: Cmd) -> Iterator[FileRef]:
        argv = c.argv
        k = 1
        module: str | None = None
        script: Word | None = None
        while k < len(argv):
            a = argv[k]
            if a in ("-m",) and k + 1 < len(argv):
                module = argv[k + 1]
                k += 2
                break
            if a == "-c":
                return
            if a in _PY_VALUE_OPTS:
                k += 2
                continue
            if a.startswith("-"):
                k += 1
                continue
            if a.endswith(".py") or c.program not in _LAUNCHERS:
                script = c.words[k]
                k += 1
                break
            k += 1
        if module in ("pytest", "py.test"):
            yield from self._pytest(c, k)
            return
        if module is not None and module in ("pip",):
            yield from self._pip(c)
            return
        file_ref: FileRef | None = None
        if script is not None and script.unquoted.endswith(".py"):
            named = [dataclasses.replace(r, args=c.words[k:]) for r in self._named(script, "python", c)]
            if self.guess_here and all(r.missing and not r.meant for r in named):
                named = self._beside(script, c, k, "python") or named
            for r in named:
                file_ref = r
                yield r
        yield from self._hydra(c, file_ref, module, k)

    def _beside(self, script: Word, c: Cmd, k: int, how: str) -> list[FileRef]:
        """The guide's own script of that name (its words from `k` on are the script's), where the commands before
        leave the folder unknown or point where no such file is (and the name reads as no path into this
        repository): the reader runs it from the guide's folder or the repository's root, whichever has it (not
        both), unless the last `cd` entered a folder an earlier step made (another project's clone)."""
        value = self._value(script)
        if value is None or value[0].startswith("/") or self.state.in_made:
            return []  # the last `cd` entered what an earlier step made (another project's clone): not ours
        found = [p for f in dict.fromkeys((self.here, "")) if (p := join(f, value[0])) and is_file(self.ctx, p)]
        if len(found) != 1:
            return []  # none, or one beside the guide and one at the root: which one the reader runs is unknown
        beside = found[0]
        line = value[1] or script.line
        return [FileRef(self.source, line, script.unquoted, how, (beside,), beside, True, c.line,
                        args=c.words[k:], guessed=True)]  # fmt: skip

    def _pytest(self, c: Cmd, start: int) -> Iterator[FileRef]:
        argv = c.argv
        k = start
        while k < len(argv):
            a = argv[k]
            if a.startswith("-"):
                k += 2 if a in _PYTEST_VALUE_OPTS else 1
                continue
            w = c.words[k]
            k += 1
            path = a.split("::", 1)[0]
            if "/" not in path and not path.endswith(".py"):
                continue
            value = self.values.expand(w.raw.split("::", 1)[0] if "::" in w.raw else w.raw)
            if value is None:
                continue
            r = self.ref(value[0].split("::", 1)[0], w.line, "pytest", c.line, value[1])
            if r is not None:
                yield r

    def _pip(self, c: Cmd) -> Iterator[FileRef]:
        argv = c.argv
        if "install" not in argv and "download" not in argv and "wheel" not in argv:
            return
        k = 1
        while k < len(argv):
            a = argv[k]
            if a in ("-r", "--requirement", "-c", "--constraint") and k + 1 < len(argv):
                yield from self._named(c.words[k + 1], "requirements", c)
                k += 2
                continue
            if a.startswith(("--requirement=", "--constraint=")):
                value = self.values.expand(a.split("=", 1)[1])
                if value is not None:
                    r = self.ref(value[0], c.words[k].line, "requirements", c.line, value[1])
                    if r is not None:
                        yield r
            elif a.startswith("-r") and len(a) > 2 and not a.startswith("--"):
                value = self.values.expand(a[2:])
                if value is not None:
                    r = self.ref(value[0], c.words[k].line, "requirements", c.line, value[1])
                    if r is not None:
                        yield r
            elif a in ("-e", "--editable") and k + 1 < len(argv):
                yield from self._named(c.words[k + 1], "install", c)
                k += 2
                continue
            elif a.startswith("./") or a.startswith("../"):
                yield from self._named(c.words[k], "install", c)
            k += 1

    def _hydra(self, c: Cmd, file_ref: FileRef | None, module: str | None, start: int) -> Iterator[FileRef]:
        """`--config-path P` / `--config-name N` of a Hydra app in this repository: the config N(.yaml) in P, P
        relative to the app's Python file (as Hydra reads it); without P, in the app's conventional config folder
        (judged only when no file of that name exists anywhere). `--config-dir` adds folders: then unknown. An app
        that hands its own `--config_path` and `--config_name` to Hydra (`compose(config_name=args.config_name)`)
        is read the same way. A config path that stays unknown (`$(dirname $0)`) leaves the
        name judged only when no file of that name exists anywhere in the repository."""
        argv = c.argv
        app: str | None = None
        if file_ref is not None:
            app = file_ref.found
        elif module is not None and re.fullmatch(r"[\w.]+", module):
            cand = module.replace(".", "/") + ".py"
            app = cand if is_file(self.ctx, cand) else None
        if app is None or not any(a.startswith(("--config", "-cn", "-cp")) for a in argv[start:]):
            return
        aliases: dict[str, tuple[str, ...]] = {
            "--config-path": ("--config-path", "-cp"),
            "--config-name": ("--config-name", "-cn"),
        }
        given = {a.split("=", 1)[0] for a in argv[start:]}
        if {"--config_path", "--config_name"} <= given:
            # the app's own options, handed to Hydra's compose (`--config_name` alone is other programs' too:
            # transformers' `run_clm.py --config_name gpt2` names a model config)
            aliases = {
                "--config-path": ("--config-path", "-cp", "--config_path"),
                "--config-name": ("--config-name", "-cn", "--config_name"),
            }
        opts: dict[str, tuple[Word, str, str]] = {}
        k = start
        while k < len(argv):
            a = argv[k]
            for name, spellings in aliases.items():
                if a in spellings and k + 1 < len(argv):
                    opts[name] = (c.words[k + 1], c.words[k + 1].raw, a)
                elif "=" in a and a.split("=", 1)[0] in spellings:
                    w = c.words[k]
                    opts[name] = (w, w.raw.split("=", 1)[1], a.split("=", 1)[0])
            k += 1
        if "--config-name" not in opts:
            return
        if any(a in ("--config-dir", "-cd") or a.startswith("--config-dir=") for a in argv):
            return
        name_word, name_raw, option = opts["--config-name"]
        name_value = self.values.expand(name_raw)
        if name_value is None:
            return
        name = name_value[0]
        file = name if name.endswith((".yaml", ".yml")) else name + ".yaml"
        path_value = self.values.expand(opts["--config-path"][1]) if "--config-path" in opts else None
        folders: list[str] = []
        if "--config-path" in opts and path_value is None:
            # Where it points is unknown: only a name no file of the repository has is surely missing.
            yml = file[: -len(".yaml")] + ".yml" if file.endswith(".yaml") else None
            if "/" in file or same_name_elsewhere(self.ctx, file, 1) or (yml and same_name_elsewhere(self.ctx, yml, 1)):
                return
            target = join(posixpath.dirname(app), file) or file
        else:
            if path_value is not None:
                if path_value[0].startswith(("/", SELF, ROOT)):
                    return
                folder = join(posixpath.dirname(app), path_value[0])
                if folder is None or not is_dir(self.ctx, folder):
                    return
                folders = [folder]
            else:
                # No config path on the command line: the app's own (`@hydra.main(config_path=...)`), by convention
                # a `config`/`configs` folder beside the app or one level up. Judged only when the name is nowhere.
                folders = _config_folders(self.ctx, app)
                if not folders or same_name_elsewhere(self.ctx, file, 1):
                    return
            first = join(folders[0], file)
            if first is None or any(is_file(self.ctx, join(f, file) or "") for f in folders):
                return
            target = first
        yield FileRef(
            self.source,
            name_value[1] or name_word.line,
            name,
            "config",
            (target,),
            None,
            True,
            c.line,
            note=" or ".join(f"`{f}/`" for f in folders),
            option=option,
        )

    def _makes(self, c: Cmd) -> None:
        """Record what the command makes: folders and files a later command may name."""
        argv = c.argv
        prog = c.program
        st = self.state
        targets: list[str] = []
        if prog in _MAKERS:
            operands = [a for a in argv[1:] if not a.startswith("-")]
            if prog in ("mkdir", "touch"):
                targets = operands
            elif operands:
                targets = [operands[-1]]
        elif prog == "git" and len(argv) > 2 and argv[1] == "clone":
            found = clone_operands(argv[2:])
            if found is not None:
                url, target, _ = found
                targets = [target]
                if norm_name(url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")) in self.own:
                    st.own_clones.add(posixpath.basename(target.rstrip("/")))
        elif prog in ("wget", "curl"):
            for k, a in enumerate(argv):
                if a in ("-O", "-o", "--output", "--output-document", "-P") and k + 1 < len(argv):
                    targets.append(argv[k + 1])
                elif a.startswith("http"):
                    st.made_anywhere.add(a.rstrip("/").rsplit("/", 1)[-1].split("?")[0])
        elif prog in ("tar", "unzip", "make", "cmake", "ninja") or prog.endswith(".run"):
            for k, a in enumerate(argv):
                if a in ("-C", "-d", "--directory", "-B") and k + 1 < len(argv):
                    targets.append(argv[k + 1])
            if not targets:
                st.opaque.update(st.cwd)
        for t in targets:
            value = self.values.expand(t) if "$" in t else (t, None)
            if value is None:
                continue
            text = value[0].rstrip("/")
            paths = self.resolve(text)
            if paths:
                st.made.update(paths)
            if text:
                st.made_anywhere.add(posixpath.basename(text))


# -- the files each kind of source names ------------------------------------------------------------------------------


def start_folders(here: str) -> tuple[str, ...]:
    """Where a script or a doc's commands may run when nothing says: the repository root, its own folder, or a
    folder between (a script under `backends/npu/tools/` run from `backends/npu`). A name is missing only when it
    is missing from all of them."""
    parts = here.split("/") if here else []
    return ("", *("/".join(parts[: k + 1]) for k in range(len(parts))))


def script_refs(ctx: Context, src: SourceFile) -> list[FileRef]:
    """Files a shell script's commands name (arms for another device left out), from the repository root or the
    script's folder, following its `cd`s."""

    def build() -> list[FileRef]:
        cmds = script_cmds(ctx, src)
        if not cmds:
            return []
        here = posixpath.dirname(src.path)
        return list(Walker(ctx, src.path, start_folders(here), here, Values.of(cmds)).walk(cmds))

    return ctx.parsed("refs-script", src, lambda _text: build())


def job_refs(ctx: Context, wf: Workflow, job: Job) -> list[FileRef]:
    """Files the `run:` steps of a job name after it checks out this repository into the workspace root, each step
    from its working directory."""
    return ctx.memo(("refs-job", wf.path, job.id), lambda: _job_refs(ctx, wf, job))


def _job_refs(ctx: Context, wf: Workflow, job: Job) -> list[FileRef]:
    own = next((c for c in checkouts(job) if c.own), None)
    if own is None or own.path:
        return []
    out: list[FileRef] = []
    walker: Walker | None = None
    clones: set[str] = set()  # folders other checkouts fill (`path: ./vllm-empty`)
    for step in job.steps[own.index + 1 :]:
        if is_checkout(step):
            co = next(c for c in checkouts(job) if c.index == step.index)
            if not co.path:
                break  # the workspace holds another tree from here on
            folder = normpath(co.path.strip())
            if folder:
                clones.add(folder)
                if walker is not None:
                    walker.state.made.add(folder)
            continue
        if step.run is None:
            continue
        cmds = block_cmds(step.run.text_lines())
        if not cmds:
            continue
        wd = _working_directory(step, job, wf)
        values = Values.of(cmds)
        for name, node in (*wf.env.items(), *job.env.items(), *step.env.items()):
            if node.is_scalar and "${{" not in node.value and name not in values.known and name not in values.unknown:
                values.known[name] = (node.value, node.line)
        if walker is None:
            walker = Walker(ctx, wf.path, (wd,) if wd is not None else (), "", values)
            walker.state.made.update(clones)
        else:
            walker.values = values
            walker.state.cwd = (wd,) if wd is not None else ()
            walker.state.before_cd = None  # a step is a new shell: no folder for `cd -` to go back to
            walker.start = walker.state.cwd
        out.extend(walker.walk(cmds))
    return out


DOC_LANGUAGES = frozenset({"bash", "sh", "shell", "zsh", "console", "", "text"})
_ASCEND_WORDS = lazyre.compile(r"\b(?:ascend|npu|cann|hccl|torch_npu)\b|昇腾")
# Commands the walker reads: a doc with none of these in its text names no file the rule judges.
_DOC_NEEDLES = ("bash ", "sh ", "source ", ". ", "python", "git apply", "git am", "pip", "cd ", "pytest", "torchrun")


def doc_names_ascend(ctx: Context, src: SourceFile) -> bool:
    """A doc that speaks of Ascend: the repository is Ascend-only, or the text names Ascend, the NPU, CANN or
    HCCL (the files its commands name are this repository's Ascend material). Looser than
    `checks.analysis.scripts.doc_is_ascend`, which asks for an Ascend marker in the text (its commands run on NPU).
    """
    return ctx.ascend_only() or ctx.parsed("doc-names-ascend", src, _names_ascend)


def _names_ascend(text: str) -> bool:
    low = text.lower()
    return ("ascend" in low or "npu" in low or "cann" in low or "hccl" in low or "昇腾" in low) and (
        _ASCEND_WORDS.search(low) is not None
    )


def doc_refs(ctx: Context, src: SourceFile) -> list[FileRef]:
    """Files named by the shell (and unlabeled or console) code blocks of a doc, the blocks read in order as one
    session that starts at the repository root or the doc's folder."""

    def build() -> list[FileRef]:
        from npu_review.checks.parsers.codeblocks import console_commands, shell_blocks
        from npu_review.checks.parsers.markdown import flavor_of

        flavor = flavor_of(src.path)
        if flavor is None or not any(n in src.text for n in _DOC_NEEDLES):
            return []
        blocks = shell_blocks(src.text, flavor, DOC_LANGUAGES)
        if not blocks:
            return []
        here = posixpath.dirname(src.path)
        walker: Walker | None = None
        out: list[FileRef] = []
        for block in blocks:
            if block.language in ("console", "text", ""):
                block = console_commands(block) if any(t.lstrip().startswith("$ ") for _, t in block.lines) else block
            cmds = block_cmds(block.lines)
            if not cmds:
                continue
            if walker is None:
                walker = Walker(ctx, src.path, start_folders(here), here, Values.of(cmds))
                walker.guess_here = True
            else:
                walker.values = Values.of(cmds)
            out.extend(walker.walk(cmds))
        return out

    return ctx.parsed("refs-doc", src, lambda _text: build())


def ascend_command_refs(ctx: Context, src: SourceFile) -> tuple[FileRef, ...]:
    """The file names of the file's Ascend commands: an NPU script's (as it runs on NPU, or run by an Ascend job),
    an Ascend job's steps (a workflow in a forge's workflow folder: kinds.workflow_host), an Ascend doc's blocks.
    The commands NPU118 checks the named files of, and NPU117 the options they pass to the repository's scripts.
    Once per file and revision."""
    return ctx.parsed("ascend-command-refs", src, lambda _text: tuple(_ascend_command_refs(ctx, src)))


def _ascend_command_refs(ctx: Context, src: SourceFile) -> Iterator[FileRef]:
    from npu_review.checks import kinds
    from npu_review.checks.analysis.device import ascend_jobs, npu_reading

    if kinds.SHELL in src.kinds:
        if npu_reading(ctx, src) is None and src.path not in workflow_scripts(ctx):
            return
        yield from script_refs(ctx, src)
        return
    if src.kinds & {kinds.WORKFLOW, kinds.ASCEND_WORKFLOW}:
        if kinds.ASCEND_WORKFLOW not in src.kinds or kinds.workflow_host(src.path) is None:
            return
        wf = workflow(ctx, src.path)
        if wf is None:
            return
        npu = ascend_jobs(ctx, src.path)
        for job in wf.jobs.values():
            if npu is None or job.id in npu:
                yield from job_refs(ctx, wf, job)
        return
    if src.kinds & {kinds.DOCS, kinds.MARKUP} and doc_names_ascend(ctx, src) and not is_plan_doc(src):
        yield from doc_refs(ctx, src)


# A design or planning doc: one under a folder of specs, plans, RFCs, proposals or decision records whose name is
# dated or numbered (`docs/superpowers/specs/2026-08-18-x-design.md`, `rfcs/0007-x.md`, `.planning/…`), or any doc
# whose head gives it a status of one (`**Status:** Approved for implementation`, `Status: Draft`).
_PLAN_FOLDER = lazyre.compile(
    r"(?i)(?:^|/)\.?(?:specs?|plans?|planning|rfcs?|proposals?|designs?|design[-_]docs?|adrs?|decisions|roadmaps?)/"
)
_PLAN_NAME = lazyre.compile(r"(?:^|/)(?:\d{4}-\d{2}-\d{2}|\d{4}[-_])[^/]*$")
_PLAN_STATUS = lazyre.compile(
    r"(?im)^[\s>*_#|-]*(?:status|状态)[*_]*\s*[:：][\s*_]*"
    r"(?:draft|proposed|proposal|approved|accepted|under review|in review|in progress|planned|planning|wip|rfc"
    r"|草案|提议|评审中|已批准|待实现)\b"
)


def is_plan_doc(src: SourceFile) -> bool:
    """A design or planning doc (see _PLAN_FOLDER): its commands are the ones the work it plans will make run
    (`python3 tests/bench/bench_ep.py`, a file its components table says to create; an option still to add), not
    a guide to run now, and a dated plan is history once done. Its links are still links (NPU502)."""
    if _PLAN_FOLDER.search(src.path) and _PLAN_NAME.search(src.path):
        return True
    head = src.text[:3000]
    return ("tatus" in head or "状态" in head) and _PLAN_STATUS.search(head) is not None


@dataclass(frozen=True)
class Caller:
    """A place that runs a repository script, and the working directories it runs it from (repository paths)."""

    path: str
    line: int
    cwd: tuple[str, ...]  # empty: unknown


_FIND_NAME = lazyre.compile(r"\bfind\s+(?P<dir>[^\s|;&)]+)[^\n|;&)]*?-name\s+[\"']?(?P<pat>[^\"'\s)]+)")
_RUN_VAR = lazyre.compile(r"(?m)^\s*(?:bash|sh|source|\.)\s+[\"']?\$\{?\w+\}?[\"']?\s*(?:$|[;&|#])")


def workflow_scripts(ctx: Context) -> frozenset[str]:
    """Repository scripts that the jobs of Ascend workflows run (a generic test script an NPU job calls runs on NPU)."""

    def build() -> frozenset[str]:
        from npu_review.checks import kinds

        out: set[str] = set()
        for path in workflow_paths(ctx, "head"):
            if not ctx.has_kind(path, kinds.ASCEND_WORKFLOW):
                continue
            wf = workflow(ctx, path)
            if wf is None:
                continue
            for job in wf.jobs.values():
                out.update(r.found for r in job_refs(ctx, wf, job) if r.how == "script" and r.found is not None)
        return frozenset(out)

    return ctx.memo(("refs-workflow-scripts", "head", ""), build)


# Folders that hold another project's files: a vendored library or a synced skill set (`external/<project>/`,
# `third_party/<project>/`), or a project unpacked from its forge's archive (`models-master/`, GitHub's name for a
# branch's zip). What is wrong in their docs is the other project's to fix.
_VENDOR_FOLDERS = frozenset({"external", "third_party", "thirdparty", "3rdparty", "vendor", "vendored"})
_ARCHIVE_FOLDER = lazyre.compile(r"[A-Za-z][\w.]*-(?:master|main)\Z")


def vendored_root(path: str) -> str | None:
    """The folder of the other project that holds `path` (`external/cannbot`, `x/models-master`), None when the
    file is the repository's own."""
    parts = path.split("/")
    for i, part in enumerate(parts[:-1]):
        if part in _VENDOR_FOLDERS and i + 1 < len(parts) - 1:
            return "/".join(parts[: i + 2])
        if _ARCHIVE_FOLDER.match(part):
            return "/".join(parts[: i + 1])
    return None


def callers_of(ctx: Context, target: str) -> list[Caller]:
    """Who runs the repository script `target` (see `script_callers`). An audit asks of every script: the index of
    the whole tree, built once. A change asks of the few scripts it touches: only the files whose text names
    `target` (its file name: every caller of the 672 found at the HEADs of verl, vllm-ascend, MindSpore's and
    Ascend's model zoos and three hicann projects does) or runs what a `find` gives are read, found by the tree's
    own search where it has one. A 21-file change of a 20,000-file model zoo parsed its 993 scripts for this: 2.4
    of its 4.6 s."""
    name = posixpath.basename(target)
    if ctx.audit or not name:
        return script_callers(ctx).get(target, [])

    def among(paths: Iterable[str]) -> list[str]:
        return ctx.paths_mentioning((name, "find"), paths)

    return ctx.memo(("refs-callers-of", "head", target), lambda: _script_callers(ctx, among).get(target, []))


def script_callers(ctx: Context) -> dict[str, list[Caller]]:
    """For each repository script that another script or an Ascend workflow job runs (`bash x.sh`, `source x`, or
    a `find DIR -name 'x*.sh'` whose results a loop runs): who runs it, and from where."""
    return ctx.memo(("refs-script-callers", "head", ""), lambda: _script_callers(ctx, None))


def _script_callers(ctx: Context, among: Callable[[Iterable[str]], list[str]] | None) -> dict[str, list[Caller]]:
    """`script_callers` from the files of each family that `among` keeps (every file when None): a script that
    runs another names it, or runs what a `find` gives."""
    from npu_review.checks import kinds
    from npu_review.checks.globs import match

    out: dict[str, list[Caller]] = {}
    scripts = list(ctx.paths_of_kind(kinds.SHELL))
    for path in scripts if among is None else among(scripts):
        src = ctx.source(path)
        if src is None or not any(w in src.text for w in ("bash", "sh ", "source", ". ")):
            continue
        for r in script_refs(ctx, src):
            if r.how == "script" and r.found is not None and r.found != path:
                out.setdefault(r.found, []).append(Caller(path, r.command_line, r.candidates_cwd))
        if "find" in src.text and _RUN_VAR.search(src.text):
            here = posixpath.dirname(path)
            for m in _FIND_NAME.finditer(src.text):
                line = src.text.count("\n", 0, m.start()) + 1
                roots = {d for c in ("", here) if (d := join(c, m.group("dir").strip("\"'"))) is not None}
                for target in scripts:
                    name = posixpath.basename(target)
                    if (
                        target != path
                        and match(name, m.group("pat"))
                        and any(r == "" or target.startswith(r + "/") for r in roots)
                    ):
                        out.setdefault(target, []).append(Caller(path, line, ("", here)))
    flows = [p for p in workflow_paths(ctx, "head") if ctx.has_kind(p, kinds.ASCEND_WORKFLOW)]
    for path in flows if among is None else among(flows):
        wf = workflow(ctx, path)
        if wf is None:
            continue
        for job in wf.jobs.values():
            for r in job_refs(ctx, wf, job):
                if r.how == "script" and r.found is not None:
                    out.setdefault(r.found, []).append(Caller(path, r.command_line, r.candidates_cwd))
    return out


def _config_folders(ctx: Context, app: str) -> list[str]:
    """Folders named `config`/`configs` beside a Hydra app or one level up that hold YAML files."""
    here = posixpath.dirname(app)
    out: list[str] = []
    for base in (here, posixpath.dirname(here)):
        for name in ("config", "configs"):
            folder = f"{base}/{name}" if base else name
            if is_dir(ctx, folder) and any(e.endswith((".yaml", ".yml")) for e in folder_entries(ctx, folder)):
                out.append(folder)
    return list(dict.fromkeys(out))


# -- workflows ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Checkout:
    """An `actions/checkout` step of a job."""

    job: str
    index: int  # Step.index
    line: int  # the step's first line
    uses_line: int
    ref: Node | None  # `with: ref:`
    sparse: bool  # `sparse-checkout:`: a few chosen files, not the tree
    repository: str | None  # `with: repository:` as written; None: this repository
    path: str | None  # `with: path:`

    @property
    def own(self) -> bool:
        """It checks out this repository (no `repository:`, or `${{ github.repository }}`)."""
        r = (self.repository or "").replace(" ", "")
        return not r or r in ("${{github.repository}}",)


def is_checkout(step: Step) -> bool:
    uses = (step.uses or "").strip()
    return uses.split("@", 1)[0] == "actions/checkout"


def checkouts(job: Job) -> list[Checkout]:
    out: list[Checkout] = []
    for step in job.steps:
        if not is_checkout(step):
            continue
        uses_node = step.node.get("uses")
        repo = step.with_.get("repository")
        path = step.with_.get("path")
        out.append(
            Checkout(
                job=job.id,
                index=step.index,
                line=step.line,
                uses_line=uses_node.line if uses_node is not None else step.line,
                ref=step.with_.get("ref"),
                sparse=step.with_.get("sparse-checkout") is not None,
                repository=repo.value if repo is not None and repo.is_scalar else None,
                path=path.value if path is not None and path.is_scalar else None,
            )
        )
    return out


# Triggers whose run checks out the default branch unless told otherwise, though it is about another commit.
CHANGE_TRIGGERS = ("workflow_run", "repository_dispatch", "pull_request_target", "issue_comment")
# What names the commit or branch under test in each of them.
_CHANGE_EXPR = lazyre.compile(
    r"github\.event\.workflow_run\.(?:head_sha|head_branch|head_commit\.id)\b"
    r"|github\.event\.client_payload(?:\.[\w-]+)*\.(?:[\w-]*_?sha|head_ref|ref|head\.(?:sha|ref))\b"
    r"|github\.event\.pull_request\.head\.(?:sha|ref)\b"
    r"|refs/pull/",
    re.I,
)


def change_refs(wf: Workflow, text: str) -> list[str]:
    """The expressions of the workflow that name the commit or branch under test (`github.event.workflow_run.head_sha`,
    `github.event.client_payload.pull_request.head.sha`, `refs/pull/...`), in order of appearance. A mere mention
    of the pull request (its URL, its number) does not say the run means to test its code."""
    return list(dict.fromkeys(m.group(0) for m in _CHANGE_EXPR.finditer(text)))


def change_triggers(wf: Workflow) -> list[str]:
    return [t for t in CHANGE_TRIGGERS if t in wf.triggers]


@dataclass(frozen=True)
class RepoUse:
    """A command of a step that needs the repository's files in the working directory."""

    line: int
    what: str


# Package installs of the working directory's project.
_INSTALL_HERE = frozenset({".", "./", ".[test]"})


def repo_uses(ctx: Context, step: Step, job: Job, wf: Workflow) -> list[RepoUse]:
    """The commands of a `run:` step that read files of the repository from the workspace (a relative path whose
    first folder is one of the repository's, `pip install -e .`, `-r requirements.txt`); [] when the step runs
    elsewhere (`working-directory` outside the workspace, a `cd` away first)."""
    if step.run is None:
        return []
    wd = _working_directory(step, job, wf)
    if wd is None:
        return []
    cmds = block_cmds(step.run.text_lines())
    out: list[RepoUse] = []
    cwd: str | None = wd
    for c in cmds:
        if not c.words:
            continue
        if c.program in ("cd", "pushd", "popd"):
            target = c.argv[1] if len(c.argv) > 1 else ""
            cwd = (
                join(cwd, target)
                if cwd is not None and target and not target.startswith(("/", "$", "~", "-"))
                else None
            )
            continue
        if cwd is None:
            break
        for k, w in enumerate(c.words[1:], start=1):
            a = w.unquoted
            prev = c.argv[k - 1]
            if prev in ("-e", "--editable") and re.fullmatch(r"\.(?:/)?(?:\[[\w,-]+\])?", a):
                out.append(RepoUse(w.line, f"{c.program} install -e {a}"))
                break
            if a in _INSTALL_HERE and c.program in ("pip", "pip3", "uv") and "install" in c.argv:
                out.append(RepoUse(w.line, f"{c.program} install {a}"))
                break
            value = a.split("=", 1)[1] if a.startswith("-") and "=" in a else a
            if not value or value.startswith(("-", "/", "$", "~", "http")) or any(ch in value for ch in "*?$`"):
                continue
            p = join(cwd, value)
            if p is None or ("/" not in p and not is_file(ctx, p)):
                continue
            if exists(ctx, p) and (is_file(ctx, p) or "/" in value):
                out.append(RepoUse(w.line, f"{' '.join(c.argv[:k])} {a}"))
                break
    return out


def _working_directory(step: Step, job: Job, wf: Workflow) -> str | None:
    """The step's working directory as a repository path ("" the root); None when outside the workspace or unknown."""
    for node in (
        step.node.get("working-directory"),
        job.node.at("defaults", "run", "working-directory"),
        wf.root.at("defaults", "run", "working-directory"),
    ):
        if node is None:
            continue
        if not node.is_scalar:
            return None
        value = node.value.strip()
        for prefix in ("${{ github.workspace }}", "${{github.workspace}}", "$GITHUB_WORKSPACE", "${GITHUB_WORKSPACE}"):
            if value.startswith(prefix):
                value = value[len(prefix) :].lstrip("/")
                break
        if value.startswith(("/", "$", "~")):
            return None
        return normpath(value)
    return ""


def matrix_values(job: Job) -> dict[str, set[str]] | None:
    """Each matrix key and the values its legs give it (include and exclude applied); None when the matrix is not
    static (`fromJSON`, expressions)."""
    from npu_review.checks.parsers.gha.workflow import matrix_combinations

    if job.matrix_node is None:
        return {}
    legs = matrix_combinations(job.matrix_node)
    if legs is None:
        return None
    out: dict[str, set[str]] = {}
    for leg in legs:
        for k, v in leg.items():
            out.setdefault(k, set()).add(v)
    return out


def runner_labels(ctx: Context, rev: str) -> dict[str, int]:
    """Every literal `runs-on` label of the workflows at `rev` (matrix values of runner keys included), with how
    many jobs use it."""

    def build() -> dict[str, int]:
        from npu_review.checks.parsers.gha.runners import runner_label_sets

        out: dict[str, int] = {}
        for path in workflow_paths(ctx, rev):
            wf = workflow_at(ctx, path, rev)
            if wf is None:
                continue
            for job in wf.jobs.values():
                seen: set[str] = set()
                for labels in runner_label_sets(wf, job):
                    seen.update(labels or ())
                for label in seen:
                    out[label] = out.get(label, 0) + 1
        return out

    return ctx.memo(("refs-runner-labels", rev, ""), build)


# -- Python import paths a config names ---------------------------------------------------------------------------
# A YAML value that is a dotted Python path (`worker_cls: pkg.worker.npu.Worker`, `- pkg.sched.Scheduler`), quoted
# or not, alone on its line after a key or a list dash.
_DOTTED_VALUE = lazyre.compile(
    r"""^\s*(?:-\s+)?(?:[\w.-]+\s*:\s+)?(["']?)([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)\1\s*(?:\#.*)?$"""
)
# A path whose folder or file name says NPU or Ascend (`stage_configs/npu/x.yaml`, `x_ascend.yaml`).
_NPU_PATH = lazyre.compile(r"(?i)(?:^|[/_.-])(?:npu|ascend)(?=$|[/_.-]|\d)")


@dataclass(frozen=True)
class ModuleRef:
    """A dotted Python path of this repository's own package that a config names, and whether it resolves."""

    source: str
    line: int
    dotted: str
    module: str  # the file it should be in (`pkg/sched/scheduler.py`): the module of the name's owner
    resolves: bool


def own_packages(ctx: Context) -> dict[str, str]:
    """This repository's top-level Python packages, by name: the folder each is in ("" the root, or "src")."""

    def build() -> dict[str, str]:
        out: dict[str, str] = {}
        for p in ctx.head_paths():
            if not p.endswith("/__init__.py"):
                continue
            parts = p.split("/")
            if len(parts) == 2 or (len(parts) == 3 and parts[0] == "src"):
                out.setdefault(parts[-2], "" if len(parts) == 2 else "src")
        return out

    return ctx.memo(("refs-own-packages", "head", ""), build)


def is_npu_config(path: str) -> bool:
    """A YAML config whose path says it is for the NPU (a device folder or a device word in its name)."""
    return path.endswith((".yaml", ".yml")) and _NPU_PATH.search(path) is not None


def _module_file(ctx: Context, root: str, parts: Sequence[str]) -> str | None:
    """The file (or package folder) of the module `parts`, None when the head has neither."""
    base = "/".join(([root] if root else []) + list(parts))
    for candidate in (base + ".py", base + "/__init__.py"):
        if is_file(ctx, candidate):
            return candidate
    return base if is_dir(ctx, base) else None  # a namespace package


def module_refs(ctx: Context, src: SourceFile) -> list[ModuleRef]:
    """The dotted paths of this repository's own packages that an NPU config names, each resolved against the head
    tree's paths (no file is read): the name itself is a module, or its last part is an attribute (a class) of a
    module, or of a class of a plain module (`pkg.mod.Outer.Inner`). Another package's names (`torch.float16`) are
    not this repository's to check."""

    def build(text: str) -> list[ModuleRef]:
        packages = own_packages(ctx)
        if not packages or not is_npu_config(src.path) or not any(f"{p}." in text for p in packages):
            return []
        out: list[ModuleRef] = []
        for n, line in enumerate(text.splitlines(), 1):
            m = _DOTTED_VALUE.match(line)
            if m is None:
                continue
            parts = m.group(2).split(".")
            root = packages.get(parts[0])
            if root is None:
                continue
            owner = parts[:-1]
            found = _module_file(ctx, root, parts) or _module_file(ctx, root, owner)
            if found is None and len(parts) > 2:
                # `pkg.mod.Outer.Inner`: a class of a class, when `pkg.mod` is a plain module (its text is not read:
                # the App fetches no Python file for this; a package's `__init__` names no class this way).
                outer = _module_file(ctx, root, parts[:-2])
                if outer is not None and outer.endswith(".py") and not outer.endswith("/__init__.py"):
                    found = outer
            want = "/".join(([root] if root else []) + owner) + ".py"
            out.append(ModuleRef(src.path, n, m.group(2), want, found is not None))
        return out

    return ctx.parsed("refs-modules", src, build)


__all__ = [
    "CHANGE_TRIGGERS",
    "Caller",
    "Checkout",
    "Cmd",
    "FileRef",
    "ModuleRef",
    "RepoUse",
    "Values",
    "Walker",
    "ascend_command_refs",
    "block_cmds",
    "callers_of",
    "change_refs",
    "change_triggers",
    "checkouts",
    "doc_names_ascend",
    "doc_refs",
    "is_checkout",
    "is_npu_config",
    "is_plan_doc",
    "job_refs",
    "matrix_values",
    "module_refs",
    "own_names",
    "own_packages",
    "repo_uses",
    "runner_labels",
    "script_callers",
    "script_cmds",
    "script_refs",
    "vendored_root",
    "workflow",
    "workflow_scripts",
]
