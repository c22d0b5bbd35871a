"""Regenerate checks/facts/sourced.json, the universal facts read from their sources: a refresh is this command and a
reviewed diff, never a hand edit.

    python bench/facts/refresh.py --mirrors /work/.mirror \
        --vision-readme vision-README.md --vision-source "pytorch/vision@447c9374be54 README.md" \
        --vision-date 2026-12-05

Each section names its sources (`owner/repo@sha` and the files, or the package index) and a date that comes from
the sources themselves (the newest commit read, the newest upload seen), so the same sources give the same file
byte for byte. The sources:

- fetched mirrors, one git directory per repository: `<mirrors>/<owner>+<repo>/repo`, read at HEAD with git
  (Ascend/pytorch, Ascend/cann-container-image, Ascend/ascend-docker-image, Ascend/ascend-docker-runtime,
  hicann/runtime, hicann/ge, hicann/metadef, hicann/hccl, hicann/ascend-transformer-boost, vllm-project/vllm-ascend,
  kvcache-ai/Mooncake, NVIDIA/nccl);
- the package index, queried when the script runs (`--pypi`, default https://pypi.org/pypi; `--pypi-dir DIR` reads
  `<DIR>/<name>.json` instead);
- torchvision's compatibility table: `<mirrors>/pytorch+vision/repo` when fetched, else `--vision-readme FILE`
  (with `--vision-source` and `--vision-date` saying what the file is).

Nothing here runs during a review: the rules read the file this writes. `--out` writes elsewhere (the tests run the
script on small repositories they build), `--check` only compares.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import subprocess
import sys
import urllib.request
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "checks" / "facts" / "sourced.json"
PYPI = "https://pypi.org/pypi"
# The packages whose published versions a pin is checked against (NPU315).
PACKAGES = ("torch", "torch-npu", "torchvision", "triton-ascend", "vllm", "vllm-ascend")


class SourceError(RuntimeError):
    """A source is missing or does not read as expected: the refresh stops rather than write a partial table."""


# -- reading the sources ----------------------------------------------------------------------------------------


@dataclass
class Repo:
    """A fetched mirror (a git directory) read at HEAD."""

    name: str  # owner/repo
    path: Path

    @classmethod
    def at(cls, mirrors: Path, name: str) -> Repo:
        path = mirrors / name.replace("/", "+") / "repo"
        if not path.is_dir():
            raise SourceError(f"{name}: no mirror at {path} (fetch it first)")
        return cls(name, path)

    def git(self, *args: str, ok: tuple[int, ...] = (0,)) -> str:
        proc = subprocess.run(["git", "-C", str(self.path), *args], capture_output=True, text=True, check=False)
        if proc.returncode not in ok:
            raise SourceError(f"{self.name}: git {' '.join(args[:3])}: {proc.stderr.strip()}")
        return proc.stdout

    @property
    def sha(self) -> str:
        return self.git("rev-parse", "HEAD").strip()

    @property
    def label(self) -> str:
        return f"{self.name}@{self.sha[:12]}"

    @property
    def date(self) -> str:
        return self.git("log", "-1", "--format=%cd", "--date=format:%Y-%m-%d", "HEAD").strip()

    def show(self, path: str, rev: str = "HEAD") -> str | None:
        proc = subprocess.run(
            ["git", "-C", str(self.path), "show", f"{rev}:{path}"], capture_output=True, text=True, check=False
        )
        return proc.stdout if proc.returncode == 0 else None

    def files(self, folder: str = ".", rev: str = "HEAD") -> list[str]:
        return [p for p in self.git("ls-tree", "-r", "--name-only", rev, "--", folder).splitlines() if p]

    def refs(self, kind: str) -> list[str]:
        """Tag or branch names (kind "tags" / "heads")."""
        out = self.git("for-each-ref", "--format=%(refname:short)", f"refs/{kind}/")
        return sorted(r for r in out.splitlines() if r)


def newest(*dates: str) -> str:
    return max(dates)


def pypi_releases(name: str, pypi: str, pypi_dir: Path | None) -> dict[str, list[dict[str, Any]]]:
    if pypi_dir is not None:
        data = json.loads((pypi_dir / f"{name}.json").read_text(encoding="utf-8"))
    else:
        with urllib.request.urlopen(f"{pypi}/{name}/json", timeout=60) as resp:
            data = json.load(resp)
    releases = data.get("releases")
    if not isinstance(releases, dict):
        raise SourceError(f"PyPI {name}: no releases in the answer")
    return releases


def canonical(text: str) -> str | None:
    try:
        return str(Version(text))
    except InvalidVersion:
        return None


def sort_versions(versions: Iterable[str]) -> list[str]:
    return sorted(set(versions), key=Version)


# -- torch_npu releases: Ascend/pytorch ---------------------------------------------------------------------------

_ROW = re.compile(r"^\|(.+)\|\s*$")


def table_rows(text: str, first_header: str) -> Iterator[list[str]]:
    """The cells of every row of the markdown tables whose first header cell contains `first_header`."""
    inside = False
    for line in text.splitlines():
        m = _ROW.match(line.strip())
        if not m:
            inside = False
            continue
        cells = [c.strip() for c in m.group(1).split("|")]
        if first_header in cells[0]:
            inside = True
            continue
        if inside and not set("".join(cells)) <= set(":- "):
            yield cells


def cann_of(text: str) -> str | None:
    """`CANN 8.3.RC1` -> `8.3.rc1` (the facts spell CANN versions in lower case)."""
    m = re.search(r"(\d+\.\d+\.(?:\d+|rc\d+)(?:\.\d+)?)", text, re.I)
    return m.group(1).lower() if m else None


def torchnpu_line(version: str) -> str:
    """The release line of a TorchNPU version: `7.3.1` -> `7.3`, `6.0.0.1` -> `6.0`, `6.0.rc3` -> `6.0.rc3`."""
    parts = version.lower().split(".")
    return version.lower() if len(parts) > 2 and parts[2].startswith("rc") else ".".join(parts[:2])


def version_file(text: str, torch: str) -> str | None:
    """The torch_npu version a version.txt names for `torch` (one version, or one line per version)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    found = [v for ln in lines if (v := canonical(ln)) and Version(v).base_version == Version(torch).base_version]
    return found[0] if len(found) == 1 else None


def torch_npu_releases(repo: Repo) -> tuple[dict[str, Any], str, str]:
    text = repo.show("COMPATIBILITY.en.md")
    if text is None:
        raise SourceError(f"{repo.name}: no COMPATIBILITY.en.md")
    lines: dict[str, str] = {}
    releases: dict[str, dict[str, Any]] = {}
    for cells in table_rows(text, "TorchNPU installation package version"):
        if len(cells) < 4:
            continue
        package = canonical(re.sub(r"\(.*?\)", "", cells[0]).strip())
        branch = re.fullmatch(r"v(\d+(?:\.\d+)+)-(\S+)", cells[1])
        torch, cann = canonical(cells[2]), cann_of(cells[3])
        if package is None or branch is None or torch is None or cann is None:
            continue
        line = torchnpu_line(branch.group(2))
        if lines.setdefault(line, cann) != cann:
            raise SourceError(f"{repo.name}: TorchNPU {line} is paired with CANN {lines[line]} and {cann}")
        releases[package] = {"torch": torch, "cann": cann, "listed": True}
    if not releases:
        raise SourceError(f"{repo.name}: COMPATIBILITY.en.md has no version mapping rows")
    # Patch and beta releases: version.txt at the tags v<TorchNPU>-pytorch<torch>, and at the tips of the release
    # branches v<torch>-<TorchNPU> (patches published after the line's last tag).
    refs: list[tuple[str, str, str]] = []
    for tag in repo.refs("tags"):
        m = re.fullmatch(r"v(\d+(?:\.\d+)+)(?:-(?:beta\.\d+|0day))?-pytorch(\d+\.\d+\.\d+)", tag)
        if m:
            refs.append((tag, m.group(1), m.group(2)))
    for branch in repo.refs("heads"):
        m = re.fullmatch(r"v(\d+\.\d+\.\d+)-(\d+\.\d+\.\d+)", branch)
        if m:
            refs.append((branch, m.group(2), m.group(1)))
    for ref, torchnpu, torch in refs:
        vfile = repo.show("version.txt", ref)
        package = version_file(vfile, torch) if vfile else None
        if package is None or package in releases:
            continue
        releases[package] = {"torch": canonical(torch), "cann": lines.get(torchnpu_line(torchnpu), ""), "listed": False}
    python: dict[str, list[str]] = {}
    for cells in table_rows(text, "PyTorch Version"):
        torch = canonical(cells[0].replace("PyTorch", "").strip())
        if torch is None or len(cells) < 2:
            continue
        python[torch] = sorted(set(re.findall(r"3\.\d+", cells[1])), key=lambda v: int(v.split(".")[1]))
    data = {
        "lines": dict(sorted(lines.items(), key=lambda kv: _line_key(kv[0]), reverse=True)),
        "releases": {v: releases[v] for v in sorted(releases, key=Version, reverse=True)},
        "python": {t: python[t] for t in sorted(python, key=Version, reverse=True)},
    }
    source = (
        f"{repo.label} COMPATIBILITY.en.md (the TorchNPU version mapping table, history included, and the PyTorch "
        "and Python versions table); version.txt at its release tags v<TorchNPU>-pytorch<torch> (final, beta and "
        "0day) and at the tips of its release branches v<torch>-<TorchNPU>"
    )
    return data, source, repo.date


def _line_key(line: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else -1 for p in re.split(r"[.]", line.replace("rc", "")))


# -- torch <-> torchvision: torchvision's README and the package index ------------------------------------------


def torch_torchvision(readme: str, releases: Mapping[str, Mapping[str, list[dict[str, Any]]]]) -> dict[str, str]:
    """torch X.Y.Z -> torchvision A.B.Z for each minor pair of the README table (torch >= 2.1), by patch number
    among the releases both packages published, in rows where neither package yanked a release (a yanked
    torchvision 0.15.0 made torch 2.0.0 pair with 0.15.1: the numbers shift)."""
    out: dict[str, str] = {}
    for cells in table_rows(readme, "`torch`"):
        if len(cells) < 2:
            continue
        torch_minor, vision_minor = cells[0].strip("` "), cells[1].strip("` ")
        if not re.fullmatch(r"\d+\.\d+", torch_minor) or not re.fullmatch(r"\d+\.\d+", vision_minor):
            continue
        if Version(torch_minor) < Version("2.1"):
            continue
        torch_rel = _minor_releases(releases["torch"], torch_minor)
        vision_rel = _minor_releases(releases["torchvision"], vision_minor)
        if torch_rel is None or vision_rel is None:
            continue
        for patch, tv in vision_rel.items():
            if patch in torch_rel:
                out[torch_rel[patch]] = tv
    return {t: out[t] for t in sorted(out, key=Version, reverse=True)}


def _minor_releases(releases: Mapping[str, list[dict[str, Any]]], minor: str) -> dict[int, str] | None:
    """Patch number -> final release of a minor series; None when the series yanked one."""
    out: dict[int, str] = {}
    for text, files in releases.items():
        v = canonical(text)
        if v is None or not files:
            continue
        ver = Version(v)
        if f"{ver.major}.{ver.minor}" != minor or ver.is_prerelease or ver.is_postrelease or ver.is_devrelease:
            continue
        if all(f.get("yanked") for f in files):
            return None
        out[ver.micro] = v
    return out


def published(releases: Mapping[str, list[dict[str, Any]]]) -> list[str]:
    """Every release with a file (yanked ones too: pip installs a yanked release that is pinned with ==)."""
    return sort_versions(v for text, files in releases.items() if files and (v := canonical(text)))


def newest_upload(all_releases: Iterable[Mapping[str, list[dict[str, Any]]]]) -> str:
    times = [f.get("upload_time", "") for rel in all_releases for files in rel.values() for f in files]
    return max(t for t in times if t)[:10]


# -- environment variables --------------------------------------------------------------------------------------

# A read (or a set) of an environment variable in C, C++, Go or Python: `getenv("X")`, `GetEnv("X")`,
# `IsEnable("X")`, `os.environ.get("X")`, `os.environ["X"]`, `os.getenv("X")`, `os.Getenv("X")`.
_C_READ = re.compile(r'\b[A-Za-z_:]*(?:[Ee]nv|ENV|IsEnable)[A-Za-z_]*\s*\(\s*"([A-Z][A-Z0-9_]{2,})"')
_PY_READ = re.compile(
    r"""\b(?:getenv|putenv|environ\.get|environ\.setdefault|environ\.pop)\(\s*["']([A-Z][A-Z0-9_]{2,})["']"""
    r"""|environ\[\s*["']([A-Z][A-Z0-9_]{2,})["']\s*\]"""
)
_CODE = (".c", ".cc", ".cpp", ".h", ".hpp", ".py", ".go")
_DOC_PAGE = re.compile(r"(?:（beta）|\(beta\))?([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+?)(?:_deprecated)?\.md")


def env_reads(repo: Repo, prefixes: tuple[str, ...], folder: str = ".") -> set[str]:
    """Names of the family `prefixes` that the repository's code reads or sets."""
    files = [f for f in repo.files(folder) if f.endswith(_CODE)]
    found: set[str] = set()
    for i in range(0, len(files), 300):
        text = repo.git(
            "grep", "-h", "-E", "env|Env|ENV|IsEnable|environ", "HEAD", "--", *files[i : i + 300], ok=(0, 1)
        )
        found.update(m.group(1) for m in _C_READ.finditer(text))
        found.update(m.group(1) or m.group(2) for m in _PY_READ.finditer(text))
    return {n for n in found if n.startswith(prefixes)}


def env_pages(repo: Repo, folder: str) -> set[str]:
    """The variables a documentation folder has one page each for (`<folder>/**/HCCL_BUFFSIZE.md`)."""
    return {m.group(1) for p in repo.files(folder) if (m := _DOC_PAGE.fullmatch(p.rsplit("/", 1)[-1]))}


def quoted_names(repo: Repo, prefixes: tuple[str, ...], exts: tuple[str, ...]) -> set[str]:
    """String constants of the family (`"ASCEND_VISIBLE_DEVICES"` in a Go runtime that reads it through a constant)."""
    files = [f for f in repo.files() if f.endswith(exts)]
    pattern = "|".join(re.escape(p) for p in prefixes)
    text = (
        repo.git("grep", "-h", "-o", "-E", f'"({pattern})[A-Z0-9_]+"', "HEAD", "--", *files, ok=(0, 1)) if files else ""
    )
    return {t.strip('"') for t in text.split()}


def registry_history(repo: Repo, path: str) -> list[tuple[str, set[str]]]:
    """(the commit's date YYYY-MM-DD, the registry's keys then) for each commit that changed the registry file
    (vllm_ascend/envs.py's `env_variables`), newest first: read once for what was ever a key and what was dropped."""
    log = repo.git("log", "--format=%H %cd", "--date=format:%Y-%m-%d", "HEAD", "--", path).split("\n")
    return [(date, registry_keys(repo.show(path, sha) or "")) for sha, date in (r.split() for r in log if r)]


def envs_registry(revisions: list[tuple[str, set[str]]]) -> set[str]:
    """Every key the registry held in its history (current and retired)."""
    return set().union(*(keys for _, keys in revisions))


def registry_dropped(revisions: list[tuple[str, set[str]]]) -> dict[str, str]:
    """Each key the registry once had and no longer has -> the date (YYYY-MM-DD) of the commit that dropped it
    for good (the newest commit of the file without the key whose parent revision had it)."""
    if not revisions:
        return {}
    current = revisions[0][1]
    out: dict[str, str] = {}
    for (date, newer), (_, older) in itertools.pairwise(revisions):
        for key in older - newer - current:
            out.setdefault(key, date)  # newest first: the first drop met is the last one
    return out


def registry_keys(text: str) -> set[str]:
    """The keys of an envs.py registry (`"NAME": lambda: ...`)."""
    return set(re.findall(r'^\s*"([A-Z][A-Z0-9_]+)"\s*:', text, re.M))


TORCH_NPU_PREFIXES = (
    "ASCEND_", "ACL_", "ACLNN_", "HCCL_", "TORCH_NPU", "TORCH_HCCL_", "NPU_", "PYTORCH_NPU_", "INDUCTOR_ASCEND_",
    "TORCHINDUCTOR_NPU_", "INF_NAN_", "TASK_QUEUE_", "CPU_AFFINITY_", "P2P_HCCL_", "MULTI_STREAM_", "OOM_SNAPSHOT_",
    "ANIR_", "TORCHNPU_", "PER_STREAM_", "STREAMS_PER_",
)  # fmt: skip


def env_sections(mirrors: Path) -> dict[str, tuple[dict[str, Any], str, str]]:
    out: dict[str, tuple[dict[str, Any], str, str]] = {}
    runtime, ge, metadef = (Repo.at(mirrors, n) for n in ("hicann/runtime", "hicann/ge", "hicann/metadef"))
    cann = env_pages(runtime, "docs/zh/env_vars")
    for repo in (runtime, ge, metadef):
        cann |= env_reads(repo, ("ASCEND_", "ACL_"))
    out["env_cann"] = (
        {"names": sorted(cann)},
        f"{runtime.label} docs/zh/env_vars (one page per variable) and the ASCEND_* / ACL_* variables the code of "
        f"{runtime.label}, {ge.label} and {metadef.label} reads",
        newest(runtime.date, ge.date, metadef.date),
    )
    hccl = Repo.at(mirrors, "hicann/hccl")
    out["env_hccl"] = (
        {"names": sorted(env_pages(hccl, "docs/zh/user_guide/hccl_env") | env_reads(hccl, ("HCCL_", "HCOMM_")))},
        f"{hccl.label} docs/zh/user_guide/hccl_env (one page per variable) and the HCCL_* / HCOMM_* variables its "
        "code reads",
        hccl.date,
    )
    atb = Repo.at(mirrors, "hicann/ascend-transformer-boost")
    out["env_atb"] = (
        {"names": sorted(env_reads(atb, ("ATB_", "LCCL_", "LCAL_", "ASDOPS_")))},
        f"{atb.label}: the ATB_* / LCCL_* / LCAL_* / ASDOPS_* variables its code reads",
        atb.date,
    )
    torch_npu = Repo.at(mirrors, "Ascend/pytorch")
    names = env_pages(torch_npu, "docs/zh/api/environment_variable") | env_reads(
        torch_npu, TORCH_NPU_PREFIXES, "torch_npu"
    )
    out["env_torch_npu"] = (
        {"names": sorted(names)},
        f"{torch_npu.label} docs/zh/api/environment_variable (one page per variable) and the variables of its "
        "families (ASCEND_, ACL_, HCCL_, TORCH_NPU_, TORCH_HCCL_, NPU_, PYTORCH_NPU_, ...) that torch_npu/ reads",
        torch_npu.date,
    )
    va = Repo.at(mirrors, "vllm-project/vllm-ascend")
    revisions, reads = registry_history(va, "vllm_ascend/envs.py"), env_reads(va, ("VLLM_ASCEND_",))
    registry, dropped = envs_registry(revisions), registry_dropped(revisions)
    out["env_vllm_ascend"] = (
        {"names": sorted(registry | reads), "retired": {k: dropped[k] for k in sorted(set(dropped) - reads)}},
        f"{va.label} vllm_ascend/envs.py (every key of env_variables in the file's history, current and retired: "
        "retired = a key the file no longer has and nothing reads, with the date of the commit that dropped it) "
        "and the VLLM_ASCEND_* variables its code, tests and tools read",
        va.date,
    )
    runtime_tool, mooncake = Repo.at(mirrors, "Ascend/ascend-docker-runtime"), Repo.at(mirrors, "kvcache-ai/Mooncake")
    out["env_ecosystem"] = (
        {
            "names": sorted(
                quoted_names(runtime_tool, ("ASCEND_",), (".go",)) | env_reads(mooncake, ("ASCEND_", "HCCL_"))
            )
        },
        f"{runtime_tool.label}: the ASCEND_* variables the container runtime reads (Go string constants); "
        f"{mooncake.label}: the ASCEND_* / HCCL_* variables its Ascend transport reads",
        newest(runtime_tool.date, mooncake.date),
    )
    return out


def cuda_counterparts(nccl: Repo, attested: Iterable[Repo], npu_names: set[str]) -> tuple[dict[str, Any], str]:
    """NCCL's variables (NCCL_PARAM and ncclGetEnv in its source) and the CUDA / PyTorch-CUDA variables that the
    attesting repositories name, each with the NPU variable that does its job, or "none". The counterpart is
    the same name in the NPU family: NCCL_X -> HCCL_X (NCCL_IB_X -> HCCL_RDMA_X), TORCH_NCCL_X -> TORCH_HCCL_X,
    PYTORCH_CUDA_X / PYTORCH_NO_CUDA_X -> PYTORCH_NPU_X / PYTORCH_NO_NPU_X, CUDA_X -> ASCEND_X or ASCEND_RT_X,
    kept only when that NPU variable is known."""
    names: set[str] = set()
    text = nccl.git("grep", "-h", "-o", "-E", r'NCCL_PARAM\(\s*\w+\s*,\s*"[A-Z0-9_]+"', "HEAD", "--", "src", ok=(0, 1))
    names.update("NCCL_" + m for m in re.findall(r'"([A-Z0-9_]+)"', text))
    text = nccl.git("grep", "-h", "-o", "-E", r'ncclGetEnv\("NCCL_[A-Z0-9_]+"', "HEAD", "--", "src", ok=(0, 1))
    names.update(re.findall(r'"(NCCL_[A-Z0-9_]+)"', text))
    cuda = r"(CUDA|PYTORCH_CUDA|PYTORCH_NO_CUDA|TORCH_NCCL)_[A-Z0-9_]*[A-Z0-9]"
    for repo in attested:
        lines = repo.git("grep", "-h", "-w", "-E", cuda, "HEAD", ok=(0, 1))
        names.update(n for line in lines.splitlines() for n in env_uses(line) if re.fullmatch(cuda, n))
    pairs: dict[str, str] = {}
    for name in sorted(names):
        pairs[name] = next((c for c in _candidates(name) if c in npu_names), "none")
    return pairs, f"{nccl.label} src (NCCL_PARAM, ncclGetEnv)"


# Where a line sets or reads a variable: `export X=`, `X=value` (shell, Dockerfile ENV), `ENV X value`,
# `os.environ["X"]`, `os.getenv("X")`, ... (not a Python constant or a word in prose).
_SETS = re.compile(r"(?:^|[\s;&|(])(?:export\s+|ENV\s+)?([A-Z][A-Z0-9_]*)(?:=|\s+\S)")


def env_uses(line: str) -> set[str]:
    found = {m.group(1) or m.group(2) for m in _PY_READ.finditer(line)}
    for m in _SETS.finditer(line):
        prefix = line[: m.start(1)]
        if line[m.end(1) : m.end(1) + 1] == "=" or re.search(r"\bENV\s+$", prefix):
            found.add(m.group(1))
    return found


def _candidates(name: str) -> list[str]:
    if name.startswith("NCCL_IB_"):
        return ["HCCL_RDMA_" + name[len("NCCL_IB_") :], "HCCL_" + name[5:]]
    if name.startswith("NCCL_"):
        return ["HCCL_" + name[5:]]
    if name.startswith("TORCH_NCCL_"):
        return ["TORCH_HCCL_" + name[len("TORCH_NCCL_") :]]
    if name.startswith(("PYTORCH_CUDA_", "PYTORCH_NO_CUDA_")):
        return [name.replace("CUDA", "NPU", 1)]
    if name.startswith("CUDA_"):
        return ["ASCEND_RT_" + name[5:], f"ASCEND_{name[5:]}_PATH", "ASCEND_" + name[5:]]
    return []


# -- CANN package files ------------------------------------------------------------------------------------------

# A CANN .run file: `<stem>_<version>_linux[-<arch>].run`.
_RUN = re.compile(
    r"((?:Ascend|Atlas)-[A-Za-z0-9-]*cann[A-Za-z0-9${}_-]*?)_(\d+\.\d+\.[A-Za-z0-9.-]*?)_linux(?:-([A-Za-z0-9_${}]+))?\.run"
)
# What each stem is (the roles NPU316 checks): regular expressions, `device` named where the stem has one. The
# operator packages changed names over time (kernels-<device> until 8.3, <device>-ops from 8.5): one role.
KINDS = {
    "toolkit": [r"^Ascend-cann-toolkit$"],
    "nnal": [r"^Ascend-cann-nnal$"],
    "operators": [
        r"^Ascend-cann-kernels-(?P<device>[A-Za-z0-9_]+)$",
        r"^Atlas-(?P<device>[A-Za-z0-9_]+)-cann-kernels$",
        # `Atlas-cann-A3-ops`: the 8.5 naming with the 8.3 A3 prefix, a name guides write for the A3 package.
        r"^(?:Ascend|Atlas)-cann-(?P<device>[A-Za-z0-9_]+)-ops$",
    ],
}
ARCHES = {"${ARCH}": ("aarch64", "x86_64"), "${ARCH_NAME}": ("aarch64", "x86_64")}


def _kind(stem: str) -> str | None:
    return next((k for k, pats in KINDS.items() if any(re.match(p, stem) for p in pats)), None)


def cann_packages(images: Repo, torch_npu: Repo, old: Repo) -> tuple[dict[str, Any], str, str]:
    files: dict[str, dict[str, set[str]]] = {}

    def add(stem: str, version: str, arch: str | None) -> None:
        if _kind(stem) is None:
            return
        for a in ARCHES.get(arch or "", (arch or "",)):
            files.setdefault(version, {}).setdefault(stem, set()).add(a)

    # Ascend/cann-container-image: every image's Dockerfile names the files it downloads; ${ARCH} is x86_64 or
    # aarch64 (TARGETPLATFORM linux/amd64, linux/arm64).
    for path in images.files("cann"):
        if not path.endswith("/Dockerfile"):
            continue
        text = images.show(path) or ""
        if '"linux/amd64") echo "x86_64"' not in text and "${ARCH}" in text:
            raise SourceError(f"{images.name} {path}: ARCH is not set from TARGETPLATFORM as expected")
        for m in _RUN.finditer(text):
            add(m.group(1), m.group(2), m.group(3))
    # Ascend/pytorch docker/devel: the default CANN_VERSION, with every CANN_PRODUCT builder.sh accepts.
    dockerfile, builder = torch_npu.show("docker/devel/Dockerfile"), torch_npu.show("docker/devel/builder.sh")
    if dockerfile is None or builder is None:
        raise SourceError(f"{torch_npu.name}: no docker/devel/Dockerfile or builder.sh")
    version = re.search(r"^ARG CANN_VERSION=(\S+)", dockerfile, re.M)
    products = re.search(r'^VALID_CANN_PRODUCTS="([^"]+)"', builder, re.M)
    if version is None or products is None or "ARCH_NAME=$(uname -m)" not in dockerfile:
        raise SourceError(f"{torch_npu.name}: docker/devel does not read as expected")
    ver = version.group(1)
    dockerfile = dockerfile.replace("${CANN_FILE_VER}", ver.replace("_beta", "-beta"))
    dockerfile = dockerfile.replace("${CANN_NNAL_VER}", re.sub(r"_beta\.\d+", "", ver))
    for m in _RUN.finditer(dockerfile):
        stem = m.group(1)
        for product in products.group(1).split() if "${CANN_PRODUCT}" in stem else [None]:
            add(stem.replace("${CANN_PRODUCT}", product) if product else stem, m.group(2), m.group(3))
    # Ascend/ascend-docker-image README: the file table of its CANN 7.0.RC1 images.
    readme = old.show("README.md") or ""
    for m in _RUN.finditer(readme):
        if "{" not in m.group(2):
            add(m.group(1), m.group(2), m.group(3))
    data = {
        "versions": {
            v: {stem: sorted(arches) for stem, arches in sorted(files[v].items())}
            for v in sorted(files, key=_cann_sort, reverse=True)
        },
        "kinds": KINDS,
    }
    source = (
        f"{images.label} cann/*/Dockerfile (the .run files each CANN image downloads; ${{ARCH}} is x86_64 or "
        f"aarch64); {torch_npu.label} docker/devel/Dockerfile and builder.sh (the default CANN_VERSION, every "
        f"CANN_PRODUCT of VALID_CANN_PRODUCTS, ARCH_NAME from uname -m); {old.label} README.md (the 7.0.RC1 files)"
    )
    return data, source, newest(images.date, torch_npu.date, old.date)


def _cann_sort(version: str) -> tuple[Any, ...]:
    m = re.match(r"(\d+)\.(\d+)\.(?:(\d+)|rc(\d+))(.*)", version, re.I)
    if not m:
        return (0,)
    major, minor, patch, rc, rest = m.groups()
    final = patch is not None
    return (int(major), int(minor), int(patch or 0) if final else -1, int(rc or 0), not rest, rest)


# -- writing -----------------------------------------------------------------------------------------------------


def dump(sections: Mapping[str, tuple[Mapping[str, Any], str, str, str]]) -> str:
    """The file: JSON (read at every start-up: a tenth of a millisecond where YAML takes ten), laid out for
    review: each section's `about`, `source` and `date` first, one key per line, short lists on one line."""
    doc: dict[str, Any] = {"about": ABOUT}
    for name, (data, source, date, comment) in sections.items():
        doc[name] = {"about": " ".join(comment.split()), "source": source, "date": date, **data}
    return _json(doc, "") + "\n"


def _json(value: Any, indent: str, room: int = 120) -> str:
    flat = json.dumps(value, ensure_ascii=False)
    if len(indent) + len(flat) <= room or not isinstance(value, Mapping | list | tuple):
        return flat
    inner = indent + "  "
    if isinstance(value, Mapping):
        items = []
        for k, v in value.items():
            key = json.dumps(k, ensure_ascii=False) + ": "
            items.append(inner + key + _json(v, inner, room - len(key)))
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if all(not isinstance(v, Mapping | list | tuple) for v in value):
        rows, row = [], inner
        for piece in (json.dumps(v, ensure_ascii=False) for v in value):
            if len(row) + len(piece) + 2 > 120 and row.strip():
                rows.append(row.rstrip())
                row = inner
            row += piece + ", "
        rows.append(row.rstrip().rstrip(","))
        return "[\n" + ",\n".join(r.rstrip(",") for r in rows) + "\n" + indent + "]"
    return "[\n" + ",\n".join(inner + _json(v, inner) for v in value) + "\n" + indent + "]"


ABOUT = (
    "Universal Ascend facts read from their sources by bench/facts/refresh.py: do not edit by hand. Run the script "
    "(its docstring gives the command) and review the diff; each section names its sources and a date they give. "
    "checks/facts/schema.py gives each section's shape; ascend.yml holds the universal facts written by hand."
)


COMMENTS = {
    "torch_npu_releases": (
        "torch_npu releases: the torch each extends and the CANN it is built for (its TorchNPU line's CANN;\n"
        'patch releases keep their line\'s CANN, "" when the line is not in the mapping table). `listed`: the\n'
        "mapping table names it (else a release tag or branch does). `lines`: TorchNPU line -> CANN. `python`:\n"
        "torch -> the Python versions torch_npu supports with it."
    ),
    "torch_torchvision": "torch -> the torchvision release built against it (torchvision pins that exact torch).",
    "published_versions": (
        "Every version each package has published on PyPI (a version newer than these is unknown, not missing).\n"
        "The date is the newest upload seen."
    ),
    "env_cann": "Environment variables of CANN's runtime, graph engine and logging (documented or read by the code).",
    "env_hccl": "Environment variables of HCCL, the collective communication library.",
    "env_atb": "Environment variables of ATB (Ascend Transformer Boost) and its LCCL/LCAL communication.",
    "env_torch_npu": "Environment variables of torch_npu (documented or read by its code).",
    "env_vllm_ascend": "Environment variables of vLLM-Ascend, current and retired.",
    "env_ecosystem": "Environment variables of the Ascend container runtime and of Mooncake's Ascend transport.",
    "env_cuda": (
        "CUDA / NCCL / PyTorch-CUDA variables -> the NPU variable that does their job, or none (no NPU variable\n"
        "does: the CUDA one may still be read by a framework, e.g. CUDA_DEVICE_MAX_CONNECTIONS by Megatron)."
    ),
    "github_events": (
        "GitHub Actions events -> the top-level properties of their webhook payload, every activity type together\n"
        "(what `github.event.<property>` can name). An event not listed is unknown."
    ),
    "cann_packages": (
        "CANN installer files: CANN version (as the file names spell it) -> file name stem -> architectures of its\n"
        'files ("" = no -<arch> suffix). `kinds`: what a stem is (toolkit, nnal, or the operators of a device:\n'
        "kernels-<device> until 8.3, <device>-ops from 8.5).\n"
        "A version not listed here is unknown."
    ),
}


def build(args: argparse.Namespace) -> str:
    mirrors = Path(args.mirrors)
    pytorch = Repo.at(mirrors, "Ascend/pytorch")
    sections: dict[str, tuple[Mapping[str, Any], str, str, str]] = {}

    def put(name: str, data: Mapping[str, Any], source: str, date: str) -> None:
        sections[name] = (data, source, date, COMMENTS[name])

    put("torch_npu_releases", *torch_npu_releases(pytorch))

    pypi_dir = Path(args.pypi_dir) if args.pypi_dir else None
    releases = {name: pypi_releases(name, args.pypi, pypi_dir) for name in PACKAGES}
    upload = newest_upload(releases.values())

    vision_repo = mirrors / "pytorch+vision" / "repo"
    if vision_repo.is_dir():
        vision = Repo("pytorch/vision", vision_repo)
        readme, vision_source, vision_date = vision.show("README.md") or "", f"{vision.label} README.md", vision.date
    elif args.vision_readme:
        if not (args.vision_source and args.vision_date):
            raise SourceError("--vision-readme needs --vision-source and --vision-date")
        readme = Path(args.vision_readme).read_text(encoding="utf-8")
        vision_source, vision_date = args.vision_source, args.vision_date
    else:
        raise SourceError("torchvision's README: no pytorch+vision mirror and no --vision-readme")
    put(
        "torch_torchvision",
        {"table": torch_torchvision(readme, releases)},
        f"{vision_source} (the torch / torchvision compatibility table, minor versions); PyPI torch and "
        "torchvision releases (patch releases paired by number)",
        newest(vision_date, upload),
    )
    put(
        "published_versions",
        {"packages": {name: published(releases[name]) for name in PACKAGES}},
        f"PyPI JSON API ({args.pypi}/<name>/json): every release with a file, yanked ones included (pip installs a "
        "yanked release pinned with ==)",
        upload,
    )
    for name, (data, source, date) in env_sections(mirrors).items():
        put(name, data, source, date)
    # Counterparts among the variables of CANN, HCCL, ATB, torch_npu and vLLM-Ascend (the container runtime's
    # ASCEND_VISIBLE_DEVICES is NVIDIA_VISIBLE_DEVICES' counterpart, not CUDA_VISIBLE_DEVICES').
    npu_names = {
        n
        for key, (data, _, _, _) in sections.items()
        if key.startswith("env_") and key != "env_ecosystem"
        for n in data["names"]
    }
    nccl = Repo.at(mirrors, "NVIDIA/nccl")
    attested = [pytorch, Repo.at(mirrors, "vllm-project/vllm-ascend"), Repo.at(mirrors, "verl-project/verl")]
    pairs, nccl_source = cuda_counterparts(nccl, attested, npu_names)
    put(
        "env_cuda",
        {"counterparts": pairs},
        f"{nccl_source}; the CUDA_*, PYTORCH_CUDA_*, PYTORCH_NO_CUDA_* and TORCH_NCCL_* variables "
        f"{', '.join(r.label for r in attested)} set or read; each counterpart is the NPU variable of the same "
        "name in the env_* sections (NCCL_X -> HCCL_X, NCCL_IB_X -> HCCL_RDMA_X, TORCH_NCCL_X -> TORCH_HCCL_X, "
        "PYTORCH_CUDA_X -> PYTORCH_NPU_X, CUDA_X -> ASCEND_RT_X, ASCEND_X_PATH or ASCEND_X), else none",
        newest(nccl.date, *(r.date for r in attested)),
    )
    put(
        "cann_packages",
        *cann_packages(
            Repo.at(mirrors, "Ascend/cann-container-image"), pytorch, Repo.at(mirrors, "Ascend/ascend-docker-image")
        ),
    )
    put("github_events", *github_events(Repo.at(mirrors, "octokit/webhooks")))
    return dump(sections)


def github_events(webhooks: Repo) -> tuple[dict[str, Any], str, str]:
    """Each event's payload properties, from octokit/webhooks' JSON schemas (one per activity type): the union of
    their top-level `properties`. Events whose payload an Actions run sees differently (`workflow_call` hands on
    the caller's) or that have no schema there (`schedule`) are left out: unknown."""
    folder = "payload-schemas/api.github.com"
    keys: dict[str, set[str]] = {}
    for path in webhooks.files(folder):
        parts = path[len(folder) + 1 :].split("/")
        if len(parts) != 2 or not parts[1].endswith(".schema.json") or parts[0] == "common":
            continue
        text = webhooks.show(path)
        if text is None:
            continue
        schema = json.loads(text)
        props = schema.get("properties")
        if not isinstance(props, dict):
            continue
        keys.setdefault(parts[0], set()).update(props)
    if not keys:
        raise SourceError(f"{webhooks.name}: no payload schemas under {folder}")
    data = {"payload_keys": {event: sorted(found) for event, found in sorted(keys.items())}}
    source = f"{webhooks.label} {folder}/<event>/<action>.schema.json (the top-level properties)"
    return data, source, webhooks.date


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--mirrors", default="/work/.mirror", help="the folder of fetched mirrors (<owner>+<repo>/repo)"
    )
    parser.add_argument("--pypi", default=PYPI, help="the package index's JSON API")
    parser.add_argument("--pypi-dir", help="read <DIR>/<name>.json instead of querying the index")
    parser.add_argument("--vision-readme", help="torchvision's README.md when pytorch/vision is not fetched")
    parser.add_argument("--vision-source", help="what --vision-readme is (owner/repo@sha and path)")
    parser.add_argument("--vision-date", help="the date of --vision-readme (YYYY-MM-DD)")
    parser.add_argument("--out", default=str(OUT), help="the file to write (default: the shipped sourced.json)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when the file would change")
    args = parser.parse_args(argv)
    try:
        text = build(args)
    except SourceError as exc:
        print(f"refresh: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out)
    old = out.read_text(encoding="utf-8") if out.exists() else None
    if args.check:
        if old != text:
            print(f"refresh: {out} is not what its sources give (run without --check and review the diff)")
            return 1
        return 0
    out.write_text(text, encoding="utf-8")
    print(f"refresh: wrote {out}" + (" (unchanged)" if old == text else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
