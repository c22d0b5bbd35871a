"""NPU322: `apt-get install` in an image or CI container whose package lists are empty, with no `apt-get update`
before it."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from npu_review.checks import lazyre
from npu_review.checks.analysis.references import SCRIPT_RUNNERS, Cmd, block_cmds, from_commands
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import DOCKERFILE, WORKFLOW
from npu_review.checks.model import Severity
from npu_review.checks.parsers.dockerfile import Dockerfile
from npu_review.checks.parsers.gha.workflow import Job, Workflow
from npu_review.checks.rule import Hit, Rule

_APT = frozenset({"apt-get", "apt"})
# Wrappers before the command's name (`sudo apt-get ...`, `env X=1 apt-get ...`).
_WRAPPERS = frozenset({"sudo", "env", "nice", "timeout", "stdbuf"})
_LISTS = lazyre.compile(r"/var/lib/apt/lists(?:/\*?)?/?\Z")


def _apt_verb(cmd: Cmd) -> tuple[str, int] | None:
    """(`install` / `update`, the index of the apt word) when the command runs apt-get or apt with that verb."""
    argv = cmd.argv
    i = 0
    while i < len(argv) and (argv[i] in _WRAPPERS or (argv[i].startswith("-") and i > 0) or "=" in argv[i]):
        i += 1
    if i >= len(argv) or argv[i].rsplit("/", 1)[-1] not in _APT:
        return None
    for word in argv[i + 1 :]:
        if word.startswith("-"):
            continue
        return (word, i) if word in ("install", "update") else None
    return None


def _packages(cmd: Cmd, at: int) -> list[str]:
    """The packages an install fetches (not local `.deb` files), `pkg=version` by its name."""
    names = [w for w in cmd.argv[at + 1 :] if not w.startswith("-") and w != "install"]
    return [n.split("=", 1)[0] for n in names if not (n.endswith(".deb") or n.startswith(("./", "/")))]


def _installs_from_lists(cmd: Cmd, at: int, installed: set[str] | None = None) -> bool:
    """The install names a package to fetch that an earlier install of the stage or job did not bring: apt
    installs an installed package again from empty lists without a word (`apt-get install apt-utils` after an
    install that had it)."""
    return any(n not in (installed or ()) for n in _packages(cmd, at))


def _clears_lists(cmd: Cmd) -> bool:
    argv = cmd.argv
    return bool(argv) and argv[0].rsplit("/", 1)[-1] == "rm" and any(_LISTS.search(a) for a in argv[1:])


class AptInstallWithoutUpdate(Rule):
    """`apt-get install` runs where the package lists are empty and nothing ran `apt-get update` before it.

    Why: the images Ascend work starts from ship without apt's package lists: every RUN of Ascend's CANN images
    (quay.io/ascend/cann and its mirrors) ends in `rm -rf /var/lib/apt/lists/*`, as Docker's official ubuntu and
    debian images come. `apt-get install clang-15` there fails with "Unable to locate package" until an
    `apt-get update` fills the lists, so the image build or the CI step stops. vllm-ascend's nightly job
    installed clang-15 for triton-ascend in a fresh CANN container that way. A RUN that removes the lists
    empties them again for the RUNs after it.

    Bad:
        FROM quay.io/ascend/cann:8.3.rc1-910b-ubuntu22.04-py3.11
        RUN apt-get install -y --no-install-recommends clang-15

    Good:
        FROM quay.io/ascend/cann:8.3.rc1-910b-ubuntu22.04-py3.11
        RUN apt-get update && apt-get install -y --no-install-recommends clang-15 && rm -rf /var/lib/apt/lists/*

    Fix: run `apt-get update` first (in the same RUN, or in the same CI step or an earlier one).

    Where: Dockerfile stages whose base is an image known to ship empty lists (facts `apt_lists`: the CANN
    images, ubuntu, debian), or an earlier stage of the file, read RUN by RUN; and CI jobs that run in such a
    `container:`, read step by step. Not reported: an image of unknown provenance (its lists may be filled), a
    job on a runner without a container, an install of local `.deb` files only, an install of packages an earlier
    install of the stage or job already brought (apt reinstalls nothing, and needs no lists for it), and a RUN
    whose shell cannot be read.
    """

    id = "NPU322"
    name = "apt-install-without-update"
    severity = Severity.ERROR
    title = "apt-get install with empty package lists"
    kinds = frozenset({DOCKERFILE, WORKFLOW})
    needles = ("install",)

    def check_dockerfile(self, df: Dockerfile, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if "apt" not in src.text:
            return
        clean = _clean_images(ctx)
        filled: bool | None = None  # None: unknown (an image of unknown provenance)
        stage: str | None = None
        stages: dict[str, bool | None] = {}
        installed: set[str] = set()
        for instr in df.instructions:
            if instr.keyword == "FROM":
                installed = set()
                image = instr.image
                if image is None:
                    filled = None
                elif image.image.lower() in stages:
                    filled = stages[image.image.lower()]
                else:
                    filled = False if clean.search(image.image) else None
                stage = image.stage.lower() if image is not None and image.stage else None
            elif instr.keyword == "RUN" and filled is not None:
                if instr.json_args is not None:
                    filled = None  # exec form: not read
                else:
                    hit, filled = _walk(src.path, from_commands(instr.commands), filled, "image", installed)
                    if hit is not None:
                        yield hit
                        return  # one per file: the first install is the cause, the later ones follow from it
            if stage is not None:
                stages[stage] = filled

    def check_job(self, job: Job, wf: Workflow, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if "apt" not in src.text:
            return
        node = job.field("container")
        if node is not None and not node.is_scalar:
            node = node.get("image")
        if node is None or not node.is_scalar:
            return
        ref = (node.value or "").split("@", 1)[0]
        slash = ref.rfind("/")
        colon = ref.find(":", slash + 1)
        if not _clean_images(ctx).search(ref[:colon] if colon >= 0 else ref):
            return
        filled = False
        installed: set[str] = set()
        for step in job.steps:
            if step.run is None:
                continue
            hit, after = _walk(src.path, block_cmds(step.run.text_lines()), filled, "container", installed)
            if hit is not None:
                yield hit
                return
            if after is None:
                return  # a script ran that may have filled the lists
            filled = after


def _walk(
    path: str, cmds: Sequence[Cmd], filled: bool, where: str, installed: set[str] | None = None
) -> tuple[Hit | None, bool | None]:
    """The first install from empty lists, and the lists' state after the commands (None: not known, once a
    script whose commands are not read here runs: it may update them, as a repository-configuring one does).
    `installed`: the packages installed so far (added to as the commands install more)."""
    installed = set() if installed is None else installed
    for cmd in cmds:
        if _clears_lists(cmd):
            filled = False
            continue
        if _runs_script(cmd):
            return None, None
        verb = _apt_verb(cmd)
        if verb is None:
            continue
        name, at = verb
        if name == "update":
            filled = True
        elif filled:
            installed.update(_packages(cmd, at))
        elif _installs_from_lists(cmd, at, installed):
            what = "the image" if where == "image" else "the job's container"
            return (
                Hit(
                    path,
                    cmd.line,
                    f"`{cmd.argv[at]} install` runs with empty package lists: {what} starts without "
                    "apt's lists and nothing before this ran `apt-get update`, so apt cannot locate the packages "
                    "and the step fails. Run `apt-get update` first.",
                ),
                filled,
            )
    return None, filled


def _runs_script(cmd: Cmd) -> bool:
    """`bash x.sh`, `sh /tmp/configure_repo.sh`, `. ./env.sh`, `./setup.sh`: a script runs."""
    argv = cmd.argv
    if not argv:
        return False
    prog = argv[0].rsplit("/", 1)[-1]
    if prog in SCRIPT_RUNNERS or prog == "dash":
        return any(not a.startswith("-") for a in argv[1:]) and "-c" not in argv[1:]
    return prog.endswith((".sh", ".bash"))


def _clean_images(ctx: Context) -> re.Pattern[str]:
    patterns = ctx.facts.apt_lists.empty_images
    return ctx.memo(("npu322-clean", "", ""), lambda: re.compile("|".join(f"(?:{p})" for p in patterns)))
