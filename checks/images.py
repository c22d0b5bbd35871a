"""Ascend image references: `registry/repo:tag` parsing, tag classification by tokens, producers and consumers.

The tag grammar is data (knowledge.yml `image_tags`): tokens are classified by field (cann, torch_npu, device, ...)
and the field sequence is matched against the schemes (F1/F2/F3 floating, R1/R2 release, M1 model-specific).
Producers are the workflows that push the image (their tags evaluated statically, see checks.parsers.gha.evaluate);
consumers are the `image:`/`IMAGE:` values of the Ascend workflows. Unknown stays unknown: a producer whose tags
cannot be evaluated makes "is this tag produced?" unanswerable, and the rules stay silent.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from checks import kinds
from checks.context import Context, SourceFile
from checks.parsers import dockerfile as dfp
from checks.parsers import shell
from checks.parsers.gha.evaluate import WorkflowEval
from checks.parsers.gha.runners import Runner, RunnerCatalog, runner_label_sets
from checks.parsers.gha.values import WILD, wild_regex
from checks.parsers.gha.workflow import Scope, Workflow, build, legs
from checks.parsers.yamlmarks import YamlDoc
from checks.parsers.yamlmarks import parse as parse_yaml

# -- references -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ImageRef:
    """`host/path/name:tag@digest` split into its parts (tag and digest optional)."""

    text: str
    repository: str
    tag: str | None
    digest: str | None = None

    @property
    def segments(self) -> list[str]:
        return self.repository.split("/")


_SPACE = re.compile(r"\s")  # the characters str.isspace() accepts (checked for every code point)


def parse_ref(text: str) -> ImageRef | None:
    """None for text that is not an image reference (spaces, empty, a URL)."""
    text = text.strip()
    if not text or _SPACE.search(text) or "://" in text:
        return None
    digest = None
    if "@" in text:
        text_part, _, digest = text.partition("@")
    else:
        text_part = text
    slash = text_part.rfind("/")
    colon = text_part.rfind(":")
    if colon > slash:
        repo, tag = text_part[:colon], text_part[colon + 1 :]
    else:
        repo, tag = text_part, None
    if not repo:
        return None
    return ImageRef(text, repo, tag or None, digest)


# -- the grammar --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Issue:
    """A token that stands in a field's place but is named wrongly (NPU203)."""

    field: str
    token: str
    fix: str | None  # the exact replacement token, when there is one


@dataclass(frozen=True)
class TagInfo:
    tag: str
    scheme: str | None = None
    role: str | None = None  # floating | release | model
    fields: Mapping[str, str] = field(default_factory=dict)  # field -> token as written
    values: Mapping[str, str] = field(default_factory=dict)  # field -> captured value
    issues: tuple[Issue, ...] = ()
    device: str | None = None
    backend: str | None = None
    post: str | None = None  # torch_npu ".postN" suffix as written (".post2" or "post2")

    @property
    def known(self) -> bool:
        return self.scheme is not None

    @property
    def variant(self) -> tuple[str | None, str | None]:
        return self.device, self.backend

    def fixed(self) -> str:
        """The tag with every exactly-fixable naming issue fixed (tokens renamed; `.postN` spelling kept)."""
        tokens = self.tag.split("-")
        for issue in self.issues:
            if issue.fix is None:
                continue
            tokens = [issue.fix if t == issue.token else t for t in tokens]
        return "-".join(tokens)


@dataclass(frozen=True)
class _Scheme:
    name: str
    role: str
    shape: tuple[Any, ...]
    format: str
    default_backend: str | None


def _parse_shape(text: str) -> tuple[Any, ...]:
    items: list[Any] = []
    stack: list[list[Any]] = [items]
    for tok in re.findall(r"\[|\]|[^\s\[\]]+", text):
        if tok == "[":
            group: list[Any] = []
            stack[-1].append(("opt", group))
            stack.append(group)
        elif tok == "]":
            stack.pop()
        elif tok == "*":
            stack[-1].append(("rest",))
        else:
            stack[-1].append(("field", tok))
    return tuple(items)


class Grammar:
    """Tag tokens, schemes, families and mirrors from knowledge.yml `image_tags`."""

    def __init__(self, section: Mapping[str, Any]) -> None:
        self.devices = [str(d) for d in section.get("devices", [])]
        self.backends = [str(b) for b in section.get("backends", [])]
        self.model_markers = sorted((str(m) for m in section.get("model_markers", [])), key=len, reverse=True)
        self.families = [[tuple(str(s).split("/")) for s in fam] for fam in section.get("families", [])]
        self.mirrors = {str(k): str(v) for k, v in (section.get("mirrors") or {}).items()}
        self.temporary = [re.compile(p) for p in section.get("temporary", [])]
        self.producer_markers = [str(m) for m in section.get("producer_markers", [])]
        self.tokens = [(str(f), re.compile(str(p))) for f, p in section.get("tokens", [])]
        self.schemes = [
            _Scheme(
                str(s["name"]),
                str(s.get("role", "floating")),
                _parse_shape(str(s["shape"])),
                str(s.get("format", s["shape"])),
                s.get("default_backend"),
            )
            for s in section.get("schemes", [])
        ]
        lenient = section.get("lenient") or {}
        self.lenient_fields: dict[str, dict[str, str]] = {
            str(f): {str(k): str(v) for k, v in (spec.get("fields") or {}).items()} for f, spec in lenient.items()
        }
        self.lenient_words: dict[str, dict[str, str | None]] = {
            str(f): {str(k): (None if v is None else str(v)) for k, v in (spec.get("words") or {}).items()}
            for f, spec in lenient.items()
        }
        self.post_spelling = str(section.get("post_spelling", ".post"))
        self._cache: dict[str, TagInfo] = {}

    # -- families and mirrors -----------------------------------------------------------------------------------
    def family(self, ref: ImageRef) -> str | None:
        """The family (its first repository suffix) when `ref` names an Ascend verl image, else None."""
        segs = tuple(ref.segments)
        for fam in self.families:
            for suffix in fam:
                if len(segs) >= len(suffix) and segs[-len(suffix) :] == suffix:
                    return "/".join(fam[0])
        return None

    def location(self, ref: ImageRef) -> str:
        """Where a family image is pulled from: the repository without its family suffix (e.g. the SWR mirror)."""
        segs = tuple(ref.segments)
        for fam in self.families:
            for suffix in fam:
                if len(segs) >= len(suffix) and segs[-len(suffix) :] == suffix:
                    return "/".join(segs[: -len(suffix)])
        return ref.repository

    def mirror_name(self, location: str) -> str:
        for name, prefix in self.mirrors.items():
            if location == prefix:
                return name
        return location or "(no registry)"

    def is_temporary(self, tag: str) -> bool:
        return any(p.search(tag) for p in self.temporary)

    # -- tags -------------------------------------------------------------------------------------------------
    def split(self, tag: str) -> list[str]:
        """Tokens on "-", with a model marker (which may contain "-") kept as one token."""
        parts = tag.split("-")
        out: list[str] = []
        i = 0
        while i < len(parts):
            for marker in self.model_markers:
                mparts = marker.split("-")
                if parts[i : i + len(mparts)] == mparts:
                    out.append(marker)
                    i += len(mparts)
                    break
            else:
                out.append(parts[i])
                i += 1
        return out

    def token_field(self, token: str) -> tuple[str | None, re.Match[str] | None]:
        if token in self.model_markers:
            return "model", None
        for name, pattern in self.tokens:
            m = pattern.match(token)
            if m:
                return name, m
        return None, None

    def classify(self, tag: str) -> TagInfo:
        hit = self._cache.get(tag)
        if hit is None:
            hit = self._classify(tag)
            self._cache[tag] = hit
        return hit

    def _classify(self, tag: str) -> TagInfo:
        if not tag or WILD in tag:
            return TagInfo(tag)
        tokens = self.split(tag)
        classes = [self.token_field(t) for t in tokens]
        for lenient in (False, True):
            for scheme in self.schemes:
                match = _match(scheme.shape, 0, tokens, classes, self, lenient)
                if match is None:
                    continue
                return self._info(tag, scheme, tokens, classes, match)
        return TagInfo(tag)

    def _info(
        self,
        tag: str,
        scheme: _Scheme,
        tokens: list[str],
        classes: list[tuple[str | None, re.Match[str] | None]],
        match: list[tuple[int, str]],
    ) -> TagInfo:
        fields: dict[str, str] = {}
        values: dict[str, str] = {}
        issues: list[Issue] = []
        post = None
        for index, slot in match:
            token = tokens[index]
            cls, m = classes[index]
            fields[slot] = token
            value = m.group("v") if m is not None and "v" in m.re.groupindex and m.group("v") else token
            if cls != slot:
                fix = self._fix(slot, token, cls)
                issues.append(Issue(slot, token, fix))
                if slot in ("device", "backend"):
                    value = fix or token
            values[slot] = value
            if m is not None and "post" in m.re.groupindex and m.group("post"):
                post = m.group("post")
        backend = values.get("backend") or scheme.default_backend
        return TagInfo(
            tag=tag,
            scheme=scheme.name,
            role=scheme.role,
            fields=fields,
            values=values,
            issues=tuple(issues),
            device=values.get("device"),
            backend=backend,
            post=post,
        )

    def _fix(self, slot: str, token: str, cls: str | None) -> str | None:
        if cls is not None and cls in self.lenient_fields.get(slot, {}):
            fm = next((p for f, p in self.tokens if f == cls), None)
            m = fm.match(token) if fm is not None else None
            prefix_new = self.lenient_fields[slot][cls]
            if m is not None and "v" in m.re.groupindex:
                start = m.start("v")
                return prefix_new + token[start:]
            return None
        return self.lenient_words.get(slot, {}).get(token)

    def accepts(self, slot: str, token: str, cls: str | None, lenient: bool) -> bool:
        if cls == slot:
            return True
        if not lenient:
            return False
        if cls is not None and cls in self.lenient_fields.get(slot, {}):
            return True
        return cls is None and token in self.lenient_words.get(slot, {})

    def scheme_format(self, name: str) -> str:
        return next((s.format for s in self.schemes if s.name == name), name)

    def normalized(self, info: TagInfo) -> str:
        """Identity of a tag for spelling comparisons: naming issues fixed and one `.postN` spelling."""
        text = info.fixed()
        return re.sub(r"(torch(?:_npu)?\d+\.\d+\.\d+)\.?(post\d+)", r"\1.\2", text)


def _match(
    shape: tuple[Any, ...],
    pos: int,
    tokens: list[str],
    classes: list[tuple[str | None, re.Match[str] | None]],
    grammar: Grammar,
    lenient: bool,
) -> list[tuple[int, str]] | None:
    """Backtracking match of a shape against tokens[pos:]; returns (token index, field) pairs."""
    if not shape:
        return [] if pos == len(tokens) else None
    head, rest = shape[0], shape[1:]
    if head[0] == "rest":
        return (
            []
            if not rest
            else next(
                (m for p in range(pos, len(tokens) + 1) if (m := _match(rest, p, tokens, classes, grammar, lenient))),
                None,
            )
        )
    if head[0] == "opt":
        with_group = _match(tuple(head[1]) + rest, pos, tokens, classes, grammar, lenient)
        if with_group is not None:
            return with_group
        return _match(rest, pos, tokens, classes, grammar, lenient)
    name = head[1]
    if pos >= len(tokens) or not grammar.accepts(name, tokens[pos], classes[pos][0], lenient):
        return None
    tail = _match(rest, pos + 1, tokens, classes, grammar, lenient)
    return None if tail is None else [(pos, name), *tail]


def grammar(ctx: Context) -> Grammar:
    return ctx.memo(("image-grammar", "", ""), lambda: Grammar(ctx.knowledge.section("image_tags")))


# -- producers and consumers --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Consumer:
    path: str
    line: int
    ref: ImageRef
    info: TagInfo
    location: str
    job: str | None

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def tag(self) -> str:
        return self.ref.tag or ""


@dataclass(frozen=True)
class Product:
    path: str
    line: int
    tag: str  # may contain WILD
    info: TagInfo
    origins: frozenset[tuple[str, int]]
    job: str

    @property
    def known(self) -> bool:
        return WILD not in self.tag


@dataclass
class Producer:
    path: str
    products: list[Product] = field(default_factory=list)
    triggers: set[str] = field(default_factory=set)


@dataclass
class Inventory:
    """Every producer, consumer and broken Ascend workflow of one revision."""

    producers: dict[str, Producer] = field(default_factory=dict)
    consumers: list[Consumer] = field(default_factory=list)
    broken: dict[str, YamlDoc] = field(default_factory=dict)

    def products(self) -> Iterator[Product]:
        for p in self.producers.values():
            yield from p.products

    def literal_tags(self) -> set[str]:
        return {p.tag for p in self.products() if p.known}

    def produced(self, tag: str) -> bool | None:
        """True when a producer pushes `tag`, False when none can, None when a producer's tag is unknown."""
        unknown = False
        for p in self.products():
            if p.known:
                if p.tag == tag:
                    return True
            elif wild_regex(p.tag).fullmatch(tag):
                unknown = True
        return None if unknown else False

    def producers_of(self, tag: str) -> list[Product]:
        return [p for p in self.products() if p.known and p.tag == tag]


def _image_key(key: str) -> bool:
    return key in ("image", "IMAGE") or key.upper().endswith("_IMAGE")


def consumers_of(wf: Workflow, g: Grammar) -> list[Consumer]:
    """Family image references in `image:`, `IMAGE:`, `*_IMAGE:` values and `container: <ref>`.

    `${{ env.X }}` (workflow and job env) and `${{ matrix.X }}` (every leg) are resolved; unresolvable values are
    skipped.
    """
    found: dict[tuple[int, str], Consumer] = {}

    def add(node_value: list[Any], line: int, job: str | None) -> None:
        for val in node_value:
            if not val.known:
                continue  # unresolvable: unknown, skip
            ref = parse_ref(val.text)
            if ref is None or ref.tag is None or g.family(ref) is None:
                continue
            found.setdefault((line, ref.text), Consumer(wf.path, line, ref, g.classify(ref.tag), g.location(ref), job))

    top_env = wf.root.get("env")
    if top_env is not None:
        scope = Scope(wf)
        for key, _, value in top_env.entries():
            if _image_key(key) and value.is_scalar:
                add(scope.resolve(value), value.line, None)
    for job in wf.jobs.values():
        for scope in legs(wf, job):
            for path, node in job.node.walk():
                if not node.is_scalar or not path:
                    continue
                last = path[-1]
                if isinstance(last, str) and (_image_key(last) or (last == "container" and len(path) == 1)):
                    add(scope.resolve(node), node.line, job.id)
    return sorted(found.values(), key=lambda c: (c.line, c.ref.text))


def products_of(wf: Workflow, g: Grammar, read: Any) -> list[Product]:
    out: dict[tuple[int, str], Product] = {}
    for push in WorkflowEval(wf, read).pushes():
        ref = parse_ref(push.ref.text)
        if ref is None:
            if push.ref.text.strip() == WILD or WILD in push.ref.text:
                # Wholly unknown reference: this producer's tags are unknown.
                out.setdefault(
                    (push.line, WILD), Product(wf.path, push.line, WILD, TagInfo(WILD), push.ref.origins, push.job)
                )
            continue
        if WILD not in ref.repository and g.family(ref) is None:
            continue  # another image
        tag = ref.tag if ref.tag is not None else (WILD if WILD in ref.repository else None)
        if tag is None or g.is_temporary(tag):
            continue
        out.setdefault((push.line, tag), Product(wf.path, push.line, tag, g.classify(tag), push.ref.origins, push.job))
    return sorted(out.values(), key=lambda p: (p.line, p.tag))


def _is_candidate_producer(path: str, text: str, ctx: Context, g: Grammar) -> bool:
    if ctx.kindmap.has(path, kinds.ASCEND_WORKFLOW):
        return True
    return any(m in text for m in g.producer_markers)


def inventory(ctx: Context, rev: str = "head") -> Inventory:
    """Producers and consumers of the revision (memoised per run)."""
    return ctx.memo(("image-inventory", rev, ""), lambda: _inventory(ctx, rev))


def workflow_doc(ctx: Context, path: str, rev: str = "head") -> YamlDoc | None:
    # Kept for the run (the Workflow model holds the document anyway): the image inventory and the project rules
    # ask for workflows the engine has already let go of; this saves reading and parsing them again.
    return ctx.memo(("workflow-doc", rev, path), lambda: _workflow_doc(ctx, path, rev))


def _workflow_doc(ctx: Context, path: str, rev: str) -> YamlDoc | None:
    src = ctx.source(path, rev)
    if src is None:
        return None
    return ctx.parsed("yamlmarks", src, parse_yaml, rev=rev)


def workflow(ctx: Context, path: str, rev: str = "head") -> Workflow | None:
    doc = workflow_doc(ctx, path, rev)
    if doc is None:
        return None
    return ctx.memo(("workflow", rev, path), lambda: build(doc, path))


def run_script(ctx: Context, text: str) -> shell.ShellScript:
    """`shell.parse(text)` of a `run:` block's text, once per run for each distinct text: the same blocks recur
    in many jobs and workflows, and the parse depends on the text alone."""
    return ctx.memo(("run-script", "", text), lambda: shell.parse(text))


def _paths(ctx: Context, rev: str) -> Iterable[str]:
    if rev == "head":
        return ctx.head_paths()
    return sorted(ctx.changeset.base.paths())


def _inventory(ctx: Context, rev: str) -> Inventory:
    g = grammar(ctx)
    inv = Inventory()
    tree = ctx.changeset.head if rev == "head" else ctx.changeset.base
    for path in _paths(ctx, rev):
        if not ctx.kindmap.has(path, kinds.WORKFLOW) and not ctx.kindmap.has(path, kinds.ASCEND_WORKFLOW):
            continue
        src = ctx.source(path, rev)
        if src is None:
            continue
        ascend = ctx.kindmap.has(path, kinds.ASCEND_WORKFLOW)
        candidate = _is_candidate_producer(path, src.text, ctx, g)
        if not ascend and not candidate:
            continue
        doc = workflow_doc(ctx, path, rev)
        if doc is None:
            continue
        if not doc.ok:
            inv.broken[path] = doc
            continue
        wf = workflow(ctx, path, rev)
        if wf is None:
            continue
        if candidate:
            products = products_of(wf, g, tree.read)
            if products:
                inv.producers[path] = Producer(path, products, wf.triggers)
        if ascend:
            inv.consumers.extend(consumers_of(wf, g))
    return inv


def head_documented_tags(ctx: Context, src: SourceFile) -> list[tuple[int, str, int, int]]:
    """`documented_tags(src.text, grammar(ctx), bare=True)` of a file at head, kept for the run: NPU204 asks
    while the engine is at the file, NPU203 after it let the file go (a few tags per file at most)."""
    return ctx.memo(("documented-tags", "head", src.path), lambda: list(documented_tags(src.text, grammar(ctx), True)))


def documented_tags(text: str, g: Grammar, bare: bool) -> Iterator[tuple[int, str, int, int]]:
    """(line, tag, start column, end column) of family image tags written in prose or comments.

    Explicit references (`quay.io/ascend/verl:<tag>`) always count; with `bare`, so do stand-alone words that
    classify into a tag scheme (`v0.8.0-cann9.0.0-...` in a table).
    """
    for n, line in enumerate(text.splitlines(), start=1):
        # Cheap guards first: most lines of most files can hold neither kind of tag (profiled on verl).
        explicit = ":" in line and "/" in line
        if not explicit and (not bare or line.count("-") < 3):
            continue
        seen: set[tuple[int, int]] = set()
        for m in _EXPLICIT.finditer(line) if explicit else ():
            ref = parse_ref(m.group(0))
            if ref is None or ref.tag is None or g.family(ref) is None:
                continue
            start = m.end() - len(ref.tag)
            seen.add((start, m.end()))
            yield n, ref.tag, start, m.end()
        if not bare:
            continue
        for m in _BARE.finditer(line):
            if any(s <= m.start() < e for s, e in seen):
                continue
            info = g.classify(m.group(0))
            if info.known:
                yield n, m.group(0), m.start(), m.end()


# The lookbehind changes no match, it only spares the regex a retry at every letter of a long word: a match that
# would start right after a letter or digit could start at that letter too, and finditer takes the leftmost
# (a previous match cannot end just before one: it ends before a character outside [A-Za-z0-9._-]).
_EXPLICIT = re.compile(
    r"(?<![A-Za-z0-9])[A-Za-z0-9][A-Za-z0-9.-]*(?::\d+)?(?:/[A-Za-z0-9._-]+)+:[A-Za-z0-9_][A-Za-z0-9._-]*"
)
_BARE = re.compile(r"(?<![\w./:-])[a-z0-9][a-z0-9._]*(?:-[a-z0-9._]+){3,}(?![\w/-])")


MAX_LISTED = 8  # places named in one message; the rest is counted


def places(items: Iterable[str], limit: int = MAX_LISTED) -> str:
    """`a:1, b:2 and 3 more` for a message."""
    uniq = list(dict.fromkeys(items))
    shown = ", ".join(uniq[:limit])
    rest = len(uniq) - limit
    return f"{shown} and {rest} more" if rest > 0 else shown


def spelled_line(ctx: Context, prod: Product, rev: str = "head") -> tuple[str, int]:
    """Where a product's tag is written out (e.g. the `echo "tag=..."` line), else the line that pushes it."""
    if prod.known:
        for path, line in sorted(prod.origins):
            src = ctx.source(path, rev)
            if src is not None and prod.tag in src.line(line):
                return path, line
    return prod.path, prod.line


# -- revisions: the base as far as the change leaves files alone is the head --------------------------------------


def reference_rev(ctx: Context) -> str:
    """The revision that says what "current" means: the base of a change, the head itself in an audit."""
    return "head" if ctx.audit else "base"


def _unchanged(ctx: Context, path: str) -> bool:
    if path in ctx.changeset.changes:
        return False
    return not any(c.old_path == path for c in ctx.changeset.changes.values())


def source_at(ctx: Context, path: str, rev: str) -> SourceFile | None:
    """The file at `rev`. At base, a file the change does not touch is read from head (same text): the App
    fetches only the changed files of the base."""
    src = ctx.source(path, rev)
    if src is None and rev == "base" and _unchanged(ctx, path) and ctx.changeset.base.exists(path):
        return ctx.source(path, "head")
    return src


def paths_at(ctx: Context, rev: str) -> list[str]:
    return list(_paths(ctx, rev))


def workflow_at(ctx: Context, path: str, rev: str) -> Workflow | None:
    """The workflow model at `rev` (see source_at); None when absent or broken."""
    # Kept for the run, like workflow_doc: NPU212 and the Ascend job list ask after the engine let go of the file.
    return ctx.memo(("workflow-at", rev, path), lambda: _workflow_at(ctx, path, rev))


def _workflow_at(ctx: Context, path: str, rev: str) -> Workflow | None:
    src = source_at(ctx, path, rev)
    if src is None:
        return None
    key_rev = "head" if src is ctx.source(path, "head") else rev
    return workflow(ctx, path, key_rev)  # `src` is ctx.source(path, key_rev): the model of that text


def workflow_paths(ctx: Context, rev: str) -> list[str]:
    """Workflow files GitHub runs at `rev` (directly under .github/workflows/)."""

    def find() -> list[str]:  # the cheap test first: most paths are not two levels deep
        return [
            p
            for p in _paths(ctx, rev)
            if p.count("/") == 2 and (ctx.kindmap.has(p, kinds.WORKFLOW) or ctx.kindmap.has(p, kinds.ASCEND_WORKFLOW))
        ]

    return list(ctx.memo(("workflow-paths", rev, ""), find))  # a copy: the caller may change its list


# -- Ascend runners -----------------------------------------------------------------------------------------------


def runner_catalog(ctx: Context) -> RunnerCatalog:
    return ctx.memo(("runner-catalog", "", ""), lambda: RunnerCatalog(ctx.knowledge.section("ascend_runners")))


@dataclass(frozen=True)
class AscendJob:
    """A job whose `runs-on` names a self-hosted Ascend runner (one entry per distinct label set)."""

    path: str
    job: str
    runner: Runner
    line: int  # the `runs-on` line


def ascend_jobs(ctx: Context, rev: str) -> list[AscendJob]:
    """Every job of every workflow at `rev` that runs on an Ascend runner (memoised)."""
    return ctx.memo(("ascend-jobs", rev, ""), lambda: _ascend_jobs(ctx, rev))


def _ascend_jobs(ctx: Context, rev: str) -> list[AscendJob]:
    catalog = runner_catalog(ctx)
    out: list[AscendJob] = []
    for path in workflow_paths(ctx, rev):
        wf = workflow_at(ctx, path, rev)
        if wf is None:
            continue
        for job in wf.jobs.values():
            node = job.node.get("runs-on")
            if node is None:
                continue
            seen: set[str] = set()
            for labels in runner_label_sets(wf, job):
                runner = catalog.of(labels) if labels is not None else None
                if runner is not None and runner.label not in seen:
                    seen.add(runner.label)
                    out.append(AscendJob(path, job.id, runner, node.line))
    return out


# -- which Dockerfile builds an image ----------------------------------------------------------------------------


def built_files(wf: Workflow, job_id: str, _seen: frozenset[str] = frozenset()) -> set[str]:
    """Dockerfiles a job builds (build-push-action `file:`, `docker build -f`); for a job that only merges
    manifests, the Dockerfiles of the jobs it needs. Unresolvable names are left out."""
    job = wf.jobs.get(job_id)
    if job is None or job_id in _seen:
        return set()
    out: set[str] = set()
    for scope in legs(wf, job):
        for step in job.steps:
            if step.uses and step.uses.split("@")[0].endswith("docker/build-push-action"):
                node = step.with_.get("file")
                if node is not None and node.is_scalar:
                    for val in scope.resolve(node):
                        if val.known:
                            out.add(re.sub(r"^(\./)+", "", val.text.strip()))
            elif step.run is not None:
                for m in re.finditer(
                    r"docker\s+(?:buildx\s+)?build\b[^\n]*?(?:-f|--file)[ =]+[\"']?([\w./-]+)", step.run.value
                ):
                    out.add(re.sub(r"^(\./)+", "", m.group(1)))
    if not out:
        for need in job.needs:
            out |= built_files(wf, need, _seen | {job_id})
    return out


def dockerfiles_of(ctx: Context, tag: str, info: TagInfo) -> tuple[set[str], bool]:
    """The Dockerfiles (at head) whose image a consumer tag pulls, and whether the tag matched exactly.

    Exact: the producers that push `tag`. Otherwise, for a floating tag, the floating producers of the same
    device and backend (the tag is stale; its image is still meant to come from there)."""
    inv = inventory(ctx)
    products = inv.producers_of(tag)
    exact = bool(products)
    if not products and info.known and info.role == "floating":
        products = [
            p for p in inv.products() if p.known and p.info.role == "floating" and p.info.variant == info.variant
        ]
    files: set[str] = set()
    for prod in products:
        wf = workflow(ctx, prod.path)
        if wf is not None:
            files |= {f for f in built_files(wf, prod.job) if ctx.changeset.head.exists(f)}
    cann = info.values.get("cann")
    if not exact and cann:
        # A stale tag naming another CANN version was built from another Dockerfile (an older one).
        files = {f for f in files if (base := _from_cann(ctx, f)) is not None and base.lower() == cann.lower()}
    return files, exact


def _from_cann(ctx: Context, path: str) -> str | None:
    """The CANN version of a Dockerfile's base image (`.../cann:8.5.0-a3-ubuntu22.04-py3.11` -> `8.5.0`)."""
    src = ctx.source(path)
    if src is None:
        return None
    df = ctx.parsed("dockerfile", src, dfp.parse)
    for instr in df.of("FROM"):
        image = instr.image
        if image is not None and image.tag and image.image.rsplit("/", 1)[-1] == "cann":
            return image.tag.split("-", 1)[0]
    return None
