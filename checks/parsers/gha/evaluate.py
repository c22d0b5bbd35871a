"""What run blocks evaluate to: step outputs, job outputs (for `needs.*`) and the image references a workflow pushes."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass

from npu_review.checks.parsers.gha.expressions import substitute
from npu_review.checks.parsers.gha.values import MAX_ALTERNATIVES, WILD, Val, concat, dedupe
from npu_review.checks.parsers.gha.workflow import Job, Scope, Step, Workflow, env_mapping, legs
from npu_review.checks.parsers.sh import Command, Source, Word, commands, line_commands, logical_lines, matching_close
from npu_review.checks.parsers.textfilters import filter_text
from npu_review.checks.parsers.yamlmarks import Node

# -- run blocks: a very small shell evaluator ------------------------------------------------------------------------
# It follows only what image producers do: plain assignments, `$(grep '^FROM' FILE | head -1 | cut -d: -f2)`-style
# pipelines, `echo "k=v" >> "$GITHUB_OUTPUT"`, `docker buildx imagetools create -t REF`, `docker push REF`. Anything
# else evaluates to WILD (unknown), never to a guess.

Reader = Callable[[str], "str | None"]
Origins = frozenset[tuple[str, int]]
_ASSIGN = re.compile(r"([A-Za-z_]\w*)=(.*)\Z", re.S)
_KEYWORDS = frozenset({"then", "else", "do", "{", "}", "!", "time"})
_VAR_SIMPLE = re.compile(r"[A-Za-z_]\w*")


class RunEvaluator:
    """Evaluates one `run:` block for one matrix leg: step outputs and pushed image references."""

    def __init__(self, path: str, scope: Scope, env: dict[str, list[Val]], read: Reader) -> None:
        self.path = path
        self.scope = scope
        self.vars: dict[str, list[Val]] = dict(env)
        self.read = read
        self.outputs: dict[str, list[Val]] = {}
        self.pushed: list[tuple[Val, int]] = []
        self._if_depth = 0

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
            m = re.fullmatch(r"([A-Za-z_]\w*)(?:(:?-)(.*))?", body, re.S)
            if m is None:
                pieces.append([Val(WILD)])
            elif m.group(2):
                value = self.vars.get(m.group(1))
                pieces.append(value if value else self.expand(m.group(3), origin))
            else:
                pieces.append(self.vars.get(m.group(1)) or [Val(WILD)])
            return end + 1
        m = _VAR_SIMPLE.match(raw, i + 1)
        if m:
            pieces.append(self.vars.get(m.group(0)) or [Val(WILD)])
            return m.end()
        if nxt in "0123456789@*#?$!-":
            pieces.append([Val(WILD)])
            return i + 2
        pieces.append([Val("$")])
        return i + 1

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
        physical = run.text_lines()
        lines = logical_lines(Source.lines(physical))
        if not outputs and not any("docker" in ll.text or "${{" in ll.text for ll in lines):
            return
        for ll in lines:
            first = ll.line
            pieces = _pieces(physical, ll.line, ll.end_line)
            alternatives = substitute(ll.text, self.scope.lookup, (self.path, first))
            for alt in alternatives[:MAX_ALTERNATIVES]:
                base = frozenset(alt.origins)
                for cmd in line_commands(alt.text, first, glue=False):
                    self._command(cmd, first, pieces, base)

    def _command(self, cmd: Command, first: int, pieces: list[tuple[int, str]], base: Origins) -> None:
        words = list(cmd.words)
        while words and words[0].raw in _KEYWORDS:
            words = words[1:]
        if not words:
            return
        head = words[0].raw
        if head in ("if", "elif", "while", "until", "case", "for"):
            if head in ("if", "case"):
                self._if_depth += 1
            return
        if head in ("fi", "esac"):
            self._if_depth = max(0, self._if_depth - 1)
            return
        if head in ("export", "local", "readonly", "declare") and len(words) > 1:
            words = [w for w in words[1:] if not w.raw.startswith("-")]
            if words and all(_ASSIGN.match(w.raw) for w in words):
                self._assign(words, first, base)
            return
        if all(_ASSIGN.match(w.raw) for w in words):
            self._assign(words, first, base)
            return
        line = _line_of(head, pieces, first)
        if head == "echo":
            self._echo(cmd, words, line, base)
        elif head == "docker":
            self._docker(words, pieces, first, base)

    def _assign(self, words: list[Word], first: int, base: Origins) -> None:
        for w in words:
            m = _ASSIGN.match(w.raw)
            assert m is not None
            values = [Val(v.text, v.origins | base) for v in self.expand(m.group(2), (self.path, first))]
            name = m.group(1)
            if self._if_depth and name in self.vars:
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
            if "GITHUB_OUTPUT" in target and "=" in val.text:
                name, _, value = val.text.partition("=")
            elif val.text.startswith("::set-output name="):
                m = re.match(r"::set-output name=([^:]+)::(.*)\Z", val.text, re.S)
                if m:
                    name, value = m.group(1), m.group(2)
            if name is None or value is None or WILD in name:
                continue
            alts = self.outputs.setdefault(name.strip(), [])
            alts.append(Val(value, val.origins))
            self.outputs[name.strip()] = dedupe(alts)[:MAX_ALTERNATIVES]

    def _spaced(self, args: list[Word], origin: tuple[str, int]) -> list[list[Val]]:
        parts: list[list[Val]] = []
        for i, a in enumerate(args):
            if i:
                parts.append([Val(" ")])
            parts.append(self.expand(a.raw, origin))
        return parts

    def _docker(self, words: list[Word], pieces: list[tuple[int, str]], first: int, base: Origins) -> None:
        raw = [w.raw for w in words]
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


def _pieces(physical: list[tuple[int, str]], first: int, last: int) -> list[tuple[int, str]]:
    """The physical lines of a logical line (comment lines left out, a continuation's backslash cut), where
    `_line_of` looks for a word."""
    out = []
    for line_no, text in physical:
        if first <= line_no <= last and text.strip() and not text.lstrip().startswith("#"):
            out.append((line_no, text.rstrip()[:-1] if text.rstrip().endswith("\\") else text))
    return out


def _line_of(raw: str, pieces: list[tuple[int, str]], default: int) -> int:
    for line, text in pieces:
        if raw and raw in text:
            return line
    return default


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


class WorkflowEval:
    """Evaluates every job leg of one workflow: step outputs, job outputs (for `needs.*`) and pushes."""

    def __init__(self, workflow: Workflow, read: Reader) -> None:
        self.wf = workflow
        self.read = read
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
        if job_id in self._done:
            return self._done[job_id]
        job = self.wf.jobs.get(job_id)
        if job is None or job_id in self._busy:
            return None
        self._busy.add(job_id)
        outputs: dict[str, list[Val]] = {}
        pushes: list[Push] = []
        for scope in legs(self.wf, job):
            scope.needs_outputs = self.job_output
            self._leg(job, scope, pushes)
            for name, node in job.outputs.items():
                if node.is_scalar:
                    outputs[name] = dedupe(outputs.get(name, []) + scope.resolve(node))[:MAX_ALTERNATIVES]
        self._busy.discard(job_id)
        self._done[job_id] = (outputs, pushes)
        return self._done[job_id]

    def _leg(self, job: Job, scope: Scope, pushes: list[Push]) -> None:
        base_env = env_mapping(scope, scope.env_nodes())
        for step in job.steps:
            step_scope = Scope(scope.workflow, job, scope.combo, scope.step_outputs, scope.needs_outputs, step.env)
            if step.run is not None:
                env = dict(base_env)
                env.update(env_mapping(step_scope, step.env))
                ev = RunEvaluator(self.wf.path, step_scope, env, self.read)
                ev.run(step.run, outputs=bool(step.id))
                if step.id:
                    scope.step_outputs[step.id] = ev.outputs
                pushes.extend(Push(ref, self.wf.path, line, job.id, "run") for ref, line in ev.pushed)
            elif step.uses and step.uses.split("@")[0].endswith("docker/build-push-action"):
                pushes.extend(self._build_push(job, step, step_scope))

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
