"""What run blocks evaluate to: step outputs, job outputs (for `needs.*`) and the image references a workflow pushes."""

from __future__ import annotations

import fnmatch
import itertools
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from npu_review.checks import lazyre
from npu_review.checks.parsers.gha.expressions import substitute
from npu_review.checks.parsers.gha.values import MAX_ALTERNATIVES, WILD, Val, concat, dedupe
from npu_review.checks.parsers.sh import Command, Source, Word, commands, line_commands, logical_lines, matching_close
from npu_review.checks.parsers.textfilters import filter_text

if TYPE_CHECKING:
    from npu_review.checks.parsers.dockercli import DockerOp, EWord
    from npu_review.checks.parsers.gha.metadata_action import Events, Produced
    from npu_review.checks.parsers.gha.workflow import Job, Scope, Step, Workflow
    from npu_review.checks.parsers.yamlmarks import Node

# -- run blocks: a very small shell evaluator ------------------------------------------------------------------------
# It follows only what image producers and build scripts do: plain assignments, `$(grep '^FROM' FILE | head -1 |
# cut -d: -f2)`-style pipelines, `echo "k=v" >> "$GITHUB_OUTPUT"` (and `$GITHUB_ENV`), `if [ -n "$X" ]` tests on
# known values, `for x in $LIST` loops, shell functions called with arguments, `cd`, and the docker commands
# (`build -t`, `tag`, `push`, `imagetools create`, ...; see checks.parsers.dockercli). Anything else evaluates to
# WILD (unknown), never to a guess.

Reader = Callable[[str], "str | None"]
Origins = frozenset[tuple[str, int]]
_ASSIGN = lazyre.compile(r"([A-Za-z_]\w*)=(.*)\Z", re.S)
_KEYWORDS = frozenset({"then", "else", "do", "{", "}", "!", "time"})
_VAR_SIMPLE = lazyre.compile(r"[A-Za-z_]\w*")
_FUNCTION = lazyre.compile(
    r"\s*(?:function\s+([A-Za-z_][\w:-]*)\s*(?:\(\s*\))?|([A-Za-z_][\w:-]*)\s*\(\s*\))\s*(\{)?\s*(.*)\Z", re.S
)
MAX_CALL_DEPTH = 3  # shell functions followed into functions this deep
_DEFINES = lazyre.compile(r"\s*(?:function\s+)?([A-Za-z_][\w:-]*)\s*\(\s*\)")
# Programs that cannot make a container image: any other command (`make image`, `bash build.sh`, `python x.py`)
# may, so a push after one is not judged (see DockerOp "opaque").
QUIET_PROGRAMS = frozenset(
    {"echo", "printf", "export", "cd", "pushd", "popd", "mkdir", "ls", "cat", "grep", "egrep", "sed", "awk", "cut"}
    | {"tr", "head", "tail", "sort", "uniq", "wc", "tee", "touch", "rm", "cp", "mv", "ln", "chmod", "chown", "date"}
    | {"sleep", "true", "false", "test", "[", "[[", "set", "unset", "shift", "local", "readonly", "declare", "env"}
    | {"printenv", "whoami", "id", "df", "du", "free", "nproc", "uname", "lscpu", "hostname", "curl", "wget", "jq"}
    | {"yq", "git", "pip", "pip3", "apt", "apt-get", "yum", "dnf", "exit", "return", "if", "then", "else", "fi"}
    | {"for", "do", "done", "while", "case", "esac", ":", "exec", "basename", "dirname", "realpath", "find", "xargs"}
    | {"crane", "skopeo", "gh", "tar", "unzip", "zip", "gzip", "md5sum", "sha256sum", "base64", "read", "trap", "wait"}
)
# docker subcommands that make no image (everything else unread is "opaque").
QUIET_DOCKER = frozenset(
    {"login", "logout", "images", "image", "ps", "inspect", "info", "version", "system", "rmi", "rm", "stop"}
    | {"kill", "logs", "exec", "network", "volume", "context", "history", "stats", "cp", "wait", "start"}
    | {"restart", "top", "port", "container"}
)
# Actions that make no image (any other `uses:` step may).
QUIET_ACTIONS = frozenset(
    {"actions/checkout", "actions/cache", "actions/upload-artifact", "actions/download-artifact"}
    | {"actions/setup-python", "actions/setup-node", "actions/setup-go", "actions/github-script"}
    | {"docker/login-action", "docker/setup-buildx-action", "docker/setup-qemu-action", "docker/metadata-action"}
    | {"jlumbroso/free-disk-space", "imjasonh/setup-crane", "aws-actions/configure-aws-credentials"}
)
QUIET_DOCKER_PAIRS = frozenset(
    {("buildx", s) for s in ("create", "use", "inspect", "ls", "rm", "prune", "version", "du", "stop", "imagetools")}
    | {("manifest", s) for s in ("inspect", "annotate", "rm")}
    | {("image", s) for s in ("ls", "inspect", "rm", "prune", "history")}
)


@dataclass
class _Frame:
    """An open `if`/`case`/loop: whether its current branch runs (None: not known)."""

    kind: str  # "if", "case", "loop"
    active: bool | None
    done: bool = False  # an earlier branch surely ran: the rest cannot
    unsure: bool = False  # an earlier branch may have run


@dataclass(frozen=True)
class Called:
    """A recorded command (git, pip, ...): its words expanded, where it runs, and the directory it runs in
    (repository-relative, "" the root; None unknown)."""

    words: tuple[EWord, ...]
    line: int
    end_line: int
    cwd: str | None


class RunEvaluator:
    """Evaluates one `run:` block for one matrix leg: step outputs and pushed image references."""

    def __init__(
        self,
        path: str,
        scope: Scope | None,
        env: dict[str, list[Val]],
        read: Reader,
        cwd: str | None = "",
        record: frozenset[str] = frozenset(),
        focus: tuple[str, ...] = (),
        docker_ops: bool = True,
    ) -> None:
        self.path = path
        self.docker_ops = docker_ops  # False: only what is pushed is wanted (the image inventory), not every op
        self.scope = scope
        self.vars: dict[str, list[Val]] = dict(env)
        self.read = read
        self.outputs: dict[str, list[Val]] = {}
        self.env_out: dict[str, list[Val]] = {}  # `echo "K=V" >> "$GITHUB_ENV"`: the job's env for later steps
        self.pushed: list[tuple[Val, int]] = []
        self.ops: list[DockerOp] = []
        self.called: list[Called] = []
        self.cwd = cwd
        # Where a relative `cd` led from a start nobody knows (a doc's reader, a script's caller: cwd None), as a
        # path from that start (`cd docker/base`: "docker/base"); None once a `cd` goes where nobody can tell.
        self.rel: str | None = "" if cwd is None else None
        self.record = record  # program names whose commands are kept in `called`
        # With `focus`, only the logical lines that hold one of these words, an assignment, `cd` or shell
        # structure are evaluated (a doc's other commands cannot change what those lines do).
        self.focus = focus
        self.positional: list[list[Val]] | None = None
        self.functions: dict[str, tuple[list[tuple[int, str]], str]] = {}  # name -> (physical lines, one-line body)
        self._frames: list[_Frame] = []
        self._depth = 0
        self._site: int | None = None
        self._start: tuple[int, int] = (0, 0)  # where the current command's words are looked for

    # -- expansion -------------------------------------------------------------------------------------------
    def expand(self, raw: str, origin: tuple[str, int]) -> list[Val]:
        """Quote removal plus `$VAR`, `${VAR}`, `${VAR:-x}` and `$(pipeline)` expansion."""
        pieces: list[list[Val]] = []
        i, quote = 0, ""
        lit: list[str] = []

        def push_lit() -> None:
            if lit:
                pieces.append([Val("".join(lit))])
                lit.clear()

        while i < len(raw):
            c = raw[i]
            if quote == "'":
                if c == "'":
                    quote = ""
                else:
                    lit.append(c)
                i += 1
                continue
            if c == "'" and not quote:
                quote = "'"
                i += 1
                continue
            if c == '"':
                quote = "" if quote == '"' else '"'
                i += 1
                continue
            if c == "\\" and i + 1 < len(raw):
                lit.append(raw[i + 1])
                i += 2
                continue
            if c == "`":
                push_lit()
                pieces.append([Val(WILD)])
                end = raw.find("`", i + 1)
                i = len(raw) if end < 0 else end + 1
                continue
            if c == "$" and i + 1 < len(raw):
                push_lit()
                i = self._dollar(raw, i, pieces, origin)
                continue
            lit.append(c)
            i += 1
        push_lit()
        out = concat(pieces)
        return [Val(v.text, v.origins | {origin}) for v in out]

    def _dollar(self, raw: str, i: int, pieces: list[list[Val]], origin: tuple[str, int]) -> int:
        nxt = raw[i + 1]
        if raw.startswith("$((", i):
            end = _matching(raw, i + 1)
            pieces.append([Val(WILD)])
            return end + 1
        if nxt == "(":
            end = _matching(raw, i + 1)
            pieces.append(self.pipeline(raw[i + 2 : end], origin))
            return end + 1
        if nxt == "{":
            end = raw.find("}", i)
            if end < 0:
                pieces.append([Val(WILD)])
                return len(raw)
            body = raw[i + 2 : end]
            m = re.fullmatch(r"([A-Za-z_]\w*|\d+)(?:(:?-)(.*))?", body, re.S)
            if m is None:
                pieces.append([Val(WILD)])
            elif m.group(2):
                value = self._var(m.group(1))
                pieces.append(value if value else self.expand(m.group(3), origin))
            else:
                pieces.append(self._var(m.group(1)) or [Val(WILD)])
            return end + 1
        m = _VAR_SIMPLE.match(raw, i + 1)
        if m:
            pieces.append(self.vars.get(m.group(0)) or [Val(WILD)])
            return m.end()
        if nxt in "123456789" and self.positional is not None:
            pieces.append(self._var(nxt) or [Val(WILD)])
            return i + 2
        if nxt in "0123456789@*#?$!-":
            pieces.append([Val(WILD)])
            return i + 2
        pieces.append([Val("$")])
        return i + 1

    def _var(self, name: str) -> list[Val] | None:
        if name.isdigit():
            k = int(name) - 1
            if self.positional is None or k < 0:
                return None
            return self.positional[k] if k < len(self.positional) else [Val("")]
        return self.vars.get(name)

    # -- pipelines in $(...) -----------------------------------------------------------------------------
    def pipeline(self, text: str, origin: tuple[str, int]) -> list[Val]:
        stages = commands(Source.single(text, origin[1]), glue=False)
        if not stages or any(c.op not in ("|", "", "\n") for c in stages[:-1]) or stages[-1].op == "|":
            return [Val(WILD)]
        streams: list[Val] | None = None
        for stage in stages:
            if stage.redirects:
                return [Val(WILD)]
            args: list[list[Val]] = [self.expand(w.raw, origin) for w in stage.words]
            if any(len(a) != 1 for a in args[:1]) or not args[0][0].known:
                return [Val(WILD)]
            streams = self._stage(args[0][0].text, args[1:], streams)
            if streams is None:
                return [Val(WILD)]
        if streams is None:
            return [Val(WILD)]
        return [Val(v.text.rstrip("\n"), v.origins) for v in streams]

    def _stage(self, cmd: str, args: list[list[Val]], stdin: list[Val] | None) -> list[Val] | None:
        if any(len(a) != 1 for a in args):
            if cmd == "echo" and stdin is None:
                return [Val(" ".join(p.text for p in combo)) for combo in itertools.product(*args)][:MAX_ALTERNATIVES]
            return None
        flat = [a[0] for a in args]
        texts = [v.text for v in flat]
        origins = frozenset().union(*(v.origins for v in flat)) if flat else frozenset()
        if cmd == "echo" and stdin is None:
            if texts and texts[0] in ("-n", "-e"):
                texts = texts[1:]
            return [Val(" ".join(texts) + "\n", origins)]
        if cmd == "cat" and stdin is None and len(texts) == 1:
            return self._file(texts[0], None)
        if cmd == "grep":
            return self._grep(texts, stdin)
        if stdin is None:
            return None
        out: list[Val] = []
        for val in stdin:
            if not val.known:
                return None
            result = filter_text(cmd, texts, val.text)
            if result is None:
                return None
            out.append(Val(result, val.origins | origins))
        return out

    def _file(self, path: str, pattern: re.Pattern[str] | None, invert: bool = False) -> list[Val] | None:
        if WILD in path:
            return None
        norm = re.sub(r"^(\./)+", "", path)
        text = self.read(norm)
        if text is None:
            return None
        kept: list[str] = []
        origins: set[tuple[str, int]] = set()
        for n, line in enumerate(text.splitlines(), start=1):
            if pattern is None or bool(pattern.search(line)) != invert:
                # Dockerfile ARGs inside the line are not shell variables here: unknown.
                kept.append(re.sub(r"\$\{[^}]*\}|\$[A-Za-z_]\w*", WILD, line))
                origins.add((norm, n))
        return [Val("".join(k + "\n" for k in kept), frozenset(origins))]

    def _grep(self, args: list[str], stdin: list[Val] | None) -> list[Val] | None:
        invert = False
        rest: list[str] = []
        for a in args:
            if a in ("-E", "-e", "--"):
                continue
            if a == "-v":
                invert = True
            elif a.startswith("-"):
                return None
            else:
                rest.append(a)
        if not rest:
            return None
        try:
            pattern = re.compile(rest[0])
        except re.error:
            return None
        if len(rest) == 2 and stdin is None:
            return self._file(rest[1], pattern, invert)
        if len(rest) != 1 or stdin is None:
            return None
        out = []
        for val in stdin:
            if not val.known:
                return None
            lines = [ln for ln in val.text.splitlines() if bool(pattern.search(ln)) != invert]
            out.append(Val("".join(ln + "\n" for ln in lines), val.origins))
        return out

    # -- statements --------------------------------------------------------------------------------------
    def run(self, run: Node, outputs: bool = True) -> None:
        """Evaluate the block; without `outputs` (a step without an id: nothing reads them), only what it pushes
        is wanted, so a block that names no `docker` command and holds no expression is not evaluated at all (a
        command's name is a slice of its line's text, and an expression could make one)."""
        self.run_lines(run.text_lines(), outputs)

    def run_lines(self, physical: list[tuple[int, str]], outputs: bool = True) -> None:
        """Evaluate shell text given as physical lines (a `run:` block, a script, a doc's code block)."""
        focus = self.focus
        if focus:
            # the calls of the file's shell functions too: a function may clone or push
            focus += tuple(m.group(1) for _n, t in physical if (m := _DEFINES.match(t)) is not None)
            physical = _prefiltered(physical, focus)
        lines = logical_lines(Source.lines(physical))
        if not outputs and not self.record and not any("docker" in ll.text or "${{" in ll.text for ll in lines):
            return
        if focus:
            lines = [ll for ll in lines if _focused(ll.text, focus)]
        k = 0
        while k < len(lines):
            ll = lines[k]
            k += 1
            m = _FUNCTION.match(ll.text) if "(" in ll.text or "function" in ll.text else None
            if m is not None and (m.group(3) or (k < len(lines) and lines[k].text.strip() == "{")):
                k = self._define(m, lines, k, physical)
                continue
            self._logical(ll.text, ll.line, ll.end_line, physical)

    def _logical(self, text: str, first: int, last: int, physical: list[tuple[int, str]]) -> None:
        pieces = _pieces(physical, first, last)
        if self.scope is not None and "${{" in text:
            alternatives = substitute(text, self.scope.lookup, (self.path, first))
        else:
            alternatives = [Val(text)]
        for alt in alternatives[:MAX_ALTERNATIVES]:
            base = frozenset(alt.origins)
            for cmd in line_commands(alt.text, first, glue=False):
                self._command(cmd, first, pieces, base)

    def _define(self, m: re.Match[str], lines: list, k: int, physical: list[tuple[int, str]]) -> int:
        """Record a function definition; returns the index of the first logical line after it."""
        name = m.group(1) or m.group(2)
        rest = m.group(4).strip()
        if m.group(3) and rest.endswith("}"):  # `f() { a; b; }` on one line
            self.functions[name] = ([], rest[:-1])
            return k
        if not m.group(3):
            k += 1  # the `{` line
        depth = 1
        body: list[tuple[int, str]] = []
        while k < len(lines):
            t = lines[k].text.strip()
            if t.startswith("}"):
                depth -= 1
                if depth == 0:
                    k += 1
                    break
            elif t.endswith("{"):
                depth += 1
            for n, text in physical:
                if lines[k].line <= n <= lines[k].end_line:
                    body.append((n, text))
            k += 1
        self.functions[name] = (body, rest)
        return k

    def _call(self, name: str, args: list[list[Val]], line: int) -> None:
        if self._depth >= MAX_CALL_DEPTH:
            return
        body, inline = self.functions[name]
        saved = self.positional
        self.positional = args
        if self._depth == 0:
            self._site = line  # what the function does is reported on the line that calls it
        self._depth += 1
        try:
            if inline:
                self._logical(inline, 0, 0, [])
            if body:
                self.run_lines(body)
        finally:
            self._depth -= 1
            self.positional = saved
            if self._depth == 0:
                self._site = None

    # -- branches ----------------------------------------------------------------------------------------
    def _skipping(self) -> bool:
        return any(f.active is False for f in self._frames)

    def _uncertain(self) -> bool:
        return any(f.active is None for f in self._frames)

    def _condition(self, words: list[Word], origin: tuple[str, int]) -> bool | None:
        """`[ -n X ]`, `[ -z X ]`, `[ X = Y ]`, `[[ X == Y ]]` (and `!`) on known values; None otherwise."""
        neg = False
        if words and words[0].raw == "!":
            neg, words = True, words[1:]
        if not words or words[0].raw not in ("[", "[[", "test"):
            return None
        inner = words[1:]
        if inner and inner[-1].raw in ("]", "]]"):
            inner = inner[:-1]
        vals: list[str] = []
        for w in inner:
            if w.raw in ("-a", "-o", "&&", "||", "(", ")"):
                return None
            alts = self.expand(w.raw, origin)
            if len(alts) != 1 or not alts[0].known:
                return None
            vals.append(alts[0].text)
        result: bool | None = None
        if len(vals) == 2 and vals[0] in ("-n", "-z"):
            result = (vals[1] != "") if vals[0] == "-n" else (vals[1] == "")
        elif len(vals) == 1:
            result = vals[0] != ""
        elif len(vals) == 3 and vals[1] in ("=", "==", "!="):
            right = inner[2]
            if words[0].raw == "[[" and not right.quoted and any(c in vals[2] for c in "*?["):
                equal = fnmatch.fnmatchcase(vals[0], vals[2])
            else:
                equal = vals[0] == vals[2]
            result = equal if vals[1] != "!=" else not equal
        if result is None:
            return None
        return not result if neg else result

    def _branch(self, head: str, words: list[Word], origin: tuple[str, int]) -> bool:
        """Open, switch or close a branch for `head`; True when the command was a branch keyword."""
        if head == "if":
            skipping = self._skipping()
            cond = None if skipping else self._condition(words[1:], origin)
            self._frames.append(_Frame("if", False if skipping else cond, done=cond is True, unsure=cond is None))
            return True
        if head == "elif":
            frame = self._frames[-1] if self._frames and self._frames[-1].kind == "if" else None
            if frame is None:
                return True
            if frame.done:
                frame.active = False
            else:
                cond = self._condition(words[1:], origin)
                frame.active = None if (frame.unsure and cond is not False) else cond
                frame.done = frame.done or (cond is True and not frame.unsure)
                frame.unsure = frame.unsure or cond is None
            return True
        if head in ("fi", "esac", "done"):
            kind = {"fi": "if", "esac": "case", "done": "loop"}[head]
            for k in range(len(self._frames) - 1, -1, -1):
                if self._frames[k].kind == kind:
                    del self._frames[k:]
                    break
            return True
        if head == "case":
            self._frames.append(_Frame("case", None))
            return True
        if head in ("while", "until"):
            self._frames.append(_Frame("loop", None))
            return True
        if head == "for":
            self._for(words, origin)
            return True
        return False

    def _else(self) -> None:
        frame = self._frames[-1] if self._frames and self._frames[-1].kind == "if" else None
        if frame is not None:
            frame.active = False if frame.done else (None if frame.unsure else True)

    def _for(self, words: list[Word], origin: tuple[str, int]) -> None:
        """`for NAME in WORDS`: NAME takes each word (split as an unquoted expansion is)."""
        if len(words) < 3 or words[2].raw != "in" or not _VAR_SIMPLE.fullmatch(words[1].raw):
            self._frames.append(_Frame("loop", None))
            return
        items: list[Val] = []
        for w in words[3:]:
            for v in self.expand(w.raw, origin):
                if w.quoted or not v.known:
                    items.append(v)
                else:
                    items.extend(Val(t, v.origins) for t in v.text.split())
        if not self._skipping():
            self.vars[words[1].raw] = dedupe(items)[:MAX_ALTERNATIVES] or [Val("")]
        self._frames.append(_Frame("loop", True if items else None))

    # -- commands ----------------------------------------------------------------------------------------
    def _command(self, cmd: Command, first: int, pieces: list[tuple[int, str]], base: Origins) -> None:
        from npu_review.checks.parsers.dockercli import DockerOp

        words = list(cmd.words)
        while words and words[0].raw in _KEYWORDS:
            if words[0].raw == "else":
                self._else()
            words = words[1:]
        if not words:
            return
        head = words[0].raw
        origin = (self.path, _line_of(head, pieces, first))
        if self._branch(head, words, origin) or self._skipping():
            return
        if head in ("export", "local", "readonly", "declare") and len(words) > 1:
            words = [w for w in words[1:] if not w.raw.startswith("-")]
            if words and all(_ASSIGN.match(w.raw) for w in words):
                self._assign(words, first, base)
            return
        if all(_ASSIGN.match(w.raw) for w in words):
            self._assign(words, first, base)
            return
        while words and _ASSIGN.match(words[0].raw):  # `DOCKER_BUILDKIT=1 docker build ...`
            words = words[1:]
        if not words:
            return
        head = words[0].raw
        line = _line_of(head, pieces, first)
        start = pieces.pos if isinstance(pieces, _Pieces) else (0, 0)
        hit = _find(head, pieces, start)
        if hit is not None and isinstance(pieces, _Pieces):
            start = (hit[1], hit[2])  # where this command's words are looked for
            pieces.pos = (hit[1], hit[2] + len(head))
        self._start = start
        if head == "echo":
            self._echo(cmd, words, line, base)
        elif head in ("docker", "sudo"):
            self._docker(words, pieces, first, base)
        elif head in ("cd", "pushd", "popd"):
            self._cd(words, (self.path, line))
        elif head in self.functions:
            args = [self.expand(w.raw, (self.path, line)) for w in words[1:]]
            self._call(head, args, line)
        program = words[0].unquoted.rsplit("/", 1)[-1]
        if (
            self.docker_ops
            and program not in QUIET_PROGRAMS
            and program not in ("docker", "sudo")
            and head not in self.functions
        ):
            # A command that may make images we cannot see (`make image`, `bash build.sh`, `docker-compose`).
            self.ops.append(DockerOp("opaque", line, line))
        if self.record and (program in self.record or re.sub(r"[\d.]+\Z", "", program) in self.record):
            ewords = self._ewords(words, pieces, first, base)
            if self._site is not None:
                ewords = [replace(w, line=self._site) for w in ewords]
                line = self._site
            self.called.append(Called(tuple(ewords), line, max((w.line for w in ewords), default=line), self.cwd))

    def _cd(self, words: list[Word], origin: tuple[str, int]) -> None:
        if words[0].raw == "popd" or len(words) < 2:
            self.cwd = self.rel = None
            return
        alts = self.expand(words[1].raw, origin)
        if len(alts) != 1 or not alts[0].known or alts[0].text.startswith(("~", "-")):
            self.cwd = self.rel = None
            return
        if alts[0].text.startswith("/"):
            self.cwd = posixpath.normpath(alts[0].text)  # absolute: a directory of the machine, not the checkout
            return
        if self.cwd is None:
            if self.rel is not None:
                self.rel = posixpath.normpath(posixpath.join(self.rel, alts[0].text))
            return
        target = posixpath.normpath(posixpath.join(self.cwd, alts[0].text))
        self.cwd = None if target.startswith("..") else ("" if target == "." else target)

    def _assign(self, words: list[Word], first: int, base: Origins) -> None:
        for w in words:
            m = _ASSIGN.match(w.raw)
            assert m is not None
            values = [Val(v.text, v.origins | base) for v in self.expand(m.group(2), (self.path, first))]
            name = m.group(1)
            if self._uncertain() and name in self.vars:
                self.vars[name] = dedupe(self.vars[name] + values)[:MAX_ALTERNATIVES]
            else:
                self.vars[name] = values

    def _echo(self, cmd: Command, words: list[Word], line: int, base: Origins) -> None:
        redirect = cmd.redirects[0] if cmd.redirects else None
        args = words[1:]
        if redirect is not None:  # the words before the first redirection (`echo a >> "$GITHUB_OUTPUT"`)
            args = args[: max(redirect.index - (len(cmd.words) - len(words)) - 1, 0)]
        args = [a for a in args if a.raw not in ("-n", "-e")]
        target = redirect.target.raw if redirect is not None and redirect.target is not None else ""
        origin = (self.path, line)
        texts = concat(self._spaced(args, origin))
        for val in texts:
            val = Val(val.text, val.origins | base)
            name, value = None, None
            into = self.outputs
            if ("GITHUB_OUTPUT" in target or "GITHUB_ENV" in target) and "=" in val.text:
                name, _, value = val.text.partition("=")
                into = self.env_out if "GITHUB_ENV" in target else self.outputs
            elif val.text.startswith("::set-output name="):
                m = re.match(r"::set-output name=([^:]+)::(.*)\Z", val.text, re.S)
                if m:
                    name, value = m.group(1), m.group(2)
            if name is None or value is None or WILD in name:
                continue
            key = name.strip()
            alts = into.get(key, []) if self._uncertain() else []
            alts.append(Val(value, val.origins))
            into[key] = dedupe(alts)[:MAX_ALTERNATIVES]

    def _spaced(self, args: list[Word], origin: tuple[str, int]) -> list[list[Val]]:
        parts: list[list[Val]] = []
        for i, a in enumerate(args):
            if i:
                parts.append([Val(" ")])
            parts.append(self.expand(a.raw, origin))
        return parts

    def _ewords(self, words: list[Word], pieces: list[tuple[int, str]], first: int, base: Origins) -> list[EWord]:
        """The words expanded: an unquoted expansion with a known value is split on blanks, one with an unknown
        value (`$ARGS`) may stand for any words (`spread`)."""
        from npu_review.checks.parsers.dockercli import EWord

        out: list[EWord] = []
        at = self._start
        for w in words:
            hit = _find(w.raw, pieces, at)
            if hit is not None:
                line, at = hit[0], (hit[1], hit[2] + len(w.raw))
            else:
                line = _line_of(w.raw, pieces, first)
            vals = [Val(v.text, v.origins | base) for v in self.expand(w.raw, (self.path, line))]
            plain = not w.quoted and "$" in w.raw
            if plain and len(vals) == 1 and vals[0].known and any(c.isspace() for c in vals[0].text):
                out.extend(EWord(t, (Val(t, vals[0].origins),), line) for t in vals[0].text.split())
                continue
            spread = (
                plain
                and w.raw.lstrip("$").lstrip("{").split("}")[0].replace("_", "").isalnum()
                and any(v.text == WILD for v in vals)
            )
            spread = spread or ("[@]" in w.raw or "[*]" in w.raw or w.raw in ('"$@"', "$@", "$*", '"$*"'))
            out.append(EWord(w.raw, tuple(vals), line, spread))
        if isinstance(pieces, _Pieces) and at > pieces.pos:
            pieces.pos = at
        return out

    def _docker(self, words: list[Word], pieces: list[tuple[int, str]], first: int, base: Origins) -> None:
        from npu_review.checks.parsers.dockercli import DockerOp, docker_op

        raw = [w.raw for w in words]
        if raw[0] == "sudo":
            raw = raw[1:]
            words = words[1:]
            if not raw or raw[0] != "docker":
                return
        refs: list[str] = []
        if "imagetools" in raw and "create" in raw:
            refs = _tag_args(raw)
        elif len(raw) >= 3 and raw[1] == "push":
            refs = [next((r for r in raw[2:] if not r.startswith("-")), "")]
        elif ("build" in raw[1:3]) and "--push" in raw:
            refs = _tag_args(raw)
        for r in refs:
            if not r:
                continue
            line = _line_of(r, pieces, first)
            for val in self.expand(r, (self.path, line)):
                self.pushed.append((Val(val.text, val.origins | base), line))
        if not self.docker_ops:
            return
        ewords = self._ewords(words, pieces, first, base)
        if self._site is not None:
            ewords = [replace(w, line=self._site) for w in ewords]
        op = docker_op(ewords)
        if op is None:
            sub = raw[2] if len(raw) > 2 else ""
            quiet = len(raw) < 2 or raw[1] in QUIET_DOCKER or (raw[1], sub) in QUIET_DOCKER_PAIRS
            if not quiet:
                self.ops.append(DockerOp("opaque", words[0].line, words[0].line))
            return
        # `-t TAGS`: a tag word that is the name of a variable (written without its `$`)
        named = [r for r, _line in op.tag_words if _VAR_SIMPLE.fullmatch(r) and r in self.vars]
        extra = {**op.extra, "cwd": self.cwd if self.cwd is not None else WILD, "var_tags": ",".join(named)}
        if self.cwd is None and self.rel:
            extra["cwd_rel"] = self.rel  # `cd docker/base && docker build .` from where the reader starts
        self.ops.append(replace(op, extra=extra))


def _tag_args(raw: list[str]) -> list[str]:
    out = []
    for i, r in enumerate(raw):
        if r in ("-t", "--tag") and i + 1 < len(raw):
            out.append(raw[i + 1])
        elif r.startswith("--tag="):
            out.append(r[len("--tag=") :])
    return out


def _matching(text: str, open_idx: int) -> int:
    """Index of the parenthesis closing the one at `open_idx`; len(text) when unbalanced."""
    end = matching_close(text, open_idx)
    return end if text[end : end + 1] == ")" else len(text)


class _Pieces(list[tuple[int, str]]):
    """The physical lines of a logical line, and how far its commands have been read (`pos`: piece, offset):
    the second `pip` of `pip install a && \\ pip install b` is found on its own line."""

    pos: tuple[int, int] = (0, 0)


def _pieces(physical: list[tuple[int, str]], first: int, last: int) -> _Pieces:
    """The physical lines of a logical line (comment lines left out, a continuation's backslash cut), where
    `_line_of` looks for a word."""
    out = _Pieces()
    for line_no, text in physical:
        if first <= line_no <= last and text.strip() and not text.lstrip().startswith("#"):
            out.append((line_no, text.rstrip()[:-1] if text.rstrip().endswith("\\") else text))
    return out


_BOUNDARY = " \t\"'=(;|&"


def _find(raw: str, pieces: list[tuple[int, str]], start: tuple[int, int]) -> tuple[int, int, int] | None:
    """(line, piece, offset) of `raw` standing as a word at or after `start`, None when it does not."""
    if not raw:
        return None
    for k in range(start[0], len(pieces)):
        line, text = pieces[k]
        i = text.find(raw, start[1] if k == start[0] else 0)
        while i >= 0:
            if i == 0 or text[i - 1] in _BOUNDARY:
                return line, k, i
            i = text.find(raw, i + 1)
    return None


_STRUCTURE = lazyre.compile(
    r"\s*(?:(?:if|elif|else|fi|for|while|until|do|done|case|esac|then|function|cd|pushd|popd)\b|[{}])"
    r"|.*\)\s*$|.*\(\s*\)\s*\{"
)
_ASSIGNS = lazyre.compile(r"(?:^|[\s;&])(?:export\s+|local\s+|declare\s+)?[A-Za-z_]\w*=")


def _prefiltered(physical: list[tuple[int, str]], focus: tuple[str, ...]) -> list[tuple[int, str]]:
    """The physical lines `_focused` may keep, with the lines that continue them (a trailing backslash, an
    open quote or parenthesis): the others are not even split into words. A line left out is replaced by an
    empty one so that what follows does not read as its continuation."""
    out: list[tuple[int, str]] = []
    keep = False
    for n, text in physical:
        if keep or _focused(text, focus):
            out.append((n, text))
            stripped = text.rstrip()
            keep = stripped.endswith(("\\", "(", "|", "&&")) or (text.count('"') % 2 == 1) or (text.count("'") % 2 == 1)
        else:
            out.append((n, ""))
            keep = False
    return out


def _focused(text: str, focus: tuple[str, ...]) -> bool:
    return any(f in text for f in focus) or _STRUCTURE.match(text) is not None or _ASSIGNS.search(text) is not None


def _line_of(raw: str, pieces: list[tuple[int, str]], default: int) -> int:
    """The physical line that holds the word `raw`: where it stands as a word first (`ARCH=x` is not the tail
    of `CHIP_ARCH=x`), else where it stands in any text."""
    if not raw:
        return default
    if isinstance(pieces, _Pieces):
        hit = _find(raw, pieces, pieces.pos)
        if hit is not None:
            return hit[0]
    fallback = None
    for line, text in pieces:
        i = text.find(raw)
        while i >= 0:
            if i == 0 or text[i - 1] in _BOUNDARY:
                return line
            if fallback is None:
                fallback = line
            i = text.find(raw, i + 1)
    return fallback if fallback is not None else default


# -- what a workflow pushes ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Push:
    """One image reference a workflow pushes (WILD where unknown), with the workflow line that pushes it."""

    ref: Val
    path: str
    line: int
    job: str
    via: str  # "imagetools", "docker-push", "build-push-action"


def _is_false(node: Node | None) -> bool:
    return node is not None and node.is_scalar and node.value.strip().lower() == "false"


def _split_list(text: str) -> list[str]:
    return [t.strip() for t in re.split(r"[\n,]", text) if t.strip()]


@dataclass
class Unit:
    """One job leg as a sequence: its docker commands, recorded commands, and metadata-action tags, in order."""

    job: str
    leg: int
    combo: dict[str, str] | None
    runs_on: tuple[str, ...] = ()  # the job's runner labels for this leg (WILD where unknown)
    ops: list[tuple[int, DockerOp]] = field(default_factory=list)  # (step index, op)
    called: list[tuple[int, Called]] = field(default_factory=list)
    meta: list[tuple[Step, list[Produced] | None]] = field(default_factory=list)


class WorkflowEval:
    """Evaluates every job leg of one workflow: step outputs, job outputs (for `needs.*`) and pushes.

    `inputs`: a called workflow's inputs for one call (None: unknown); `events`: the events the run is for (a
    called workflow runs on its caller's); `objects`: matrix values that are mappings are kept (the image
    graph reads `matrix.build.file`); `record`: programs whose commands are kept in each Unit's `called`."""

    def __init__(
        self,
        workflow: Workflow,
        read: Reader,
        inputs: dict[str, list[Val]] | None = None,
        events: Events | None = None,
        objects: bool = False,
        record: frozenset[str] = frozenset(),
    ) -> None:
        self.wf = workflow
        self.read = read
        self.inputs = inputs
        self.events = events if events is not None else workflow_events(workflow)
        self.objects = objects
        self.record = record
        self.units: list[Unit] = []
        self._done: dict[str, tuple[dict[str, list[Val]], list[Push]]] = {}
        self._busy: set[str] = set()

    def job_output(self, job_id: str, name: str) -> list[Val] | None:
        result = self._job(job_id)
        return result[0].get(name) if result is not None else None

    def pushes(self) -> list[Push]:
        out: list[Push] = []
        for job_id in self.wf.jobs:
            result = self._job(job_id)
            if result is not None:
                out.extend(result[1])
        return out

    def _job(self, job_id: str) -> tuple[dict[str, list[Val]], list[Push]] | None:
        from npu_review.checks.parsers.gha.workflow import legs

        if job_id in self._done:
            return self._done[job_id]
        job = self.wf.jobs.get(job_id)
        if job is None or job_id in self._busy:
            return None
        self._busy.add(job_id)
        outputs: dict[str, list[Val]] = {}
        pushes: list[Push] = []
        for k, scope in enumerate(legs(self.wf, job, self.objects, self.inputs)):
            scope.needs_outputs = self.job_output
            runs_on = job.node.get("runs-on")
            labels: tuple[str, ...] = (WILD,)
            if runs_on is not None and runs_on.is_scalar:
                labels = tuple(v.text for v in scope.resolve(runs_on))
            elif runs_on is not None and runs_on.is_seq:
                labels = tuple(v.text for i in runs_on.items if i.is_scalar for v in scope.resolve(i))
            # The units (every docker command, metadata-action tags) are kept for the image graph (`objects`);
            # the image inventory wants only what is pushed.
            unit = Unit(job.id, k, scope.combo, labels) if self.objects else None
            self._leg(job, scope, pushes, unit)
            if unit is not None:
                self.units.append(unit)
            for name, node in job.outputs.items():
                if node.is_scalar:
                    outputs[name] = dedupe(outputs.get(name, []) + scope.resolve(node))[:MAX_ALTERNATIVES]
        self._busy.discard(job_id)
        self._done[job_id] = (outputs, pushes)
        return self._done[job_id]

    def _leg(self, job: Job, scope: Scope, pushes: list[Push], unit: Unit | None = None) -> None:
        from npu_review.checks.parsers.dockercli import DockerOp
        from npu_review.checks.parsers.gha.metadata_action import is_metadata_action, produced_tags
        from npu_review.checks.parsers.gha.workflow import Scope, env_mapping

        base_env = env_mapping(scope, scope.env_nodes())
        runtime: dict[str, list[Val]] = {}
        workdir = _workdir(self.wf, job)
        for step in job.steps:
            step_scope = Scope(
                scope.workflow,
                job,
                scope.combo,
                scope.step_outputs,
                scope.needs_outputs,
                step.env,
                runtime_env=dict(runtime),
                inputs=scope.inputs,
            )
            if step.run is not None:
                env = dict(base_env)
                env.update(runtime)
                env.update(env_mapping(step_scope, step.env))
                cwd = _step_dir(step, workdir)
                ev = RunEvaluator(
                    self.wf.path, step_scope, env, self.read, cwd=cwd, record=self.record, docker_ops=unit is not None
                )
                ev.run(step.run, outputs=bool(step.id) or "GITHUB_ENV" in step.run.value)
                if step.id:
                    scope.step_outputs[step.id] = ev.outputs
                runtime.update(ev.env_out)
                pushes.extend(Push(ref, self.wf.path, line, job.id, "run") for ref, line in ev.pushed)
                if unit is not None:
                    unit.ops.extend((step.index, op) for op in ev.ops)
                    unit.called.extend((step.index, c) for c in ev.called)
            elif step.uses and step.uses.split("@")[0].endswith("docker/build-push-action"):
                pushes.extend(self._build_push(job, step, step_scope))
                if unit is not None:
                    unit.ops.append((step.index, self._build_op(step, step_scope)))
            elif step.uses and is_metadata_action(step):
                produced = produced_tags(step, _resolver(step_scope), self.events)
                if unit is not None:
                    unit.meta.append((step, produced))
                if step.id:
                    scope.step_outputs[step.id] = _meta_outputs(produced, self.wf.path)
            elif step.uses and unit is not None and step.uses.split("@")[0].strip().lower() not in QUIET_ACTIONS:
                unit.ops.append((step.index, DockerOp("opaque", step.line, step.line)))

    def _build_op(self, step: Step, scope: Scope) -> DockerOp:
        """A build-push-action step as a docker build: file, context, build-args, tags, push, load, platforms."""
        from npu_review.checks.parsers.dockercli import BuildArg, DockerOp

        path = self.wf.path

        def values(key: str) -> tuple[Val, ...] | None:
            node = step.with_.get(key)
            if node is None or not node.is_scalar:
                return None
            return tuple(scope.resolve(node))

        def node_line(key: str) -> int:
            node = step.with_.get(key)
            return node.line if node is not None else step.line

        args: list[BuildArg] = []
        args_known = True
        node = step.with_.get("build-args")
        if node is not None:
            if not node.is_scalar:
                args_known = False
            else:
                for line, text in node.text_lines():
                    item = text.strip()
                    if not item or item.startswith("#"):
                        continue
                    vals = substitute(item, scope.lookup, (path, line))
                    keys = {v.text.partition("=")[0].strip() for v in vals}
                    key = next(iter(keys)) if len(keys) == 1 else ""
                    if not key or WILD in key or not re.fullmatch(r"[A-Za-z_][\w.-]*", key):
                        args_known = False
                        continue
                    value = vals[0] if len(vals) == 1 else Val(WILD)
                    text_value = value.text.partition("=")[2] if "=" in value.text else None
                    args.append(BuildArg(key, Val(text_value, value.origins) if text_value is not None else None, line))
        tags: list[Val] = []
        tag_node = step.with_.get("tags")
        if tag_node is not None and tag_node.is_scalar:
            for line, text in tag_node.text_lines():
                for item in _split_list(text):
                    tags.extend(substitute(item, scope.lookup, (path, line)))
        push = step.with_.get("push")
        outputs = step.with_.get("outputs")
        out_text = outputs.value if outputs is not None and outputs.is_scalar else ""
        pushing = (push is not None and not _is_false(push)) or "push=true" in out_text
        load = step.with_.get("load")
        plat = values("platforms")
        platforms = None
        if plat is not None:
            platforms = (
                tuple(p.strip() for p in plat[0].text.split(",") if p.strip())
                if len(plat) == 1 and plat[0].known
                else ("?",)
            )
        return DockerOp(
            "build",
            step.line,
            step.line,
            targets=tuple(tags),
            args=tuple(args),
            args_known=args_known,
            file=values("file"),
            file_line=node_line("file"),
            context=values("context"),
            platforms=platforms,
            push=pushing,
            load=load is not None and not _is_false(load),
            via="build-push-action",
            extra={"outputs": out_text},
        )

    def _build_push(self, job: Job, step: Step, scope: Scope) -> list[Push]:
        push = step.with_.get("push")
        outputs = step.with_.get("outputs")
        out_text = outputs.value if outputs is not None and outputs.is_scalar else ""
        pushing = (push is not None and not _is_false(push)) or "push=true" in out_text
        if not pushing or "push-by-digest=true" in out_text:
            return []
        tags = step.with_.get("tags")
        if tags is None or not tags.is_scalar:
            return []
        result: list[Push] = []
        for line, text in tags.text_lines():
            for item in _split_list(text):
                for val in substitute(item, scope.lookup, (self.wf.path, line)):
                    result.append(Push(val, self.wf.path, line, job.id, "build-push-action"))
        return result


def workflow_events(wf: Workflow) -> Events:
    """The workflow's own events and `push` filters."""
    from npu_review.checks.parsers.gha.metadata_action import Events
    from npu_review.checks.parsers.gha.workflow import trigger_filters

    branches = tuple(n.value for e, n in trigger_filters(wf, "branches") if e == "push")
    tags = tuple(n.value for e, n in trigger_filters(wf, "tags") if e == "push")
    return Events(frozenset(wf.triggers), branches, tags)


def _resolver(scope: Scope) -> Callable[[str, int], str | None]:
    def resolve(text: str, line: int) -> str | None:
        vals = substitute(text, scope.lookup, (scope.workflow.path, line))
        if len(vals) != 1 or WILD in vals[0].text:
            return None
        return vals[0].text

    return resolve


def _meta_outputs(produced: list[Produced] | None, path: str) -> dict[str, list[Val]]:
    """What `steps.<meta>.outputs.tags` reads as: one alternative per image and rule, `image:tag` with the
    tag's variable part unknown, from the rule's line."""
    if produced is None:
        return {"tags": [Val(WILD)]}
    tags = [Val(f"{p.image}:{p.exact if p.exact is not None else WILD}", frozenset({(path, p.line)})) for p in produced]
    return {"tags": dedupe(tags)[:MAX_ALTERNATIVES] or [Val("")], "version": [Val(WILD)]}


def _workdir(wf: Workflow, job: Job) -> str | None:
    """`defaults.run.working-directory` of the job (else of the workflow), repository-relative; "" the root."""
    for node in (job.node, wf.root):
        defaults = node.get("defaults")
        run = defaults.get("run") if defaults is not None and defaults.is_map else None
        wd = run.get("working-directory") if run is not None and run.is_map else None
        if wd is not None:
            return _relative(wd.value) if wd.is_scalar else None
    return ""


def _step_dir(step: Step, workdir: str | None) -> str | None:
    wd = step.node.get("working-directory")
    if wd is None:
        return workdir
    return _relative(wd.value) if wd.is_scalar else None


def _relative(path: str) -> str | None:
    if "${{" in path or "$" in path or path.startswith(("/", "~")):
        return None
    norm = posixpath.normpath(path)
    return None if norm.startswith("..") else ("" if norm == "." else norm)
