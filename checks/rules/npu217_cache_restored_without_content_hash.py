"""NPU217: compiled outputs restored from a cache by a key prefix that drops the sources' hash, then trusted."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from npu_review.checks import lazyre
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import ASCEND_WORKFLOW, WORKFLOW
from npu_review.checks.model import Severity
from npu_review.checks.parsers.gha.expressions import EXPR
from npu_review.checks.parsers.gha.workflow import Job, Step, Workflow
from npu_review.checks.rule import Hit, Rule

# A cache action (actions/cache and its restore half, and the drop-in forks of it).
_CACHE_ACTION = lazyre.compile(r"^[\w.-]+/cache(?:/restore)?$", re.I)
# A part of the key that changes with the content: hashFiles(), the commit, a step output or env named so.
_HASH_TERM = lazyre.compile(r"hashFiles\s*\(|github\.sha\b|[\w.-]*(?:hash|sha\d*|digest|checksum|md5)[\w-]*", re.I)
# Paths of compiled outputs (shared objects, object files, static libraries, a package's lib/ or build output).
_COMPILED = lazyre.compile(
    r"(?:\*?\.(?:so|o|a|pyd|dylib)(?:\.\*)?$)|(?:/lib/?$)|(?:/_C[^/]*$)|(?:/(?:kernels?|ops?)_?(?:custom|build)[^/]*/?$)"
    r"|(?:_cann_ops_custom/?$)",
    re.I,
)
# Dependency and compiler caches restore by prefix on purpose: never reported.
_DEPENDENCY = lazyre.compile(
    r"(?:pip|ccache|sccache|npm|yarn|pnpm|\.m2|gradle|cargo|go-build|uv|conda|huggingface|torch_extensions)", re.I
)
# A later step that trusts what is there: tests for files and skips the build when they exist.
_BUILD = lazyre.compile(
    r"\b(?:cmake|make|ninja|bazel|setup\.py|pip3?\s+install|python3?\s+-m\s+(?:pip\s+install|build)|build\S*\.sh)\b"
)
_PRESENCE_TEST = lazyre.compile(
    r"(?:\[\[?\s*-[efsd]\s|\btest\s+-[efsd]\s|\bfind\b[^\n|]*\|\s*grep\s+-q|\bls\b[^\n]*(?:&&|\|\|)|\bif\s+(?:!\s*)?ls\b)"
)


class CacheRestoredWithoutContentHash(Rule):
    """Compiled outputs are restored from a cache by a key prefix that drops the sources' hash, and a later step
    skips the build when the files are there.

    Why: `restore-keys` restores the newest cache whose key starts with the prefix when no exact key matches,
    so after a change to the sources the job gets the objects built from the old ones. For dependency and
    compiler caches (pip, ccache, npm) that is the point, and the build system sorts it out; but a job that
    restores its compiled kernels or `.so` files this way and then skips compiling because they exist ("cache
    hit: .so files found") tests and ships stale binaries. vllm-ascend's main2main job restored
    `vllm_ascend/*.so` and `lib/` with a prefix that dropped the csrc hash, then installed with
    `COMPILE_CUSTOM_KERNELS=0` when `.so` files were found.

    Bad:
        - uses: actions/cache/restore@v4
          with:
            path: build/kernels/*.so
            key: kernels-${{ hashFiles('csrc/**') }}
            restore-keys: kernels-
        - run: if ls build/kernels/*.so >/dev/null 2>&1; then echo skip; else make kernels; fi

    Good:
        - uses: actions/cache/restore@v4
          with:
            path: build/kernels/*.so
            key: kernels-${{ hashFiles('csrc/**') }}

    Fix: drop `restore-keys` for compiled outputs (an exact key only), or let the build decide what is stale.

    Not reported: caches of dependencies and compilers (pip, ccache, npm, cargo, uv, conda), paths that are
    not compiled outputs, keys without a content hash, restore keys that keep it, and jobs with no later step
    that tests for the restored files.
    """

    id = "NPU217"
    name = "cache-restored-without-content-hash"
    severity = Severity.WARNING
    title = "Compiled outputs restored by a cache key prefix that drops the content hash"
    kinds = frozenset({WORKFLOW, ASCEND_WORKFLOW})

    needles = ("restore-keys",)

    def check_step(self, step: Step, job: Job, wf: Workflow, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        return _check_step(src.path, job, step.index, step)


def _check_step(path: str, job: Job, index: int, step: Step) -> Iterator[Hit]:
    if step.uses is None or not _CACHE_ACTION.match(step.uses.split("@", 1)[0].strip()):
        return
    key, restore, paths = step.with_.get("key"), step.with_.get("restore-keys"), step.with_.get("path")
    if key is None or restore is None or paths is None or not key.is_scalar or not restore.is_scalar:
        return
    hashes = [m.group(0) for e in EXPR.finditer(key.value) for m in _HASH_TERM.finditer(e.group(1))]
    if not hashes:
        return
    prefixes = [t.strip() for _, t in restore.text_lines() if t.strip() and not t.strip().startswith("#")]
    dropping = [p for p in prefixes if not any(h in p for h in hashes)]
    if not dropping:
        return
    entries = [t.strip() for _, t in paths.text_lines() if t.strip() and not t.strip().startswith("#")]
    compiled = [e for e in entries if not e.startswith("!") and _COMPILED.search(e) and not _DEPENDENCY.search(e)]
    if not compiled or any(_DEPENDENCY.search(e) for e in entries if e not in compiled):
        return
    trusting = _trusting_step(job, index, compiled)
    if trusting is None:
        return
    shown = ", ".join(f"`{c}`" for c in compiled[:3])
    yield Hit(
        path,
        restore.line,
        f"`restore-keys: {dropping[0]}` restores {shown} from a cache built from other sources (it drops "
        f"`{hashes[0]}` of the key), and step `{trusting}` skips the build when the files are there: a change to "
        "the sources is tested and shipped with stale binaries. Restore compiled outputs by the exact key only.",
    )


def _trusting_step(job: Job, index: int, compiled: list[str]) -> str | None:
    """The first later step that tests for the restored files and builds only when they are missing."""
    names = {re.sub(r"[*?\[].*$", "", c.rstrip("/")).rsplit("/", 1)[-1] for c in compiled}
    names |= {m.group(0) for c in compiled for m in re.finditer(r"\.(?:so|o|a|pyd|dylib)\b", c)}
    names.discard("")
    for step in job.steps[index + 1 :]:
        if step.run is None:
            continue
        text = step.run.value
        if not _BUILD.search(text):
            continue
        for m in _PRESENCE_TEST.finditer(text):
            line_end = text.find("\n", m.start())
            window = text[m.start() : line_end if line_end >= 0 else len(text)]
            if any(n in window for n in names):
                return step.name or step.id or f"#{step.index + 1}"
    return None
