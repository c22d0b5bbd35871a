"""NPU306: a continued RUN line lacks `&&`, so the next line's command becomes arguments of this one."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator

from npu_review.checks import lazyre
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import ASCEND_DOCKERFILE
from npu_review.checks.model import Severity
from npu_review.checks.parsers.dockerfile import Command, Dockerfile, Instruction, Word
from npu_review.checks.rule import Hit, Rule

# Words that are never an operand of a command in a Dockerfile RUN (nor a package name): a line that starts
# with one of them starts a command.
_COMMANDS = frozenset({"cd", "export", "source", "rm", "mkdir", "chmod", "cp", "mv", "ln", "echo"})
# Words that start a command only when the next word fits (they are also package names: `apt-get install git`,
# `pip install cmake`): word -> test of the word that follows on the same line.
_VERBS_PIP = frozenset({"install", "uninstall", "config", "cache", "download", "list", "show", "freeze", "wheel"})
_VERBS_APT = frozenset({"install", "update", "upgrade", "clean", "remove", "purge", "autoremove", "dist-upgrade"})
_VERBS_GIT = frozenset(
    {"clone", "checkout", "fetch", "submodule", "apply", "config", "pull", "reset", "am", "init", "remote"}
    | {"cherry-pick", "lfs", "switch", "-c", "-C"}
)


def _flag(w: str) -> bool:
    return w.startswith("-")


def _url(w: str) -> bool:
    return _flag(w) or "://" in w or w.startswith("$")


_AMBIGUOUS = {
    "pip": lambda w: w in _VERBS_PIP,
    "pip3": lambda w: w in _VERBS_PIP,
    "uv": lambda w: w in {"pip", "sync", "venv", "run", "add"},
    "conda": lambda w: w in {"install", "create", "clean", "config", "env", "remove", "run"},
    "apt-get": lambda w: w in _VERBS_APT or _flag(w),
    "apt": lambda w: w in _VERBS_APT,
    "yum": lambda w: w in {"install", "update", "clean", "remove"},
    "dnf": lambda w: w in {"install", "update", "clean", "remove"},
    "git": lambda w: w in _VERBS_GIT,
    "python": lambda w: w in {"-m", "-c"} or w.endswith(".py"),
    "python3": lambda w: w in {"-m", "-c"} or w.endswith(".py"),
    "wget": _url,
    "curl": _url,
    "tar": lambda w: _flag(w) or bool(re.fullmatch(r"[xct][a-zA-Z]*f", w)),
    "unzip": lambda w: _flag(w) or w.endswith(".zip"),
    "make": lambda w: _flag(w) or w in {"install", "clean", "all", "build"},
    "cmake": lambda w: _flag(w) or w in {".", ".."} or w.startswith("../"),
    "bash": lambda w: w.endswith((".sh", ".run")) or w in {"-c", "-e", "-ex", "-x"},
    "sh": lambda w: w.endswith((".sh", ".run")) or w in {"-c", "-e", "-ex", "-x"},
    "sed": lambda w: w in {"-i", "-e", "-E", "-n"},
}
_LOCAL_SCRIPT = lazyre.compile(r"\./[\w.+-]+\.(?:sh|run|bin)|\./(?:configure|autogen\.sh|build\.sh|install\.sh)")
# Commands that run their operands as a command: a command word after them is legitimate.
_WRAPPERS = frozenset(
    {"xargs", "sudo", "env", "nohup", "exec", "time", "timeout", "nice", "ionice", "stdbuf", "chroot", "su"}
    | {"gosu", "runuser", "eval", "command", "builtin", "watch", "strace", "parallel", "flock", "setsid"}
    | {"taskset", "numactl", "find", "for", "case", "select", "while", "until", "trap", "ssh"}
)
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "source", "."})
_ASSIGN = lazyre.compile(r"[A-Z_][A-Z0-9_]*=")


class MissingAndInContinuedRun(Rule):
    """A line of a continued RUN ends with `\\` but no `&&`, and the next line starts a new command.

    Why: `\\` only joins the lines. Without `&&` (or `;`, `||`, `|`) the next line's command is not run at all:
    its words become extra arguments of the previous command, which then fails (`git clone URL cd vllm`: too
    many arguments) or, worse, succeeds doing something else (`pip install a pip install b` installs packages
    named `pip`, `install` and `b`). verl's 8.3.rc1 Dockerfiles had `pip uninstall -y triton triton-ascend \\`
    followed by `rm -rf /tmp/*` for a day (#4254, fixed in #4265).

    Not reported: multi-line argument lists (`pip install a \\` / `b \\`, `apt-get install -y \\` / `git \\`),
    option lines (`git clone URL \\` / `--depth 1`), commands that take a command (`xargs`, `sudo`, `env`,
    `find -exec`), heredoc bodies, and comment lines between the two lines.

    Bad:
        RUN git clone https://github.com/vllm-project/vllm-ascend.git \\
            cd vllm-ascend && pip install -e .

    Good:
        RUN git clone https://github.com/vllm-project/vllm-ascend.git && \\
            cd vllm-ascend && pip install -e .

    Fix: end the line with `&& \\`.
    """

    id = "NPU306"
    name = "missing-and-in-continued-run"
    severity = Severity.ERROR
    title = "Missing `&&` in a continued RUN joins two commands"
    kinds = frozenset({ASCEND_DOCKERFILE})

    def check_dockerfile(self, df: Dockerfile, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        escape = re.escape(df.escape)
        for instr in df.of("RUN"):
            if instr.json_args is not None or not instr.continued:
                continue
            offsets = [seg.offset for seg in instr.segments]  # once per RUN, for each of its commands
            for cmd in instr.commands:
                if cmd.in_heredoc:
                    continue
                for prev_line, word in _joined(instr, cmd, offsets):
                    text = " ".join(w.unquoted for w in cmd.words[cmd.start : cmd.start + 2])
                    message = (
                        f"Line {prev_line} ends with `{df.escape}` but no `&&`, so `{word.unquoted} …` on line "
                        f"{word.line} does not run as a command: its words become arguments of `{text} …`. "
                        f"End line {prev_line} with `&& {df.escape}`."
                    )
                    if not ctx.is_added_line(src.path, prev_line) and ctx.is_added_line(src.path, word.line):
                        # The change added the command under an old line: report where the change is.
                        yield Hit(src.path, word.line, message)
                        continue
                    line = src.line(prev_line)
                    suggestion = None
                    if re.search(r"[ \t]" + escape + r"[ \t]*$", line):
                        suggestion = re.sub(r"[ \t]+" + escape + r"[ \t]*$", lambda _m: " && " + df.escape, line)
                    yield Hit(src.path, prev_line, message, suggestion=suggestion)


def _joined(instr: Instruction, cmd: Command, offsets: list[int]) -> Iterator[tuple[int, Word]]:
    """(line that lacks the operator, the command word that starts the next line) for each join in `cmd`;
    `offsets` are those of the RUN's segments.

    Linear in the words: segment lookup by bisection, words grouped by line once (a RUN of 20,000
    continued lines must not take minutes)."""
    words = cmd.words
    start = cmd.start
    if "case" in instr.args:
        # A case branch's pattern (`amd64)`, `*) \`) is no program: the branch's command starts after it.
        while start < len(words) and _closes_pattern(instr, words[start]):
            start += 1
    if start >= len(words):
        return
    prog = words[start].unquoted.rsplit("/", 1)[-1]
    if prog in _WRAPPERS or (prog == "git" and "foreach" in (w.unquoted for w in words)):
        return
    by_line: dict[int, list[int]] = {}
    for i, w in enumerate(words):
        by_line.setdefault(w.line, []).append(i)
    # Index of the first word after the program that is not a flag (for `bash \` + script operand).
    first_operand = next((k for k in range(start + 1, len(words)) if not _flag(words[k].unquoted)), len(words))
    for k in range(start + 1, len(words)):
        seg = _line_start(instr, offsets, words[k])
        if seg is None:
            continue
        if prog in _SHELLS and k <= first_operand:
            continue  # `bash \` / `./install.sh`: the script is bash's operand
        same_line = [words[j] for j in by_line[words[k].line] if j > k]
        if not _starts_command(words[k], same_line):
            continue
        prev = seg - 1
        while prev > 0 and not instr.segments[prev].text.strip():
            prev -= 1  # a line holding only `\`
        yield instr.segments[prev].line, words[k]


def _closes_pattern(instr: Instruction, word: Word) -> bool:
    """`word` is followed by the `)` that ends a case pattern (the flat command list drops that parenthesis)."""
    return instr.args[word.offset + len(word.raw) :].lstrip(" \t").startswith(")")


def _line_start(instr: Instruction, offsets: list[int], word: Word) -> int | None:
    """Index (> 0) of the segment that `word` begins, when nothing but blanks precedes it on its line."""
    i = bisect.bisect_right(offsets, word.offset) - 1
    if i < 0:
        return None
    seg = instr.segments[i]
    if not seg.offset <= word.offset < seg.offset + max(len(seg.text), 1):
        return None
    if i > 0 and not instr.args[seg.offset : word.offset].strip():
        return i
    return None


def _starts_command(w: Word, same_line: list[Word]) -> bool:
    if w.quoted or w.raw != w.unquoted:
        return False
    if _ASSIGN.match(w.raw):  # `VAR=value cmd …` on the new line
        return bool(same_line) and _is_command(same_line[0].unquoted, same_line[1:])
    return _is_command(w.unquoted, same_line)


def _is_command(word: str, rest: list[Word]) -> bool:
    if word in _COMMANDS or _LOCAL_SCRIPT.fullmatch(word):
        return True
    test = _AMBIGUOUS.get(word)
    return test is not None and bool(rest) and test(rest[0].unquoted)
