"""What the release facts say about a version: the CANN a torch_npu is built for, the torch it extends, the torchvision
that goes with a torch, and whether a pinned version was ever published. Any rule asks here; none re-reads the tables.

`releases(facts)` gives the answers for one Facts (built once, kept while that Facts lives). Versions are compared as
PEP 440 versions (`packaging`): `2.1.0.rc1` is `2.1.0rc1`, `2.7.1+cpu` is `2.7.1` with a local label.

torch_npu's semantics, from Ascend/pytorch's mapping table and release tags (facts `torch_npu_releases`):
- `X.Y.Z` is the adapter for torch X.Y.Z, built for its TorchNPU line's CANN; `X.Y.Z.postN` is a later build of
  the same adapter, for the CANN of the line that released it (the suffix encodes the CANN generation: 2.7.1 is
  8.3.RC1's, 2.7.1.post2 8.5.0's, 2.7.1.post8 9.1.0's);
- `X.Y.ZrcN` is a release candidate of the adapter for the *final* torch X.Y.Z (torch publishes no rc on PyPI):
  it extends torch X.Y.Z, and which CANN it was built for is not in the data (unknown, never a mismatch);
- `.devN` builds are nightlies of the version before the suffix.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from npu_review.checks import lazyre
from npu_review.checks.facts.schema import Facts, PublishedVersions, TorchNpuReleases
from npu_review.checks.parsers.requirements import normalize_name

if TYPE_CHECKING:
    from packaging.version import Version

__all__ = [
    "BranchName",
    "CannKey",
    "Nightly",
    "Releases",
    "TorchNpuBuild",
    "Unpublished",
    "cann_key",
    "generation",
    "parse_version",
    "releases",
]

CannKey = tuple[int, int, int, int]


@functools.lru_cache(maxsize=4096)
def parse_version(text: str) -> Version | None:
    """The PEP 440 version, None when `text` is not one."""
    # Imported here: packaging is not needed to list the rules or to start a review that asks no version.
    from packaging.version import InvalidVersion, Version

    try:
        return Version(text.strip())
    except InvalidVersion:
        return None


def _version(text: str) -> Version:
    """A version the code itself derived from a valid one (never raises for those)."""
    v = parse_version(text)
    assert v is not None, text
    return v


def cann_key(version: str) -> CannKey | None:
    """A sort key of a CANN version: `8.5.0` -> (8, 5, 0, 0), `8.3.rc1` -> (8, 3, -1, 1); None for other text."""
    m = re.fullmatch(r"(\d+)\.(\d+)\.(?:(\d+)|rc(\d+))", version.lower())
    if not m:
        return None
    if m.group(3) is not None:
        return (int(m.group(1)), int(m.group(2)), int(m.group(3)), 0)
    return (int(m.group(1)), int(m.group(2)), -1, int(m.group(4)))


def generation(version: str) -> tuple[int, int] | None:
    """The CANN generation (major, minor): torch_npu builds for one run on every CANN of the same generation."""
    key = cann_key(version)
    return None if key is None else (key[0], key[1])


@dataclass(frozen=True)
class TorchNpuBuild:
    version: str  # as the facts spell it
    torch: str  # the torch it extends
    cann: str | None  # the CANN it is built for (lower case); None when unknown
    listed: bool  # the compatibility table lists it


@dataclass(frozen=True)
class Unpublished:
    """A pinned version the index never published although it published versions around it."""

    package: str  # normalised name
    version: str  # as pinned
    siblings: tuple[str, ...]  # the published versions of the same release (or series), for the message
    newest: str  # the newest version the data knows (a version after it would be unknown, not missing)


@dataclass(frozen=True)
class Nightly:
    """A nightly build (`.devN`) of a package whose nightlies are numbered by their build date."""

    package: str  # normalised name
    number: str  # the number after `.dev`
    date: str | None  # its date (YYYY-MM-DD); None when the number is no date of the package's forms
    forms: tuple[str, ...]  # the forms its nightlies have (`YYYYMMDD`)


@dataclass(frozen=True)
class BranchName:
    """A torch_npu branch name written where a version belongs: `1.8.1-3.0.rc3` (branch `v1.8.1-3.0.rc3`)."""

    torch: str  # the torch of the branch
    line: str  # its TorchNPU line (`3.0.rc3`, `7.3`)
    builds: tuple[str, ...]  # the torch_npu releases of that line for that torch (the table's first)


# `<torch>-<TorchNPU release>`: `1.8.1-3.0.rc3`, `v2.1.0-5.0.rc3`, `2.7.1-7.3.0`.
# A torch_npu branch name without its `v` (`1.8.1-3.0.rc3`): with it (`v2.8.0-7.2.0`) the cell names the branch as
# Ascend/pytorch does, which tables mapping a project's branches to torch_npu's do on purpose.
_BRANCH = lazyre.compile(r"(\d+\.\d+\.\d+)-(\d+\.\d+\.(?:\d+|rc\d+)(?:\.\d+)?)", re.IGNORECASE)


def _nightly_date(number: str, form: str) -> str | None:
    """`number` read as `form` (`YYYYMMDD`, `YYYYMMDDHH`): the ISO date, None when it is not one."""
    import datetime  # here: only a nightly pin asks

    if len(number) != len(form) or not form.startswith("YYYYMMDD"):
        return None
    try:
        day = datetime.date(int(number[:4]), int(number[4:6]), int(number[6:8]))
    except ValueError:
        return None
    if form == "YYYYMMDDHH" and int(number[8:10]) > 23:
        return None
    return day.isoformat()


class Releases:
    """The release facts of one Facts, indexed once."""

    def __init__(self, facts: Facts) -> None:
        self._npu: TorchNpuReleases = facts.torch_npu_releases
        self._published: PublishedVersions = facts.published_versions
        self._dated = {normalize_name(k): v for k, v in facts.nightly_builds.dated.items()}
        self.vision: Mapping[str, str] = facts.torch_torchvision.table
        by_version: dict[Version, TorchNpuBuild] = {}
        for text, rel in self._npu.releases.items():
            v = parse_version(text)
            if v is not None:
                by_version[v] = TorchNpuBuild(text, rel.torch, rel.cann.lower() or None, rel.listed)
        self._builds = by_version
        self._index: dict[str, tuple[Version, ...]] = {}

    # -- torch_npu ------------------------------------------------------------------------------------------------

    def torch_npu(self, version: str) -> TorchNpuBuild | None:
        """The release `version` is (a `.devN` nightly counts as the release it leads to; a local label is ignored)."""
        v = parse_version(version)
        if v is None:
            return None
        found = self._builds.get(v)
        if found is None and (v.is_devrelease or v.local):
            found = self._builds.get(_without_dev(v))
        return found

    def torch_of(self, torch_npu: str) -> str | None:
        """The torch a torch_npu version extends: the data's, else its release numbers (`2.6.0rc1` -> `2.6.0`,
        `2.7.1.post2` -> `2.7.1`); None when it is not a version."""
        build = self.torch_npu(torch_npu)
        if build is not None:
            return build.torch
        v = parse_version(torch_npu)
        return None if v is None else v.base_version

    def built_for(self, torch_npu: str) -> str | None:
        """The CANN a torch_npu release is built for (None: not in the data, or its line's CANN is unknown). A
        `.devN` nightly has none: it is built before the release it leads to, on the CANN of its day, which the
        release may have moved past (vLLM-Ascend ran `2.5.1.post1.dev20250528` on CANN 8.1.RC1 while
        `2.5.1.post1` is the CANN 8.2.RC1 build)."""
        v = parse_version(torch_npu)
        if v is not None and v.is_devrelease:
            return None
        build = self.torch_npu(torch_npu)
        return None if build is None else build.cann

    def for_cann(self, cann: str, torch: str | None = None) -> list[str]:
        """The torch_npu releases built for `cann` (exactly, else for its generation), the mapping table's first,
        newest first; only those extending `torch` when given."""
        cann, gen = cann.lower(), generation(cann)
        builds = sorted(self._builds.items(), key=lambda kv: kv[0], reverse=True)
        exact = [b for _, b in builds if b.cann == cann]
        same = exact or [b for _, b in builds if b.cann is not None and generation(b.cann) == gen]
        if torch is not None:
            same = [b for b in same if _same_release(b.torch, torch)]
        return [b.version for b in sorted(same, key=lambda b: not b.listed)]

    def cann_table(self) -> dict[str, list[str]]:
        """CANN -> torch_npu releases built for it (table entries first), newest CANN first."""
        table: dict[str, list[str]] = {}
        for v in sorted(self._builds, reverse=True):
            build = self._builds[v]
            if build.cann is not None:
                table.setdefault(build.cann, []).append(build.version)
        for versions in table.values():
            versions.sort(key=lambda text: not self._builds[_version(text)].listed)
        return dict(sorted(table.items(), key=lambda kv: cann_key(kv[0]) or (0, 0, 0, 0), reverse=True))

    # -- torch / torchvision ------------------------------------------------------------------------------------

    def torchvision_for(self, torch: str) -> str | None:
        """The torchvision release built against `torch` (its public version), None when the data has none."""
        v = parse_version(torch)
        if v is None:
            return None
        found = self.vision.get(v.public)
        if found is None:
            found = next((tv for t, tv in self.vision.items() if parse_version(t) == _version(v.public)), None)
        return found

    # -- published versions -------------------------------------------------------------------------------------

    def published(self, package: str) -> tuple[Version, ...] | None:
        """Every version the index published of `package`, sorted; None when the data does not cover it."""
        name = normalize_name(package)
        if name not in self._index:
            texts = self._published.packages.get(name)
            if texts is None:
                return None
            self._index[name] = tuple(sorted(v for t in texts if (v := parse_version(t)) is not None))
        return self._index[name]

    def never_published(self, package: str, version: str) -> Unpublished | None:
        """`version` of `package` was never published although the data covers it: the index published a later
        build of the same release (`2.7.1.post4` after a pinned `2.7.1.post3`, `2.7.1` after `2.7.1rc2`), or, for
        a version that is not a post release, a later release of the same minor series (`0.9.1` after a pinned
        `0.9.0` of which only rc builds exist). A post release may still come for any release (Ascend publishes
        `.postN` builds of old adapters with every CANN), and a version newer than the data may still come:
        unknown, None. So are nightlies (`.devN`), pre-releases of a package that publishes none on the index
        (torch's rc builds live on its own test index), and torch_npu builds Ascend released outside the index
        (the release tags of Ascend/pytorch)."""
        have = self.published(package)
        v = parse_version(version)
        if have is None or v is None or v.is_devrelease:
            return None
        v = _version(v.public)
        if v in have:
            return None
        if v.is_prerelease and not any(p.is_prerelease for p in have):
            return None
        if normalize_name(package) == "torch-npu" and v in self._builds:
            return None  # released by Ascend (a tag of Ascend/pytorch), only not on the index
        same_release = [p for p in have if _release3(p) == _release3(v)]
        series = [p for p in have if p.release[:2] == v.release[:2]]
        covered = any(p > v for p in same_release)
        if not covered and not v.is_postrelease:
            covered = any(_release3(p) > _release3(v) for p in series)
        if not covered:
            return None
        siblings = same_release or series
        return Unpublished(normalize_name(package), version, tuple(str(p) for p in siblings), str(have[-1]))

    # -- nightlies and branch names --------------------------------------------------------------------------

    def nightly(self, package: str, version: str) -> Nightly | None:
        """The nightly `version` of `package` names, when the package numbers its nightlies by date and the number
        is meant as one (it starts with `20` and has six digits or more); None otherwise (a release, a package
        with other nightly numbers, a `.dev1`)."""
        forms = self._dated.get(normalize_name(package))
        v = parse_version(version)
        if not forms or v is None or v.dev is None:
            return None
        number = str(v.dev)
        if not number.startswith("20") or len(number) < 6:
            return None
        date = next((d for f in forms if (d := _nightly_date(number, f)) is not None), None)
        return Nightly(normalize_name(package), number, date, tuple(forms))

    def branch_name(self, text: str) -> BranchName | None:
        """`text` is a torch_npu branch name without its `v` (`1.8.1-3.0.rc3`): a torch torch_npu extends, then a
        TorchNPU release of a known line. None for anything else (a range of torch versions included)."""
        m = _BRANCH.fullmatch(text.strip())
        if not m:
            return None
        torch, release = m.group(1), m.group(2).lower()
        parts = release.split(".")
        line = release if parts[2].startswith("rc") else ".".join(parts[:2])
        cann = self._npu.lines.get(line)
        mine = [b for b in self._builds.values() if _same_release(b.torch, torch)]
        if cann is None or not mine:
            return None
        builds = sorted((b for b in mine if b.cann == cann.lower()), key=lambda b: (not b.listed, _version(b.version)))
        return BranchName(torch, line, tuple(b.version for b in builds))


def _release3(v: Version) -> tuple[int, ...]:
    rel = v.release + (0,) * (3 - len(v.release))
    return rel[:3]


def _without_dev(v: Version) -> Version:
    return _version(re.sub(r"\.?dev\d*$", "", v.public))


def _same_release(a: str, b: str) -> bool:
    va, vb = parse_version(a), parse_version(b)
    return va is not None and vb is not None and va.release == vb.release


_CACHE: dict[int, tuple[Facts, Releases]] = {}


def releases(facts: Facts) -> Releases:
    """The release answers of `facts`, built once per Facts object (the shipped facts live for the process)."""
    hit = _CACHE.get(id(facts))
    if hit is not None and hit[0] is facts:
        return hit[1]
    made = Releases(facts)
    if len(_CACHE) > 16:  # a long-lived server sees a few configs with `knowledge:` overrides: keep the map small
        _CACHE.clear()
    _CACHE[id(facts)] = (facts, made)
    return made
