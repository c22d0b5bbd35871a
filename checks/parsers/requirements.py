"""Python requirements: distribution names as pip compares them (PEP 503), `name[extras]<spec>` strings (PEP 508)
and requirements files."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass


def normalize_name(name: str) -> str:
    """A Python distribution name as pip compares it (PEP 503): `Torch_NPU` -> `torch-npu`."""
    return re.sub(r"[-_.]+", "-", name).lower()


_REQ = re.compile(r"([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)[ \t]*(\[[^\]]*\])?[ \t]*(.*)\Z", re.S)
_SPEC_START = re.compile(r"(?:===|==|!=|~=|>=|<=|>|<)")
_SPEC_ITEM = re.compile(r"[ \t]*(===|==|!=|~=|>=|<=|>|<)[ \t]*([^,; \t]+)[ \t]*")


@dataclass(frozen=True)
class Requirement:
    """A named requirement `name[extras]<spec>` (markers after `;` dropped; `name @ url` keeps the url)."""

    name: str  # normalised (normalize_name)
    spelled: str  # as written
    extras: str
    specs: tuple[tuple[str, str], ...]  # ((op, version), …)
    url: str | None = None

    @property
    def pinned(self) -> str | None:
        """The version of a lone `==` pin (no wildcard), else None."""
        if len(self.specs) == 1 and self.specs[0][0] in ("==", "===") and "*" not in self.specs[0][1]:
            return self.specs[0][1]
        return None


@functools.lru_cache(maxsize=4096)  # a pure function of the text; the same pins recur in many Dockerfiles and steps
def parse_requirement(text: str) -> Requirement | None:
    """`torch==2.7.1`, `nvidia-modelopt[torch]>=0.37.0`, `x @ git+https://…`; None for paths, URLs and options."""
    text = text.split(";", 1)[0].strip()
    if not text or text.startswith(("-", ".", "/", "~", "$")) or "://" in text.split("@", 1)[0]:
        return None
    m = _REQ.match(text)
    if not m:
        return None
    name, extras, rest = m.group(1), m.group(2) or "", m.group(3).strip()
    if rest.startswith("@"):
        return Requirement(normalize_name(name), name, extras, (), rest[1:].strip())
    if rest and not _SPEC_START.match(rest):
        return None  # `python[all_npu]/x`, `a b`: not a requirement
    specs = []
    for part in rest.split(",") if rest else ():
        sm = _SPEC_ITEM.fullmatch(part)
        if not sm:
            return None
        specs.append((sm.group(1), sm.group(2)))
    if "/" in name or name.endswith((".whl", ".tar.gz", ".zip")):
        return None
    return Requirement(normalize_name(name), name, extras, tuple(specs))


def parse_requirements_file(text: str) -> list[tuple[int, Requirement]]:
    """The named requirements of a requirements file with their 1-based lines (options and includes skipped)."""
    out = []
    for n, raw in enumerate(text.splitlines(), start=1):
        line = re.sub(r"(^|[ \t])#.*$", "", raw).strip()
        if not line or line.startswith("-"):
            continue
        req = parse_requirement(line)
        if req is not None:
            out.append((n, req))
    return out
