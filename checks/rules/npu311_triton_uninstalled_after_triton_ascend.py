"""NPU311: `pip uninstall triton` after triton-ascend is installed removes triton-ascend's files too."""

from __future__ import annotations

from collections.abc import Iterable

from npu_review.checks.analysis.installs import SELF_PATHS, Install
from npu_review.checks.analysis.stacks import image_installs
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.facts import Facts
from npu_review.checks.kinds import ASCEND_DOCKERFILE, REQUIREMENTS
from npu_review.checks.model import Severity
from npu_review.checks.parsers.dockerfile import Dockerfile, steps
from npu_review.checks.parsers.pep440 import version_key
from npu_review.checks.rule import Hit, Rule

TRITON = "triton"
TRITON_ASCEND = "triton-ascend"


def brings_triton_ascend(inst: Install, since: str | None) -> bool:
    """Whether an install step is known to install triton-ascend (unknown counts as no)."""
    if inst.specs is not None:
        return TRITON_ASCEND in inst.specs
    if inst.origin == "vllm-ascend" and inst.version is not None and since is not None:
        have, first = version_key(inst.version), version_key(since)
        return have is not None and first is not None and have >= first
    return False


class TritonUninstalledAfterTritonAscend(Rule):
    """`pip uninstall triton` runs after a step that installed triton-ascend.

    Why: triton-ascend and upstream triton ship the same import package, `triton/`. Uninstalling the
    distribution `triton` deletes the files listed in its record, which are the files triton-ascend installed
    over it: `import triton` then fails or loads a half-removed package, while `pip list` still shows
    triton-ascend. triton-ascend arrives explicitly, through requirements-npu.txt (since #6493) or through
    vllm-ascend's requirements (from v0.13.0 on); verl removed such an uninstall from the 9.0.0 images in #6524.

    Not reported: uninstalling triton *before* triton-ascend is installed (the 8.3.rc1 images remove a stray
    triton first), uninstalling both in one command (`pip uninstall -y triton triton-ascend`, then
    reinstalling), an uninstall that a later fresh install of triton-ascend repairs (`pip uninstall -y
    triton-ascend` then `pip install triton-ascend==…`, or `--force-reinstall`; a plain install sees it installed
    and restores nothing), and installs whose requirements are unknown (vllm-ascend at an unknown commit).

    Bad:
        cd vllm-ascend && pip install -r requirements.txt && cd .. && \\
        pip uninstall -y triton && \\

    Good:
        pip uninstall -y triton && \\
        cd verl && pip install -r requirements-npu.txt

    Fix: drop the uninstall, or move it before the step that installs triton-ascend.
    """

    id = "NPU311"
    name = "triton-uninstalled-after-triton-ascend"
    severity = Severity.WARNING
    title = "triton uninstalled after triton-ascend was installed"
    kinds = frozenset({ASCEND_DOCKERFILE})
    # requirements-npu.txt is read even when the change does not touch it.
    context_kinds = frozenset({REQUIREMENTS})

    @classmethod
    def context_paths(cls, facts: Facts) -> tuple[str, ...]:
        return SELF_PATHS

    needles = (TRITON,)

    def check_dockerfile(self, df: Dockerfile, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        since = ctx.facts.vllm_ascend_requirements.triton_ascend_since
        by_step: dict[int, list[Install]] = {}
        for inst in image_installs(ctx, src):
            by_step.setdefault(inst.index, []).append(inst)
        installed: tuple[int, str] | None = None  # (line, how) of the step that installed triton-ascend
        # Reported unless triton-ascend is then installed afresh (after `pip uninstall triton-ascend`, or with
        # `--force-reinstall`): a plain `pip install -r …` that lists it sees it installed and restores nothing.
        pending: list[Hit] = []
        removed = False
        for step in steps(df):
            call = step.pip
            if call is None:
                continue
            names = {req.name for req, _ in call.packages}
            if call.verb == "uninstall":
                if TRITON_ASCEND in names:
                    installed = None
                    removed = bool(pending)
                    continue
                if TRITON in names and installed is not None:
                    word = next(w for req, w in call.packages if req.name == TRITON)
                    line, how = installed
                    pending.append(
                        Hit(
                            src.path,
                            word.line,
                            f"`pip uninstall {TRITON}` runs after {how} installed triton-ascend (line {line}). Both "
                            "ship the `triton` package directory, so this deletes triton-ascend's files and "
                            "`import triton` breaks. Remove the uninstall or move it before line "
                            f"{line}.",
                        )
                    )
                continue
            if call.verb != "install":
                continue
            if (
                pending
                and TRITON_ASCEND in names
                and (removed or any(o == "--force-reinstall" for o, _, _ in call.options))
            ):
                pending.clear()  # installed afresh after the uninstall: its files are back
            if installed is not None:
                continue  # the first install is the one the uninstall undoes
            if TRITON_ASCEND in names:
                word = next(w for req, w in call.packages if req.name == TRITON_ASCEND)
                installed = (word.line, f"`pip install {word.unquoted}`")
                continue
            for inst in by_step.get(step.index, []):
                if brings_triton_ascend(inst, since):
                    installed = (inst.line, inst.what)
                    break
        yield from pending
