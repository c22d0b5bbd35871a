"""NPU111: a backslash continuation that the shell does not continue (blanks after the `\\`, a comment line
inside the command)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Iterator, Sequence

from npu_review.checks import lazyre
from npu_review.checks.analysis.references import vendored_root
from npu_review.checks.analysis.vllm_launches import doc_shell_blocks
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import DOCS, NPU_SCRIPT, SHELL
from npu_review.checks.messages import shorten
from npu_review.checks.model import Severity
from npu_review.checks.parsers.markdown import flavor_of
from npu_review.checks.parsers.sh import LogicalLine, Source, open_after, split_logical
from npu_review.checks.rule import Hit, Rule

# An unescaped backslash followed by blanks at the end of a logical line's text (comments already removed).
_BLANKS_AFTER_BACKSLASH = lazyre.compile(r"(?<!\\)(?:\\\\)*\\[ \t]+$")
# A line that starts with a config override (`algorithm.adv_estimator=grpo \  # what it does`), not with a
# program: a listing of options with notes, which no one runs as it is.
_FRAGMENT = lazyre.compile(r"[ \t]*[+~]?[A-Za-z_][\w-]*(?:\.[\w-]+)+=")
# A command as its author wrote it (its first line, before any `\`) that starts with an option
# (`--ptx_coef 0.0 \  # what it does`): a listing of a script's options with notes (no shell command starts
# with an option).
_OPTION_LISTING = lazyre.compile(r"[ \t]*--?[A-Za-z]")


# A block headed as the explanation of a command's parameters (`# 启动配置参数说明`, `# Service launch parameter
# explanation`): one option per line with what it means, the runnable command given after it.
_EXPLAINED = lazyre.compile(
    r"[ \t]*#.*(?:参数说明|参数解释|配置说明"
    r"|(?i:\b(?:parameters?|options?|arguments?)[ \t]+(?:explanation|description)s?\b"
    r"|\b(?:explanation|description)s?[ \t]+of[ \t]+(?:the[ \t]+)?(?:parameters|options|arguments)\b))"
)
# A comment that is an ellipsis (`# ...`, `# … other configurations …`): in a docs block, where an excerpt leaves
# options out (sii-research/siiRL's reward guide, judged noise in sweep-r18).
_ELLIPSIS_NOTE = lazyre.compile(r"[ \t]*#[ \t]*(?:\.\.\.|…)")


def _listing(first: int, physical: dict[int, str]) -> bool:
    """The command whose logical line starts on `first` is, as written, an option listing: walking back over the
    lines its author continued (a `\\`, with or without a note after it; comment lines between them), its first
    line starts with an option."""
    start, k = first, first - 1
    while k in physical:
        text = physical[k]
        if text.lstrip().startswith("#"):
            k -= 1  # a comment line: inside the command if a continued line is above it
        elif _CONTINUED.search(text):
            start = k
            k -= 1
        else:
            break
    return _OPTION_LISTING.match(physical.get(start, "")) is not None


# A line its author continued: it ends with an unescaped `\\`, blanks or a note after it aside.
_CONTINUED = lazyre.compile(r"(?<!\\)(?:\\\\)*\\[ \t]*(?:#.*)?$")


class ShellContinuationBroken(Rule):
    """A multi-line shell command is cut where its author meant it to go on.

    Why: a backslash continues a command only when it is the last character of the line. With a blank after
    it (`\\ `, easy to miss in an editor and invisible in rendered docs) or a comment after it
    (`-v /data:/data \\   # the weights`), the backslash escapes that blank and the command ends on this
    line: the command gets an extra argument (a lone space) and every following line runs as a command of
    its own (`-v: command not found`), so the container starts without the mounts and devices listed
    below. A `# comment` line between continued lines ends the command the same way. vllm-ascend's
    tutorials shipped all three in `docker run` and proxy launch commands (fixed as "broken docker run
    command").

    Bad:
        docker run --rm \\
            --device /dev/davinci0 \\
            # the model weights
            -v /data/models:/models \\·
            -it $IMAGE bash

    Good:
        # the model weights are mounted at /models
        docker run --rm \\
            --device /dev/davinci0 \\
            -v /data/models:/models \\
            -it $IMAGE bash

    The last argument line can keep a `\\` its author meant to drop: a command whose argument lines are indented
    deeper than its first line, followed by a line back at the first line's indentation that starts with a shell
    builtin or keyword (`set +x`, `export`, `cd`, `fi`, `done`), has that line joined as more arguments, and the
    command meant there never runs (MindSpeed's quick start: `torchrun ... --distributed-backend nccl \\` then
    `set +x`).

    A `\\` can also be missing: a line ends without one while the next line starts with an option or an override
    (`python3 -m sglang.bench_serving` then `--backend sglang-oai`, `data.train_batch_size=32` then
    `trainer.total_epochs=3 \\`), or a blank line follows a `\\`. The shell ends the command there and runs the
    next line as a command of its own, which fails (`--backend: command not found`): no command is named like an
    option, and `a.b=c` is no assignment. Only after a line that runs a program with arguments (not an assignment,
    a builtin such as `export`, a lone file name, `......`); not when the line ends with an operator (`|`, `&&`,
    cmd.exe's `^`), is `...` (options left out), or is followed by a case pattern (`--help)`), a program's help
    text (`-h, --help   show this help`, `--local_dir LOCAL_DIR`) or a blank line of its own; not inside
    here-documents.

    Fix: delete the blanks after the backslash; move comments above the command (or to the end of its last
    line); delete the last backslash of a command that should end there; add the missing one, or delete the
    blank line inside the command; an option line after a container's image (`ctr run ... busybox:latest sh`, then
    `--mount ...`) goes before the image, since after it a `\\` would hand it to the container's command. A line
    that lacks its `\\` and ends with a note
    (`--min-pixels 393216   # 512x28x28`) needs the note dropped as well: a `\\` after `#` is part of the note,
    and a continued command holds none.

    One finding per command: a command annotated line by line (`--tp 2 \\   # TP size` on every line) is cut on
    each of those lines, but it has one fix; the finding is on the first cut and names the others. The cuts of
    one kind that a change writes are one cause, in one block or across guides and scripts: one inline comment,
    on the first, lists the others.

    Where: shell scripts, and `bash`/`sh`/`shell`/`zsh` code blocks of Markdown and reStructuredText docs. A docs
    block whose cut line is its last (an excerpt showing which line of a script to edit) and files with CRLF line
    ends are not reported. A doc of another project copied in (`third_party/<project>/`, `external/<project>/`, an
    unpacked `models-master/`) is that project's to fix: a notice.
    An assignment alone (`WORKERS=$((GPUS / TP))`) runs no program: the override line after it is no option of
    it. Not reported: listings of config overrides or options with notes (lines that start with `a.b=value \\
    # note` or `--option value \\   # note`, not with a program; blanks alone after the `\\` of such a listing
    are still reported: a pasted listing breaks there), a comment line after the command's last line (nothing
    follows it that the command would lose), in a docs block a comment that is an ellipsis (`# ...`: options an
    excerpt leaves out), a comment line after `| \\`, `&& \\` or `|| \\` (the shell reads
    on past it for the command the operator needs), an assignment of a value to fill in with its hint below
    (`MODEL_PATH=<PATH_OF_THE_MODEL> \\ ` over `(e.g., /x.txt)`), a `\\` that ends a Windows folder path (`copy x
    %USERPROFILE%\\.claude\\skills\\  # Windows`, a cmd.exe line beside its bash twin), backslashes inside quotes or
    here-documents, a docs block's code-annotation marker after the `\\` (`\\ # (1)`, mkdocs-material's), `console`
    and
    unlabeled code blocks, output pasted into a shell block (`ls -l` lines, a help listing from its `usage:`,
    `Usage of prog:` or `optional arguments:` line on, or with no header from the first of three or more rows
    of an option, a gap and words that describe it, a line that ends a sentence: `Applying... Done!`), a
    command's synopsis (a block with `[--option VALUE]` lines, a note after each or not), a `\\` after a lone `--`
    (a launcher that runs the command written after it: `launch.py ... -- \\` + `source env.sh \\&\\& python
    ...`), a block headed as the explanation of the parameters
    (`# 启动配置参数说明`, `# parameter explanation`: one option per line, the command given after it),
    Dockerfiles
    (Docker drops comment lines inside a continued instruction and allows blanks after its `\\`).
    """

    id = "NPU111"
    name = "shell-continuation-broken"
    severity = Severity.WARNING
    title = "Shell line continuation broken by a trailing blank or a comment, missing, or left on a command's last line"
    kinds = frozenset({SHELL, NPU_SCRIPT, DOCS})

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if src.crlf or "\r\n" in src.text or ("\\" not in src.text and not _OPTION_LINE.search(src.text)):
            return  # nothing to continue; or a CRLF file, whose carriage returns are a problem of another kind
        flavor = flavor_of(src.path)
        if flavor is not None:
            root = vendored_root(src.path)
            for block in doc_shell_blocks(ctx, src):
                if block.lines and _EXPLAINED.match(block.lines[0][1]):
                    continue  # `# 启动配置参数说明`: a listing that explains each option, not a command to run
                if any("\\" in t or _OPTION_START.match(t) for _, t in block.lines):
                    physical = dict(block.lines)
                    found = _one_per_command(
                        _check(src.path, Source.lines(block.lines), physical, excerpt=True), physical
                    )
                    yield from found if root is None else (_upstream(hit, root) for hit in found)
            return
        if SHELL in src.kinds or NPU_SCRIPT in src.kinds:
            physical = dict(enumerate(src.lines, start=1))
            yield from _one_per_command(_check(src.path, Source.file(src.text), physical), physical)


def _upstream(hit: Hit, root: str) -> Hit:
    """A command of another project's doc, copied in (`third_party/x/`, an unpacked `models-master/`): that
    project's to fix (rs-r81: a vendored upstream README's cut commands, judged noise)."""
    return dataclasses.replace(
        hit, severity=Severity.NOTICE, message=f"{hit.message} This doc is a copy of another project's (`{root}/`)."
    )


# A physical line that its author meant to continue: it ends with `\` (blanks or a comment after it aside),
# or it is a comment line.
_MEANT_TO_CONTINUE = lazyre.compile(r"^\s*#|" + _CONTINUED.pattern)


def _one_per_command(hits: Iterable[tuple[str, Hit]], physical: dict[int, str]) -> Iterator[Hit]:
    """One finding per command its author wrote: a command annotated line by line (`--tp 2 \\  # TP size` on
    every line) is cut on each of them, but the fix is one. Later cuts of the command are named in the first
    finding."""
    ordered = sorted(hits, key=lambda h: h[1].line)
    i = 0
    while i < len(ordered):
        what, first = ordered[i]
        j = i + 1
        while j < len(ordered) and all(
            _MEANT_TO_CONTINUE.search(physical.get(n, "")) or _OPTION_START.match(physical.get(n + 1, ""))
            for n in range(ordered[j - 1][1].line, ordered[j][1].line)
        ):
            j += 1
        again = ordered[i + 1 : j]
        if again:
            lines = [hit.line for _, hit in again]
            where = f"line{'s' if len(lines) > 1 else ''} {_series([str(n) for n in lines])}"
            if any(kind != what for kind, _ in again):
                where = _series([f"line {hit.line} ({kind})" for kind, hit in again])
            first = dataclasses.replace(first, message=f"{first.message} The same command is cut again on {where}.")
        # The cause is the kind of cut: the cuts of one kind that a change writes, in one block or in several
        # guides (a merge of a branch's docs cut command after command with a blank after the `\`), are one habit
        # and one comment, the first, listing the others; the blind judges of a replay sweep called every repeat
        # noise.
        yield first
        i = j


# An assignment of a value the reader fills in (`MODEL_GEN_PATH=<PATH_OF_THE_KNOWLEDGE_GENERATION> \`, a hint below
# it: Megatron-LM's msdp scripts, copied into Gen-Verse/OpenClaw-RL; rs-r71, judged false): the script runs only once
# filled in, and taking the blank out would join the hint to it.
_PLACEHOLDER_ASSIGNMENT = lazyre.compile(r"\s*[A-Za-z_]\w*=<[^<>\s]+>\s*\\\s*$")


# A word ending in `\` that is a Windows folder path (`%USERPROFILE%\.claude\skills\`, `C:\tools\`, `..\out\`): a
# cmd.exe line beside its bash twin in a guide's block, whose last `\` separates folders (kunpengcompute/skills,
# sweep-r24, judged false).
_WINDOWS_FOLDER = lazyre.compile(
    r"(?:^|\s)(?:%\w+%|[A-Za-z]:|\.{1,2}|[\w.-]+)(?:\\[\w.-]+)*\\[\w.-]+\\$|(?:^|\s)(?:%\w+%|[A-Za-z]:)\\$"
)


# A comment that is only a code annotation's marker (`# (1)`, `# (2)!`): mkdocs-material (`content.code.annotate`)
# turns it into a numbered bubble beside the line, the note written below the block (PaddlePaddle/PaddleScience's
# guide after each `\` of a placeholder command, on purpose; sweep-r31, judged noise).
_ANNOTATION = lazyre.compile(r"[ \t]*#[ \t]*\(\d+\)!?[ \t]*")


def _series(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _check(path: str, source: Source, physical: dict[int, str], excerpt: bool = False) -> Iterator[tuple[str, Hit]]:
    """`excerpt`: the text is a docs code block, which may show one line of a longer command (the line to edit):
    a cut after which the block has nothing more to lose is not reported there."""
    logical, comment_breaks, heredocs = split_logical(source)
    in_heredoc = {n for a, b in heredocs for n in range(a, b + 1)}
    for ll in logical:
        text = ll.text.rstrip("\n")
        # (the pattern ends with a blank: a line that does not cannot match, and most lines are long)
        if not text.endswith((" ", "\t")) or ll.end_line in in_heredoc or not _BLANKS_AFTER_BACKSLASH.search(text):
            continue
        line = ll.end_line
        text = physical.get(line, "")
        if _PLACEHOLDER_ASSIGNMENT.match(text):
            continue  # `MODEL_PATH=<PATH_OF_THE_MODEL> \` then `(e.g., /x.txt)`: a fill-in and its hint, not a command
        cut = text.rfind("\\")
        if _WINDOWS_FOLDER.search(text[: cut + 1]):
            continue  # `copy x %USERPROFILE%\.claude\skills\  # Windows`: the `\` ends a Windows folder path
        comment = "#" in text[cut:]
        if comment and excerpt and _ANNOTATION.fullmatch(text[cut + 1 :]):
            continue  # `\ # (1)!`: a docs site's code annotation (mkdocs-material), which the page renders as a marker
        if comment and (_FRAGMENT.match(ll.text) or _listing(ll.line, physical)):
            continue  # a listing of overrides with notes; bare blanks after `\` still break a pasted listing
        after = "a comment" if comment else "blanks"
        nxt = _next_content(physical, line)
        if excerpt and nxt is None:
            continue  # the block shows a line of a longer command (an excerpt): nothing here follows it
        if nxt is not None and _continues(physical[nxt], physical.get(ll.line, "")):
            effect = (
                f"the command ends on this line and line {nxt} onwards run as separate commands"
                " (the options there are lost)"
            )
        else:
            effect = "the command gets an extra argument, a lone space"
        yield (
            "a comment after the `\\`" if comment else "blanks after the `\\`",
            Hit(
                path,
                line,
                f"The `\\` here is followed by {after}, so it escapes a space instead of continuing the line: "
                f"{effect}. Remove everything after the backslash"
                + (" and put the comment above the command." if comment else "."),
                suggestion=None,
                cause="a comment after the `\\`" if comment else "blanks after the `\\`",
            ),
        )
    for ll in logical:
        joined = _joined_command(ll.line, ll.end_line, physical, in_heredoc)
        if joined is None:
            continue
        word = physical[joined].split()[0]
        yield (
            "a `\\` before the next command",
            Hit(
                path,
                joined - 1,
                f"This line's `\\` continues the command onto line {joined}, which starts a new command "
                f"(`{physical[joined].strip()}`): `{word}` and what follows become arguments of this command, and "
                "the new command never runs. Remove the last backslash.",
                cause="a `\\` that joins the next command",
            ),
        )
    yield from _missing_backslashes(path, logical, physical, in_heredoc)
    for line in comment_breaks:
        if line in in_heredoc:
            continue
        if excerpt and _ELLIPSIS_NOTE.match(physical.get(line, "")):
            continue  # `# ...` in a docs block marks options the excerpt leaves out, not a note to move
        nxt = _next_content(physical, line, skip_comments=True)
        command = max((ll for ll in logical if ll.line < line), key=lambda ll: ll.line, default=None)
        if command is None or _FRAGMENT.match(command.text) or _listing(command.line, physical):
            continue
        if nxt is None or not _continues(physical[nxt], physical.get(command.line, "")):
            continue
        above = line - 1
        while physical.get(above, "").lstrip().startswith("#"):
            above -= 1
        if physical.get(above, "").strip() == "\\":
            continue  # a `\` alone on its line continues an empty command: the comment ends nothing (a spacer)
        if _AFTER_OPERATOR.search(physical.get(above, "")):
            continue  # `cmd | \` + `# note`: the `\` joins the note to the pipe, and the pipeline goes on below it
        if _ASSIGNMENTS.fullmatch(command.text):
            # `PYTHONPATH=... \` + `# note` + `python ...`: the settings were meant for the command below
            names = " and ".join(f"`{n}`" for n in re.findall(r"(?:^|\s)([A-Za-z_]\w*)=", command.text))
            lost = f", without the {names} set for them"
        else:
            kind = "options" if _OPTION_START.match(physical[nxt]) else "arguments"
            lost = f" (the {kind} there are lost)"
        yield (
            "a comment line",
            Hit(
                path,
                line,
                f"This comment line sits inside a command continued with `\\`: the shell ends the command at the "
                f"comment, and line {nxt} onwards run as separate commands{lost}. Move the comment above the "
                "command.",
                cause="a comment line inside a continued command",
            ),
        )


# A command that is only variable assignments (`A=1 B="$x" \\`): settings for the command its author continued to.
# (one unquoted character at a time: `[^\s"']+` repeated by `*` splits a word in exponentially many ways, and a line
# that does not match, `X=${X% }`, took seconds, a whole replay 22 minutes)
_ASSIGNMENTS = lazyre.compile(r"\s*(?:[A-Za-z_]\w*=(?:\"[^\"]*\"|'[^']*'|[^\s\"'])*\s*)+\\?\s*")
# A line whose `\\` follows an operator that needs a command after it (`|`, `||`, `&&`, `|&`): a comment line
# below it ends at its newline, and the shell goes on reading the command on the line after.
_AFTER_OPERATOR = lazyre.compile(r"(?:\|\|?|&&|\|&)[ \t]*\\[ \t]*$")
# A line that starts with an option (`--backend x`, `-DFOO=ON`) or a dotted override (`trainer.epochs=3`): never
# a command of its own, always the rest of one (no program is named `--backend`, no variable `trainer.epochs`).
_OPTION_START = lazyre.compile(r"[ \t]*(?:--?[A-Za-z]|[+~]{0,2}[A-Za-z_][\w<>-]*(?:\.[\w<>-]+)+=)")
# The quick test for a file with no `\\`: a line that starts so.
_OPTION_LINE = lazyre.compile(r"\n" + _OPTION_START.pattern)
# A line of a program's help or of a listing, not of a command: `-h, --help   show this help`, `--local_dir
# LOCAL_DIR`, `--include [INCLUDE ...]`, `--seed      // the seed`, `-rwxr-xr-x  1 root` (an option, then a comma,
# a metavariable, a bracket, or a gap of blanks before words that are no continuation or comment).
# An option with a colon after its name (`--batch_size: 批次大小`, `--seed：种子`) describes it: no command passes
# one so.
_HELP_LINE = lazyre.compile(
    r"[ \t]*-{1,2}[\w-]+(?:,|[ \t]+(?:[A-Z][A-Z0-9_]+(?:[ \t,]|\Z)|[\[{<])|[ \t]{2,}(?![\\#\s])|[:：][ \t]*[^\s\\])"
)
# A line that stands for options left out (`...`, `[...]`, `… # list every device`): no command to run.
_ELLIPSIS = lazyre.compile(r"[ \t]*[\[(]?[ \t]*(?:\.{2,}|…+)[ \t]*[\])]?[ \t]*(?:#.*)?")
# A case pattern (`--help)`, `-h|--help)`, `--help | -h)`): a line that starts like an option but is a branch.
_CASE_PATTERN = lazyre.compile(r"[ \t]*\(?[^\s()|]+(?:[ \t]*\|[ \t]*[^\s()|]+)*[ \t]*\)")
# A line that hands the command on to the next one by itself: an operator at its end (`^`: cmd.exe's `\\`).
_ENDS_WITH_OPERATOR = lazyre.compile(r"(?:\|\||&&|[|;&({^])[ \t]*\Z")
# The program a command line starts with, after `NAME=value` words: a word a shell runs (`python3`, `./run.sh`,
# `$PYTHON`), not a listing's placeholder (`......`) or heading (`usage:`).
# (after the line's leading `NAME=value` words, `_after_assignments`)
_PROGRAM = lazyre.compile(r"([A-Za-z_.~/$][\w./~${}+-]*)(?=[ \t]|\Z)")
# Programs that are a whole command alone (a single-word line naming another file is a listing's entry).
_ALONE = frozenset(
    {"python", "python3", "torchrun", "deepspeed", "accelerate", "bash", "sh", "vllm", "llamafactory-cli"}
)


def _command_line(text: str) -> bool:
    """The logical line runs a program with the words after it (`python3 -m x`, `bash run.sh`, `xtuner chat m`),
    not an assignment alone, a placeholder (`......`) or a lone file name (a listing's `tokenizer.json`)."""
    text = text.lstrip()
    if _ASSIGNMENT.match(text):
        text = _after_assignments(text)
    m = _PROGRAM.match(text)
    if m is None:
        return False
    word = m.group(1)
    if word.strip(".") == "" or word.endswith(":") or "=" in word or word in _OWN_COMMANDS:
        return False  # a placeholder, a heading, an assignment; a builtin (`export X=1`) takes no such options
    rest = text[m.end() :].strip()
    return bool(rest) or word.rsplit("/", 1)[-1] in _ALONE


# A `NAME=value` word, up to the first blank, quote or parenthesis (most values have none of them).
_ASSIGNMENT = lazyre.compile(r"[A-Za-z_]\w*=[^\s\"'()]*")


def _after_assignments(text: str) -> str:
    """`text` without the `NAME=value` words it starts with, a value's `$(( … ))`, `$( … )` and quotes whole
    (`WORKERS=$((GPUS / TP))` alone is an assignment, not a program `/` with arguments)."""
    while (m := _ASSIGNMENT.match(text)) is not None:
        if m.end() == len(text) or text[m.end()] in " \t":
            text = text[m.end() :].lstrip()  # a plain value: it ends at the blank
            continue
        end, depth = len(text), 0
        # (a value still open after 400 characters, a long array or string, is taken as the whole line)
        for piece in _VALUE_PIECE.finditer(text, m.end(), min(len(text), m.end() + 400)):
            ch = piece.group()
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth = max(0, depth - 1)
            elif ch.isspace() and depth == 0:
                end = piece.start()
                break
        text = text[end:].lstrip()
    return text


# The pieces of a value: a quoted string whole (an unclosed one to the end), a parenthesis, a blank, other text.
_VALUE_PIECE = lazyre.compile(r""""[^"]*"?|'[^']*'?|[()]|\s|[^\s"'()]+""")


# A line that ends a sentence (`Applying... Done!`, `Reboot to load the new configuration.`): output or prose, not
# a command whose options the next line holds (`pip install -e .` ends with a path, not a word and a period).
_SENTENCE_END = lazyre.compile(r"[A-Za-z][.!?][ \t]*$")


def _missing_backslashes(
    path: str, logical: Sequence[LogicalLine], physical: dict[int, str], in_heredoc: set[int]
) -> Iterator[tuple[str, Hit]]:
    """A command whose author forgot a `\\`: its line ends without one (or a blank line ends it) and the next line
    starts with an option or an override of it (`python3 -m sglang.bench_serving` then ` --backend sglang-oai`).
    The shell ends the command there and runs the option line as a command of its own, which fails.
    (`_one_per_command` makes the cuts of one command one finding.)"""
    # The lines since the last command that runs a program continue it: `_command_line` of the last line that is no
    # option line, None until an option line after it asks (most lines have none after them).
    anchor: bool | None = False
    prev: LogicalLine | None = None
    for ll in logical:
        option = (
            _OPTION_START.match(ll.text) is not None
            and _CASE_PATTERN.match(ll.text) is None
            and _HELP_LINE.match(ll.text) is None
        )
        if option and anchor is None and prev is not None:
            anchor = _command_line(prev.text)
        if option and anchor and prev is not None and ll.line not in in_heredoc:
            end = prev.end_line
            before = physical.get(end, "")
            # (a `\\` on the line, or a comment line: a cut the other checks report, a blank or a comment after
            # the `\\`, or a comment line inside the command)
            between = range(end + 1, ll.line)
            if (
                "\\" not in before
                and not before.lstrip().startswith("#")
                and not _ELLIPSIS.fullmatch(before)  # `...`, `[...]`: options left out, nothing to run
                and not _SENTENCE_END.search(before)  # `Applying... Done!`: a program's output pasted in
                and not _ENDS_WITH_OPERATOR.search(prev.text.rstrip())
                and all(physical.get(n, "").lstrip().startswith("#") for n in between)
            ):
                first = physical.get(ll.line, "").strip()
                word = first.split()[0] if first else ""
                effect = (
                    f"line {ll.line} (`{shorten(first, 40, '…')}`) runs as a command of its own (`{word}: command not "
                    "found`) and the options from there on are lost."
                )
                suggestion: str | None = None
                image = _container_image(prev.text)
                if image is not None:
                    # `ctr run ... busybox:latest sh` then `--mount ...`: after the image, words are the container
                    # command's, so a `\\` would hand the option to `sh` (TobyIcetea/LearningNotes, rs-r64, judged
                    # false when the advice was to add one).
                    message = (
                        f"This line ends without `\\`, so the command ends here: {effect} The options of `{image[0]}` "
                        f"go before the image (`{image[1]}`): after it they are the container command's arguments, "
                        "so a `\\` here would not bring them back. Move the line before the image."
                    )
                elif before.strip() and "#" in before and "#" not in prev.text:
                    # A note after the options: a `\\` after it would be part of the note, and bash allows no
                    # comment inside a continued command (a `\\` before one escapes a blank, a comment line cuts).
                    message = (
                        f"This line ends without `\\`, so the command ends here: {effect} Drop the comment and end the "
                        "line with ` \\` (a `\\` after `#` is part of the comment, and a continued command can hold "
                        "no comment)."
                    )
                elif before.strip():
                    message = (
                        f"This line ends without `\\`, so the command ends here: {effect} End this line with ` \\`."
                    )
                    suggestion = None if "#" in before else before.rstrip() + " \\"
                else:
                    message = (
                        f"This blank line ends the command continued above it (a `\\` continues a line into the "
                        f"next one, and this one is empty): {effect} Delete the blank line."
                    )
                    suggestion = None
                yield (
                    "a line without its `\\`",
                    Hit(path, end, message, suggestion=suggestion, cause="a line without its `\\`"),
                )
                prev = ll
                continue
        anchor = None if not option else False
        prev = ll


# A container runtime's command that runs an image, and an image reference (`docker.io/library/busybox:latest`,
# `quay.io/ascend/cann:8.3.rc1`, `ubuntu:22.04`), not an option's value (`ASCEND_VISIBLE_DEVICES=0`).
_CONTAINER_RUN = lazyre.compile(
    r"^\s*(?:sudo\s+)?((?:docker|podman|nerdctl|ctr|isula|crictl)\s+(?:container\s+)?(?:run|create|exec))\b"
)
_IMAGE_WORD = lazyre.compile(r"[\w.-]+(?::\d+)?/[\w./-]+(?::[\w.-]+)?|[A-Za-z][\w.-]*:[\w][\w.-]*")


def _container_image(text: str) -> tuple[str, str] | None:
    """(`docker run`, the image) when the command runs a container and names its image."""
    m = _CONTAINER_RUN.match(text)
    if m is None:
        return None
    for word in text[m.end() :].split():
        if not word.startswith("-") and "=" not in word and _IMAGE_WORD.fullmatch(word.strip("\"'")):
            return " ".join(m.group(1).split()), word.strip("\"'")
    return None


# Shell builtins and keywords: a line that starts with one is a command of its own, never an argument of the
# command before it (`torchrun ... \` then `set +x`).
_OWN_COMMANDS = frozenset(
    {"set", "export", "unset", "cd", "source", "exit", "wait", "shift", "trap", "declare", "local", "readonly",
     "return", "ulimit", "umask", "fi", "done", "esac", "then", "else", "elif", "do"}
)  # fmt: skip


def _joined_command(first: int, last: int, physical: dict[int, str], in_heredoc: set[int]) -> int | None:
    """The line of a continued command (lines `first`..`last`) that its author meant as the next command: its
    argument lines are indented deeper than its first line, and this one is back at the first line's indentation
    and starts with a shell builtin or keyword (the last argument line kept its `\\`)."""
    if last <= first or any(n in in_heredoc for n in (first, last)):
        return None
    indent = len(physical.get(first, "")) - len(physical.get(first, "").lstrip())
    deeper = False
    for n in range(first + 1, last + 1):
        text = physical.get(n, "")
        if not text.strip():
            return None
        depth = len(text) - len(text.lstrip())
        if depth > indent:
            deeper = True
            continue
        if deeper and depth <= indent and text.split()[0] in _OWN_COMMANDS:
            # the line before ends with the `\` that joins it (not an open quote carrying the command on)
            before = physical.get(n - 1, "").rstrip()
            if not before.endswith("\\"):
                return None
            if re.search(r"(?:;|&&|\|\||\||&)\s*\\$", before):
                return None  # `...; \` + `done`: the `;` ends the command first, and the next line is a command
            if re.search(r"(?:^|\s)--\s*\\$", before):
                return None  # `launcher ... -- \` + `source env.sh \&\& python ...`: after `--`, the command it runs
            # (allenai/open-instruct's `mason.py ... --` hands Beaker the command; sweep-r32, judged false)
            # (a loop's last command with its `; \`, then `done`: valid shell, nothing joined; rs-r41, judged false)
            # ... and that `\` is not inside a quoted string, where it only joins the string's lines (a
            # `bash -c "if ...; then \` + `else \` script in double quotes)
            inside = open_after(physical.get(k, "") for k in range(first, n))
            return None if "'" in inside or '"' in inside else n
        return None
    return None


def _next_content(physical: dict[int, str], line: int, skip_comments: bool = False) -> int | None:
    """The next line after `line` in the same text, when it is not blank (a blank line ends a command anyway)."""
    n = line + 1
    while n in physical:
        stripped = physical[n].strip()
        if skip_comments and stripped.startswith("#"):
            n += 1
            continue
        return n if stripped else None
    return None


def _continues(text: str, first: str) -> bool:
    """A line that reads as more arguments of the command that starts with line `first`: an option, a line
    indented deeper than the command, or one that itself ends with a backslash."""
    stripped = text.strip()
    deeper = len(text) - len(text.lstrip()) > len(first) - len(first.lstrip())
    return stripped.startswith("-") or deeper or stripped.endswith("\\")
