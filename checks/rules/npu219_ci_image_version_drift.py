"""NPU219: one CI image or Dockerfile is on another CANN version or Python minor than the rest, for one device."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from npu_review.checks import lazyre
from npu_review.checks.analysis.stacks import CANN_TAG
from npu_review.checks.context import Context
from npu_review.checks.kinds import ASCEND_DOCKERFILE, ASCEND_WORKFLOW, DOCKERFILE, WORKFLOW
from npu_review.checks.model import Severity
from npu_review.checks.rule import Hit, Rule

# A version in a file's path: the file is for that version (`Dockerfile.ascend_8.5.0_a2`), on purpose.
_VERSIONED_PATH = lazyre.compile(r"\d+\.\d+(?:\.\d+|\.?rc\d+)", re.I)
_RELEASE_SUFFIX = lazyre.compile(r"^-v?\d+(?:\.\d+)+")
_DEVICES = {"a2": "910b"}
# A comment that says why a line differs on purpose.
_WHY = lazyre.compile(
    r"#.*\b(?:keep|kept|pin|pinned|old|older|still|until|legacy|because|compat\w*|purpose|deliberate\w*|"
    r"not yet|only supports?|requires?)\b",
    re.I,
)
NEAR = 3  # lines: two values for one device this close are a matrix of versions, on purpose
MIN_AGREEING = 3  # files that must agree before one is an outlier


@dataclass(frozen=True)
class _Use:
    path: str
    line: int
    device: str
    family: str  # the image the tag belongs to: `cann::` (the CANN base images), `app:app-sglang-:`, …
    cann: str
    py: str
    text: str

    @property
    def values(self) -> tuple[str, str]:
        return (self.cann, self.py)


class CiImageVersionDrift(Rule):
    """A CI image or Dockerfile uses another CANN version or Python minor than every other one, for one device.

    Why: CI is meant to test what ships. The CANN base image tag (`<cann>-<device>-<os>-py3.N`) appears in the
    Dockerfiles, in the workflows' `container.image`, matrices and scripts; an upgrade updates them all at once
    and usually misses one. That job then tests on the old CANN or Python, green while the shipped image
    breaks (or red for reasons nobody else sees). vllm-ascend left its unit-test job on `cann:8.2.rc2-910b`
    while every other image was on 8.3.rc2, and its PR-comment test launcher on `py3.11` after the move to
    3.12.

    Bad (`Dockerfile`, `ci.yml` and `nightly.yml` are on `cann:8.3.rc2-910b-ubuntu22.04-py3.11`):
        container:
          image: quay.io/ascend/cann:8.2.rc2-910b-ubuntu22.04-py3.11

    Good:
        container:
          image: quay.io/ascend/cann:8.3.rc2-910b-ubuntu22.04-py3.11

    Fix: bring every file to one version per device, or say on the line (a comment) why it differs.

    Tags are compared within one image: the CANN base images (`…/cann:<tag>`, a bare `<tag>`) with each other,
    a project's own variants (`app:app-sglang-<tag>`, `<tag>-qwen3-5`) each apart.

    Not reported: devices with fewer than three files agreeing or without a two-thirds majority, values two
    files or more share against a majority under four times as large, files whose path names a release or a
    version (`Dockerfile.cann_8.2.rc1_a2`), release images (`…-py3.11-v0.7.1`), two versions for one device
    within a few lines of each other (a matrix of versions), lines with a comment saying why (`# keep …`,
    `# still …`, `# older …`), and in a change, outliers that were outliers before it, and untouched ones when
    the change moved no use off their version (it only added uses of another: new jobs, a new image).
    """

    id = "NPU219"
    name = "ci-image-version-drift"
    severity = Severity.WARNING
    title = "CI image or Dockerfile on another CANN version or Python minor than the rest"
    kinds = frozenset({WORKFLOW, ASCEND_WORKFLOW, DOCKERFILE, ASCEND_DOCKERFILE})

    def check_project(self, ctx: Context) -> Iterable[Hit]:
        found = list(_outliers(ctx, "head"))
        if not found:
            return
        before = set() if ctx.audit else {(u.path, u.text, field) for u, field, _, _ in _outliers(ctx, "base")}
        moved = set() if ctx.audit else _moved_off(ctx)
        for use, field, value, agreeing in found:
            if (use.path, use.text, field) in before:
                continue
            if (
                not ctx.audit
                and not ctx.is_added_line(use.path, use.line)
                and (use.device, use.family, field, getattr(use, field)) not in moved
            ):
                # The change only added uses of another version (new jobs, a new image): it upgraded nothing, so
                # the untouched job was not left behind by it; which version the new ones should use is theirs.
                continue
            what = "CANN" if field == "cann" else "Python"
            mine = use.cann if field == "cann" else f"py{use.py}"
            theirs = value if field == "cann" else f"py{value}"
            names = [f"`{p}`" for p in agreeing]
            if len(names) > 3:
                shown = ", ".join(names[:3]) + f" and {len(names) - 3} more"
            else:
                shown = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
            yield Hit(
                use.path,
                use.line,
                f"`{use.text}` is on {what} {mine} for {use.device}, while {shown} use {theirs}: CI tests another "
                f"{what} here than the rest. Bring them to one version, or say in a comment why this one differs.",
                caused_by_change=True,
            )


def _uses(ctx: Context, rev: str) -> list[_Use]:
    out: list[_Use] = []
    paths = [
        path
        for path in ctx.candidate_paths(frozenset({WORKFLOW, DOCKERFILE}), rev)
        if (ctx.kindmap.has(path, WORKFLOW) or ctx.kindmap.has(path, DOCKERFILE))
        # a release's files, or files named for their version, keep their versions on purpose
        and not ("release" in path.lower() or _VERSIONED_PATH.search(path))
    ]
    # (the files that say `-py3.`, found without reading the others where the tree can search its files)
    for path in paths if ctx.audit else ctx.paths_mentioning(("-py3.",), paths, rev):
        src = ctx.source_at(path, rev)
        if src is None or "-py3." not in src.text:
            continue
        lines = src.text.splitlines()
        found: list[_Use] = []
        for n, line in enumerate(lines, 1):
            stripped = line.strip()
            if stripped.startswith("#") or "-py3." not in line:
                continue
            if _WHY.search(line) or (n > 1 and _WHY.search(lines[n - 2]) and lines[n - 2].strip().startswith("#")):
                continue
            for m in CANN_TAG.finditer(line):
                device = m.group("dev").lower()
                post = m.group("post") or ""
                if _RELEASE_SUFFIX.match(post):
                    continue  # a release's image (`…-py3.11-v0.7.1`) keeps that release's versions
                token = re.search(r"[^\s'\"=(,]*$", line[: m.start()])
                lead = token.group(0) if token else ""
                repo, _, pre = lead.rpartition(":") if ":" in lead else ("", "", lead)
                family = f"{repo.rsplit('/', 1)[-1] or 'cann'}:{pre}:{'' if post == '-latest' else post}"
                found.append(
                    _Use(
                        path,
                        n,
                        _DEVICES.get(device, device),
                        family,
                        m.group("cann").lower(),
                        m.group("py"),
                        m.group(0),
                    )
                )
        # two values for one device a few lines apart: a version matrix, never an outlier
        out.extend(
            u
            for u in found
            if not any(
                o.device == u.device and abs(o.line - u.line) <= NEAR and (o.cann, o.py) != (u.cann, u.py)
                for o in found
            )
        )
    return out


def _moved_off(ctx: Context) -> set[tuple[str, str, str, str]]:
    """(device, family, field, value) of which the change leaves fewer uses than it found: an upgrade moved some
    uses off that value (the untouched ones still on it were left behind)."""
    counts: dict[tuple[str, str, str, str], int] = {}
    for rev, sign in (("base", 1), ("head", -1)):
        uses: list[_Use] = ctx.memo(("npu219-uses", rev, ""), functools.partial(_uses, ctx, rev))
        for u in uses:
            for field in ("cann", "py"):
                key = (u.device, u.family, field, getattr(u, field))
                counts[key] = counts.get(key, 0) + sign
    return {k for k, n in counts.items() if n > 0}


def _outliers(ctx: Context, rev: str) -> Iterator[tuple[_Use, str, str, list[str]]]:
    """(use, field, the value the rest agree on, the files that agree) for each outlying use."""
    uses = ctx.memo(("npu219-uses", rev, ""), lambda: _uses(ctx, rev))
    for device, family in sorted({(u.device, u.family) for u in uses}):
        mine = [u for u in uses if u.device == device and u.family == family]
        for field in ("cann", "py"):
            files: dict[str, set[str]] = {}
            for u in mine:
                files.setdefault(getattr(u, field), set()).add(u.path)
            if len(files) < 2:
                continue
            ranked = sorted(files.items(), key=lambda kv: (-len(kv[1]), kv[0]))
            value, agreeing = ranked[0]
            total = sum(len(h) for _, h in ranked)
            if len(agreeing) < MIN_AGREEING or 3 * len(agreeing) < 2 * total:
                continue  # no clear majority: several versions on purpose
            for other, holders in ranked[1:]:
                if len(holders) > 1 and 4 * len(holders) > len(agreeing):
                    continue
                for u in mine:
                    if getattr(u, field) == other:
                        yield u, field, value, sorted(agreeing - {u.path})
