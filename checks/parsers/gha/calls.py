"""Reusable workflows: what a `workflow_call` (or `workflow_dispatch`) declares, where local workflows call it,
and what each call passes."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from npu_review.checks import kinds, lazyre
from npu_review.checks.parsers.gha.workflow import job_blocks

if TYPE_CHECKING:
    from npu_review.checks.parsers.gha.workflow import Job, Workflow
    from npu_review.checks.parsers.yamlmarks import Node


@dataclass(frozen=True)
class Param:
    """One declared input or secret of a `workflow_call` / `workflow_dispatch` trigger."""

    name: str
    line: int  # the key's line
    required: bool
    has_default: bool
    event: str  # "workflow_call" or "workflow_dispatch"
    kind: str  # "input" or "secret"


@dataclass
class Call:
    """A job that calls a local reusable workflow (`uses: ./.github/workflows/x.yml`; GitCode's
    `uses: .gitcode/workflows/x.yml`)."""

    caller: Workflow
    job: Job
    target: str  # repository path of the called workflow
    line: int  # the `uses:` line
    with_: dict[str, Node] = field(default_factory=dict)
    with_lines: dict[str, int] = field(default_factory=dict)
    secrets: dict[str, Node] = field(default_factory=dict)
    inherit: bool = False  # `secrets: inherit`
    secrets_unknown: bool = False  # `secrets:` that is not a mapping nor `inherit`


_NULLS = frozenset({"", "~", "null", "Null", "NULL"})  # `token:` declares a secret with no keys


def declared(wf: Workflow, event: str, kind: str) -> list[Param]:
    """The inputs (`kind="input"`) or secrets of `on.<event>` in declaration order. An entry whose value is a scalar
    (`required: true`, `default: 'main'`) is no input: it is a key of the input above it, indented one level too
    shallow (GitHub refuses the workflow), not a name anything could read."""
    on = wf.root.get("on")
    spec = on.get(event) if on is not None and on.is_map else None
    block = spec.get("inputs" if kind == "input" else "secrets") if spec is not None and spec.is_map else None
    out: list[Param] = []
    for name, key, value in block.entries() if block is not None else ():
        if value.is_scalar and value.value.strip() not in _NULLS:
            continue
        required = value.scalar("required") if value.is_map else None
        out.append(
            Param(
                name=name,
                line=key.line,
                required=(required or "").strip().lower() == "true",
                has_default=value.is_map and value.get("default") is not None,
                event=event,
                kind=kind,
            )
        )
    return out


def is_reusable(wf: Workflow) -> bool:
    return "workflow_call" in wf.triggers


def local_target(uses: str, caller_path: str, repository: str = "") -> str | None:
    """The repository path a job's `uses:` names when it is a workflow of this repository, else None. With
    `repository` ("owner/name"), a call written as `owner/name/.github/workflows/x.yml@ref` of that same repository
    names its path too (whether the file is there, and is the one the ref runs, is for the caller to judge)."""
    # A call resolves within the caller's own workflow folder: GitHub runs `./.github/workflows/x.yml`, GitCode
    # `.gitcode/workflows/x.yml` (written so, without `./`, in hicann/*'s workflows) or `./.gitcode/workflows/x.yml`.
    host = kinds.workflow_host(caller_path) or kinds.GITHUB
    folder = host.folder + "/"
    uses = uses.strip()
    if host is not kinds.GITHUB and uses.startswith(folder):
        uses = "./" + uses
    if not uses.startswith("./"):
        if not repository or "@" not in uses:
            return None
        owner, _, rest = uses.partition("/")
        name, _, path = rest.partition("/")
        if f"{owner}/{name}".lower() != repository.lower() or not path.startswith(folder):
            return None
        uses = "./" + path
    target = posixpath.normpath(uses.split("@", 1)[0])
    if not target.startswith(folder):
        return None
    return target


def calls(wf: Workflow, repository: str = "") -> list[Call]:
    """Every job of `wf` that calls a local reusable workflow (and, with `repository`, one called by its
    `owner/name/...@ref` address: see local_target)."""
    out: list[Call] = []
    for job in wf.jobs.values():
        uses_node = job.node.get("uses")
        if uses_node is None or not uses_node.is_scalar:
            continue
        target = local_target(uses_node.value, wf.path, repository)
        if target is None:
            continue
        call = Call(wf, job, target, uses_node.line)
        with_node = job.node.get("with")
        for name, key, value in with_node.entries() if with_node is not None else ():
            call.with_[name] = value
            call.with_lines[name] = key.line
        secrets = job.node.get("secrets")
        if secrets is not None:
            if secrets.is_scalar and secrets.value.strip() == "inherit":
                call.inherit = True
            elif secrets.is_map:
                call.secrets = {k: v for k, _, v in secrets.entries()}
            else:
                call.secrets_unknown = True
        out.append(call)
    return out


def passes(call: Call, param: Param) -> bool:
    """Whether the call passes `param` (names are case-insensitive for GitHub)."""
    if param.kind == "secret":
        if call.inherit or call.secrets_unknown:
            return True
        return param.name.lower() in {k.lower() for k in call.secrets}
    return param.name.lower() in {k.lower() for k in call.with_}


@dataclass(frozen=True)
class SecretRead:
    """A `secrets.NAME` (or `secrets['NAME']`) read in an expression of a workflow's jobs."""

    name: str
    line: int
    # Inputs that gate it: its job's or step's `if:` is true only when each is true (name, None:
    # `inputs.publish && ...`) or has a value (name, value: `inputs.type == 'schedule'`); lower-case.
    gates: frozenset[tuple[str, str | None]] = frozenset()


_EXPR = lazyre.compile(r"\$\{\{(.*?)\}\}")
_SECRET = lazyre.compile(r"\bsecrets\s*(?:\.\s*([A-Za-z_][\w-]*)|\[\s*['\"]([^'\"]+)['\"]\s*\])")
_INPUT = r"inputs\s*\.\s*([A-Za-z_][\w-]*)"
_LITERAL = r"'([^']*)'|\"([^\"]*)\"|(true|false|-?\d+)"
_GATE = lazyre.compile(rf"{_INPUT}(?:\s*==\s*(?:{_LITERAL}))?\Z|(?:{_LITERAL})\s*==\s*{_INPUT}\Z", re.I)
_NOT_INPUT = lazyre.compile(rf"!\s*{_INPUT}")
# A gate that needs its input false (`!inputs.is_priv`).
NOT_GATE = "\0not"
# `secrets.X || <fallback>`: the expression has a value of its own when the secret is empty (`|| ''` is none).
_FALLBACK = lazyre.compile(r"\s*\|\|(?!\s*(?:''|\"\"|\)|$))")


def _gates(node: Node | None) -> frozenset[tuple[str, str | None]]:
    """The inputs an `if:` needs true, false or equal to a literal: its `&&` terms `inputs.NAME`, `!inputs.NAME`
    (NOT_GATE: needs it false; oneflow's docs step, `... && !inputs.is_priv`, which its private release calls with
    `is_priv: true`: rs-r72, judged false twice), `inputs.NAME == 'v'` (either side); none when it has an `||` or
    a negation of more than one input."""
    if node is None or not node.is_scalar:
        return frozenset()
    text = node.value.strip()
    m = re.fullmatch(r"\$\{\{(.*)\}\}", text, re.S)
    text = (m.group(1) if m else text).strip()
    if "||" in text or re.search(r"!\s*\(", text):
        return frozenset()
    out: set[tuple[str, str | None]] = set()
    for term in text.split("&&"):
        bare = term.strip().strip("()").strip()
        if bare.startswith("!") and not bare.startswith("!="):
            n = _NOT_INPUT.fullmatch(bare)
            if n is not None:
                out.add((n.group(1).lower(), NOT_GATE))
            continue
        g = _GATE.match(bare)
        if g is None:
            continue
        name, *values = (x for x in g.groups() if x is not None)
        if g.group(1) is None:  # the literal on the left
            *values, name = (x for x in g.groups() if x is not None)
        out.add((name.lower(), values[0].lower() if values else None))
    return frozenset(out)


def secret_reads(wf: Workflow) -> list[SecretRead]:
    """The secrets the jobs of `wf` read in expressions (`${{ }}`, and whole `if:` values), in document order; not
    a read with a fallback of its own (`secrets.PAT || github.token`)."""
    out: list[SecretRead] = []
    for jobs in job_blocks(wf.root, wf.path):
        out.extend(_secret_reads(jobs))
    return out


def _secret_reads(jobs: Node) -> list[SecretRead]:
    out: list[SecretRead] = []
    for path, node in jobs.walk():
        if not node.is_scalar or "secrets" not in node.value.lower():
            continue
        whole = bool(path) and path[-1] == "if"
        job = jobs.get(str(path[0])) if path else None
        step = job.at("steps", path[2]) if job is not None and len(path) > 2 and path[1] == "steps" else None
        gates = _gates(job.get("if") if job is not None and job.is_map else None) | _gates(
            step.get("if") if step is not None and step.is_map else None
        )
        for line, text in node.text_lines():
            spans = [text] if whole else [m.group(1) for m in _EXPR.finditer(text)]
            for span in spans:
                for m in _SECRET.finditer(span):
                    if _FALLBACK.match(span, m.end()):
                        continue
                    out.append(SecretRead(m.group(1) or m.group(2), line, gates))
    return out


def input_reference(name: str) -> re.Pattern[str]:
    """`inputs.NAME`, `inputs['NAME']`, `github.event.inputs.NAME` (and jq's `.inputs.NAME`): a read of the input.
    Context property names are case-insensitive."""
    n = re.escape(name)
    return re.compile(rf"inputs\s*(?:\.\s*{n}(?![\w-])|\[\s*['\"]{n}['\"]\s*\])", re.I)


# Reads of the whole inputs object (or of the event payload) that may read any input.
WHOLE_INPUTS = lazyre.compile(
    r"toJSON\(\s*(?:github\.event\.)?inputs\s*\)|inputs\s*\[\s*[^'\"\s]|\binputs\s*\}\}|GITHUB_EVENT_PATH"
    r"|toJSON\(\s*github\.event\s*\)|\.inputs\s*\|",
    re.I,
)


def reads_whole_inputs(text: str) -> bool:
    """`WHOLE_INPUTS.search(text)`, with a cheap test first: every match holds `inputs`, `GITHUB_EVENT_PATH` or
    `toJSON(` in some case, and in ASCII text (where `re.I` folds only ASCII letters) `lower()` finds it."""
    if text.isascii():
        low = text.lower()
        if "inputs" not in low and "github_event_path" not in low and "tojson(" not in low:
            return False
    return WHOLE_INPUTS.search(text) is not None
