"""NPU125: a launch script's argument-count check contradicts its own usage or the arguments it reads."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from npu_review.checks import lazyre
from npu_review.checks.analysis.scripts import script_unit
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import NPU_SCRIPT, SHELL
from npu_review.checks.model import Related, Severity
from npu_review.checks.rule import Hit, Rule

# The counts a check is worked out for: a launch script takes a handful of arguments.
_MOST = 20


class ArgumentCountCheckContradicts(Rule):
    """An NPU launch script's check of its argument count (`if [ $# != 4 ]; then ... exit`) rejects the call its
    own usage message shows, or lets no call through that reaches an argument the script reads.

    Why: Ascend launch scripts take their rank table, device id and paths as positional arguments and open with a
    check of how many they got. When an argument is added (a rank table as the fifth) or the check is edited, the
    two drift apart, and the script can no longer run as documented:
    * mindspore-ai/models' stgcn `run_distribute_train.sh` made the rank table a fifth argument (`$5`, and the
    usage shows five) while its check still exited unless `$# == 4`: `$5` is always empty, and no distributed
    run gets its rank table;
    * its srcnn `run_eval_ascend.sh` exited when `$# -eq 3` (meant `-ne`), with the usage of three arguments: the
    documented call is exactly the one it rejects;
    * its FasterRCNN `run_eval_ascend.sh` kept `-le 5` after the device id became the fifth required argument.

    Checked, in NPU scripts: the checks at the script's top level whose `then` block exits (`exit 1`) and that
    have no `else`, comparing `$#` with a number (`-eq -ne -lt -le -gt -ge`, `== != < >`). Reported: an argument
    `$k` (`${k}`, `${k:...}`) the script's top level reads after the check when every count the checks let
    through is below `k`; and a check that exits on the count the usage it prints asks for (`Usage: bash x.sh [A]
    [B] [C]`: three; an argument marked optional, `[D](option)`, may be left out).

    Not checked: scripts that move their arguments (`shift`, `set --`, `getopts`), arguments read inside a
    function (its own) or inside single quotes (another program's text: `bash -c '... $2 ...' _ "$x" {}`), and
    counts a check compares with a variable.

    Bad:
        if [ $# != 4 ]; then
          echo "Usage: bash run_distribute_train.sh [CODE_PATH] [DATA_PATH] [N_PRED] [CONV_TYPE] [RANK_TABLE]"
          exit 1
        fi
        export RANK_TABLE_FILE=$(realpath $5)

    Good:
        if [ $# != 5 ]; then
          echo "Usage: bash run_distribute_train.sh [CODE_PATH] [DATA_PATH] [N_PRED] [CONV_TYPE] [RANK_TABLE]"
          exit 1
        fi
        export RANK_TABLE_FILE=$(realpath $5)

    Fix: make the check accept the count the script reads and documents.
    """

    id = "NPU125"
    name = "argument-count-check-contradicts"
    severity = Severity.ERROR
    title = "A script's argument-count check rejects its documented call, or every call that reaches an argument"
    kinds = frozenset({SHELL, NPU_SCRIPT})
    needles = ("$#",)

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if "exit" not in src.text or _MOVES.search(src.text):
            return
        guards = _guards(src.lines)
        if not guards or script_unit(ctx, src) is None:
            return
        runtime = (*ctx.facts.ascend_env.families, *ctx.facts.ascend_env.launch)
        yield from _check(src, guards, runtime, lambda lines: ctx.first_added(src.path, lines))


@dataclass(frozen=True)
class _Guard:
    line: int  # the `if` line
    end: int  # its `fi`
    rejected: frozenset[int]  # the counts it exits on (within 0.._MOST)
    shown: str  # the test as written
    usage: tuple[int, int] | None  # (required, all) arguments of the usage it prints, when it prints one


# `if [ $# -ne 4 ]`, `if [[ "$#" != 4 ]]`, `if test $# -lt 2`, at the start of a line (the script's top level).
_GUARD = lazyre.compile(
    r"^if\s+(?:\[\[?|test)\s+\"?\$(?:#|\{#\})\"?\s+(-eq|-ne|-lt|-le|-gt|-ge|==|=|!=|<|>)\s+\"?(\d+)\"?\s*(?:\]\]?)?"
    r"\s*(?:;\s*then\b.*)?$"
)
# `name() {`, `function name {`: a function's own arguments follow.
_FUNCTION = lazyre.compile(
    r"^(?:function\s+)?[A-Za-z_][\w-]*\s*\(\s*\)\s*\{?\s*$|^function\s+[A-Za-z_][\w-]*\s*\{?\s*$"
)
_NESTED = lazyre.compile(r"(?:if|case|for|while|until|select)\b|\[\[?\s|test\s")
_MOVES = lazyre.compile(r"(?m)^\s*(?:shift\b|set\s+--|while\s+getopts\b|getopts\b)|\bshift\s*(?:\d+\s*)?(?:;|$)")
_READ = lazyre.compile(r"\$(?:([1-9])(?![0-9])|\{([1-9])(?:[:}#%/^,-]))")
# `Usage: bash run_eval.sh [DEVICE_ID] [DATA_PATH](optional)`: the script's name, then its arguments in brackets.
_USAGE = lazyre.compile(
    r"(?i)usage\s*[:：]\s*(?:(?:bash|sh)\s+)?\S*\.sh\b((?:\s*\[[^\[\]]+\](?:\s*[(（][^)）]*[)）])?)*)"
)
_ARG = lazyre.compile(r"\[([^\[\]]+)\](\s*[(（][^)）]*[)）])?")
_OPTIONAL = lazyre.compile(r"(?i)option|可选|\.\.\.|^-")
_OPS = {
    "-eq": lambda n, k: n == k,
    "==": lambda n, k: n == k,
    "=": lambda n, k: n == k,
    "-ne": lambda n, k: n != k,
    "!=": lambda n, k: n != k,
    "-lt": lambda n, k: n < k,
    "<": lambda n, k: n < k,
    "-le": lambda n, k: n <= k,
    "-gt": lambda n, k: n > k,
    ">": lambda n, k: n > k,
    "-ge": lambda n, k: n >= k,
}


def _guards(lines: list[str]) -> list[_Guard]:
    """The top-level checks of `$#` whose `then` block exits and that have no `else`."""
    out = []
    for i, line in enumerate(lines):
        m = _GUARD.match(line.rstrip())
        if m is None:
            continue
        op, k = m.group(1), int(m.group(2))
        end = None
        body: list[str] = []
        for j in range(i + 1, min(len(lines), i + 40)):
            text = lines[j]
            if text.startswith(("else", "elif")):
                break
            if text.startswith("fi") and (len(text) == 2 or not (text[2].isalnum() or text[2] == "_")):
                end = j
                break
            if text[:1].strip() and not text.startswith(("then", "#", "echo", "exit", "printf", "return")):
                break  # a line at the top level that is not this check's: not a simple check
            body.append(text)
        if end is None or not any(re.search(r"(?:^|[;&|\s])exit\b", b) for b in body):
            continue
        if any(_NESTED.match(b.strip()) or "&&" in b or "||" in b for b in body):
            continue  # the exit may be conditional: not a plain check of the count
        rejected = frozenset(n for n in range(_MOST + 1) if _OPS[op](n, k))
        # The usage it prints, when it prints one form only (two forms, `x.sh [A] or x.sh [A] [B]`, are two calls).
        # (the message may go on over several lines: `echo "Usage: x.sh [A]` / `[B]"`, or `"..." \` / `"..."`)
        said = " ".join(re.sub(r"[\"'\\]", " ", b) for b in body if not re.match(r"\s*exit\b", b))
        forms = list(_USAGE.finditer(said))
        usage = None
        if len(forms) == 1 and said.count(".sh") == 1:
            args = _ARG.findall(forms[0].group(1))
            rest = said[forms[0].end() :].strip()
            # Every argument in brackets, nothing after them: else the count is not what the usage asks for.
            if args and not rest:
                required = sum(1 for name, note in args if not _OPTIONAL.search(name + (note or "")))
                usage = (required, len(args))
        out.append(_Guard(i + 1, end + 1, rejected, m.group(0).split(";")[0].strip().removeprefix("if").strip(), usage))
    return out


def _top_level_reads(lines: list[str], after: int) -> Iterator[tuple[int, int]]:
    """(line, k) of each `$k` read at the script's top level after line `after` (1-based), outside functions
    and comments."""
    in_function = opened = False
    depth = 0  # the braces open in the function being skipped (`${x}` opens and closes on one line)
    for n, line in enumerate(lines, start=1):
        code = line.split("#", 1)[0] if not line.lstrip().startswith("#!") else ""
        stripped = code.strip()
        if not in_function and _FUNCTION.match(stripped):
            in_function = True
            depth = code.count("{") - code.count("}")
            opened = depth > 0
            continue
        if in_function:
            depth += code.count("{") - code.count("}")
            opened = opened or depth > 0
            if opened and depth <= 0:
                in_function = False
            continue
        if n <= after:
            continue
        for m in _READ.finditer(code):
            yield n, int(m.group(1) or m.group(2))


def _unquoted(text: str) -> str:
    """The text with what single quotes hold blanked out (line breaks kept): the script never expands a `$2` there,
    which is the text of another program (`xargs … bash -c '… $1.$2 …' _ "$subnet" {}`: the inner shell's own
    arguments; NetX-lab/Libra, rs-r62, judged false). Double quotes, escapes and comments are followed so that an
    apostrophe inside them opens nothing; a `$(…)` nested in double quotes is read roughly (its quotes may end the
    double quotes early: a read is then left in, never one made up)."""
    if "'" not in text:
        return text
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
        elif ch == "#" and (i == 0 or text[i - 1] in " \t\n;&|("):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif ch == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
        elif ch == "'":
            end = text.find("'", i + 1)
            stop = n if end < 0 else end
            for k in range(i + 1, stop):
                if out[k] != "\n":
                    out[k] = " "
            i = stop + 1
        else:
            i += 1
    return "".join(out)


def _unused(lines: list[str], n: int, runtime: tuple[str, ...]) -> bool:
    """Line `n` sets a variable (`X=$4`, `export X=$4`) that no later line reads but to print it, and that is not
    one the Ascend runtime reads from the environment it exports (`runtime`: prefixes and names): cruft, whatever
    the argument holds."""
    m = re.match(r"\s*(export\s+)?([A-Za-z_]\w*)=", lines[n - 1])
    if m is None:
        return False
    name = m.group(2)
    if name.startswith(runtime) and (m.group(1) or re.search(rf"\bexport\b[^\n]*\b{name}\b", "\n".join(lines))):
        return False
    use = re.compile(rf"\$\{{?{name}\b")
    return not any(use.search(t) and not t.lstrip().startswith(("echo", "printf")) for t in lines[n:])


def _counts(ns: Iterable[int]) -> str:
    """`exactly 4`, `0 to 3`, `2 or 4` (what a check lets through)."""
    ns = sorted(ns)
    if len(ns) == 1:
        return f"exactly {ns[0]}"
    if ns == list(range(ns[0], ns[-1] + 1)):
        return f"{ns[0]} to {ns[-1]}"
    return ", ".join(map(str, ns[:-1])) + " or " + str(ns[-1])


def _check(
    src: SourceFile, guards: list[_Guard], runtime: tuple[str, ...], first_added: Callable[[Iterable[int]], int]
) -> Iterator[Hit]:
    """`first_added(lines)`: the first of the lines the change wrote (the first line when it wrote none)."""
    rejected = frozenset().union(*(g.rejected for g in guards))
    allowed = [n for n in range(_MOST + 1) if n not in rejected]
    if not allowed:
        return  # (every count exits: a script kept as a stub)
    last_guard = max(guards, key=lambda g: g.end)
    reads = list(_top_level_reads(_unquoted(src.text).split("\n"), last_guard.end))
    read_most = max((k for _line, k in reads), default=0)
    # A documented call the check rejects (when the script reads no argument past the usage's: else the usage is
    # the one short of an argument, and the check is right).
    for g in guards:
        if g.usage is None:
            continue
        required, total = g.usage
        if required in g.rejected and read_most <= total:
            what = _plural(required, "argument")
            asked = f"{what}, what the usage it prints asks for" + (
                f" (with {_plural(total - required, 'more')} optional)" if total > required else ""
            )
            # On the line of the check the change wrote: the usage it prints, when the change added an argument
            # to the usage and left the count (a model zoo's rank table made a fifth argument).
            line = first_added(range(g.line, g.end + 1))
            yield Hit(
                src.path,
                line,
                f"`{g.shown}` exits when the script gets {asked}: the documented call is the one it rejects. Make "
                "the check accept the count the usage shows.",
                related=(Related(src.path, g.line, "the argument-count check"),) if line != g.line else (),
            )
            return
    # An argument no allowed call reaches.
    most = max(allowed)
    if most >= _MOST:
        return
    first = min(g.line for g in guards)
    for line, k in reads:
        if k > most and not _unused(src.lines, line, runtime):
            guard = next((g for g in guards if most + 1 in g.rejected or k in g.rejected), guards[0])
            yield Hit(
                src.path,
                line,
                f"`${k}` is always empty here: the check on line {guard.line} (`{guard.shown}`) exits unless the "
                f"script gets {_counts(allowed)} arguments, so no call passes a {_ordinal(k)} one. Let the check "
                f"accept {_plural(k, 'argument')}, or read the argument meant.",
                related=(Related(src.path, guard.line if guard.line != line else first, "the argument-count check"),),
            )
            return


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 or word == "more" else f"{n} {word}s"


def _ordinal(k: int) -> str:
    return {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth", 6: "sixth", 7: "seventh", 8: "eighth"}.get(
        k, f"{k}th"
    )
