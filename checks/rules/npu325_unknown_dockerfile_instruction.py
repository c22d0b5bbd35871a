"""NPU325: a line of an Ascend Dockerfile starts an instruction Docker does not have (`unknown instruction`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace

from npu_review.checks import lazyre
from npu_review.checks.analysis.device import ascend_dockerfile_scope
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import ASCEND_DOCKERFILE, DOCKERFILE
from npu_review.checks.model import Severity
from npu_review.checks.parsers.dockerfile import INSTRUCTIONS, Dockerfile, Instruction, dangling_operator
from npu_review.checks.rule import Hit, Rule

# A file filled in before it is built: a placeholder where an instruction would be (`{EXTRA_CONTENT}`,
# `{{ base }}`, `%%RUN%%`, `@INSTALL@`; not a variable, `${ASCEND_HOME}`), or committed conflict markers (NPU123's).
# Such a file is not built as it is.
_NOT_AS_WRITTEN = lazyre.compile(r"(?<!\$)\{|%%|@\w+@|\A(?:<{7}|={7}|>{7})")
# A file filled in before it is built, whatever the place of its placeholders (`COPY {{ src }} {{ dest }}`).
_TEMPLATE = lazyre.compile(r"\{\{|\{%|%%|@[A-Za-z_]\w*@")
# The BuildKit front ends that read the instructions this rule knows (a `# syntax=` directive naming another one,
# such as dockerfile-plus, may add its own).
_DOCKER_SYNTAX = lazyre.compile(r"(?:docker\.io/)?docker/dockerfile(?:-upstream)?(?::[\w.-]+)?(?:@sha256:[0-9a-f]+)?")


class UnknownDockerfileInstruction(Rule):
    """A line of an Ascend Dockerfile starts with a word that is no Dockerfile instruction, or a COPY or ADD names
    no destination, so the image does not build.

    Why: Docker reads a Dockerfile line by line. A line that does not end with `\\` ends its instruction; the
    next line must start a new one (`RUN`, `ENV`, `COPY`, ...). When a `\\` is lost in a long `RUN` or `ENV`,
    when a line is inserted in the middle of a continued instruction, or when a command is added without its
    `RUN`, Docker stops with `unknown instruction: PYTHON3` before it builds anything: the Ascend image, and
    every CI job that pulls it, is gone until someone fixes the line. cann-recipes-train added
    `python3 -m pip install torch==2.5.1 torch-npu==2.5.1.post1` to its DeepSeek image without a `RUN`;
    Ascend's image repositories inserted `ENV ASCEND_AICPU_PATH=...` in the middle of a continued `ENV PYTHONPATH`.
    The same stop comes from a misspelt `FROM` (`FORM ${FROM_IMAGE_NAME}`: mindspore-ai/models' MindX SDK infer
    Dockerfiles of ssd_resnet50 and ssd_ghostnet, which then have no FROM at all) and from a COPY or ADD with a
    source and no destination (`COPY requirements.txt` in atae_lstm's Dockerfile: `COPY requires at least two
    arguments`).

    Bad:
        RUN pip install --no-cache-dir torch==2.5.1
        python3 -m pip install torch-npu==2.5.1.post1

    Good:
        RUN pip install --no-cache-dir torch==2.5.1
        RUN python3 -m pip install torch-npu==2.5.1.post1

    Bad:
        ARG FROM_IMAGE_NAME
        FORM ${FROM_IMAGE_NAME}
        COPY requirements.txt

    Good:
        ARG FROM_IMAGE_NAME
        FROM ${FROM_IMAGE_NAME}
        COPY requirements.txt .

    Fix: start the line with the instruction it belongs to (a suggestion does it for a command after a complete
    instruction, and writes `FROM` for a misspelt one), or end the line before it with ` \\` when it continues
    that instruction; give a COPY its destination (`.`, the WORKDIR, is suggested for one source on one line).

    Which Dockerfiles: Ascend ones (by path or content), and, since these lines break any build, also those of a
    repository about Ascend (its own package is an Ascend one) and those whose folder holds Ascend material by its
    paths (`ascend310_infer/`, `run_train_ascend.sh`, MindX SDK's `mxbase/`, an `*.om` model): MindSpore's model
    folders keep `infer/Dockerfile` built `FROM ${FROM_IMAGE_NAME}` next to `infer/mxbase/`. A Dockerfile whose text
    or name says another device (a CUDA base image, `Dockerfile.gpu`) is left out.

    Not reported: the line after a RUN that ends with `&&`, `||` or `|` (NPU318 reports that RUN); the lines after
    the first unknown one of a run of them (one cause); files that are not built as written (a placeholder where
    an instruction would be or anywhere for COPY's arguments, conflict markers); a file without FROM unless its
    first instruction after its ARGs is one edit from FROM and only instructions Docker knows follow (else it is a
    note or a list, not a Dockerfile); a `# syntax=` front end other than Docker's; a COPY or ADD with a heredoc
    (`COPY <<EOF /x`: the heredoc is a source), with a variable as its only argument (it may hold both), or whose
    destination a lost `\\` left on the next line (the unknown line is the finding); `--from=`, `--chown=`,
    `--chmod=`, `--link` and other flags are not counted as arguments, and the JSON form is read as Docker reads it.
    """

    id = "NPU325"
    name = "unknown-dockerfile-instruction"
    severity = Severity.ERROR
    title = "Dockerfile line Docker rejects (no instruction, a misspelt FROM, a COPY without destination)"
    kinds = frozenset({ASCEND_DOCKERFILE, DOCKERFILE})

    def check_dockerfile(self, df: Dockerfile, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        syntax = df.directives.get("syntax")
        if syntax is not None and not _DOCKER_SYNTAX.fullmatch(syntax):
            return
        instrs = df.instructions
        unknown = [i for i in instrs if i.keyword not in INSTRUCTIONS]
        if any(_NOT_AS_WRITTEN.search(i.keyword) for i in unknown) or not ascend_dockerfile_scope(ctx, src):
            return
        if not any(i.keyword == "FROM" for i in instrs):
            # Not a Dockerfile (a note or a list that a Dockerfile glob matched), unless its first instruction is a
            # misspelt FROM among instructions Docker knows (`ARG FROM_IMAGE_NAME`, `FORM ${FROM_IMAGE_NAME}`).
            misspelt = _misspelt_from(instrs)
            if misspelt is not None:
                yield self._misspelt_from_hit(misspelt, src)
            return
        if not _TEMPLATE.search(src.text):
            yield from _destinationless_copies(instrs, src)
        if not unknown:
            return
        escape = df.escape
        for k, instr in enumerate(instrs):
            if instr.keyword in INSTRUCTIONS:
                continue
            before = instrs[k - 1] if k else None
            if before is not None and (before.keyword not in INSTRUCTIONS or dangling_operator(before) is not None):
                continue  # the same lost line end (reported with the first), or NPU318's
            if _near_from(instr):
                yield self._misspelt_from_hit(instr, src)
                continue
            hit = self._hit(instr, before, src, ctx, escape)
            # The unknown lines right after it: each lost its line end too (a list cut in several places); Docker
            # stops at the first, and the next build at the next one.
            more = []
            for nxt in instrs[k + 1 :]:
                if nxt.keyword in INSTRUCTIONS:
                    break
                more.append(nxt.line)
            if more:
                lines = ", ".join(str(n) for n in more[:5]) + (", ..." if len(more) > 5 else "")
                hit = replace(
                    hit,
                    message=f"{hit.message} Line{'s' if len(more) > 1 else ''} {lines} after it "
                    f"start{'' if len(more) > 1 else 's'} no instruction either: the line before each "
                    "needs the same.",
                )
            yield hit

    def _misspelt_from_hit(self, instr: Instruction, src: SourceFile) -> Hit:
        text = src.line(instr.line)
        word = text.split(None, 1)[0]
        return Hit(
            src.path,
            instr.line,
            f"`{word}` is no Dockerfile instruction, so `docker build` stops at this line (`unknown instruction: "
            f"{word}`) before it builds anything: write `FROM`.",
            suggestion=text.replace(word, "FROM", 1),
            cause=f"{word.upper()} for FROM",
        )

    def _hit(self, instr: Instruction, before: Instruction | None, src: SourceFile, ctx: Context, escape: str) -> Hit:
        text = src.line(instr.line)
        word = text.split(None, 1)[0]
        shown = word if len(word) <= 40 else word[:40] + "..."
        stops = f"`{shown}` is no Dockerfile instruction, so `docker build` stops at this line (`unknown instruction`)"
        command = _COMMAND.fullmatch(word) is not None
        start = "Start this line with its instruction" + (" (`RUN` for a command)" if command else "")
        if before is None:
            return Hit(src.path, instr.line, f"{stops}. {start}.")
        end = before.end_line
        last = src.line(end).split(None, 1)
        if end != before.line and last and last[0].upper() in INSTRUCTIONS:
            # An instruction inserted inside a continued one (`ENV A=\`, `ENV B=x`, `$A/x:\`): it ends the first.
            message = (
                f"{stops}: line {end} (`{last[0]} ...`) sits inside the {before.keyword} continued from line "
                f"{before.line}, so it ends that {before.keyword} and this line is left over. Move line {end} out of "
                f"the continued {before.keyword} (before line {before.line}, or after its last line)."
            )
            return Hit(src.path, instr.line, message, caused_by_change=ctx.is_added_line(src.path, end))
        # How the line before would continue onto this one: a command after a RUN's command needs an operator too,
        # more arguments of it (a package list cut by a lost `\`) do not; which one the line is, only its author knows.
        if before.keyword == "RUN" and not _OPERATOR.match(text):
            joint = f"end line {end} with ` {escape}` (and `&&` before it if this line starts a command of its own)"
        else:
            joint = f"end line {end} with ` {escape}`"
        message = (
            f"{stops}: the {before.keyword} above ends on line {end}, where no `{escape}` continues it. {start}, "
            f"or, if this line belongs to that {before.keyword}, {joint}."
        )
        # A command after a complete instruction, at the start of the line: it lost its `RUN`.
        suggestion = f"RUN {text.strip()}" if command and not text[:1].isspace() else None
        # A change that drops the escape character at the end of the instruction above makes this line unknown.
        caused = ctx.is_added_line(src.path, end)
        return Hit(src.path, instr.line, message, suggestion=suggestion, caused_by_change=caused)


def _near_from(instr: Instruction) -> bool:
    """The instruction's word is one edit from FROM (`FORM`, `FRON`, `FROMM`, `FRM`: a letter swapped with the
    next, changed, added or dropped) and it names something, as FROM does."""
    word = instr.keyword
    if word in INSTRUCTIONS or not word.isalpha() or not instr.args.strip() or abs(len(word) - 4) > 1:
        return False
    return _one_edit(word, "FROM")


def _one_edit(a: str, b: str) -> bool:
    """`a` and `b` differ by one edit: a substitution, an insertion or deletion, or two neighbours swapped."""
    if a == b:
        return False
    if len(a) == len(b):
        diff = [k for k in range(len(a)) if a[k] != b[k]]
        if len(diff) == 1:
            return True
        return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    if len(long_) - len(short) != 1:
        return False
    return any(long_[:k] + long_[k + 1 :] == short for k in range(len(long_)))


def _misspelt_from(instrs: Sequence[Instruction]) -> Instruction | None:
    """The first instruction of a file without FROM when it is a misspelt FROM: only ARGs before it (all Docker
    allows before the first FROM), and after it only instructions Docker knows, at least one of which builds
    something (RUN, COPY, ADD, ...): a Dockerfile whose FROM lost a letter, not a note."""
    k = next((k for k, i in enumerate(instrs) if i.keyword != "ARG"), None)
    if k is None or not _near_from(instrs[k]):
        return None
    rest = instrs[k + 1 :]
    if not rest or any(i.keyword not in INSTRUCTIONS for i in rest) or all(i.keyword == "ARG" for i in rest):
        return None
    return instrs[k]


# What Docker reads as a COPY's or ADD's leading flags (`--from=build`, `--chown=1000:1000`, `--link`): `--name`
# or `--name=value` words before the first argument.
_FLAG = lazyre.compile(r"--[A-Za-z][\w-]*(?:=\S*)?")


def _destinationless_copies(instrs: Sequence[Instruction], src: SourceFile) -> Iterator[Hit]:
    """COPY and ADD with fewer than two arguments besides their flags: Docker stops before it builds anything
    (`COPY requires at least two arguments, but only one was provided. Destination could not be determined`)."""
    for k, instr in enumerate(instrs):
        if instr.keyword not in ("COPY", "ADD") or instr.heredocs or "<<" in instr.args:
            continue  # a heredoc is a source of its own (`COPY <<EOF /x`)
        nxt = instrs[k + 1] if k + 1 < len(instrs) else None
        if nxt is not None and nxt.keyword not in INSTRUCTIONS:
            continue  # a lost `\` before the destination: the unknown line after it is the finding
        words = instr.args.split()
        while words and _FLAG.fullmatch(words[0]):
            words.pop(0)
        rest = " ".join(words)
        if rest.startswith("["):
            try:
                value = json.loads(rest)
            except ValueError:
                value = None  # not JSON: Docker reads the shell form (whitespace-separated words)
            if isinstance(value, list):
                words = [str(v) for v in value]
        if len(words) >= 2 or any("$" in w for w in words):
            continue  # (a variable alone may be meant to hold both: left to the build)
        what = f"`{words[0]}` but no destination" if words else "no source and no destination"
        text = src.line(instr.line)
        single = instr.end_line == instr.line and len(words) == 1 and not instr.args.lstrip().startswith("[")
        yield Hit(
            src.path,
            instr.line,
            f"This {instr.keyword} names {what}, so `docker build` stops here (`{instr.keyword} requires at least "
            "two arguments ... Destination could not be determined`) before it builds anything. Add where it goes "
            "in the image (`.` for the WORKDIR).",
            suggestion=f"{text.rstrip()} ." if single else None,
            cause=f"{instr.keyword} without a destination",
        )


# A program or a path to one (`python3`, `pip3`, `./build.sh`, `/opt/conda/bin/pip`): what a lost `RUN` leaves.
_COMMAND = lazyre.compile(r"(?:\.{0,2}/)?[A-Za-z_][\w.+-]*(?:/[\w.+-]+)*")
_OPERATOR = lazyre.compile(r"[ \t]*(?:&&|\|\||\||;)")
