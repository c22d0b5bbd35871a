"""CANN installer file names (`Ascend-cann-toolkit_8.5.0_linux-aarch64.run`): what one is, and whether CANN ships it.

`cann_files(facts).problem(name)` says why CANN does not ship a file of that name for its version, device and
architecture, with the file it ships instead where one fits; None when the file exists or the facts cannot say
(`cann_packages`: the files of each CANN version, read from the images that download them). Unknown is silent:
a version the data does not list, a package role (toolkit, NNAL, operators) it lists no file of for that
version, a device it lists no operator package of, and a part the text leaves to a variable.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from npu_review.checks import lazyre
from npu_review.checks.facts.schema import CannPackages, Facts, SocVersions

__all__ = ["FILE_NAME", "CannFile", "CannFiles", "Problem", "cann_files"]

# `<stem>_<version>_linux[-<arch>].run`: a stem of Ascend's or Atlas' CANN packages, the version (`8.3.RC1`,
# `9.0.0-beta.1`, `${CANN_VERSION}`), the architecture when the file has one. CANN 7.0's ATB packages carry the C++
# ABI they are built with after the architecture (`Ascend-cann-atb_7.0.0_linux-aarch64_abi0.run`, `_abi1`: the
# CANN 7.0.0 ATB installation guide, hiascend.com canncommercial/700 ascendtb): not part of the architecture.
FILE_NAME = lazyre.compile(
    r"(?<![\w.-])((?:(?:Ascend|Atlas)-[A-Za-z0-9${}-]*?)?cann[A-Za-z0-9${}_-]*?)"
    r"_(\$\{?\w+\}?|\d+\.\d+\.[A-Za-z0-9.${}-]*?)_linux(?:-([A-Za-z0-9_${}]+?)(?:_abi[01])?)?\.run\b"
)


# A shell or docs variable in a file name (`${chip_type}`, `$SOC`, `{soc}`): a device the reader fills in.
_VARIABLE = lazyre.compile(r"\$\{?\w+\}?|\{\w+\}")


@dataclass(frozen=True)
class CannFile:
    text: str  # the whole file name as written
    stem: str
    version: str
    arch: str | None  # None: no `-<arch>` suffix


@dataclass(frozen=True)
class Problem:
    message: str  # why CANN ships no such file, and what it ships
    replacement: str | None  # the file name CANN ships for what was meant, when one fits


def parse(text: str) -> Iterator[tuple[int, CannFile]]:
    """Every CANN file name in `text`, with its offset."""
    for m in FILE_NAME.finditer(text):
        yield m.start(), CannFile(m.group(0), m.group(1), m.group(2), m.group(3))


class CannFiles:
    def __init__(self, section: CannPackages, socs: SocVersions | None = None) -> None:
        self._versions = {v.lower(): v for v in section.versions}
        self._files = section.versions
        self._kinds = {role: tuple(re.compile(p) for p in pats) for role, pats in section.kinds.items()}
        # Every architecture a CANN file is built for (`aarch64`, `x86_64`), whatever the version.
        self._arches = frozenset(
            a for stems in section.versions.values() for arches in stems.values() for a in arches if a
        )
        # Every stem of every release (lower-cased -> as shipped), with the oldest and newest release shipping it.
        self._all_stems = {s.lower(): s for stems in section.versions.values() for s in stems}
        by_stem: dict[str, list[str]] = {}
        for v, stems in section.versions.items():
            for s in stems:
                by_stem.setdefault(s, []).append(v)
        self._stem_since = {s: min(vs, key=_version_key) for s, vs in by_stem.items()}
        self._stem_until = {s: max(vs, key=_version_key) for s, vs in by_stem.items()}
        # A device as a package name spells it (`A3`, `910_93`, `910b`) -> its family (`a3`), from the SOCs.
        self._family: dict[str, str] = {}
        if socs is not None:
            for fam, names in (("a2", socs.a2), ("a3", socs.a3)):
                tokens = {fam, *names, *socs.from_tokens.get(fam, ()), *socs.compute_units.get(fam, ())}
                tokens |= {t.removeprefix("ascend") for t in tokens}
                shipped = self._role(socs.ops_packages.get(fam, ""))  # `Ascend-cann-A3-ops`: its device, `A3`
                if shipped is not None and shipped[2]:
                    tokens.add(shipped[2])
                self._family.update({t.lower(): fam for t in tokens if t})

    def _same_device(self, a: str | None, b: str | None) -> bool:
        a, b = (a or "").lower(), (b or "").lower()
        return a == b or (a in self._family and self._family.get(a) == self._family.get(b))

    def _role(self, stem: str) -> tuple[str, int, str | None] | None:
        """(role, which naming of it, device) of a stem, None when it is none of the roles."""
        for role, pats in self._kinds.items():
            for i, pat in enumerate(pats):
                m = pat.match(stem)
                if m:
                    return role, i, m.groupdict().get("device")
        return None

    def _first_with(self, role: str, naming: int) -> str | None:
        """The oldest version whose files use this naming of the role (for "from 8.5.0 on")."""
        found = [
            v
            for v, stems in self._files.items()
            if any((r := self._role(s)) is not None and r[:2] == (role, naming) for s in stems)
        ]
        return min(found, key=_version_key) if found else None

    def problem(self, f: CannFile) -> Problem | None:
        return self._release_problem(f) or self._naming_problem(f) or self._arch_problem(f)

    def _naming_problem(self, f: CannFile) -> Problem | None:
        """An operator package whose version is left open (`Atlas-cann-910_93-ops_${version}_linux-${arch}.run`)
        under a name no release the data lists ships for its device, where the data has that device's package
        under another name: whatever version the reader fills in, the file does not exist. Judged only for the
        A2 and A3 families (the devices whose packages the data lists in every naming), a device spelled without
        a variable, and names that are not a shipped name in another case."""
        if "$" not in f.version or "$" in f.stem:
            return None
        if f.stem.lower() in self._all_stems:
            return None
        meant = self._role(f.stem)
        family = self._device_family(f.stem, "operators")
        if meant is None or family is None:
            return None  # a device the data may not list every package of (310B, 950, ...): unknown
        shipped = sorted(
            (s for s in self._all_stems.values() if self._device_family(s, "operators") == family),
            key=lambda s: _version_key(self._stem_since[s]),
        )
        if not shipped:
            return None
        same = [s for s in shipped if (r := self._role(s)) is not None and r[1] == meant[1]]
        spans = ", ".join(f"`{s}` ({self._stem_span(s)})" for s in shipped)
        fixed = None
        if len(same) == 1 and f.text.count(f.stem) == 1:
            fixed = f.text.replace(f.stem, same[0], 1)
        return Problem(
            f"No CANN release ships `{f.text}`, whatever its version: CANN's operator package for "
            f"{family.upper()} is named {spans}." + (f" Use `{fixed}`." if fixed else ""),
            fixed,
        )

    def device_id(self, token: str) -> str:
        """A device as a package name spells it, as the docs' device ids: `a2` and `a3` for their families (`910b`,
        `A3`, `910_93`), else the token lower-cased (`310p`, `310b`, `950`, `910`)."""
        low = token.lower()
        return self._family.get(low, low)

    def operators_devices(self, stem: str) -> frozenset[str] | None:
        """The devices (ids as `device_id` gives) an operator package name can be for: its device when the name
        spells one; when a variable stands for it (`Ascend-cann-kernels-${chip_type}`), every device CANN ships
        an operator package for under that naming. None for another role or a naming the data does not know."""
        open_device = "$" in stem
        r = self._role(_VARIABLE.sub("x", stem) if open_device else stem)
        if r is None or r[0] != "operators" or not r[2]:
            return None
        if not open_device:
            return frozenset({self.device_id(r[2])})
        return frozenset(
            self.device_id(d[2])
            for s in self._all_stems.values()
            if (d := self._role(s)) is not None and d[:2] == ("operators", r[1]) and d[2]
        )

    def operators_for(self, device: str) -> list[str]:
        """The operator package names CANN ships for a device id, oldest naming first."""
        return sorted(
            (
                s
                for s in self._all_stems.values()
                if (d := self._role(s)) is not None and d[0] == "operators" and d[2] and self.device_id(d[2]) == device
            ),
            key=lambda s: _version_key(self._stem_since[s]),
        )

    def stem_span(self, stem: str) -> str:
        """The releases that ship a stem (`CANN 8.0.0 to 8.3.RC1`)."""
        return self._stem_span(stem)

    def _device_family(self, stem: str, role: str) -> str | None:
        """The device family (`a2`, `a3`) of a stem of that role, None for another role or an unknown device."""
        r = self._role(stem)
        return self._family.get(r[2].lower()) if r is not None and r[0] == role and r[2] is not None else None

    def _stem_span(self, stem: str) -> str:
        first, last = self._stem_since[stem], self._stem_until[stem]
        return f"CANN {first}" if first == last else f"CANN {first} to {last}"

    def _arch_problem(self, f: CannFile) -> Problem | None:
        """An architecture CANN builds no file for, in any release the data lists (`linux-86_64`): whatever the
        package and version (a pre-release or a package the data does not list)."""
        if not f.arch or "$" in f.arch or not self._arches or f.arch in self._arches:
            return None
        alias = _ARCH_ALIASES.get(f.arch.lower())
        # (the rest of the name kept: an ATB package's `_abi0` suffix too)
        fixed = f.text.replace(f"_linux-{f.arch}", f"_linux-{alias}", 1) if alias and "$" not in f.text else None
        shown = " and ".join(f"`{a}`" for a in sorted(self._arches))
        return Problem(
            f"CANN ships no `{f.text}`: its files are built for {shown} only, not `{f.arch}`."
            + (f" Use `{fixed}`." if fixed else ""),
            fixed,
        )

    def _release_problem(self, f: CannFile) -> Problem | None:
        """What the files of the name's release say: another naming of its role, another spelling of its device
        or architecture."""
        if "$" in f.version:
            return None
        version = self._versions.get(f.version.lower())
        if version is None:
            return None  # a version the data does not know
        stems = self._files[version]
        stem = f.stem
        notes: list[str] = []
        if "$" not in stem and stem not in stems:
            meant = self._role(stem)
            if meant is None:
                return None  # not a toolkit, NNAL or operator package: unknown
            role, naming, device = meant
            same_role = [(s, r) for s in stems if (r := self._role(s)) is not None and r[0] == role]
            if not same_role:
                return None  # the data lists no file of this role for this version
            fit = [s for s, r in same_role if (r[2] or "").lower() == (device or "").lower()]
            if not fit:  # `910_93` for `A3`: the same device spelled as its SOC
                fit = [s for s, r in same_role if self._same_device(r[2], device)]
            if len(fit) == 1:
                stem = fit[0]
                shipped = self._role(stem)
                notes.append(f"its {_what(role, shipped[2] if shipped else device)} is `{stem}`")
            elif any(r[1] == naming for _, r in same_role):
                return None  # a device the data has no package of in this version: unknown
            else:
                namings = sorted({s for s, _ in same_role})
                since = self._first_with(role, naming)
                later = since is not None and _version_key(since) > _version_key(version)
                when = f" (that naming is from CANN {since})" if later else ""
                return Problem(
                    f"CANN {version} ships no `{f.text}`: its {_what(role, None)} are named like "
                    f"{', '.join(f'`{s}`' for s in namings)}{when}.",
                    None,
                )
        arch, fixable = f.arch, True
        arches = self._files[version].get(stem)
        if arches is not None and (arch is None or "$" not in arch) and (arch or "") not in arches:
            shown = " and ".join(a for a in arches if a)
            notes.append(f"it ships `{stem}` for {shown}" if shown else f"it ships `{stem}` without an architecture")
            alias = _ARCH_ALIASES.get((arch or "").lower())
            if len(arches) == 1:
                arch = arches[0] or None
            elif alias in arches:
                arch = alias
            else:
                fixable = False
        if not notes:
            return None
        # The version as written: CANN's release tree spells `8.3.RC1`, its beta tree (Milan-ASL) `8.3.rc1`.
        fixed = f"{stem}_{f.version}_linux{'-' + arch if arch else ''}.run" if fixable else None
        fix = f" Use `{fixed}`." if fixed is not None else ""
        return Problem(f"CANN {f.version} ships no `{f.text}`: {'; '.join(notes)}.{fix}", fixed)


# How architectures are often misnamed in CANN file names (Docker's and Go's names).
_ARCH_ALIASES = {
    "arm64": "aarch64",
    "aarch": "aarch64",
    "arm": "aarch64",
    "amd64": "x86_64",
    "x86": "x86_64",
    "x64": "x86_64",
    "86_64": "x86_64",
    "x86-64": "x86_64",
    "x8664": "x86_64",
    "aarch_64": "aarch64",
}


def _what(role: str, device: str | None) -> str:
    if role == "operators":
        return f"operator package for {device}" if device else "operator packages"
    return {"toolkit": "toolkit", "nnal": "NNAL package"}.get(role, role)


def _version_key(version: str) -> tuple[int | str, ...]:
    m = re.match(r"(\d+)\.(\d+)\.(?:(\d+)|[Rr][Cc](\d+))(.*)", version)
    if not m:
        return (0,)
    major, minor, patch, rc, rest = m.groups()
    return (int(major), int(minor), int(patch) if patch is not None else -1, int(rc or 0), 0 if rest else 1, rest)


_CACHE: dict[int, tuple[CannPackages, CannFiles]] = {}


def cann_files(facts: Facts) -> CannFiles:
    """The CANN file answers of `facts` (built once per facts section)."""
    section = facts.cann_packages
    hit = _CACHE.get(id(section))
    if hit is not None and hit[0] is section:
        return hit[1]
    made = CannFiles(section, facts.soc_versions)
    if len(_CACHE) > 16:
        _CACHE.clear()
    _CACHE[id(section)] = (section, made)
    return made
