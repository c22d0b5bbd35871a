"""Python requirements: distribution names as pip compares them (PEP 503), `name[extras]<spec>` strings (PEP 508)
and requirements files."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from npu_review.checks import lazyre


def normalize_name(name: str) -> str:
    """A Python distribution name as pip compares it (PEP 503): `Torch_NPU` -> `torch-npu`."""
    return re.sub(r"[-_.]+", "-", name).lower()


_REQ = lazyre.compile(r"([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)[ \t]*(\[[^\]]*\])?[ \t]*(.*)\Z", re.S)
_SPEC_START = lazyre.compile(r"(?:===|==|!=|~=|>=|<=|>|<)")
_SPEC_ITEM = lazyre.compile(r"[ \t]*(===|==|!=|~=|>=|<=|>|<)[ \t]*([^,; \t]+)[ \t]*")


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


# -- what pip makes of each line of a requirements file ----------------------------------------------------------

# Options pip accepts on a line of their own (pip's req_file.SUPPORTED_OPTIONS), with their short spellings.
FILE_OPTIONS = frozenset(
    {"-i", "--index-url", "--extra-index-url", "--no-index", "-c", "--constraint", "-r", "--requirement"}
    | {"-e", "--editable", "-f", "--find-links", "--no-binary", "--only-binary", "--prefer-binary"}
    | {"--require-hashes", "--pre", "--trusted-host", "--use-feature"}
)
# Options pip accepts after a requirement on its line (pip's req_file.SUPPORTED_OPTIONS_REQ; `--install-option`
# was accepted until pip 23.1).
REQUIREMENT_OPTIONS = frozenset({"--hash", "--global-option", "--config-settings", "-C", "--install-option"})
_ARCHIVE = (".whl", ".tar.gz", ".zip", ".tar.bz2", ".tgz", ".tar")
# `name-1.2.3`: a version glued to the name with `-` where `==` was meant (pip reads it all as a name).
# (`[A-Za-z]++`: possessive, else a long run of letters that does not match is split in exponentially many ways)
_GLUED = lazyre.compile(r"([A-Za-z][A-Za-z0-9._-]*?[A-Za-z])-(v?\d+(?:\.\d+)+(?:[.-]?[A-Za-z]++\d*)*(?:\+[\w.]+)?)\Z")
_SPEC_OPS = ("===", "==", "!=", "~=", ">=", "<=", ">", "<")


@dataclass(frozen=True)
class Line:
    """A logical line of a requirements file: continuations joined, the comment cut."""

    line: int  # the first physical line
    text: str


def logical_lines(text: str) -> list[Line]:
    """The requirement file's logical lines, as pip reads them: a trailing `\\` joins the next line, a `#` at the
    start or after whitespace starts a comment; blank lines are left out."""
    out: list[Line] = []
    pending: list[str] = []
    first = 0
    for n, raw in enumerate(text.splitlines(), start=1):
        if not pending:
            first = n
        if raw.endswith("\\") and not raw.endswith("\\\\"):
            pending.append(raw[:-1])
            continue
        pending.append(raw)
        joined = re.sub(r"(^|[ \t])#.*$", "", "".join(pending)).strip()
        pending = []
        if joined:
            out.append(Line(first, joined))
    if pending:
        joined = re.sub(r"(^|[ \t])#.*$", "", "".join(pending)).strip()
        if joined:
            out.append(Line(first, joined))
    return out


@dataclass(frozen=True)
class LineError:
    """Why pip refuses a requirements line (or reads it as something else than meant)."""

    kind: str  # "option", "glued-version", "bad-version", "empty-specifier", "bad-operator", "bad-name"
    token: str  # the offending text
    meant: str | None = None  # what was meant, when it is clear (`name==1.0`)


def line_error(text: str) -> LineError | None:
    """What pip rejects in one logical requirements line, None when it accepts it (or it cannot be told: a
    `${VAR}`, a URL, a path, an archive file)."""
    if "$" in text:
        return None  # pip expands ${VAR} from the environment: unknown
    words = text.split()
    if not words:
        return None
    if words[0].startswith("-"):
        name = words[0].split("=", 1)[0]
        if name in FILE_OPTIONS or (len(name) > 2 and name[:2] in ("-r", "-c", "-e", "-i", "-f")):
            return None
        return LineError("option", name) if name.startswith("--") else None
    # pip splits the line at its first option: what comes before is the requirement, after it the options.
    k = next((i for i, w in enumerate(words) if w.startswith("-") and i > 0), len(words))
    for w in words[k:]:
        name = w.split("=", 1)[0]
        if name.startswith("-") and not name.startswith("--") and len(name) > 2:
            name = name[:2]
        # pip parses what follows a requirement with its whole requirements-file option parser: an option of
        # a line of its own passes there too; one the parser lacks (`--no-deps`) stops the file.
        if w.startswith("-") and name not in REQUIREMENT_OPTIONS and name not in FILE_OPTIONS:
            return LineError("option", name)
    req = " ".join(words[:k]).split(";", 1)[0].strip()
    # (`~/x` holds a `/`: a `~` before a name without one is no path to pip, and no project name either)
    if not req or "://" in req or "/" in req or req.startswith(".") or req.endswith(_ARCHIVE) or "@" in req:
        return None
    m = _GLUED.fullmatch(req)
    if m and not any(op in req for op in _SPEC_OPS):
        from npu_review.checks.parsers.pep440 import is_version

        if is_version(m.group(2)):
            return LineError("glued-version", req, f"{m.group(1)}=={m.group(2)}")
    name_m = _REQ.match(req)
    if not name_m:
        if req.startswith(("<<<<<<<", "=======", ">>>>>>>")):
            return None  # a merge conflict left in the file: NPU123 says so, once for the whole conflict
        # Not even a name: pip parses the line as a requirement (packaging's grammar) and refuses it.
        from packaging.requirements import InvalidRequirement, Requirement

        try:
            Requirement(req)
        except InvalidRequirement:
            return LineError("bad-name", req)
        return None
    rest = name_m.group(3).strip()
    if rest.startswith("(") and rest.endswith(")"):
        rest = rest[1:-1].strip()
    if not rest:
        return None
    if not _SPEC_START.match(rest):
        if re.match(r"=\s*\d", rest):
            return LineError("bad-operator", req, f"{name_m.group(1)}{name_m.group(2) or ''}=={rest[1:].strip()}")
        return None
    from npu_review.checks.parsers.pep440 import is_version

    parts = rest.split(",")
    if len(parts) > 1 and not parts[-1].strip():
        parts.pop()  # `x>=1,<2,`: pip reads a trailing comma as nothing (26.3 here; pip 23 rejected it)
    for part in parts:
        if not part.strip():
            return LineError("empty-specifier", rest)  # `x>=1,,<2`: two commas with nothing between them
        sm = _SPEC_ITEM.fullmatch(part)
        if not sm:
            return LineError("bad-version", part.strip())
        op, version = sm.group(1), sm.group(2)
        if op == "===":
            continue
        if op in ("==", "!=") and version.endswith(".*"):
            version = version[:-2]
        if not is_version(version):
            return LineError("bad-version", f"{op}{version}")
    return None
