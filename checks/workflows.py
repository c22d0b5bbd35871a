"""GitHub Actions workflows as data: jobs, steps, env, matrix combinations and `${{ }}` expressions, with lines.

Values that cannot be known statically are kept as the WILD character inside the text (`quay.io/x:tmp-\\x00`),
so that callers can tell "unknown" from "different" and match patterns instead of guessing.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from checks.parsers.yamlmarks import Node, YamlDoc
from checks.parsers.yamlmarks import parse as parse_yaml

WILD = "\x00"  # stands for an unknown part of a value
MAX_COMBINATIONS = 256  # matrix legs evaluated per job; larger matrices are treated as unknown
MAX_ALTERNATIVES = 32  # alternative values carried per expression


@dataclass(frozen=True)
class Val:
    """A value (possibly with WILD parts) and the (path, line) places it was built from."""

    text: str
    origins: frozenset[tuple[str, int]] = frozenset()

    @property
    def known(self) -> bool:
        return WILD not in self.text

    def __add__(self, other: Val) -> Val:
        return Val(self.text + other.text, self.origins | other.origins)


def concat(parts: Iterable[list[Val]], limit: int = MAX_ALTERNATIVES) -> list[Val]:
    """Cartesian concatenation of alternative lists (capped: past the cap the value becomes unknown)."""
    out = [Val("")]
    for alts in parts:
        if not alts:
            alts = [Val(WILD)]
        nxt = [a + b for a in out for b in alts]
        if len(nxt) > limit:
            origins = frozenset().union(*(v.origins for v in nxt))
            nxt = [Val(WILD, origins)]
        out = nxt
    return _dedupe(out)


def _dedupe(vals: list[Val]) -> list[Val]:
    seen: dict[str, Val] = {}
    for v in vals:
        if v.text in seen:
            seen[v.text] = Val(v.text, seen[v.text].origins | v.origins)
        else:
            seen[v.text] = v
    return list(seen.values())


def wild_regex(text: str) -> re.Pattern[str]:
    """A regex for a value with WILD parts: each WILD matches any run of characters."""
    return re.compile("".join(".*" if part == WILD else re.escape(part) for part in re.split(f"({WILD})", text)))


# -- expressions ------------------------------------------------------------------------------------------------

EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}", re.S)
_CONTEXT_REF = re.compile(
    r"(?P<ctx>env|matrix|steps|needs|inputs|vars)"
    r"(?P<rest>(?:\.[A-Za-z_][\w-]*|\[\s*'[^']*'\s*\])+)\Z"
)

_REF_PART = re.compile(r"\.([A-Za-z_][\w-]*)|\[\s*'([^']*)'\s*\]")

Lookup = Callable[[str, tuple[str, ...]], "list[Val] | None"]


def context_ref(expr: str) -> tuple[str, tuple[str, ...]] | None:
    """`steps.version.outputs.tag` -> ("steps", ("version", "outputs", "tag")); None for anything else."""
    m = _CONTEXT_REF.match(expr.strip())
    if not m:
        return None
    parts = tuple(name or quoted for name, quoted in _REF_PART.findall(m.group("rest")))
    return m.group("ctx"), parts


def substitute(text: str, lookup: Lookup, origin: tuple[str, int] | None = None) -> list[Val]:
    """Replace every `${{ ... }}` in `text` using `lookup(context, parts)`; unknowns become WILD."""
    base = frozenset({origin}) if origin else frozenset()
    pieces: list[list[Val]] = []
    pos = 0
    for m in EXPR.finditer(text):
        pieces.append([Val(text[pos : m.start()], base)])
        ref = context_ref(m.group(1))
        alts = lookup(ref[0], ref[1]) if ref else None
        pieces.append([Val(v.text, v.origins | base) for v in alts] if alts else [Val(WILD, base)])
        pos = m.end()
    pieces.append([Val(text[pos:], base)])
    return concat(pieces)


# -- the workflow model ------------------------------------------------------------------------------------------


@dataclass
class Step:
    index: int
    node: Node
    id: str | None
    name: str | None
    uses: str | None
    run: Node | None
    with_: dict[str, Node]
    env: dict[str, Node]

    @property
    def line(self) -> int:
        return self.node.line


@dataclass
class Job:
    id: str
    node: Node
    env: dict[str, Node]
    outputs: dict[str, Node]
    needs: list[str]
    steps: list[Step]
    matrix_node: Node | None

    def field(self, key: str) -> Node | None:
        return self.node.get(key)

    def combinations(self) -> list[dict[str, str]] | None:
        """Matrix legs (one empty dict without a matrix); None when the matrix is not static."""
        if self.matrix_node is None:
            return [{}]
        return matrix_combinations(self.matrix_node)


@dataclass
class Workflow:
    path: str
    doc: YamlDoc
    root: Node
    env: dict[str, Node]
    jobs: dict[str, Job] = field(default_factory=dict)

    @property
    def triggers(self) -> set[str]:
        on = self.root.get("on")
        if on is None:
            return set()
        if on.is_scalar:
            return {on.value}
        if on.is_seq:
            return {i.value for i in on.items if i.is_scalar}
        return {k for k, _, _ in on.entries()}


def _scalar_map(node: Node | None) -> dict[str, Node]:
    if node is None:
        return {}
    return {k: v for k, _, v in node.entries()}


def build(doc: YamlDoc, path: str) -> Workflow | None:
    """The workflow model of a parsed document; None when it is broken or not a mapping."""
    root = doc.root
    if root is None or not root.is_map:
        return None
    wf = Workflow(path, doc, root, _scalar_map(root.get("env")))
    jobs = root.get("jobs")
    for job_id, _, jnode in jobs.entries() if jobs is not None else ():
        if not jnode.is_map:
            continue
        needs_node = jnode.get("needs")
        if needs_node is None:
            needs: list[str] = []
        elif needs_node.is_scalar:
            needs = [needs_node.value]
        else:
            needs = [i.value for i in needs_node.items if i.is_scalar]
        steps: list[Step] = []
        steps_node = jnode.get("steps")
        for i, snode in enumerate(steps_node.items if steps_node is not None and steps_node.is_seq else []):
            if not snode.is_map:
                continue
            run = snode.get("run")
            steps.append(
                Step(
                    index=i,
                    node=snode,
                    id=snode.scalar("id"),
                    name=snode.scalar("name"),
                    uses=snode.scalar("uses"),
                    run=run if run is not None and run.is_scalar else None,
                    with_=_scalar_map(snode.get("with")),
                    env=_scalar_map(snode.get("env")),
                )
            )
        strategy = jnode.get("strategy")
        wf.jobs[job_id] = Job(
            id=job_id,
            node=jnode,
            env=_scalar_map(jnode.get("env")),
            outputs=_scalar_map(jnode.get("outputs")),
            needs=needs,
            steps=steps,
            matrix_node=strategy.get("matrix") if strategy is not None else None,
        )
    return wf


def parse(text: str, path: str) -> Workflow | None:
    return build(parse_yaml(text), path)


# -- matrix ------------------------------------------------------------------------------------------------------


def _matrix_value(node: Node) -> str | None:
    """Scalar matrix values only; mappings/lists inside a leg and expressions are not static strings."""
    if node.is_scalar and not EXPR.search(node.value):
        return node.value
    return None


def matrix_combinations(matrix: Node) -> list[dict[str, str]] | None:
    """GitHub's expansion: product of the axes, minus `exclude`, then `include` extends or adds legs.

    None when the matrix is dynamic (`${{ fromJSON(...) }}`), holds non-scalar values, or is too large.
    """
    if not matrix.is_map:
        return None
    axes: list[tuple[str, list[str]]] = []
    include: list[dict[str, str]] = []
    exclude: list[dict[str, str]] = []
    for key, _, value in matrix.entries():
        if key in ("include", "exclude"):
            if not value.is_seq:
                return None
            legs = []
            for item in value.items:
                if not item.is_map:
                    return None
                leg: dict[str, str] = {}
                for k, _, v in item.entries():
                    sv = _matrix_value(v)
                    if sv is None:
                        return None
                    leg[k] = sv
                legs.append(leg)
            (include if key == "include" else exclude).extend(legs)
            continue
        if not value.is_seq:
            return None
        values = []
        for item in value.items:
            sv = _matrix_value(item)
            if sv is None:
                return None
            values.append(sv)
        axes.append((key, values))
    size = 1
    for _, values in axes:
        size *= max(len(values), 1)
    if size > MAX_COMBINATIONS:
        return None
    names = [k for k, _ in axes]
    combos: list[dict[str, str]] = (
        [dict(zip(names, vals, strict=True)) for vals in itertools.product(*(v for _, v in axes))] if axes else []
    )
    combos = [c for c in combos if not any(all(c.get(k) == v for k, v in ex.items()) for ex in exclude)]
    originals = set(names)
    base_count = len(combos)
    for inc in include:
        matched = False
        for c in combos[:base_count]:
            # An include may add keys to a leg, never overwrite the leg's original values.
            if all(c.get(k) == v for k, v in inc.items() if k in originals) and all(
                k not in c or c[k] == v for k, v in inc.items() if k not in originals
            ):
                c.update(inc)
                matched = True
        if not matched:
            combos.append(dict(inc))
    if len(combos) > MAX_COMBINATIONS:
        return None
    return combos or [{}]


# -- scopes: what `${{ env.X }}` etc. mean at a given place ---------------------------------------------------------


@dataclass
class Scope:
    """Resolution context for one matrix leg of one job (or the workflow top level)."""

    workflow: Workflow
    job: Job | None = None
    combo: dict[str, str] | None = field(default_factory=dict)  # None: the leg is unknown
    step_outputs: dict[str, dict[str, list[Val]]] = field(default_factory=dict)
    needs_outputs: Callable[[str, str], list[Val] | None] | None = None
    extra_env: dict[str, Node] = field(default_factory=dict)

    def env_nodes(self) -> dict[str, Node]:
        merged = dict(self.workflow.env)
        if self.job is not None:
            merged.update(self.job.env)
        merged.update(self.extra_env)
        return merged

    def lookup(self, ctx: str, parts: tuple[str, ...], _depth: int = 0) -> list[Val] | None:
        if ctx == "env" and len(parts) == 1:
            node = self.env_nodes().get(parts[0])
            if node is None or not node.is_scalar or _depth > 5:
                return None
            return substitute(
                node.value,
                lambda c, p: self.lookup(c, p, _depth + 1),
                (self.workflow.path, node.line),
            )
        if ctx == "matrix" and len(parts) == 1:
            if self.combo is None or parts[0] not in self.combo:
                return None
            return [Val(self.combo[parts[0]])]
        if ctx == "steps" and len(parts) == 3 and parts[1] == "outputs":
            return self.step_outputs.get(parts[0], {}).get(parts[2])
        if ctx == "needs" and len(parts) == 3 and parts[1] == "outputs" and self.needs_outputs is not None:
            return self.needs_outputs(parts[0], parts[2])
        return None

    def resolve(self, node: Node) -> list[Val]:
        """A scalar node's value with expressions substituted (WILD where unknown)."""
        return substitute(node.value, self.lookup, (self.workflow.path, node.line))


def legs(workflow: Workflow, job: Job) -> Iterator[Scope]:
    """One Scope per matrix leg of `job` (a single leg with unknown matrix values when the matrix is dynamic)."""
    combos = job.combinations()
    if combos is None:
        yield Scope(workflow, job, None)
        return
    for combo in combos:
        yield Scope(workflow, job, combo)


def env_mapping(scope: Scope, nodes: Mapping[str, Node]) -> dict[str, list[Val]]:
    return {k: scope.resolve(v) if v.is_scalar else [Val(WILD)] for k, v in nodes.items()}


# -- run blocks: a very small shell evaluator ------------------------------------------------------------------------
# It follows only what image producers do: plain assignments, `$(grep '^FROM' FILE | head -1 | cut -d: -f2)`-style
# pipelines, `echo "k=v" >> "$GITHUB_OUTPUT"`, `docker buildx imagetools create -t REF`, `docker push REF`. Anything
# else evaluates to WILD (unknown), never to a guess.

Reader = Callable[[str], "str | None"]
Origins = frozenset[tuple[str, int]]
_ASSIGN = re.compile(r"([A-Za-z_]\w*)=(.*)\Z", re.S)
_KEYWORDS = frozenset({"then", "else", "do", "{", "}", "!", "time"})
_VAR_SIMPLE = re.compile(r"[A-Za-z_]\w*")


@dataclass
class Word:
    raw: str  # as written (quotes kept), used to find the word's physical line
    is_redirect: bool = False


def _logical_lines(run: Node) -> list[tuple[int, str, list[tuple[int, str]]]]:
    """Join backslash continuations; drop comment lines. (first line, text, physical pieces)."""
    out: list[tuple[int, str, list[tuple[int, str]]]] = []
    buf: list[tuple[int, str]] = []
    for line_no, text in run.text_lines():
        stripped = text.strip()
        if not buf and (not stripped or stripped.startswith("#")):
            continue
        if buf and stripped.startswith("#"):
            continue  # comment inside a continuation
        cont = text.rstrip().endswith("\\")
        buf.append((line_no, text.rstrip()[:-1] if cont else text))
        if not cont:
            out.append((buf[0][0], " ".join(t for _, t in buf), buf))
            buf = []
    if buf:
        out.append((buf[0][0], " ".join(t for _, t in buf), buf))
    return out


_SPLIT_SPECIAL = re.compile(r"""['"\\#]|\$[({]""")


def _split_top(text: str, seps: tuple[str, ...]) -> list[str]:
    """Split on separators outside quotes, `$(...)` and `${...}`; keeps order. Comments (` #`) end the text."""
    if not _SPLIT_SPECIAL.search(text) and not any(s in text for s in seps):
        # Nothing below would act: no quote, escape, expansion or comment, no separator (most commands).
        return [text.strip()] if text.strip() else []
    parts: list[str] = []
    buf: list[str] = []
    i, depth, quote = 0, 0, ""
    while i < len(text):
        c = text[i]
        if quote:
            buf.append(c)
            if c == "\\" and quote == '"' and i + 1 < len(text):
                buf.append(text[i + 1])
                i += 2
                continue
            if c == quote:
                quote = ""
            i += 1
            continue
        if c in "'\"":
            quote = c
            buf.append(c)
            i += 1
            continue
        if c == "\\" and i + 1 < len(text):
            buf.append(text[i : i + 2])
            i += 2
            continue
        if text.startswith("$(", i) or text.startswith("${", i):
            depth += 1
            buf.append(text[i : i + 2])
            i += 2
            continue
        if c == "(" and depth:
            depth += 1
        elif c in ")}" and depth:
            depth -= 1
        elif depth == 0:
            if c == "#" and (i == 0 or text[i - 1] in " \t"):
                break
            sep = next((s for s in seps if text.startswith(s, i)), None)
            if sep is not None:
                parts.append("".join(buf))
                buf = []
                i += len(sep)
                continue
        buf.append(c)
        i += 1
    parts.append("".join(buf))
    return [p.strip() for p in parts if p.strip()]


_WORDS_SPECIAL = re.compile(r"""['"<>]|\$[({]""")


def _words(command: str) -> list[Word]:
    """Shell words (quotes kept in `raw`); unquoted redirections become their own words."""
    if not _WORDS_SPECIAL.search(command):
        # No quote, expansion or redirection (most commands): the words are what lies between spaces and tabs.
        return [Word(w) for w in command.replace("\t", " ").split(" ") if w]
    words: list[Word] = []
    buf: list[str] = []
    i, depth, quote = 0, 0, ""

    def flush() -> None:
        if buf:
            words.append(Word("".join(buf)))
            buf.clear()

    while i < len(command):
        c = command[i]
        if quote:
            buf.append(c)
            if c == "\\" and quote == '"' and i + 1 < len(command):
                buf.append(command[i + 1])
                i += 2
                continue
            if c == quote:
                quote = ""
            i += 1
            continue
        if c in "'\"":
            quote = c
        elif command.startswith("$(", i) or command.startswith("${", i):
            depth += 1
            buf.append(command[i : i + 2])
            i += 2
            continue
        elif c == "(" and depth:
            depth += 1
        elif c in ")}" and depth:
            depth -= 1
        elif depth == 0 and c in " \t":
            flush()
            i += 1
            continue
        elif depth == 0 and c in "<>" and not (buf and buf[-1] in "0123456789&" and len(buf) == 1):
            flush()
            j = i
            while j < len(command) and command[j] in "<>&":
                j += 1
            words.append(Word(command[i:j], is_redirect=True))
            i = j
            continue
        buf.append(c)
        i += 1
    flush()
    return words


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
        stages = _split_top(text, ("|",))
        if not stages or any(s.startswith("|") for s in stages):
            return [Val(WILD)]
        streams: list[Val] | None = None
        for stage in stages:
            words = _words(stage)
            if not words or any(w.is_redirect for w in words):
                return [Val(WILD)]
            args: list[list[Val]] = [self.expand(w.raw, origin) for w in words]
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
            result = _filter(cmd, texts, val.text)
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
    def run(self, run: Node) -> None:
        for first, text, pieces in _logical_lines(run):
            alternatives = substitute(text, self.scope.lookup, (self.path, first))
            for alt in alternatives[:MAX_ALTERNATIVES]:
                base = set(alt.origins)
                for command in _split_top(alt.text, ("&&", "||", ";")):
                    self._command(command, first, pieces, frozenset(base))

    def _command(self, command: str, first: int, pieces: list[tuple[int, str]], base: Origins) -> None:
        words = _words(command)
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
            self._echo(words, line, base)
        elif head == "docker":
            self._docker(words, pieces, first, base)

    def _assign(self, words: list[Word], first: int, base: Origins) -> None:
        for w in words:
            m = _ASSIGN.match(w.raw)
            assert m is not None
            values = [Val(v.text, v.origins | base) for v in self.expand(m.group(2), (self.path, first))]
            name = m.group(1)
            if self._if_depth and name in self.vars:
                self.vars[name] = _dedupe(self.vars[name] + values)[:MAX_ALTERNATIVES]
            else:
                self.vars[name] = values

    def _echo(self, words: list[Word], line: int, base: Origins) -> None:
        redirect = next((i for i, w in enumerate(words) if w.is_redirect), None)
        args = words[1:redirect] if redirect is not None else words[1:]
        args = [a for a in args if a.raw not in ("-n", "-e")]
        target = words[redirect + 1].raw if redirect is not None and redirect + 1 < len(words) else ""
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
            self.outputs[name.strip()] = _dedupe(alts)[:MAX_ALTERNATIVES]

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
    """Index of the parenthesis closing the one at `open_idx` (quote-aware); len(text) when unbalanced."""
    depth, quote = 0, ""
    for i in range(open_idx, len(text)):
        c = text[i]
        if quote:
            if c == quote:
                quote = ""
            continue
        if c in "'\"":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
    return len(text)


def _line_of(raw: str, pieces: list[tuple[int, str]], default: int) -> int:
    for line, text in pieces:
        if raw and raw in text:
            return line
    return default


def _filter(cmd: str, args: list[str], text: str) -> str | None:
    """head/tail/cut/awk/sed/tr on a known text; None for anything not modelled."""
    lines = text.splitlines()
    if cmd in ("head", "tail"):
        count = 10
        rest = list(args)
        while rest:
            a = rest.pop(0)
            if a == "-n" and rest:
                a = "-" + rest.pop(0)
            elif a.startswith("-n"):
                a = "-" + a[2:]
            if re.fullmatch(r"-\d+", a):
                count = int(a[1:])
            else:
                return None
        picked = lines[:count] if cmd == "head" else lines[-count:] if count else []
        return "".join(ln + "\n" for ln in picked)
    if cmd == "cut":
        delim, fields = "\t", None
        rest = list(args)
        while rest:
            a = rest.pop(0)
            if a.startswith("-d"):
                delim = a[2:] if len(a) > 2 else (rest.pop(0) if rest else "")
            elif a.startswith("-f"):
                spec = a[2:] if len(a) > 2 else (rest.pop(0) if rest else "")
                if not spec.isdigit():
                    return None
                fields = int(spec)
            else:
                return None
        if fields is None or len(delim) != 1:
            return None
        out = []
        for ln in lines:
            parts = ln.split(delim)
            out.append(ln if len(parts) == 1 else (parts[fields - 1] if fields <= len(parts) else ""))
        return "".join(o + "\n" for o in out)
    if cmd == "awk" and len(args) == 1:
        m = re.fullmatch(r"\{\s*print\s+\$(\d+)\s*\}", args[0].strip())
        if not m:
            return None
        n = int(m.group(1))
        out = []
        for ln in lines:
            parts = ln.split()
            out.append(parts[n - 1] if 0 < n <= len(parts) else (ln if n == 0 else ""))
        return "".join(o + "\n" for o in out)
    if cmd == "sed" and len(args) == 1:
        return _sed(args[0], lines)
    if cmd == "xargs" and not args:
        return " ".join(text.split()) + "\n"
    return None


def _sed(expr: str, lines: list[str]) -> str | None:
    if len(expr) < 4 or expr[0] != "s":
        return None
    sep = expr[1]
    parts = expr[2:].split(sep)
    if len(parts) != 3 or parts[2] not in ("", "g"):
        return None
    pattern = _bre_to_re(parts[0])
    if pattern is None:
        return None
    repl = re.sub(r"\\(\d)", r"\\g<\1>", parts[1].replace("\\&", "\0amp")).replace("&", r"\g<0>").replace("\0amp", "&")
    count = 0 if parts[2] == "g" else 1
    try:
        return "".join(pattern.sub(repl, ln, count=count) + "\n" for ln in lines)
    except (re.error, IndexError):
        return None


def _bre_to_re(bre: str) -> re.Pattern[str] | None:
    out = []
    i = 0
    while i < len(bre):
        c = bre[i]
        if c == "\\" and i + 1 < len(bre):
            n = bre[i + 1]
            out.append(n if n in "(){}|+?" else "\\" + n)
            i += 2
            continue
        out.append("\\" + c if c in "(){}|+?" else c)
        i += 1
    try:
        return re.compile("".join(out))
    except re.error:
        return None


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
                    outputs[name] = _dedupe(outputs.get(name, []) + scope.resolve(node))[:MAX_ALTERNATIVES]
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
                ev.run(step.run)
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


# -- run blocks as shell commands (for rules that judge commands, not values) -----------------------------------


def run_text(run: Node) -> tuple[str, Callable[[int], int]]:
    """The text of a `run:` scalar and a map from an offset of that text to its physical line in the workflow."""
    lines = run.text_lines()
    text = "\n".join(t for _, t in lines) + "\n"
    starts: list[int] = []
    pos = 0
    for _, t in lines:
        starts.append(pos)
        pos += len(t) + 1
    numbers = [n for n, _ in lines] or [run.line]

    def line_of(offset: int) -> int:
        lo, hi = 0, len(starts) - 1
        while lo < hi:  # the last start <= offset
            mid = (lo + hi + 1) // 2
            if starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return numbers[min(lo, len(numbers) - 1)] if starts else run.line

    return text, line_of


# -- runners ------------------------------------------------------------------------------------------------


def runner_label_sets(wf: Workflow, job: Job) -> list[tuple[str, ...] | None]:
    """The distinct label sets of a job's `runs-on` over its matrix legs (None for a leg that cannot be known).

    `runs-on: X`, `runs-on: [self-hosted, X]`, `runs-on: {group: G, labels: [X]}` and `${{ matrix.runner }}`.
    """
    node = job.node.get("runs-on")
    if node is None:
        return []
    out: list[tuple[str, ...] | None] = []
    for scope in legs(wf, job):
        labels = _labels_of(node, scope)
        if labels not in out:
            out.append(labels)
    return out


def _labels_of(node: Node, scope: Scope) -> tuple[str, ...] | None:
    if node.is_map:
        inner = node.get("labels")
        if inner is None:
            return None  # a runner group alone: which machines it has is not in the file
        node = inner
    items = [node] if node.is_scalar else node.items if node.is_seq else []
    labels: list[str] = []
    for item in items:
        if not item.is_scalar:
            return None
        vals = scope.resolve(item)
        if len(vals) != 1 or not vals[0].known:
            return None
        labels.append(vals[0].text.strip())
    return tuple(labels) if labels else None


@dataclass(frozen=True)
class Runner:
    """A self-hosted Ascend runner label and what the knowledge base (or its shape) says about it."""

    label: str
    device: str | None  # image device it runs: "910b" or "a3"; None when unknown
    npus: int | None  # NPUs a job may use on one node; None when unknown
    status: str  # "current" (listed), "retired" (listed as retired), "shape" (Ascend-shaped, not listed)
    note: str = ""


class RunnerCatalog:
    """Ascend runner labels from knowledge.yml `ascend_runners`."""

    def __init__(self, section: Mapping[str, object]) -> None:
        labels = section.get("labels") or {}
        retired = section.get("retired") or {}
        self.current: dict[str, tuple[str | None, int | None]] = {}
        if isinstance(labels, Mapping):
            for name, spec in labels.items():
                spec = spec if isinstance(spec, Mapping) else {}
                npus = spec.get("npus")
                self.current[str(name)] = (
                    str(spec["device"]) if spec.get("device") is not None else None,
                    int(npus) if isinstance(npus, int) else None,
                )
        self.retired: dict[str, str] = (
            {str(k): str(v) for k, v in retired.items()} if isinstance(retired, Mapping) else {}
        )
        pattern = section.get("label_pattern")
        self.pattern = re.compile(str(pattern)) if pattern else None
        families = section.get("families") or {}
        self.families = {str(k): str(v) for k, v in families.items()} if isinstance(families, Mapping) else {}
        others = section.get("other_patterns") or []
        self.others = [re.compile(str(p)) for p in others] if isinstance(others, list) else []

    def runner(self, label: str) -> Runner | None:
        """What `label` is when it names an Ascend runner, else None (`ubuntu-latest`, `self-hosted`)."""
        shape = self.pattern.match(label) if self.pattern is not None else None
        shaped_device = self.families.get(shape.group("family")) if shape else None
        shaped_npus = int(shape.group("npus")) if shape else None
        if label in self.current:
            device, npus = self.current[label]
            return Runner(label, device or shaped_device, npus or shaped_npus, "current")
        if label in self.retired:
            return Runner(label, shaped_device, shaped_npus, "retired", self.retired[label])
        if shape is not None:
            return Runner(label, shaped_device, shaped_npus, "shape")
        if any(p.search(label) for p in self.others):
            return Runner(label, None, None, "shape")
        return None

    def of(self, labels: tuple[str, ...]) -> Runner | None:
        """The Ascend runner a `runs-on` label set asks for (its first Ascend label), else None."""
        for label in labels:
            found = self.runner(label)
            if found is not None:
                return found
        return None


# -- triggers ---------------------------------------------------------------------------------------------------


def trigger_filters(wf: Workflow, key: str) -> Iterator[tuple[str, Node]]:
    """(event, entry node) of every scalar entry of `on.<event>.<key>` (`paths`, `paths-ignore`, `branches`)."""
    on = wf.root.get("on")
    if on is None or not on.is_map:
        return
    for event, _, spec in on.entries():
        lst = spec.get(key) if spec.is_map else None
        if lst is None:
            continue
        for item in lst.items if lst.is_seq else [lst]:
            if item.is_scalar:
                yield event, item
