"""NPU506: pip is pointed at the wrong index for what it installs."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from npu_review.checks import lazyre
from npu_review.checks.analysis.builds import IMAGE_SCRIPT_GLOBS, PipUse, about_ascend, graph, runs_of
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.facts import Facts
from npu_review.checks.facts.schema import TorchWheels
from npu_review.checks.kinds import ASCEND_DOCKERFILE, ASCEND_WORKFLOW, DOCKERFILE, DOCS, SHELL, WORKFLOW
from npu_review.checks.model import Severity
from npu_review.checks.parsers.gha.values import WILD
from npu_review.checks.parsers.requirements import Requirement, parse_requirement
from npu_review.checks.rule import Hit, Rule

if TYPE_CHECKING:
    from npu_review.checks.parsers.dockercli import EWord

_INDEX_OPTS = ("-i", "--index-url", "--extra-index-url")
# Where the builds of an image are read from (which platforms they target): workflows and image scripts.
_BUILDERS = frozenset({WORKFLOW, ASCEND_WORKFLOW})
_LINK_OPTS = ("-f", "--find-links")
# pip's option parser takes a long option by a prefix no other of its options has (`--extra-index` for
# `--extra-index-url`; an openEuler image's Dockerfile passes the CPU index so: sweep-r30, judged false as missing).
_ABBREVIABLE = ("--index-url", "--extra-index-url", "--find-links")


def _unabbreviated(name: str) -> str:
    """`name` as pip reads it: the index or link option it is a prefix of (6 characters at least), else itself."""
    if not name.startswith("--") or len(name) < 6 or name in _ABBREVIABLE:
        return name
    found = [o for o in _ABBREVIABLE if o.startswith(name)]
    return found[0] if len(found) == 1 else name


_VALUE_OPTS = frozenset(
    {*_INDEX_OPTS, *_LINK_OPTS, "-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-t", "--target"}
    | {"--trusted-host", "--platform", "--python-version", "--prefix", "--root", "--src", "--cache-dir", "--log"}
    | {"--timeout", "--retries", "--proxy", "--cert", "--progress-bar", "--only-binary", "--no-binary", "-C"}
    | {"--config-settings", "--upgrade-strategy", "--abi", "--implementation", "--report", "--python"}
)
_LOCAL = lazyre.compile(r"==\s*[\w.]+\+[A-Za-z0-9]")
# An index URL that goes on past `simple/` (the cheap test before the file is read).
_PAGE_HINT = lazyre.compile(r"/\+?simple/[A-Za-z0-9][\w.-]*/?(?=[\s\"'\\]|$)", re.M)
_INDEX_HINT = lazyre.compile(r"index-url|extra-index|find-links|\s-[if]\s|PIP_INDEX|PIP_EXTRA|pip config", re.I)


def _bare_local(text: str) -> bool:
    """A line asks for a local version without naming an index on it (the cheap test before the file is read)."""
    return any(_LOCAL.search(line) and not _INDEX_HINT.search(line) for line in text.splitlines() if "+" in line)


_PROJECT_PAGE = lazyre.compile(r"\A(?P<root>[a-z][\w+.-]*://[^?#]*?/(?:\+)?simple)/(?P<name>[A-Za-z0-9][\w.-]*)/?\Z")
# What says the image handles the machine's architecture itself (then its installs are not judged for x86).
_ARCH = lazyre.compile(r"x86_64|amd64|aarch64|arm64|uname|TARGETARCH|TARGETPLATFORM|\$\(arch\)", re.I)


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


class PackageIndexMismatch(Rule):
    """pip is pointed at the wrong index for what it installs: an index URL that is one project's page, a local
    version (`torch==2.1.0+cpu`) asked of an index that does not publish it, or an NPU image that installs torch
    (or vLLM, which pulls torch) on x86 without the PyTorch CPU index.

    Why: pip appends the project's name to an index URL, so `-i https://test.pypi.org/simple/triton-ascend/`
    asks for `.../simple/triton-ascend/triton-ascend/` and finds nothing. A local version such as `+cpu` is not
    on PyPI (public indexes refuse them): `pip install torch==2.1.0+cpu` fails unless the PyTorch CPU index
    (`https://download.pytorch.org/whl/cpu`) is given, as Ascend/pytorch's README later added. On x86_64 Linux,
    PyPI's torch is the CUDA build with gigabytes of nvidia wheels: an NPU image built on x86 needs the CPU wheel
    (vllm-ascend's first image installed vLLM without the CPU index and shipped CUDA torch).

    Bad:
        pip install torch==2.1.0+cpu

    Good:
        pip install torch==2.1.0+cpu --index-url https://download.pytorch.org/whl/cpu

    Fix: give pip the index root (`.../simple/`); take local versions from the index that publishes them; on x86
    install torch from the CPU index (`--extra-index-url https://download.pytorch.org/whl/cpu`) before or with
    what pulls it.

    Not reported: installs with an index or find-links option or setting whose value is not known, or that the
    file configures before (`pip config set`, `PIP_INDEX_URL`, `PIP_EXTRA_INDEX_URL`); a local version whose
    guide names the index host next to it (a "download the wheel from download.pytorch.org if this fails" note
    under the command); for the x86 case, images
    that handle the architecture themselves (`uname -m`, `TARGETARCH`, `x86_64`/`aarch64` branches), are for Arm
    only (an `arm`/`aarch64` path, an arm64 base or platform), or install with `--no-deps`.
    """

    id = "NPU506"
    name = "package-index-mismatch"
    severity = Severity.ERROR
    title = "pip is pointed at the wrong index for what it installs"
    kinds = frozenset({DOCKERFILE, ASCEND_DOCKERFILE, SHELL, DOCS})
    context_kinds = _BUILDERS
    context_triggers = frozenset({ASCEND_DOCKERFILE})
    needles = ("pip install", "pip3 install", "pip3.", "-m pip", "pip -", "pip3 -")

    @classmethod
    def context_paths(cls, facts: Facts) -> tuple[str, ...]:
        return IMAGE_SCRIPT_GLOBS

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if not about_ascend(ctx, src):
            return
        # The cheap tests first: a project page is under `/simple/`, a local version is `==X+label`, and the
        # x86 case is an Ascend image's.
        arm = _arm(ctx, src) if ASCEND_DOCKERFILE in src.kinds else True
        if arm and _PAGE_HINT.search(src.text) is None and not _bare_local(src.text):
            return
        # Whether a known build targets x86_64 needs the build graph (every workflow that builds): asked only
        # when an added install would bring PyPI's torch, once for the file.
        x86: list[bool] = []

        def built_for_x86() -> bool:
            if not x86:
                x86.append(_built_for_x86(ctx, src))
            return x86[0]

        arch = _Arch(arm, built_for_x86)
        runs = runs_of(ctx, src, "pips")
        facts = ctx.facts.torch_wheels
        self._pypi_patterns = tuple(re.compile(p) for p in ctx.facts.package_indexes.pypi if "pytorch" not in p)
        for use in runs.pips:
            if not any(ctx.is_added_line(src.path, n) for n in range(use.line, use.end_line + 1)):
                continue
            yield from self._one(src, use, facts, arch)

    _pypi_patterns: tuple[re.Pattern[str], ...] = ()

    def _pypi(self, url: str) -> bool:
        """The URL serves what PyPI publishes (PyPI, a mirror of it): its torch is the CUDA build on x86."""
        return any(p.search(url.rstrip("/")) for p in self._pypi_patterns)

    def _one(self, src: SourceFile, use: PipUse, facts: TorchWheels, arch: _Arch) -> Iterator[Hit]:
        opts, packages, paths, no_deps, unknown = _read(use.words)
        indexes = [(v, line) for o, v, line in opts if o in _INDEX_OPTS]
        links = [v for o, v, _line in opts if o in _LINK_OPTS]
        names = {_canonical(r.name) for r, _w in packages}
        for value, line in indexes:
            m = _PROJECT_PAGE.match(value)
            if m is not None and _canonical(m.group("name")) in names:
                root = m.group("root") + "/"
                text = src.line(line)
                yield Hit(
                    src.path,
                    line,
                    f"`{value}` is the page of one project, not an index: pip appends the project's name to the "
                    f"index URL (`{value.rstrip('/')}/{m.group('name')}/`) and finds nothing there. Give the index "
                    f"root, `{root}`.",
                    suggestion=text.replace(value, root) if text.count(value) == 1 else None,
                )
        configured = any(use.configured)
        if unknown or configured or indexes or links:
            others = [v for v, _ in indexes] + links + list(use.configured)
            # Only PyPI and its mirrors never publish local versions: another index given (a vendor's,
            # `resource.flagos.net/.../flagos-pypi-ascend/simple` serving `torch==2.10.0+cpu`) may (flagos-ai/FlagBLAS,
            # rs-r53, two judged false).
            local_ok = (
                unknown
                or configured
                or any(WILD in v or any(h in v for h in facts.local_version_hosts) for v in others)
                or any(not self._pypi(v) for v, _ in indexes)
            )
        else:
            local_ok = False
        told = _names_host(src, use, facts)  # the text around says where the wheel is (a manual download)
        for req, word in packages:
            local = _local(req.specs)
            if local is None or local_ok or told:
                continue
            fix = ""
            suggestion = None
            if _canonical(req.name) in facts.torch_family and local == "cpu":
                fix = f" Add `--index-url {facts.cpu_index}`."
                text = src.line(use.line)
                if use.line == use.end_line and text.rstrip().endswith(word.raw) and not indexes and not links:
                    suggestion = f"{text.rstrip()} --index-url {facts.cpu_index}"
            yield Hit(
                src.path,
                word.line,
                f"`{word.text or word.raw}` asks for a local version (`+{local}`), which PyPI (and any index that "
                f"mirrors it) never publishes, and no other index is given: pip finds no such version.{fix}",
                suggestion=suggestion,
            )
        if not arch.arm and not no_deps and not unknown:
            # A configured PyPI mirror (`pip config set global.index-url https://mirrors.../simple`) serves
            # PyPI's CUDA torch all the same: only the CPU index, or a value not known, is in the way.
            every = [v for v, _ in indexes] + links + list(use.configured)
            if any(not v or WILD in v or "download.pytorch.org" in v or not self._pypi(v) for v in every):
                return  # the CPU index, an index not known, or one that is not PyPI (it may serve CPU torch)
            # What an x86 build pulls is a superset of what an unknown one does: the graph only when it matters.
            pulled = _pulls_torch(packages, paths, use, facts, explicit=True)
            if pulled is not None and not arch.x86():
                pulled = _pulls_torch(packages, paths, use, facts, explicit=False)
            if pulled is not None:
                yield Hit(
                    src.path,
                    use.line,
                    f"This NPU image installs {pulled} without the PyTorch CPU index: built on x86_64, pip takes "
                    f"PyPI's torch, the CUDA build with its nvidia-* wheels (gigabytes nobody uses on an NPU). Add "
                    f"`--extra-index-url {facts.cpu_index}` (or install `torch==X+cpu` from it first).",
                    severity=Severity.WARNING,
                )


def _read(
    words: tuple[EWord, ...],
) -> tuple[list[tuple[str, str, int]], list[tuple[Requirement, EWord]], list[str], bool, bool]:
    """(options with values and lines, named requirements, paths, --no-deps, something unknown)."""
    argv = list(words)
    while argv and argv[0].text == "sudo":
        argv = argv[1:]
    k = 0
    while k < len(argv) and argv[k].text != "install":
        k += 1
    opts: list[tuple[str, str, int]] = []
    packages: list[tuple[Requirement, EWord]] = []
    paths: list[str] = []
    no_deps = unknown = False
    i = k + 1
    while i < len(argv):
        w = argv[i]
        t = w.text
        if w.spread or (not t and w.vals and not w.known):
            unknown = unknown or w.spread or any(v.text.startswith("-") or v.text == WILD for v in w.vals)
            i += 1
            continue
        if t.startswith("-") and len(t) > 1:
            name, eq, value = t.partition("=")
            if not eq and len(name) > 2 and name[:2] in ("-i", "-f") and not name.startswith("--"):
                name, value, eq = name[:2], name[2:], "="
            name = _unabbreviated(name)
            if not eq and name in _VALUE_OPTS and i + 1 < len(argv):
                nxt = argv[i + 1]
                value = nxt.text if nxt.known else WILD
                i += 1
            if name == "--no-deps":
                no_deps = True
            opts.append((name, value, w.line))
            i += 1
            continue
        req = parse_requirement(t) if t and "/" not in t and not t.startswith(".") else None
        if req is not None:
            packages.append((req, w))
        elif t:
            paths.append(t)
        i += 1
    return opts, packages, paths, no_deps, unknown


def _local(specs: tuple[tuple[str, str], ...]) -> str | None:
    for op, version in specs:
        if op in ("==", "===") and "+" in version and "*" not in version:
            return version.split("+", 1)[1]
    return None


def _pulls_torch(
    packages: list[tuple[Requirement, EWord]], paths: list[str], use: PipUse, f: TorchWheels, explicit: bool
) -> str | None:
    """What of the install brings PyPI's torch: vLLM (package or source, whose torch comes unasked) always; a
    torch pin only when the image is known to be built for x86 (`explicit`): on Arm PyPI's torch is the CPU build,
    and an Arm-only image pins it on purpose."""
    for req, word in packages:
        name = _canonical(req.name)
        if name in f.pulls_torch and _local(req.specs) is None:
            if name in f.torch_family and not explicit:
                continue
            return f"`{word.text}`"
    repos = {_canonical(r) for r in f.pulls_torch_repos}
    for p in paths:
        if p.endswith((".whl", ".tar.gz", ".zip")) or "://" in p:
            continue
        base = p.rstrip("/").rsplit("/", 1)[-1].split("[", 1)[0]
        if base in (".", "") and use.cwd:
            base = use.cwd.rstrip("/").rsplit("/", 1)[-1]
        if _canonical(base) in repos:
            return f"`{p}` ({base}, which requires torch)"
    return None


@dataclass(frozen=True)
class _Arch:
    """What the file's image is built for: `arm` when the file handles or fixes the architecture (or is for Arm
    only); otherwise `x86()` tells whether a known build of the image targets x86_64 (else nothing says)."""

    arm: bool
    x86: Callable[[], bool]


def _arm(ctx: Context, src: SourceFile) -> bool:
    """The file handles or fixes the architecture (or is for Arm only): its path, its text, a FROM --platform."""
    low = src.path.lower()
    if re.search(r"(?:^|[/._-])(?:arm|arm64|aarch64)(?:[/._-]|$)", low) or _ARCH.search(src.text):
        return True
    df = ctx.dockerfile(src)
    return any(instr.image is not None and instr.image.platform for instr in df.of("FROM"))


def _built_for_x86(ctx: Context, src: SourceFile) -> bool:
    """A known build of the image (the build graph of the run's workflows) targets x86_64."""
    builds, _known = graph(ctx, reads=_BUILDERS).builds_of(src.path)
    return any(b.may_be_x86 for b in builds)


def _names_host(src: SourceFile, use: PipUse, f: TorchWheels) -> bool:
    """A host that publishes local versions is named on the install's lines, the three before them or the
    eight after them (a guide's "if this fails, download the wheel from ..." under the code block)."""
    for n in range(use.line - 3, use.end_line + 9):
        text = src.line(n)
        if any(h in text for h in f.local_version_hosts):
            return True
    return False
