"""NPU310: a pair of Dockerfile twins (A2/A3 devices, or two OSes) that a change makes differ beyond what is
device- or OS-specific."""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from npu_review.checks import lazyre
from npu_review.checks.analysis.device import Devices, devices, dockerfile_device
from npu_review.checks.context import Context
from npu_review.checks.diffing import differing_lines
from npu_review.checks.facts.schema import TwinDrift
from npu_review.checks.kinds import ASCEND_DOCKERFILE
from npu_review.checks.model import Related, Severity
from npu_review.checks.parsers.dockerfile import parse
from npu_review.checks.rule import Hit, Rule

MAX_LISTED = 5


@dataclass(frozen=True)
class Normalised:
    lines: list[int]  # physical line numbers of the kept lines
    texts: list[str]  # their device-neutral text


def twin_paths(paths: Iterable[str], dev: Devices) -> list[tuple[str, str]]:
    """(a2 path, a3 path) for every pair of files that differ only in the device token of their name."""
    present = set(paths)
    a2_tokens, a3_tokens = sorted(dev.file_tokens.get("a2", ())), sorted(dev.file_tokens.get("a3", ()))
    if len(a2_tokens) != 1 or len(a3_tokens) != 1:
        return []
    pairs = []
    for path in sorted(present):
        folder, base = posixpath.split(path)
        spots = list(re.finditer(rf"(?<=[._-]){re.escape(a2_tokens[0])}(?=$|[._-])", base, re.I))
        if len(spots) != 1:
            continue
        m = spots[0]
        twin = posixpath.join(folder, base[: m.start()] + _same_case(m.group(0), a3_tokens[0]) + base[m.end() :])
        if twin in present and twin != path:
            pairs.append((path, twin))
    return pairs


def untokened_twins(paths: Iterable[str], dev: Devices, ctx: Context, taken: set[str]) -> list[tuple[str, str]]:
    """(a2 path, a3 path) where the A2 file's name has no device token at all (`Dockerfile` beside
    `Dockerfile.a3`, `Dockerfile.openEuler` beside `Dockerfile.a3.openEuler`): pairs only when the untokened
    file's base image is an A2 one (its FROM tag), so a name alone makes no pair."""
    present = set(paths)
    a3_tokens = sorted(dev.file_tokens.get("a3", ()))
    if len(a3_tokens) != 1:
        return []
    pairs = []
    for path in sorted(present - taken):
        folder, base = posixpath.split(path)
        spots = list(re.finditer(rf"[._-]{re.escape(a3_tokens[0])}(?=$|[._-])", base, re.I))
        if len(spots) != 1:
            continue
        twin = posixpath.join(folder, base[: spots[0].start()] + base[spots[0].end() :])
        if (
            twin in taken
            or twin not in present
            or dev.of_file(twin) is not None
            or dockerfile_device(ctx, twin, dev) != "a2"
        ):
            continue
        pairs.append((twin, path))
    return pairs


def os_twins(paths: Iterable[str], suffixes: Iterable[str]) -> list[tuple[str, str]]:
    """(default path, other-OS path) for every `X` / `X.openEuler` pair."""
    present = set(paths)
    pairs = []
    for path in sorted(present):
        for suffix in suffixes:
            if path.endswith(suffix) and path[: -len(suffix)] in present:
                pairs.append((path[: -len(suffix)], path))
                break
    return pairs


class OsNormaliser:
    """Makes two OS twins comparable: only their build-context and configuration instructions (COPY, ADD, ARG,
    ENV, WORKDIR), OS words folded, lines of one OS (ENV DEBIAN_FRONTEND) left out."""

    def __init__(self, facts: TwinDrift) -> None:
        self._compared = frozenset(k.upper() for k in facts.os_compared)
        self._os = re.compile("|".join(f"(?:{p})" for p in facts.os_tokens), re.I) if facts.os_tokens else None
        self._only = [re.compile(p) for p in facts.os_only]

    def __call__(self, text: str) -> Normalised:
        lines: list[int] = []
        texts: list[str] = []
        for instr in parse(text).instructions:
            if instr.keyword not in self._compared:
                continue
            body = re.sub(r"\s+", " ", f"{instr.keyword} {instr.args}").strip()
            if any(p.search(body) for p in self._only):
                continue
            if self._os is not None:
                body = self._os.sub("<OS>", body)
            body = _unquoted_settings(body)
            lines.append(instr.line)
            texts.append(body)
        return Normalised(lines, texts)


def _same_case(model: str, word: str) -> str:
    return word.upper() if model.isupper() else word


class Normaliser:
    """Makes an A2 and an A3 file comparable: device tokens, SOC_VERSION values and ops packages folded."""

    def __init__(self, dev: Devices, one_sided: list[str]) -> None:
        socs = sorted({v for vals in dev.soc.values() for v in vals}, key=len, reverse=True)
        tokens = sorted({t for toks in (*dev.from_tokens.values(), *dev.file_tokens.values()) for t in toks})
        self._ops = re.compile("|".join(re.escape(p) for p in dev.ops.values()), re.I) if dev.ops else None
        self._soc = re.compile(r"(?<![\w-])(?:" + "|".join(re.escape(s) for s in socs) + r")(?![\w])", re.I)
        # A device token goes with the separator before it: the default device's twin often has none
        # (`nightly-${BRANCH}${OS}` beside `nightly-${BRANCH}-a3${OS}`), which is not drift.
        self._dev = re.compile(
            r"[-_.]?(?<![A-Za-z0-9])(?:" + "|".join(re.escape(t) for t in tokens) + r")(?![A-Za-z0-9])", re.I
        )
        self._skip = [re.compile(p) for p in one_sided]

    def __call__(self, text: str) -> Normalised:
        lines: list[int] = []
        texts: list[str] = []
        settings: set[str] = set()
        for n, raw in enumerate(text.splitlines(), start=1):
            body = raw.strip()
            if not body or body.startswith("#") or any(p.search(body) for p in self._skip):
                continue
            body = re.sub(r"\s+", " ", body)
            if self._ops is not None:
                body = self._ops.sub("<OPS>", body)
            body = self._soc.sub("<SOC>", body)
            body = self._dev.sub("", body)
            body = _unquoted_settings(body)
            if _SETTING.match(body):
                body = _QUOTED_VALUE.sub(r"=\2", body)  # `ARG TAG="v1"` is `ARG TAG=v1`: Docker strips the quotes
                if body in settings:
                    continue  # the same one-line ENV/ARG again: it changes nothing
                settings.add(body)
            lines.append(n)
            texts.append(body)
        return Normalised(lines, texts)


_QUOTED_VALUE = lazyre.compile(r"""=(["'])([^"'\s$]*)\1""")


def _unquoted_settings(body: str) -> str:
    """`ARG TAG="v0.3.8"` as `ARG TAG=v0.3.8`: Docker strips the quotes of a value without blanks, so twins
    that quote it differently set the same thing."""
    if body[:4].upper() not in ("ARG ", "ENV "):
        return body
    return _QUOTED_VALUE.sub(r"=\2", body)


# A one-line ENV or ARG (no continuation): repeating it in the same file changes nothing.
_SETTING = lazyre.compile(r"(?i)^(?:ENV|ARG) [^\\]*$")
_QUOTED_VALUE = lazyre.compile(r"""=(["'])([^"'$\\\s]*)\1""")


def _stretches(norm: Normalised, lines: list[int]) -> int:
    """How many runs of consecutive compared lines `lines` (physical line numbers of `norm`'s) make."""
    at = {n: i for i, n in enumerate(norm.lines)}
    positions = sorted(at[n] for n in lines if n in at)
    return sum(1 for k, i in enumerate(positions) if k == 0 or i != positions[k - 1] + 1)


def unmatched(a: Normalised, b: Normalised) -> tuple[list[int], list[int]]:
    """Physical lines of `a` and of `b` that have no counterpart in the other file.

    A line the diff leaves unmatched on both sides with the same text is a moved line (a block placed before
    instead of after another): the twins still install the same things, so it is not drift."""
    only_a, only_b = differing_lines(a.texts, b.texts)
    left = Counter(b.texts[j] for j in only_b)
    right = Counter(a.texts[i] for i in only_a)
    kept_a = []
    for i in only_a:
        if left[a.texts[i]] > 0:
            left[a.texts[i]] -= 1
        else:
            kept_a.append(i)
    kept_b = []
    for j in only_b:
        if right[b.texts[j]] > 0:
            right[b.texts[j]] -= 1
        else:
            kept_b.append(j)
    return [a.lines[i] for i in kept_a], [b.lines[j] for j in kept_b]


def _listed(lines: list[int]) -> str:
    """`line 7`, `lines 7, 8, 9`, `lines 1, 2, 3, 4, 5 and 2 more`."""
    shown = ", ".join(str(n) for n in lines[:MAX_LISTED])
    more = f" and {len(lines) - MAX_LISTED} more" if len(lines) > MAX_LISTED else ""
    return f"{'line' if len(lines) == 1 else 'lines'} {shown}{more}"


class A2A3TwinDrift(Rule):
    """A change edits one of a pair of `_a2`/`_a3` Dockerfiles so that the two no longer match.

    Why: verl keeps one Dockerfile per device (`Dockerfile.ascend_9.1.0_a2`, `…_a3`) that should differ only
    in what is device-specific. A fix applied to one twin and forgotten in the other gives two images that
    install different things under the same release (e.g. `mbridge==0.15.1` on A2, unpinned `mbridge` on A3).

    The files are compared after dropping the device tokens (`910b`, `a2`, `a3` in tags and URLs, with the
    separator before them: a twin whose default device has no token is no drift) and folding the
    SOC_VERSION values (`ascend910b1` / `ascend910_9392`) and the CANN ops package names
    (`Ascend-cann-910b-ops` / `Ascend-cann-A3-ops`); comments, blank lines, indentation and quotes around a
    one-line `ARG`/`ENV` value (`ARG TAG="v1"` is `ARG TAG=v1`) do not count, nor do the known one-sided lines
    (the facts' `twin_drift`: DeepEP's `build.sh -a deepep2` is A2-only).
    Lines that only moved (the same block before instead of after another, in one twin) are not drift: the
    comparison matches moved lines, not lines by position. A change that makes both twins differ gets one
    finding, on the A2 file, naming the A3 file's unmatched lines.
    On a change, a line the change added to one twin that has no counterpart in the other is reported, naming
    the twin, unless the edited file has no more stretches of lines without a counterpart than before (the
    change edited lines that had none either: an A3 file's pip line where the A2 twin installs with uv); when
    one of those lines carries an error or warning of another rule (an `ENV GIT_SSL_NO_VERIFY` NPU301 flags),
    the finding is a notice that names it: making the same edit in the twin would copy it. With `--all`, each
    pair that differs is reported once, on its first differing line of the A2 file (or of the A3 file when only
    it has extra lines).

    Twins come on two axes. Device twins are `X_a2` / `X_a3` (verl's names), and also `X` / `X.a3` when the
    file without a device token is built on an A2 base image (vllm-ascend's `Dockerfile`, `Dockerfile.a3`):
    compared as above. Images for other devices (310P, A5) differ on purpose and are not paired. OS twins
    are `X` / `X.openEuler`: their package-manager steps differ by nature (apt-get / yum), so only their
    COPY, ADD, ARG, ENV and WORKDIR instructions are compared, with the OS words (`ubuntu22.04`,
    `openeuler24.03`) folded and the lines of one OS (`ENV DEBIAN_FRONTEND`) left out (the facts'
    `twin_drift`): an openEuler twin that copies an installer to another directory than its Ubuntu twin
    breaks its build (vllm-ascend #6708, fixed in #6871). A change to an OS twin is reported on the other
    OS's file first.

    Bad (a change edits one twin only):
        # docker/ascend/Dockerfile.ascend_8.5.0_a2
         RUN pip install torch==2.8.0 torch_npu==2.8.0.post2
        +RUN pip install mbridge==0.15.1
        # docker/ascend/Dockerfile.ascend_8.5.0_a3
         RUN pip install torch==2.8.0 torch_npu==2.8.0.post2

    Good (the same line added to both twins):
        # docker/ascend/Dockerfile.ascend_8.5.0_a2
         RUN pip install torch==2.8.0 torch_npu==2.8.0.post2
        +RUN pip install mbridge==0.15.1
        # docker/ascend/Dockerfile.ascend_8.5.0_a3
         RUN pip install torch==2.8.0 torch_npu==2.8.0.post2
        +RUN pip install mbridge==0.15.1

    Twins that differ only in their device (`FROM …cann:8.5.0-910b-…` and `…-a3-…`, `ARG SOC_VERSION`) are fine.

    Fix: make the same edit in the other twin (or, if the difference is meant, suppress with a reason:
    `# npu-review: ignore[NPU310] A3 needs …`). Edits that only delete lines from one twin are not seen.
    """

    id = "NPU310"
    name = "a2-a3-twin-drift"
    severity = Severity.WARNING
    title = "Dockerfile twins (A2/A3, or two OSes) drift apart"
    kinds = frozenset({ASCEND_DOCKERFILE})

    def check_project(self, ctx: Context) -> Iterable[Hit]:
        dev = devices(ctx)
        facts = ctx.facts.twin_drift
        norm = Normaliser(dev, list(facts.one_sided))
        paths = sorted(ctx.paths_of_kind(ASCEND_DOCKERFILE)) if ctx.audit else _beside_touched(ctx)
        pairs = twin_paths(paths, dev)
        pairs += untokened_twins(paths, dev, ctx, {p for pair in pairs for p in pair})
        for a2, a3 in pairs:
            yield from self._pair(ctx, a2, a3, norm, "A2/A3 twins", "beyond device tokens", "device")
        os_norm = OsNormaliser(facts)
        compared = "/".join(facts.os_compared)
        for base, other in os_twins(paths, facts.os_suffixes):
            # The file of the other OS is checked against the default one (the one the name extends).
            yield from self._pair(ctx, other, base, os_norm, "OS twins", f"in their {compared} instructions", "OS")

    def _pair(
        self, ctx: Context, a2: str, a3: str, norm: Callable[[str], Normalised], what: str, how: str, axis: str
    ) -> Iterator[Hit]:
        if not (ctx.touched(a2) or ctx.touched(a3)):
            return
        src2, src3 = ctx.source(a2), ctx.source(a3)
        if src2 is None or src3 is None:
            return
        n2, n3 = norm(src2.text), norm(src3.text)
        only2, only3 = unmatched(n2, n3)
        if not only2 and not only3:
            return
        if ctx.audit:
            yield self._audit(a2, a3, only2, only3, what, how, axis)
            return
        at_base = self._at_base(ctx, norm, a2, a3)
        before = None if at_base is None else at_base[0].texts == at_base[1].texts
        # The stretches of lines without a counterpart, on each side, before and after: a change that leaves no
        # more of them on the edited side edits lines that had no counterpart before either (a pip line of an A3
        # file whose A2 twin installs with uv, rewritten over two lines), no new drift.
        was2 = was3 = None
        if at_base is not None:
            base2, base3 = unmatched(*at_base)
            was2, was3 = _stretches(at_base[0], base2), _stretches(at_base[1], base3)
        now2, now3 = _stretches(n2, only2), _stretches(n3, only3)
        # One drift, one finding: when the change adds unmatched lines to both twins, the A2 side says it
        # (naming the A3 file's own unmatched lines).
        first = list(self._change(ctx, a2, a3, only2, only3, before, axis, was2 is not None and now2 <= was2))
        yield from first or self._change(ctx, a3, a2, only3, only2, before, axis, was3 is not None and now3 <= was3)

    def _at_base(
        self, ctx: Context, norm: Callable[[str], Normalised], a2: str, a3: str
    ) -> tuple[Normalised, Normalised] | None:
        """Both twins as they were before the change (None when either did not exist)."""
        out = []
        for path in (a2, a3):
            change = ctx.changeset.changed(path)
            src = ctx.source(path, rev="base") if change is not None else ctx.source(path)
            if src is None:
                return None
            out.append(norm(src.text))
        return out[0], out[1]

    def _change(
        self,
        ctx: Context,
        path: str,
        twin: str,
        mine: list[int],
        theirs: list[int],
        before: bool | None,
        axis: str,
        no_new_stretch: bool = False,
    ) -> Iterator[Hit]:
        added = [n for n in mine if ctx.is_added_line(path, n)]
        if not added or no_new_stretch:
            return
        name, twin_name = posixpath.basename(path), posixpath.basename(twin)
        folded = "device tokens" if axis == "device" else "OS words"
        history = f" The two were identical (up to {folded}) before this change." if before else ""
        other = f" ({twin_name} has its own unmatched {_listed(theirs)})" if theirs else ""
        verb = "has" if len(added) == 1 else "have"
        yield Hit(
            path,
            added[0],
            f"This change edits {name} so that it differs from its twin {twin_name}: {_listed(added)} {verb} no "
            f"counterpart there{other}.{history} Make the same edit in {twin}, or suppress with the reason if "
            f"the difference is {axis}-specific.",
            related=tuple(Related(twin, n, "unmatched in the twin") for n in theirs[:MAX_LISTED]),
            spreads=tuple(added),
        )

    def _audit(self, a2: str, a3: str, only2: list[int], only3: list[int], what: str, how: str, axis: str) -> Hit:
        path, line = (a2, only2[0]) if only2 else (a3, only3[0])
        parts = []
        if only2:
            parts.append(f"{posixpath.basename(a2)} {_listed(only2)}")
        if only3:
            parts.append(f"{posixpath.basename(a3)} {_listed(only3)}")
        return Hit(
            path,
            line,
            f"The {what} {posixpath.basename(a2)} and {posixpath.basename(a3)} differ {how}: "
            f"{'; '.join(parts)} without a counterpart in the other file. Make the twins match, or suppress with "
            f"the reason where the difference is {axis}-specific.",
            related=tuple(Related(a3 if path == a2 else a2, n) for n in (only3 if path == a2 else only2)[:MAX_LISTED]),
        )


def _beside_touched(ctx: Context) -> list[str]:
    """On a change, the Ascend Dockerfiles of the folders the change touches, in path order. Twins share a folder
    (a name with the other device's token, without a token, with an OS suffix), and a pair neither of whose files
    the change touches says nothing (`_pair`): the pairs these make that hold a touched file are the pairs every
    Ascend Dockerfile would make, found without deciding the content kind of the others."""
    folders = {posixpath.dirname(p) for p in ctx.changeset.touched_paths}
    return [
        p
        for p in ctx.candidate_paths(frozenset({ASCEND_DOCKERFILE}))
        if posixpath.dirname(p) in folders and ctx.has_kind(p, ASCEND_DOCKERFILE)
    ]
