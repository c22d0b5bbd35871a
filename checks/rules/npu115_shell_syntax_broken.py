"""NPU115: shell in an Ascend file that the shell rejects or reads otherwise than its author meant."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from rapidfuzz.distance import OSA

from npu_review.checks import lazyre
from npu_review.checks.analysis.device import ascend_jobs, npu_project, npu_somewhere
from npu_review.checks.analysis.scripts import (
    ShellUnit,
    StructureError,
    UnitCommand,
    UnitShell,
    doc_is_ascend,
    doc_units,
    run_unit,
    script_unit,
    step_unit,
    unit_shell,
)
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import ASCEND_DOCKERFILE, ASCEND_WORKFLOW, DOCS, NPU_SCRIPT, SHELL, WORKFLOW
from npu_review.checks.messages import shorten
from npu_review.checks.model import Severity
from npu_review.checks.parsers.gha.expressions import EXPR
from npu_review.checks.parsers.markdown import flavor_of
from npu_review.checks.parsers.sh import ArrayWord, Op, Source, Word, lex
from npu_review.checks.rule import Hit, Rule

if TYPE_CHECKING:
    from npu_review.checks.parsers.dockerfile import Dockerfile
    from npu_review.checks.parsers.gha.workflow import Job, Step, Workflow

_NAME = lazyre.compile(r"[A-Za-z_]\w*\Z")
_DECLARERS = frozenset({"export", "declare", "typeset", "local", "readonly"})
_CD_GLUED = lazyre.compile(r"cd(?:\.\.?|/|~)\S*\Z")
_REF = lazyre.compile(r"\"?\$\{?([A-Za-z_]\w*)\}?\"?\Z")
# Variables that hold `:`-separated lists of paths (a second entry is joined with `:`, never with a blank).
_PATH_LISTS = frozenset(
    {"PATH", "LD_LIBRARY_PATH", "LD_PRELOAD", "PYTHONPATH", "LIBRARY_PATH", "CPATH", "CMAKE_PREFIX_PATH"}
)
# Programs whose backgrounding with `&` in the middle of a line is a typo for `&&`: they prepare what the next
# command uses (a clone, a download, an unpacked tree, an install), and end by themselves.
_SETUP = frozenset(
    {"git", "wget", "curl", "tar", "unzip", "mkdir", "cp", "mv", "pip", "pip3", "apt", "apt-get", "yum", "make"}
)
_PACKAGE_FILE = lazyre.compile(r"(?i)\.(?:whl|tar\.gz|tgz|zip|tar\.bz2)(?:[#?].*)?\Z")
_HEX = lazyre.compile(r"[0-9a-f]{7,40}\Z")
_ARG_LIST_NAME = lazyre.compile(r"(?i)args|opts|options|flags|params|extra|cmd")
_CAPS = lazyre.compile(r"[A-Z][A-Z0-9_]{2,}\Z")
# Commands and options that take a variable's name, not its value.
_TAKES_NAMES = frozenset(
    {"echo", "printf", "grep", "egrep", "fgrep", "sed", "awk", "export", "unset", "read", "declare", "local"}
    | {"readonly", "typeset", "printenv", "env", "set", "test", "[", "[[", "getopts", "eval", "jq", "yq", "cat"}
    | {"mapfile", "readarray", "let", "wait", "shopt", "trap", "alias", "hash", "type", "command"}
)
_NAME_OPTIONS = frozenset({"-e", "--env", "--build-arg", "--secret", "-v", "-u", "--unset", "-n", "-z"})


class ShellSyntaxBroken(Rule):
    """Shell in an Ascend script, CI step, image or install guide that the shell rejects or misreads.

    Why: these lines look right and fail only when they run, on an NPU machine or in an image build: a blank around
    `=` (`SOC_VERSION ="$1"` runs a command named SOC_VERSION; `export HCCL_DETERMINISTIC = 1` tries to export `=`),
    a reserved word glued to the next word (`thenCURRENT_IP=...` leaves the `if` without its `then`), `cd..`, a
    clone sent to the background with `&` while the next command already `cd`s into it, a misspelled subcommand
    (`git submoudule update`), a second path joined to `export LD_PRELOAD=...` with a blank instead of `:`, an
    option that takes one value given two (`--extra-index-url URL1 URL2`: the second URL becomes a requirement), an
    option whose value is missing (`pip install -e -v .` makes `-v` the editable target), two options glued into one
    word (`--nproc_per_node=8--master_port=29500`, `atc --input_format=ND--input_shape=...`: the first option gets
    the rest as its value and the second is never given), `git clone -b <commit>` or `git clone -b <url>`
    (`--branch` takes a branch or tag), `cmake -UNAME=ON` (`-U` removes cache entries; `-D` sets them), an unquoted
    option value that holds blanks or nothing, a variable's name where its value was meant (the `$` left out: `-t
    TAGS` for a variable the script uses; `--data_url DATA_PATH`, `--ckpt=CKPT` or a quoted argument
    `"NUM_PROCESSES"` for one the script sets from an expansion, `DATA_PATH=$1`, `CKPT=$(ls ...)`, which no one
    spells out as a word by design; a test of the name, `[ -z "bisheng_path" ]`, always false, or `[ -d LOG_DIR ]`,
    a file of that name; mindspore models' arcface script passed `--data_url DATA_PATH`, shmem's run.sh
    `"NUM_PROCESSES"` to its binary, memfabric_hybrid's installer tested `[ -z "bisheng_path" ]` and never skipped
    the missing compiler), a blank after `$` (`X= $ (cmd)` is a syntax error; `" $ NPROC"` passes the text `$
    NPROC`: a copy/paste garbling in cann-recipes-embodied-intelligence's pi05 scripts), an `if`/`case`/loop the
    shell cannot close, a `case` arm left without its `;;` before the next pattern (the shell stops at that
    pattern's `)`: a new arm added after one that was the last; said on the arm's last line, where the `;;` goes),
    quotes that do not pair up (a `"` too many or missing: the rest of the script is read inside and outside quotes
    the wrong way round; MindSpeed-LLM's CI script ended a path with `/""`), and a backquote, `$(` or `${` never
    closed (`` `echo ${para#*=`` ``). Ascend/pytorch's install guide said `git clone ... & cd pytorch` and `git
    submoudule update`; vllm-ascend's FAQ said `export HCCL_DETERMINISTIC = 1`; sgl-kernel-npu's build.sh said
    `SOC_VERSION ="${1:-...}"`.

    A `${{ }}` expression is expanded into a `run:` script's text before the shell reads it: one whose value is
    text from the event (`toJSON(github.event)`, `github.event.pull_request.title`, `.body`, `.message`: facts
    `event_text`) pasted inside quotes, or bare, lets the first quote, backtick or `$(` of a title, body or commit
    message end the string and run as shell (warning: the step breaks on the first such event). Ascend/pytorch's
    CI trigger did `echo '${{ toJSON(github.event) }}' | jq .`. This is about the step breaking, not about who may
    inject code; fixed values (`github.sha`, `inputs.x` from a choice, `toJSON(matrix)`), a test of the text
    (`contains(github.event.comment.body, '/retest')`) and a value passed through `env:` are left alone.

    Bad:
        SOC_VERSION ="${1:-Ascend910_9382}"
        export HCCL_DETERMINISTIC = 1
        git clone -b master https://gitee.com/ascend/pytorch.git & cd pytorch
        git submoudule update --init --recursive

    Good:
        SOC_VERSION="${1:-Ascend910_9382}"
        export HCCL_DETERMINISTIC=1
        git clone -b master https://gitee.com/ascend/pytorch.git && cd pytorch
        git submodule update --init --recursive

    Fix: as each message says; a suggestion is attached where the fix is one exact edit of the line. The
    assignments a change writes with a blank beside `=` are one cause, one comment, however many variables, blocks
    and files (Ascend/MindIE-LLM's log guides wrote `export ATB_LOG_LEVEL = INFO` in block after block).

    Where: NPU scripts, and in a script for several devices with an Ascend path (it names Ascend outside its
    comments, or has a `case` arm or test for the NPU: `custom_npu)`, `[ "$target" = "cann" ]`) what the shell
    rejects (a script that does not parse runs on no device, the NPU included: PaddleCustomDevice's CI entry script
    lost its `custom_npu` arm's `;;`), and what is wrong there on every device alike (a test of a variable's name, a
    blank after `$`); a script that sets torch_npu's PYTORCH_NPU_ALLOC_CONF has an Ascend path; `run:` steps of
    Ascend workflow jobs (for event text: of every workflow of a repository that is about Ascend as a whole, whose
    CI trigger runs on a plain runner), shell-form RUNs of Ascend Dockerfiles, and shell code blocks of Ascend docs
    (unlabeled blocks too when every line starts with a command). Not reported: quotes left open at the end of a
    docs block (the next block may go on), `[ "$a" = b ]` and arithmetic (`(( x = 1 ))`), `X= cmd` (an empty
    variable for one command), `NAME=` followed by a quoted string, aliases a user may define (a subcommand counts
    as misspelled only within two edits of a real one), a background job the line `wait`s for, words with unexpanded
    variables, unquoted variables whose every value is one word (or whose name says they hold arguments:
    `$EXTRA_ARGS`), and word lists split on purpose: a variable the script loops over (`for m in $decode_modes`), a
    plural option or variable (`--modes $decode_modes`: argparse's `nargs='+'` takes every word), or a list of
    numbers (`--bytes-grid $MSG_BYTES`, "1024 65536 1048576"). Nor, for a name where a value was meant: programs and
    options that take names (`grep`, `read`, `mapfile`, `export`, `unset`, `env -u`, `docker -e NAME`, `mpirun -x
    NAME`, bazel `--action_env=NAME`, `[ -v NAME ]`), a script that reads variables through their names
    (`${!name}`), a name the script sets to literals only and never uses (the word may be meant), a name and its
    value passed together (`set_cfg "BATCH_SIZE" "$BATCH_SIZE"`), the arguments of the script's own functions, a
    file test whose word the script also uses as a path (`[ -d out ] || mkdir out`), an option the repository's
    Python script it runs does not take at all (`--rank_size=RANK_SIZE` to a parser without `--rank_size`: the
    option is the mistake, NPU117's), and docs blocks (for options and arguments: a placeholder to fill in).
    Nor, for a blank after `$`: shell prompts (`echo "  $ git am ..."`: the word after is a command), echo and
    printf text, heredocs, single-quoted programs (awk's `$ 1`) and docs blocks."""

    id = "NPU115"
    name = "shell-syntax-broken"
    severity = Severity.ERROR
    title = "Ascend shell that the shell rejects or misreads"
    kinds = frozenset({SHELL, NPU_SCRIPT, DOCS, WORKFLOW, ASCEND_WORKFLOW, ASCEND_DOCKERFILE})
    named_suffixes = (".py",)  # the Python script a command runs: whether its parser has the option at all

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if DOCS in src.kinds and flavor_of(src.path) is not None:
            for unit in doc_units(ctx, src):
                yield from _check(unit, ctx)
            return
        if SHELL in src.kinds or NPU_SCRIPT in src.kinds:
            script = script_unit(ctx, src)
            if script is not None:
                yield from _check(script, ctx)
            elif npu_somewhere(ctx, src):
                # A script for several devices, Ascend among them (a build script's `cann` branch, a CI entry
                # script's `custom_npu` arm): one the shell cannot parse runs on none of them, its NPU path
                # included. What the shell itself rejects is said; the rest of the rule reads NPU scripts only.
                whole = ShellUnit(src.path, Source.file(src.text), "script", 1)
                yield from _check(whole, ctx, structure_only=True)

    def check_step(self, step: Step, job: Job, wf: Workflow, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if step.run is None or not _posix_step(step, job):
            return
        if ASCEND_WORKFLOW in src.kinds:
            jobs = ascend_jobs(ctx, src.path)
            ascend_job = jobs is None or job.id in jobs
        else:
            ascend_job = False
        if ascend_job:
            unit = step_unit(src.path, step)
            if unit is not None:
                env = set(wf.env) | set(job.env) | set(step.env)
                yield from _check(unit, ctx, env)
        # Event text pasted into the script: in an Ascend job, or in any workflow of a repository that is about
        # Ascend as a whole (its CI trigger and bot workflows run on plain runners, and are its NPU CI all the same).
        if ascend_job or npu_project(ctx):
            yield from _event_text_in_run(src.path, step, ctx)

    def check_dockerfile(self, df: Dockerfile, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        for instr in df.of("RUN"):
            unit = run_unit(src.path, instr)
            if unit is not None:
                yield from _check(unit, ctx)


# A placeholder for the k-th `${{ }}` of a run: one plain word piece, so that the lexer reads the quoting around it.
_HOLDER = "NPUREVIEWEXPR{}X"
_HELD = lazyre.compile(r"NPUREVIEWEXPR(\d+)X")
_QUOTING = {
    "'": (
        "inside single quotes",
        "the first `'` in the value (an apostrophe in a title, a body or a commit message) ends the string and "
        "the rest is read as shell",
    ),
    '"': (
        "inside double quotes",
        'a `"` in the value ends the string, and a backtick or `$(` in it runs as a command',
    ),
    "": (
        "unquoted",
        "the value is split into words, and a quote, `;`, `(` or backtick in it is read as shell",
    ),
}


def _event_text(expr: str, ctx: Context) -> str | None:
    """The expression's whole value is text from the event (`toJSON(github.event)`, `github.event.issue.title`):
    the name of an environment variable that would carry it, else None. A test of the text
    (`contains(github.event.comment.body, '/retest')`) is a boolean, not the text."""
    facts = ctx.facts.event_text
    m = re.fullmatch(r"(?i:tojson)\(\s*([\w.\-*\[\]']+)\s*\)", expr)
    if m is not None:
        arg = m.group(1)
        if any(arg == c or arg.startswith(c + ".") for c in facts.json_contexts):
            last = re.split(r"[.\[\]']+", arg.strip(".[]'"))[-1]
            return ("EVENT" if last == "github" else last.upper().replace("-", "_")) + "_JSON"
        return None
    m = re.fullmatch(r"github\.event((?:\.[\w-]+|\.\*|\[[^\]]*\])+)", expr)
    if m is None:
        return None
    last = re.split(r"[.\[\]'*]+", m.group(1).strip(".[]'*"))[-1]
    return last.upper() if last in facts.free_text_fields else None


def _event_text_in_run(path: str, step: Step, ctx: Context) -> Iterator[Hit]:
    """`${{ }}` whose value is text from the event, pasted into the script of a `run:`: GitHub expands it into
    the script's text before the shell reads it, so the value's own quotes are read as the script's. Through
    `env:` the value is a variable's, which the shell never reads as code. Heredoc bodies and comments are left
    out (the lexer drops them); an expression after a `$(` or backtick in its word is left alone."""
    if step.run is None:
        return
    lines = step.run.text_lines()
    if not any("${{" in t for _, t in lines):
        return
    exprs: list[tuple[str, int, str]] = []  # (expression, physical line, variable for env:)

    held: list[tuple[int, str]] = []
    for n, text in lines:
        out: list[str] = []
        pos = 0
        for m in EXPR.finditer(text):
            expr = m.group(1)
            var = _event_text(expr, ctx)
            out.append(text[pos : m.start()])
            if var is None:
                out.append("x")
            else:
                out.append(_HOLDER.format(len(exprs)))
                exprs.append((expr, n, var))
            pos = m.end()
        held.append((n, "".join(out) + text[pos:]))
    if not exprs:
        return
    reported: set[int] = set()
    for toks in lex(Source.lines(held)).tokens():
        for tok in toks:
            words = tok.elements if isinstance(tok, ArrayWord) else (tok,) if isinstance(tok, Word) else ()
            for word in words:
                for m in _HELD.finditer(word.raw):
                    k = int(m.group(1))
                    quote = _quote_at(word.raw, m.start())
                    if quote is None or k in reported:
                        continue
                    reported.add(k)
                    expr, line, var = exprs[k]
                    where, breaks = _QUOTING[quote]
                    yield Hit(
                        path,
                        line,
                        f"`${{{{ {expr} }}}}` is pasted into the script {where}: GitHub expands it into the step's "
                        f"text before the shell runs, so {breaks}: the step fails (or runs something else) on the "
                        f"first event whose text holds one. Pass it through the step's `env:` "
                        f'(`{var}: ${{{{ {expr} }}}}`) and use `"${var}"` in the script.',
                        severity=Severity.WARNING,
                        cause=f"event-text:{expr}",
                    )


def _quote_at(raw: str, offset: int) -> str | None:
    """The quoting in effect at `offset` of a word as written: `'`, `"` or "" (none); None after a `$(` or a
    backtick (a nested script this scan does not follow)."""
    quote = ""
    i = 0
    while i < offset:
        c = raw[i]
        if quote == "'":
            if c == "'":
                quote = ""
        elif c == "\\":
            i += 1
        elif c == "`" or (c == "$" and raw[i + 1 : i + 2] == "("):
            return None
        elif c == "'" and not quote:
            quote = "'"
        elif c == '"':
            quote = "" if quote == '"' else '"'
        i += 1
    return quote


def _posix_step(step: Step, job: Job) -> bool:
    """The step runs in bash or sh (the default on Linux runners), not python or PowerShell."""
    shell = step.node.scalar("shell")
    if shell is None:
        defaults = job.node.get("defaults")
        run = defaults.get("run") if defaults is not None and defaults.is_map else None
        shell = run.scalar("shell") if run is not None and run.is_map else None
    return shell is None or shell.split()[0].rsplit("/", 1)[-1] in ("bash", "sh")


def _check(unit: ShellUnit, ctx: Context, env: set[str] | None = None, structure_only: bool = False) -> Iterator[Hit]:
    """The unit's findings, one per cause: the same mistake on consecutive lines (a block of
    `export X = 1` lines) is one finding over those lines, with one suggestion for all of them. `structure_only`:
    only what the shell rejects (an unclosed or stray `if`, loop, `case` or quote)."""
    hits = list(_findings(unit, ctx, env, structure_only))
    i = 0
    while i < len(hits):
        j = i + 1
        while (
            j < len(hits) and _adjacent(ctx, unit, hits[j - 1].line, hits[j].line) and _kind(hits[j]) == _kind(hits[i])
        ):
            j += 1
        if j == i + 1:
            yield hits[i]
        else:
            group = hits[i:j]
            fixes = [h.suggestion for h in group]
            yield Hit(
                unit.path,
                group[0].line,
                f"{group[0].message} The same on line{'s' if j - i > 2 else ''} "
                + ", ".join(str(h.line) for h in group[1:])
                + ".",
                end_line=group[-1].line,
                cause=group[0].cause,
                suggestion=(
                    "\n".join(f for f in fixes if f is not None)
                    if all(f is not None for f in fixes) and group[-1].line - group[0].line == len(group) - 1
                    else None
                ),
            )
        i = j


def _adjacent(ctx: Context, unit: ShellUnit, a: int, b: int) -> bool:
    """Line b follows line a with nothing but blank or comment lines between them."""
    if b <= a or b - a > 3:
        return False
    src = ctx.source(unit.path)
    return src is not None and all(
        src.line(n).strip() in ("",) or src.line(n).lstrip().startswith("#") for n in range(a + 1, b)
    )


def _kind(hit: Hit) -> str:
    """What a finding says, less the words it quotes (two lines of one mistake say the same)."""
    return re.sub(r"`[^`]*`", "", hit.message)


# Pre-tests: the text of every mistake this rule reports matches one of these (most units match none, and are not
# walked at all). A match only says "look closer"; the walk decides. Each pattern starts with a literal, which the
# regex engine finds fast (a pattern that starts with a class or a look-behind costs ten times as much).
_QUICK = (
    lazyre.compile(r"^[ \t]*(?:\|\|?|&&|\|&)", re.M),  # a line that starts with an operator
    lazyre.compile(r"(?:export|local|declare|readonly|typeset)[ \t][^\n;&|]*?(?:=[ \t]+[^\s\\]|[ \t]\$\{?[A-Za-z_])"),
    lazyre.compile(r"cd(?:\.\.?|/|~)"),  # cd..
    lazyre.compile(
        r" -(?:[eric]|-editable|-requirement|-constraint|-index-url|-extra-index-url|-find-links|-target)"
        r"[ \t]+-"
    ),  # pip's value option followed by an option
    lazyre.compile(r"(?:-i|-f|-url|-links)[ \t=]+\S+[ \t]+https?://"),  # two URLs for one option
    lazyre.compile(r"(?:-b|--branch)[ \t=]+[0-9a-f]{7,40}\b"),  # clone -b <sha>
    lazyre.compile(r"(?:-b|--branch)[ \t=]+(?:https?://|git@|ssh://)"),  # clone -b <url>: the branch left out
    lazyre.compile(r" -U\S*="),  # cmake -UX=ON
    lazyre.compile(r"--[A-Za-z][\w-]*=[A-Za-z0-9_.]+--[A-Za-z]"),  # --worker_num=2--local_worker_num=2
    lazyre.compile(r"-[\w-]+[ \t]+[A-Z][A-Z0-9_]{2,}(?:[ \t]|$)", re.M),  # -t TAGS
    lazyre.compile(r"-[\w-]+=[A-Z][A-Z0-9_]{2,}(?:[ \t]|$)", re.M),  # --data_url=DATA_PATH
    lazyre.compile(r'"[A-Z][A-Z0-9_]{2,}"'),  # ./bin "$A" "NAME"
    lazyre.compile(r"""-[zndfesrwxLhbcpS][ \t]+["']?[A-Za-z_]\w*["']?[ \t]"""),  # [ -z "name" ]
    lazyre.compile(r"\$[ \t]+[(A-Za-z_]"),  # X= $ (cmd), " $ NPROC"
)
_BLANK_EQ = lazyre.compile(r" [ \t]*=")
_BEFORE_EQ = lazyre.compile(
    r"(?:.*(?:[;&|]|\bthen|\bdo|\belse))?[ \t]*(?:(?:export|local|declare|readonly|typeset)[ \t]+(?:-\w+[ \t]+)*)?"
    r"[A-Za-z_]\w*[ \t]*"
)
_AMP = lazyre.compile(r"&(?![&>])[ \t]*[^\s#&]")
_QUOTED_WITH_BLANK = lazyre.compile(r"=[\"'][^\"'\n]*?\S[ \t]+\S")  # NAME="a b": the name is read backwards
_NAME_AT_END = lazyre.compile(r"[A-Za-z_]\w*\Z")
_OPTION_VARIABLE = lazyre.compile(r" --?[A-Za-z][\w-]*[ \t]+\$\{?([A-Za-z_]\w*)")


def _split_value_suspect(text: str) -> bool:
    """A variable assigned a quoted string with a blank, then passed unquoted as an option's value."""
    passed = {m.group(1) for m in _OPTION_VARIABLE.finditer(text)}
    if not passed:
        return False
    for m in _QUOTED_WITH_BLANK.finditer(text):
        name = _NAME_AT_END.search(text, max(0, m.start() - 64), m.start())
        if name and name.group(0) in passed:
            return True
    return False


_TOOL_WORD = lazyre.compile(r"(git|pip3?|docker|apt-get|apt)[ \t]+(?:-\S+[ \t]+)*([a-z][a-z-]{3,})")
# A reserved word where a command starts or ends (after a blank, `;`, `&`, `|`, `(`; before a blank or `;`).
_KEYWORD = lazyre.compile(r"[\s;&|(](if|fi|then|elif|case|esac|for|while|until|select|done|do)(?=[\s;)]|$)", re.M)
_COMMENT_LINE = lazyre.compile(r"(?m)^[ \t]*#.*")
# A line that starts with a case pattern (`npu)`, `a|b)`, `*)`, `(x)`) and the ends of arms
_ARM = lazyre.compile(r"^[ \t]*\(?[^\s()#;|&<>=$`]+(?:[ \t]*\|[ \t]*[^\s()#;|&<>=$`]+)*[ \t]*\)", re.M)


_CUT_BY_APOSTROPHE = lazyre.compile(r"'[^'\n]*\n[^']*[A-Za-z]'[A-Za-z]")


def _worth_walking(unit: ShellUnit, ctx: Context) -> bool:
    """The cheap no: nothing in the unit's text can be one of this rule's mistakes."""
    text = unit.source.text
    if any(rx.search(text) for rx in _QUICK):
        return True
    for m in _BLANK_EQ.finditer(text):  # `NAME =value`: what comes before the `=` on its line
        start = text.rfind("\n", 0, m.start()) + 1
        if "#" not in text[start : m.start()] and _BEFORE_EQ.fullmatch(text, start, m.start()):
            return True
    for m in _AMP.finditer(text):  # a job sent to the background in the middle of a line
        if m.start() > 0 and text[m.start() - 1] not in "&>|<":
            return True
    if _split_value_suspect(text):
        return True
    known = ctx.facts.shell_tools.subcommands
    for m in _TOOL_WORD.finditer(text):
        before = text[text.rfind("\n", 0, m.start()) + 1 : m.start()].rstrip(" \t")
        if before and before[-1] not in ";&|(" and not before.endswith(("then", "do", "sudo", "else")):
            continue  # not where a command starts (`apt-get install git curl`)
        tool = "pip" if m.group(1).startswith("pip") else m.group(1)
        if m.group(2) not in known.get(tool, ()):
            return True
    if unit.where != "docs" and lex(unit.source).unclosed_quote is not None:
        return True  # the lexing other rules share (memoised): a quote left open to the end
    if "'" in text and _CUT_BY_APOSTROPHE.search(text):
        return True  # single quotes over lines, the first to close them inside a word (_apostrophe_cut)
    return not _balanced(text)


def _balanced(text: str) -> bool:
    """The reserved words that open and close if/case/loops come in matching numbers (then the structure walk
    would find nothing wrong, save a glued `thenX`, which unbalances them too). Counted again without comment
    lines when the first count does not balance."""
    return _counts_balance("\n" + text) or _counts_balance("\n" + _COMMENT_LINE.sub("", text))


def _counts_balance(text: str) -> bool:
    counts = Counter(_KEYWORD.findall(text))
    loops = counts["for"] + counts["while"] + counts["until"] + counts["select"]
    return (
        counts["if"] == counts["fi"] == counts["then"] - counts["elif"]
        and counts["case"] == counts["esac"]
        and loops == counts["done"] == counts["do"]
        and not (counts["case"] and _arm_unended(text))
    )


def _arm_unended(text: str) -> bool:
    """A line that starts with a case pattern after a line that ends no arm (`;;`, `;&`, `;;&`) and opens no
    case (`in`): an arm may lack its `;;`."""
    for m in _ARM.finditer(text):
        before = text[: m.start()].rstrip()
        while before:
            start = before.rfind("\n") + 1
            last = before[start:].strip()
            if last and not last.startswith("#"):
                break
            before = before[:start].rstrip()
        else:
            continue
        if not last.endswith((";;", ";&", ";;&", " in", "\tin")) and last != "in":
            return True
    return False


def _findings(unit: ShellUnit, ctx: Context, env: set[str] | None, structure_only: bool = False) -> Iterator[Hit]:
    if not _worth_walking(unit, ctx):
        return
    if unit.where == "docs":
        src = ctx.source(unit.path)
        if src is None or not doc_is_ascend(ctx, src):
            return
    parsed = unit_shell(unit)
    cut = _apostrophe_cut(unit, parsed.commands)
    if cut is not None:
        # What the shell reads after the apostrophe follows from it: one cause, said on the apostrophe's line.
        yield cut
        yield from _findings_before(unit, ctx, env, structure_only, parsed, cut.line)
        return
    yield from _findings_before(unit, ctx, env, structure_only, parsed, None)


def _findings_before(
    unit: ShellUnit, ctx: Context, env: set[str] | None, structure_only: bool, parsed: UnitShell, until: int | None
) -> Iterator[Hit]:
    """The unit's findings (on lines before `until`, when given)."""
    for hit in _all_findings(unit, ctx, env, structure_only, parsed):
        if until is None or hit.line < until:
            yield hit


def _all_findings(
    unit: ShellUnit, ctx: Context, env: set[str] | None, structure_only: bool, parsed: UnitShell
) -> Iterator[Hit]:
    strays = [e for e in parsed.errors if e.what == "stray"]
    # The first word that belongs to nothing is where the shell stops; the rest follow from it.
    said = [
        (e, _arm_left_open_by_change(ctx, unit, e, h))
        for e in parsed.errors
        if (e.what != "stray" or e is strays[0]) and (h := _structure(unit, e)) is not None
    ]
    # The first quote left open that is reported: what the shell reads after it follows from it (an `if` with no
    # `then` after a backquote left open on its line is the quote's consequence, not a second mistake).
    quote_line = min((h.line for e, h in said if e.what == "unclosed-quote"), default=None)
    # What the shell cannot parse in one unit is one cause: it stops at the first error, and the others are often
    # the same damage seen again (a retry block cut off lost its `then ... fi` and its loop's `done`; sweep-r31
    # judged the second comment a duplicate). One comment, naming the other lines.
    structure = f"the shell cannot parse {unit.path} (from line {min((h.line for _e, h in said), default=0)})"
    for err, hit in said:
        if quote_line is None or err.what == "unclosed-quote" or err.line < quote_line:
            yield dataclasses.replace(hit, cause=structure) if len(said) > 1 else hit
    cmds = parsed.commands
    values = _literal_values(cmds)
    if structure_only:
        # Besides what the shell rejects, what is wrong on every device alike: a test of a variable's name (always
        # true or false) and a blank after `$`.
        for cmd in cmds:
            own = _own_words(cmd.words)
            if own and own[0].unquoted in ("[", "[[", "test"):
                yield from _constant_test(unit, ctx, own, values)
        yield from _dollar_blank(unit, ctx, _assigned_names(cmds))
        return
    defined = set(values) | (env or set())
    used = _used_names(unit) if defined else set()
    as_command = {
        m.group(1) for c in cmds if c.words and (m := re.fullmatch(r"\$\{?([A-Za-z_]\w*)\}?", c.words[0].raw))
    }
    for k, cmd in enumerate(cmds):
        if not cmd.words:
            continue
        for hit in _command(unit, ctx, cmd, cmds[k + 1 :], values, defined & used, as_command):
            yield hit
    yield from _dollar_blank(unit, ctx, _assigned_names(cmds))


def _arm_left_open_by_change(ctx: Context, unit: ShellUnit, err: StructureError, hit: Hit) -> Hit:
    """A `case` arm left without `;;` is said on its last line, which a change that adds the next arm (the usual
    way: a `custom_cpu)` arm written between `custom_npu)`'s command and its `;;`) leaves untouched: the change is
    the cause all the same."""
    if (
        err.what == "no-arm-end"
        and not ctx.is_added_line(unit.path, err.line)
        and ctx.is_added_line(unit.path, err.end_line)
    ):
        return dataclasses.replace(hit, caused_by_change=True)
    return hit


def _apostrophe_cut(unit: ShellUnit, cmds: Sequence[UnitCommand]) -> Hit | None:
    """A single-quoted text over several lines (a `python3 -c '...'` program) that an apostrophe inside a word
    ends (`# Normalize ModelScope's cache`): the shell reads the rest of the program as commands, up to the next
    `'`. 502022240018/MomentSeek's model script did so, and the rule reported the Python lines that followed as
    shell (`source = Path(path)`, an `if` with no `then`: rs-r53, judged false); the project removed the line."""
    for cmd in cmds:
        for k, word in enumerate(cmd.words):
            raw = word.raw
            if not raw.startswith("'"):
                continue
            end = raw.find("'", 1)
            if end < 2 or "\n" not in raw[1:end] or not raw[end - 1].isalpha():
                continue
            if end + 1 >= len(raw) or not raw[end + 1].isalpha():
                continue
            opened = word.line
            line = word.line_at(end)
            start = raw.rfind("\n", 0, end) + 1
            piece = raw[start : end + 1] + re.match(r"\w*", raw[end + 1 :]).group()  # type: ignore[union-attr]
            shown = piece.split()[-1] if piece.split() else piece
            if k >= 2 and cmd.words[k - 1].raw in ("-c", "-e"):
                what = f" (the program of `{cmd.words[k - 2].raw} {cmd.words[k - 1].raw}`)"
            else:
                what = f" (an argument of `{cmd.words[0].raw}`)" if k else ""
            return Hit(
                unit.path,
                line,
                f"The `'` in `{shown}` ends the single-quoted text opened on line {opened}{what}: the shell reads "
                "what follows as words and commands, up to the next `'`, and the quoted text is cut here. Write the "
                "apostrophe another way (`'\\''` closes, adds one and reopens), or pass the text in a heredoc.",
            )
    return None


_OPENER_OF = {
    "then": "`if`",
    "elif": "`if`",
    "else": "`if`",
    "fi": "`if`",
    "do": "loop",
    "done": "loop",
    "esac": "`case`",
    "}": "`{`",
}


def _closer_of(keyword: str) -> str:
    """The word that closes an `if`, `case` or loop."""
    return {"if": "fi", "case": "esac"}.get(keyword, "done")


# A docs excerpt's line that stands for the lines left out (`......`, `...`, `…`), not a command.
_PLACEHOLDER_LINE = lazyre.compile(r"[ \t]*(?:\.{3,}|…+)[ \t]*")


def _physical_line(source: Source, line: int) -> str:
    """The text of physical line `line` of `source` ("" when the source has no such line)."""
    start = 0
    text = source.text
    while start <= len(text):
        end = text.find("\n", start)
        if source.line_at(start) == line:
            return text[start : end if end >= 0 else len(text)]
        if end < 0:
            return ""
        start = end + 1
    return ""


def _structure(unit: ShellUnit, err: StructureError) -> Hit | None:
    if err.what == "stray" and unit.where == "docs":
        return None  # a `fi` or `done` without its opener in a docs block: a fragment
    if unit.where == "docs" and err.what in ("unclosed", "unclosed-quote"):
        return None  # a docs block may show the start of a construct the next block ends
    if err.what == "unclosed-quote" and err.keyword not in ('"', "'"):
        opener = "a backquote (`` ` ``)" if err.keyword == "`" else f"`{err.keyword}`"
        return Hit(
            unit.path,
            err.line,
            f"Shell syntax error: {opener} opened in the command on line {err.line} is never closed, so the shell "
            "reads on to the end of the script looking for its end and stops there with a syntax error: nothing from "
            f"line {err.line} on runs.",
        )
    if err.what == "unclosed-quote":
        quote = "double" if err.keyword == '"' else "single"
        return Hit(
            unit.path,
            err.line,
            f"Shell syntax error: the {quote} quotes (`{err.keyword}`) from the command on line {err.line} on do "
            "not pair up (one is missing or one too many, at or before this line): the shell reads what follows "
            "inside and outside quotes the wrong way round, to the end of the script, and stops there with a syntax "
            "error: nothing from that command on runs.",
        )
    if err.what == "crossed":
        closer = _closer_of(err.keyword)
        return Hit(
            unit.path,
            err.line,
            f"Shell syntax error: the `{err.keyword}` opened on line {err.line} is not closed with `{closer}` before "
            f"the `{err.closer}` on line {err.end_line}, which closes the construct around it: the shell stops "
            f"there, and neither that construct nor anything after it runs. Add the missing `{closer}`.",
        )
    if err.what == "stray":  # (docs blocks returned above)
        opener = _OPENER_OF.get(err.keyword, "construct")
        return Hit(
            unit.path,
            err.line,
            f"Shell syntax error: `{err.keyword}` on line {err.line} has no open {opener} to belong to (its opener is "
            f"missing or misspelled, or this `{err.keyword}` is one too many): the shell stops there, and nothing "
            "from there on runs.",
        )
    if err.what == "leading-operator":
        if unit.where == "docs" and _PLACEHOLDER_LINE.fullmatch(_physical_line(unit.source, err.line - 1)):
            return None  # `......` stands for the options left out of an excerpt: the command goes on through it
        return Hit(
            unit.path,
            err.line,
            f"Shell syntax error: this line starts with `{err.keyword}`, but the command before it ended at the end "
            f"of its line (it has no `\\`): the shell stops at this line with a syntax error, and nothing from "
            f"here on runs. End the line before with ` \\` so that the command goes on into this one.",
        )
    if err.what == "no-arm-end":
        # Said on the arm's last line, where the `;;` belongs (the line a fix changes), not on the next pattern's.
        return Hit(
            unit.path,
            err.line,
            "Shell syntax error: the `case` arm that ends on this line does not end with `;;`, so the shell reads "
            f"the next pattern (line {err.end_line}) as a command and stops at its `)`: neither the `case` nor "
            "anything after it runs. End the arm here with `;;`.",
        )
    if err.glued is not None:
        word = err.glued.raw
        m = re.match(r"(then|do|else)", word)
        kw = m.group(1) if m else "then"
        return Hit(
            unit.path,
            err.glued.line,
            f"`{shorten(word, 60)}`: `{kw}` is glued to the next word, so the shell reads one word "
            f"`{shorten(word, 30)}` "
            f"and the `{err.keyword}` opened on line {err.line} never gets its `{kw}`: the script stops with a "
            f"syntax error at line {err.end_line}. Put a blank (or a newline) after `{kw}`.",
        )
    if err.what == "no-then":
        what = f"the `if` opened on line {err.line} has no `then` before line {err.end_line}"
    elif err.what == "no-do":
        what = f"the `{err.keyword}` loop opened on line {err.line} has no `do` before line {err.end_line}"
    else:
        what = f"the `{err.keyword}` opened on line {err.line} is never closed with `{_closer_of(err.keyword)}`"
    return Hit(
        unit.path,
        err.line,
        f"Shell syntax error: {what}, so the shell stops with a syntax error: nothing from line {err.line} on runs.",
    )


def _own_words(words: Sequence[Word]) -> Sequence[Word]:
    """The command's own words: leading NAME=value assignments taken off (`X=1 cmd`)."""
    i = 0
    while i < len(words) - 1 and re.match(r"[A-Za-z_]\w*=", words[i].raw):
        i += 1
    return words[i:]


def _command(
    unit: ShellUnit,
    ctx: Context,
    cmd: UnitCommand,
    after: Sequence[UnitCommand],
    values: dict[str, list[str]],
    names: set[str],
    used_as_command: set[str],
) -> Iterator[Hit]:
    own = _own_words(cmd.words)
    name = own[0].raw
    # `NAME =value`, `NAME = value`
    if (
        _NAME.match(name)
        and len(own) > 1
        and own[1].raw.startswith("=")
        and name not in _DECLARERS
        and not _python_like(own)
        and (unit.where != "docs" or name.isupper())  # `input_ids = ...` in a docs block is pseudocode
    ):
        yield _spaced_assignment(unit, ctx, own[0], own[1])
        return
    if name in _DECLARERS:
        yield from _declaration(unit, ctx, own)
        return
    if _CD_GLUED.match(name):
        yield Hit(
            unit.path,
            own[0].line,
            f"`{name}` is not a command (the shell looks for a program named `{name}`): write `cd {name[2:]}`.",
            suggestion=_replace_word(unit, ctx, own[0], f"cd {name[2:]}"),
        )
        return
    argv = [w.unquoted for w in own]
    program = argv[0].rsplit("/", 1)[-1]
    for w in own[1:]:
        glued = _GLUED_OPTION.fullmatch(w.raw) if "--" in w.raw[2:] else None
        if glued is not None:
            first, second = glued.group(1), glued.group(2)
            yield Hit(
                unit.path,
                w.line,
                f"`{w.raw}` is one word: `{program}` gets `{first}` with the value "
                f"`{w.raw[len(first) + 1 :]}`, and `{second}` is never given (a blank is missing before "
                f"`{second}`).",
                suggestion=_replace_word(unit, ctx, w, f"{w.raw[: glued.start(2)]} {w.raw[glued.start(2) :]}"),
            )
    if cmd.op == "&" and cmd.more_on_line and program in _SETUP and not any(c.name == "wait" for c in after[:5]):
        nxt = after[0] if after else None
        if nxt is not None and nxt.line_index == cmd.line_index:
            yield Hit(
                unit.path,
                own[0].line,
                f"`{shorten(' '.join(w.raw for w in own), 60)} &` sends `{program}` to the background, so "
                f"`{shorten(' '.join(w.raw for w in nxt.words), 40)}` runs at once, before it has finished (the "
                "clone, download or install is not there yet). Use `&&` to run them one after the other.",
            )
    yield from _subcommand(unit, ctx, own, argv, program)
    if program in ("pip", "pip3") or (program.startswith("python") and argv[1:3] == ["-m", "pip"]):
        yield from _pip(unit, ctx, own, argv)
    elif program == "git" and "clone" in argv[1:3]:
        yield from _git_clone(unit, ctx, own, argv)
    elif program == "cmake":
        for w in own[1:]:
            if w.raw.startswith("-U") and "=" in w.raw and "$" not in w.raw:
                yield Hit(
                    unit.path,
                    w.line,
                    f"`cmake {w.raw}`: `-U` removes cache entries that match a pattern, it does not set one, so "
                    f"the option is off in this build. Set it with `-D`: `-D{_cache_name(w.raw)}`.",
                )
    if program in ("[", "[[", "test"):
        yield from _constant_test(unit, ctx, own, values)
    yield from _option_values(unit, ctx, own, values, names, program, used_as_command)
    yield from _quoted_name(unit, ctx, own, values, names, program)


# Two long options written as one word, the second's `--` right after the first's value: `--worker_num=2--local_
# worker_num=2` (a value that only passes options on, `--args=--x=1`, has no value of its own before `--`).
_GLUED_OPTION = lazyre.compile(r"(--[A-Za-z][\w-]*)=[A-Za-z0-9_.]+(--[A-Za-z][\w-]*)(?:=\S*)?")


def _python_like(own: Sequence[Word]) -> bool:
    """`models = [`, `x = dict(...)`, `a == b`: Python (or a comparison) in a block labeled shell."""
    value = own[1].raw[1:] or (own[2].raw if len(own) > 2 else "")
    bare = re.sub(r"\$\{[^}]*\}|\$\([^)]*\)", "", value)  # shell expansions are shell, not Python
    return own[1].raw.startswith("==") or any(c in bare for c in "[{(")


# One habit, one comment: the assignments a change writes with a blank beside `=` (`export ATB_LOG_LEVEL = INFO`
# in one guide, `MASTER_ADDR= 1.2.3.4` in a script) are one cause, however many variables, blocks and files; the
# comment on the first lists the others.
_SPACED = "a blank beside = in an assignment"


def _spaced_assignment(unit: ShellUnit, ctx: Context, name: Word, eq: Word) -> Hit:
    value = eq.raw[1:]
    fixed = f"{name.raw}={value}"
    return Hit(
        unit.path,
        name.line,
        f"`{name.raw} {shorten(eq.raw, 40)}`: with a blank before `=` this is not an assignment; the shell runs "
        f"a command named `{name.raw}` (not found), so `{name.raw}` is never set"
        + (" and `set -e` stops the script here" if unit.where != "docs" else "")
        + f". Write `{shorten(fixed, 50)}` with no blank around `=`.",
        suggestion=_join_assignment(unit, ctx, name),
        cause=_SPACED,
    )


def _declaration(unit: ShellUnit, ctx: Context, own: Sequence[Word]) -> Iterator[Hit]:
    cmdname = own[0].raw
    assigned: set[str] = set()
    args = [w for w in own[1:] if not w.raw.startswith("-")]
    for k, w in enumerate(args):
        raw = w.raw
        nxt = args[k + 1] if k + 1 < len(args) else None
        if _NAME.match(raw) and nxt is not None and nxt.raw.startswith("="):
            value = nxt.raw[1:] or (args[k + 2].raw if k + 2 < len(args) else "")
            yield Hit(
                unit.path,
                w.line,
                f"`{cmdname} {raw} {shorten(nxt.raw, 30)}`: with a blank around `=`, `{cmdname}` gets `{raw}` and "
                f"`{shorten(nxt.raw, 30)}` as separate words; `{raw}` keeps no value and `{cmdname}` fails on "
                f"`{shorten(nxt.raw, 20)}` (not a valid identifier). Write `{cmdname} {raw}={shorten(value, 30)}`.",
                suggestion=_join_assignment(unit, ctx, w),
                cause=_SPACED,
            )
            return
        m = re.match(r"([A-Za-z_]\w*)=", raw)
        if m:
            assigned.add(m.group(1))
            if raw == m.group(0) and nxt is not None and not re.match(r"[A-Za-z_]\w*(=|\Z)", nxt.raw):
                yield Hit(
                    unit.path,
                    w.line,
                    f"`{cmdname} {raw} {shorten(nxt.raw, 30)}`: with a blank after `=`, `{m.group(1)}` is set to "
                    f"an empty string and `{shorten(nxt.raw, 30)}` is read as another name (not a valid "
                    f"identifier). Write `{raw}{nxt.raw}`.",
                    suggestion=_join_assignment(unit, ctx, w),
                    cause=_SPACED,
                )
                return
            continue
        ref = _REF.match(raw)
        if ref and (ref.group(1) in assigned or ref.group(1) in _PATH_LISTS) and "=" not in raw:
            var = ref.group(1)
            yield Hit(
                unit.path,
                w.line,
                f"`{cmdname} ... {raw}`: the blank makes `{raw}` a separate word, which `{cmdname}` reads as "
                f"the name of another variable: when `{var}` already holds a path, that is not a valid identifier, "
                f"so `{cmdname}` fails and the old entries are lost. Join list entries with `:` (`...:{raw}`).",
                suggestion=_colon_join(unit, ctx, w),
            )
            return


def _subcommand(unit: ShellUnit, ctx: Context, own: Sequence[Word], argv: list[str], program: str) -> Iterator[Hit]:
    tool = "pip" if program in ("pip", "pip3") else program
    known = ctx.facts.shell_tools.subcommands.get(tool)
    if not known:
        return
    k = 1
    while k < len(argv) and argv[k].startswith("-"):
        k += 2 if tool == "git" and argv[k] in ("-C", "-c") else 1
    if k >= len(argv):
        return
    word = argv[k]
    if word in known or "$" in own[k].raw or not re.fullmatch(r"[a-z][a-z-]*", word) or len(word) < 4:
        return
    limit = 1 if len(word) < 6 else 2
    close = sorted((OSA.distance(word, c), c) for c in known if abs(len(c) - len(word)) <= limit)
    if not close or close[0][0] > limit:
        return
    right = close[0][1]
    yield Hit(
        unit.path,
        own[k].line,
        f"`{tool} {word}` is not a {tool} command ({tool} stops with an error); `{tool} {right}` is meant.",
        suggestion=_replace_word(unit, ctx, own[k], right),
    )


def _pip(unit: ShellUnit, ctx: Context, own: Sequence[Word], argv: list[str]) -> Iterator[Hit]:
    if "install" not in argv[1:4]:
        return
    facts = ctx.facts.shell_tools
    value_opts = set(facts.pip_install_value_options)
    index_opts = set(facts.pip_index_options)
    k = argv.index("install") + 1
    while k < len(argv):
        opt = argv[k]
        if opt in value_opts:
            value = argv[k + 1] if k + 1 < len(argv) else None
            if value is not None and value.startswith("-") and value != "-" and "$" not in own[k + 1].raw:
                yield Hit(
                    unit.path,
                    own[k + 1].line,
                    f"`pip install {opt} {value}`: `{opt}` takes a value, so pip reads `{value}` as it"
                    + (" (the editable target)" if opt in ("-e", "--editable") else "")
                    + f" and the command fails. Put the value right after `{opt}` "
                    + (f"(`pip install {value} {opt} .`)." if opt in ("-e", "--editable") else "."),
                )
                return
            if opt in index_opts and k + 2 < len(argv):
                second = argv[k + 2]
                if (
                    re.match(r"https?://", second)
                    and not _PACKAGE_FILE.search(second)
                    and "#egg=" not in second
                    and "$" not in own[k + 2].raw
                ):
                    yield Hit(
                        unit.path,
                        own[k + 2].line,
                        f"`{opt}` takes one URL; the second one, `{shorten(second, 60)}`, is read as a requirement "
                        f"to install and pip fails. Give each index its own `{opt}`.",
                    )
            k += 2
            continue
        k += 1


def _git_clone(unit: ShellUnit, ctx: Context, own: Sequence[Word], argv: list[str]) -> Iterator[Hit]:
    for k, a in enumerate(argv):
        value = None
        if a in ("-b", "--branch") and k + 1 < len(argv):
            value, word = argv[k + 1], own[k + 1]
        elif a.startswith("--branch="):
            value, word = a.split("=", 1)[1], own[k]
        if value is not None and "$" not in word.raw and re.match(r"(?:https?|ssh|git)://|git@", value):
            # The branch name was left out: git takes the URL for the branch, and no repository is left.
            after = [w for w in argv[k + 2 :] if not w.startswith("-")] if a in ("-b", "--branch") else []
            if len(after) <= 1 and not any(re.match(r"(?:https?|ssh|git)://|git@", w) for w in after):
                yield Hit(
                    unit.path,
                    word.line,
                    f"`git clone {a} {shorten(value, 60)}`: `{a}` takes a branch or tag name, so git reads the URL "
                    "as the branch and has no repository left to clone (or takes the target folder for one): the "
                    "clone fails. Name the branch "
                    f"(`git clone {a} <branch> {shorten(value, 60)}`) or drop `{a}`.",
                )
                return
        if value is None or "$" in word.raw or not _HEX.match(value):
            continue
        if not (re.search(r"[0-9]", value) and re.search(r"[a-f]", value)):
            continue
        yield Hit(
            unit.path,
            word.line,
            f"`git clone --branch {value}`: `--branch` takes a branch or tag name, not a commit, so the clone "
            f"fails (`Remote branch {shorten(value, 12)} not found`). Clone, then `git checkout {value}` (or fetch "
            "that commit).",
        )
        return


# A plural name (`--modes`, `decode_modes`, `GPUS`), not `--address` or `--analysis`.
_PLURAL = lazyre.compile(r"(?i)[a-hj-rt-z]s\Z")


# Numbers separated by blanks (`1024 65536 1048576`, or port pairs `8080:8000 9000:9000`): a list of values, never
# one argument. Whether the option takes them all (argparse's `nargs="+"`) or one each time (docker's `-p`, which
# then needs repeating) is the program's to say: quoting would be wrong for either.
_NUMBER = r"\d+(?:[.:/x-]\d+)*"
_NUMBERS = lazyre.compile(rf"\s*{_NUMBER}(?:\s+{_NUMBER})+\s*")


def _a_list(var: str, opt: str, text: str, values: Sequence[str] = ()) -> bool:
    """The value is a list of words on purpose: the script loops over the variable (`for m in $modes`), the
    option or the variable has a plural name (`--modes $decode_modes`: argparse's `nargs='+'` takes them all),
    or every value it is given is a list of numbers (`--bytes-grid $MSG_BYTES` with "1024 65536 1048576", `-p
    $PORTS` with "8080:8000 9000:9000")."""
    if _PLURAL.search(opt.lstrip("-")) or _PLURAL.search(var):
        return True
    if values and all(_NUMBERS.fullmatch(v) for v in values if v.strip()):
        return True
    return re.search(r"\bfor\s+\w+\s+in\b[^;\n]*\$\{?" + re.escape(var) + r"\b", text) is not None


_PLACEHOLDER = lazyre.compile(r"(?i)\byour\b|<[^<>]+>|\bx{3,}\b|\bpath to\b|请|填写|路径")


def _option_values(
    unit: ShellUnit,
    ctx: Context,
    own: Sequence[Word],
    values: dict[str, list[str]],
    names: set[str],
    program: str,
    commands: set[str],
) -> Iterator[Hit]:
    """`--opt $VAR` with VAR holding blanks or nothing; `-t NAME` or `--opt=NAME` where `$NAME` was meant."""
    for k in range(1, len(own) - 1):
        opt = own[k].raw
        if not re.fullmatch(r"--?[A-Za-z][\w-]*", opt):
            continue
        word = own[k + 1]
        ref = re.fullmatch(r"\$\{?([A-Za-z_]\w*)\}?", word.raw)
        if ref and ref.group(1) in values and not _ARG_LIST_NAME.search(ref.group(1)):
            var = ref.group(1)
            # A template's placeholder ("your model ckpt path", "<data dir>") is there to be replaced, not run.
            bad = [v for v in values[var] if re.search(r"\S\s+\S", v) and not _PLACEHOLDER.search(v)]
            # A value with an option in it (`pip install --no-cache-dir`) is a list of words split on purpose.
            if (
                bad
                and not any(re.search(r"(?:^|\s)-", v) for v in values[var])
                and var not in commands
                and not _a_list(var, opt, unit.source.text, values[var])
            ):
                yield Hit(
                    unit.path,
                    word.line,
                    f'`{opt} {word.raw}` is unquoted: `{var}` can hold "{shorten(bad[0], 40)}", which the shell '
                    f"splits into several arguments, so `{opt}` gets only the first word and the others become "
                    f'stray arguments. Quote it: `{opt} "{word.raw}"`.',
                )
                return
        if (
            _CAPS.match(word.raw)
            and (word.raw in names or _from_expansion(word.raw, values))
            and _name_not_meant(unit, program, opt)
            and not _script_rejects(ctx, unit, own, opt)
            and not (program == "docker" and opt in ("-t", "--tag"))  # NPU220's: an image tagged with the word
        ):
            yield Hit(
                unit.path,
                word.line,
                f"`{opt} {word.raw}` passes the literal word `{word.raw}`, not the value of the variable "
                f"`{word.raw}` that this script sets{_how_set(unit, word.raw, values, names)}. "
                f'Write `{opt} "${word.raw}"`.',
                suggestion=_replace_word(unit, ctx, word, f'"${word.raw}"'),
            )
            return
    for w in own[1:]:
        glued = _OPTION_IS_NAME.fullmatch(w.raw)
        if glued is None:
            continue
        opt, var = glued.group(1), glued.group(2)
        if (
            _from_expansion(var, values)
            and _name_not_meant(unit, program, opt)
            and not _script_rejects(ctx, unit, own, opt)
        ):
            yield Hit(
                unit.path,
                w.line,
                f"`{w.raw}` passes the literal word `{var}`, not the value of the variable `{var}` that this "
                f'script sets{_how_set(unit, var, values, names)}. Write `{opt}="${var}"`.',
                suggestion=_replace_word(unit, ctx, w, f'{opt}="${var}"'),
            )
            return


# Options whose value is a variable's name by design: docker/podman `-e NAME` and `--build-arg NAME` pass the
# caller's variable on, mpirun's `-x NAME` exports it to the ranks, bazel's `--action_env=NAME` and `--repo_env`
# pass it to actions, sudo `--preserve-env=NAME`, slurm `--export=NAME`, `[ -v NAME ]`, `[ -z ... ]`.
_NAME_OPTIONS = _NAME_OPTIONS | frozenset(
    {"-x", "--action_env", "--host_action_env", "--repo_env", "--test_env", "--preserve-env", "--export"}
    | {"--env-file", "--pass-env", "--passenv", "--var", "--variable", "--name", "--unset-env"}
)
_OPTION_IS_NAME = lazyre.compile(r"(--?[A-Za-z][\w-]*)=([A-Z][A-Z0-9_]{2,})")


def _from_expansion(var: str, values: dict[str, list[str]]) -> bool:
    """The script sets `var` from an expansion (`VAR=$1`, `VAR=$(cmd)`, `VAR="${X}"`): a value known only when it
    runs, which no one writes out as the word `VAR` by design."""
    return "$" in values.get(var, ())


def _how_set(unit: ShellUnit, var: str, values: dict[str, list[str]], names: set[str]) -> str:
    if var in names:
        return " and uses elsewhere"
    if not _from_expansion(var, values):
        return ""
    found = re.finditer(rf"(?<![\w$]){re.escape(var)}=(\"[^\"\n]*\"|\$\([^)\n]*\)|[^\s;&|]*)", unit.source.text)
    shown = next((f"`{shorten(m.group(0), 40)}`" for m in found if "$" in m.group(1)), "an expansion")
    return f" from {shown}"


def _script_rejects(ctx: Context, unit: ShellUnit, own: Sequence[Word], opt: str) -> bool:
    """The command runs a Python script of the repository (beside the script, one folder up, or from the root:
    where model zoos' launch scripts copy and run it) whose argparse parser is whole and has no `opt`: the option
    is the mistake (NPU117's), and `$NAME` for the word would leave the call failing all the same (a MindSpore
    launch script's `--rank_size=RANK_SIZE` to a train.py that reads RANK_SIZE from the environment, judged false
    blind)."""
    import posixpath

    from npu_review.checks.analysis.pyargs import python_interface

    py = next((w.unquoted for w in own[1:] if w.unquoted.endswith(".py") and "$" not in w.raw), None)
    if py is None:
        return False
    here = posixpath.dirname(unit.path)
    found = {
        c
        for d in (here, posixpath.dirname(here), "")
        if not (c := posixpath.normpath(posixpath.join(d, py))).startswith("..") and ctx.changeset.head.exists(c)
    }
    if len(found) != 1:
        return False
    script = ctx.source(found.pop())
    iface = python_interface(ctx, script) if script is not None else None
    return iface is not None and not iface.accepts(opt)


def _name_not_meant(unit: ShellUnit, program: str, opt: str) -> bool:
    """The option of this program takes a value, not a variable's name (`grep -e NAME`, `read -a NAME`, `env -u
    NAME`, `mpirun -x NAME`, bazel `--action_env=NAME` pass names on purpose), in a script or a CI step (a docs
    block's `--opt NAME` may stand for a value to fill in), and nothing in the unit reads a variable through its
    name (`${!NAME}`: a name passed as a word on purpose)."""
    return (
        program not in _TAKES_NAMES
        and opt not in _NAME_OPTIONS
        and unit.where in ("run", "script")
        and "${!" not in unit.source.text
    )


# A test of one operand (`[ -z X ]`, `[ -d X ]`): the string tests, and the file tests whose operand is a path.
_STRING_TESTS = frozenset({"-z", "-n"})
_FILE_TESTS = frozenset({"-d", "-f", "-e", "-s", "-r", "-w", "-x", "-L", "-h", "-b", "-c", "-p", "-S"})
_BARE_NAME = lazyre.compile(r"([\"']?)([A-Za-z_]\w*)\1")


def _constant_test(unit: ShellUnit, ctx: Context, own: Sequence[Word], values: dict[str, list[str]]) -> Iterator[Hit]:
    """`[ -z "bisheng_path" ]`: the operand is a variable's name (the script sets it, or loops over it: `for
    chipType in ...; do [ -z "chipType" ]`), not its value: the `$` was left out and the test is a constant. A file
    test (`[ -d "out_dir" ]`) counts when the script sets the variable from an expansion and names no file so: a
    folder named like the variable (`mkdir out`) is a real path."""
    for k in range(1, len(own) - 1):
        op = own[k].raw
        if op not in _STRING_TESTS and op not in _FILE_TESTS:
            continue
        word = own[k + 1]
        m = _BARE_NAME.fullmatch(word.raw)
        if m is None:
            continue
        var = m.group(2)
        if var not in values and not (op in _STRING_TESTS and var in _loop_names(unit)):
            continue
        nxt = own[k + 2].raw if k + 2 < len(own) else ""
        if nxt not in ("]", "]]", "-a", "-o", "&&", "||", ""):
            continue  # `[ -n x = y ]`: not a one-operand test
        if op in _STRING_TESTS:
            what = f"the word is never empty, so the test is always {'false' if op == '-z' else 'true'}"
        else:
            if not _from_expansion(var, values) or _names_a_file(unit, var):
                continue
            what = f"the test looks for a file named `{var}` in the working directory, not at the path it holds"
        test = " ".join(w.raw for w in own)
        fixed = " ".join(f'"${var}"' if w is word else w.raw for w in own)
        yield Hit(
            unit.path,
            word.line,
            f"`{shorten(test, 60)}` tests the literal word `{var}`, not the value of the variable `{var}` that this "
            f"script sets: {what}. Write `{shorten(fixed, 60)}`.",
            suggestion=_replace_word(unit, ctx, word, f'"${var}"'),
        )
        return


def _loop_names(unit: ShellUnit) -> set[str]:
    """The variables of the unit's `for NAME in ...` and `select NAME in ...` loops."""
    return set(re.findall(r"\b(?:for|select)[ \t]+([A-Za-z_]\w*)[ \t]+in\b", unit.source.text))


def _names_a_file(unit: ShellUnit, var: str) -> bool:
    """The unit uses the word as a path elsewhere (`mkdir out`, `cd "out"`, `rm -rf out`, `out/x`)."""
    text = unit.source.text
    word = rf"(?<![\w$={{!-])[\"']?(?:\./)?{re.escape(var)}(?:/|[\"']?(?=[ \t]*(?:$|[;&|)>])))"
    return re.search(word, text, re.M) is not None


def _quoted_name(
    unit: ShellUnit,
    ctx: Context,
    own: Sequence[Word],
    values: dict[str, list[str]],
    names: set[str],
    program: str,
) -> Iterator[Hit]:
    """`./bin "$A" "NAME"`: a quoted positional word that is the name of a variable the script sets from an
    expansion and uses, among arguments that are all values of variables: the `$` was left out."""
    if program in _TAKES_NAMES or program in _DECLARERS or unit.where not in ("run", "script"):
        return
    args = own[1:]
    if not any(_REF.fullmatch(w.raw) and w.raw.startswith('"') for w in args):
        return
    for k, w in enumerate(args):
        m = re.fullmatch(r'"([A-Z][A-Z0-9_]{2,})"', w.raw)
        if m is None:
            continue
        var = m.group(1)
        if k and args[k - 1].raw.startswith("-"):
            continue  # an option's value: _option_values's
        if k + 1 < len(args) and (ref := _REF.fullmatch(args[k + 1].raw)) and ref.group(1) == var:
            continue  # a name and its value (`set_cfg "BATCH_SIZE" "$BATCH_SIZE"`)
        if not _from_expansion(var, values):
            continue
        # Asked last (a pattern per program: hundreds on a large tree, each compiled anew once re's cache is full): a
        # function of the script may take names (`require "MODEL_PATH"`).
        text = unit.source.text
        if "${!" in text or re.search(
            rf"(?m)^[ \t]*(?:function[ \t]+{re.escape(program)}\b|{re.escape(program)}[ \t]*\(\))", text
        ):
            return
        yield Hit(
            unit.path,
            w.line,
            f'`"{var}"` passes the literal word `{var}`, not the value of the variable `{var}` that this script sets'
            f'{_how_set(unit, var, values, set())}: the `$` is missing. Write `"${var}"`.',
            suggestion=_replace_word(unit, ctx, w, f'"${var}"'),
        )
        return


def _assigned_names(cmds: Sequence[UnitCommand]) -> set[str]:
    """Every name the unit's commands assign (`X=1`, `X= cmd`, `export X=...`, `local X`, `A=(...)`)."""
    out: set[str] = set()
    for cmd in cmds:
        for w in cmd.words:
            m = re.match(r"([A-Za-z_]\w*)\+?=", w.raw)
            if m is None:
                if w.raw in _DECLARERS or w.raw.startswith("-"):
                    continue
                if cmd.words[0].raw in _DECLARERS and _NAME.match(w.raw):
                    out.add(w.raw)
                    continue
                break
            out.add(m.group(1))
    return out


# What a blank after `$` reads as: `$ (cmd)` is a syntax error (bash stops at the `(`), `$ NAME` the word `$`
# and the word `NAME` (inside quotes, the text "$ NAME"). A copy/paste that turned `$(` into `$ (`.
_DOLLAR_BLANK = "a blank after $"
_DOLLAR_NAME = lazyre.compile(r"(?<![\\$])\$[ \t]+([A-Za-z_]\w*)")
_PROMPT_PROGRAMS = frozenset({"echo", "printf", "cat", "print", "info", "log"})


def _dollar_blank(unit: ShellUnit, ctx: Context, assigned: set[str]) -> Iterator[Hit]:
    """`X= $ (cmd)`, `--n=" $ NPROC"`: a blank between `$` and `(` or the name of a variable the unit sets. Shell
    prompts (`echo "  $ git am"`: the word after is a command, not a variable of the script) and docs blocks are
    left alone; so is the text of echo and printf, and single-quoted text (awk's `$ 1`)."""
    if unit.where == "docs" or "$" not in unit.source.text:
        return
    for toks in lex(unit.source).tokens():
        program = ""
        start = True
        for i, tok in enumerate(toks):
            if isinstance(tok, Op):
                start = tok.text in (";", "&&", "||", "|", "&", "(", "|&") or start
                if tok.text == "(" and i and _is_word(toks[i - 1], "$"):
                    yield _dollar_hit(unit, ctx, toks[i - 1].line, "$ (", "(")
                continue
            words = tok.elements if isinstance(tok, ArrayWord) else (tok,)
            if isinstance(tok, Word) and start:
                if re.match(r"[A-Za-z_]\w*\+?=", tok.raw) or tok.raw in ("if", "then", "do", "else", "elif", "!"):
                    pass
                else:
                    program = tok.unquoted.rsplit("/", 1)[-1]
                    start = False
            if isinstance(tok, Word) and tok.raw == "$" and i + 1 < len(toks):
                nxt = toks[i + 1]
                if isinstance(nxt, Word) and nxt.raw in assigned and program not in _PROMPT_PROGRAMS:
                    yield _dollar_hit(unit, ctx, tok.line, f"$ {nxt.raw}", nxt.raw)
                continue
            if program in _PROMPT_PROGRAMS:
                continue
            for w in words:
                for m in _DOLLAR_NAME.finditer(w.raw):
                    if m.group(1) in assigned and _quote_at(w.raw, m.start()) == '"':
                        yield _dollar_hit(unit, ctx, w.line_at(m.start()), shorten(m.group(0), 40), m.group(1))
                        break


def _is_word(tok: object, raw: str) -> bool:
    return isinstance(tok, Word) and tok.raw == raw


def _dollar_hit(unit: ShellUnit, ctx: Context, line: int, shown: str, after: str) -> Hit:
    if after == "(":
        what = (
            "the shell reads a command named `$` and stops at the `(` with a syntax error (nothing from here on "
            "runs). Write `$(` with no blank"
        )
    else:
        what = (
            f"`{after}` is never expanded: the shell passes the text `$ {after}` (a `$` and the word), not the "
            f"variable's value. Write `${after}` with no blank"
        )
    return Hit(
        unit.path,
        line,
        f"`{shown}`: a blank after `$`, so {what}.",
        cause=_DOLLAR_BLANK,
        suggestion=_dollar_joined(unit, ctx, line, after),
    )


def _dollar_joined(unit: ShellUnit, ctx: Context, line: int, after: str) -> str | None:
    """The physical line with its one `$ (` (and a blank before it after `=`) or `$ NAME` joined."""
    text = _physical(unit, ctx, line)
    if text is None:
        return None
    if after == "(":
        pattern, new = re.compile(r"(=?)[ \t]*\$[ \t]+\("), r"\1$("
    else:
        pattern, new = re.compile(rf"\$[ \t]+{re.escape(after)}\b"), f"${after}"
    if len(pattern.findall(text)) != 1:
        return None
    return pattern.sub(new, text, count=1)


def _literal_values(cmds: Sequence[UnitCommand]) -> dict[str, list[str]]:
    """NAME -> the values the unit's bare assignments give it (unquoted; None-free: non-literal ones as `$`)."""
    out: dict[str, list[str]] = {}
    for cmd in cmds:
        words = cmd.words
        if not all(re.match(r"[A-Za-z_]\w*=", w.raw) for w in words):
            if words and words[0].raw in _DECLARERS:
                words = tuple(w for w in words[1:] if re.match(r"[A-Za-z_]\w*=", w.raw))
            else:
                continue
        for w in words:
            name, raw = w.raw.split("=", 1)
            out.setdefault(name, []).append(w.unquoted.split("=", 1)[1] if "$" not in raw and "`" not in raw else "$")
    return out


def _used_names(unit: ShellUnit) -> set[str]:
    return set(re.findall(r"\$\{?([A-Za-z_]\w*)", unit.source.text))


# -- suggestions: exact edits of one physical line -----------------------------------------------------------------


def _physical(unit: ShellUnit, ctx: Context, line: int) -> str | None:
    src = ctx.source(unit.path)
    return None if src is None else src.line(line)


def _replace_word(unit: ShellUnit, ctx: Context, word: Word, new: str) -> str | None:
    text = _physical(unit, ctx, word.line)
    if text is None or text.count(word.raw) != 1:
        return None
    return text.replace(word.raw, new)


def _join_assignment(unit: ShellUnit, ctx: Context, name: Word) -> str | None:
    text = _physical(unit, ctx, name.line)
    if text is None:
        return None
    pattern = re.compile(rf"(?<![\w$]){re.escape(name.raw.rstrip('='))}[ \t]*=[ \t]*")
    if len(pattern.findall(text)) != 1:
        return None
    return pattern.sub(name.raw.rstrip("=") + "=", text, count=1)


def _colon_join(unit: ShellUnit, ctx: Context, word: Word) -> str | None:
    text = _physical(unit, ctx, word.line)
    if text is None or text.count(" " + word.raw) != 1:
        return None
    return re.sub(r"[ \t]+" + re.escape(word.raw), ":" + word.raw, text, count=1)


def _cache_name(word: str) -> str:
    """`-USE_X=ON` -> `USE_X=ON` (the `D` left out), `-UFOO=ON` -> `FOO=ON` (`U` typed for `D`)."""
    return word[1:] if word[1:].startswith("USE_") else word[2:]
