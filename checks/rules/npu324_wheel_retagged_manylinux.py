"""NPU324: a build names its wheel `manylinux` by renaming or retagging it, without auditwheel."""

from __future__ import annotations

from collections.abc import Iterable

from npu_review.checks import lazyre
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import ASCEND_DOCKERFILE, ASCEND_WORKFLOW, NPU_SCRIPT
from npu_review.checks.model import Related, Severity
from npu_review.checks.rule import Hit, Rule

# The ways to give a wheel a manylinux platform tag without checking it: rename the file (`mv`, `cp`, `rename`,
# a `sed` rewriting its name or a setup.cfg), bdist_wheel's `--plat-name`/`-p`, `wheel tags --platform-tag`.
# A rename names both the `linux_<arch>` tag it replaces and the manylinux one, in either order.
_RETAG = lazyre.compile(
    r"\b(?:mv|cp|rename|sed)\b(?=[^#\n]*(?<!many)linux[_/])(?=[^#\n]*manylinux)"
    r"|\bbdist_wheel\b[^#\n]*(?:--plat-name|--plat|-p)[=\s]+['\"]?manylinux"
    r"|\bwheel\s+tags\b[^#\n]*--platform-tag[=\s]+['\"]?manylinux"
)
# What makes the tag true: the wheel is checked (auditwheel) or built in a manylinux image (cibuildwheel too).
_CHECKED = lazyre.compile(r"\bauditwheel\b|\bcibuildwheel\b|pypa/manylinux|/manylinux\w*[:\s]|\bmanylinux_?\d+\w*:")


class WheelRetaggedManylinux(Rule):
    """A build gives its wheel a `manylinux` platform tag by renaming or retagging it, without auditwheel.

    Why: a `manylinux2014` (or `manylinux_2_17`) tag promises that the wheel runs on any Linux with glibc 2.17 or
    newer and carries the libraries it needs. A wheel built on a CANN image (Ubuntu 22.04, openEuler 24.03:
    glibc 2.35 and up) links against that newer glibc; renamed to `manylinux2014`, pip installs it on older
    systems where it fails to load (`GLIBC_2.3x not found`), and PyPI accepts it. vLLM-Ascend's release wheels
    were renamed from `linux_x86_64` / `linux_aarch64` to `manylinux1` / `manylinux2014` in its build image
    (fixed in #1582).

    Checked: in Ascend Dockerfiles, workflows and scripts, a line that renames a `.whl` to a manylinux name
    (`mv`, `cp`, `rename`, a `sed` on the file name), `bdist_wheel --plat-name manylinux...`, or `wheel tags
    --platform-tag manylinux...`.

    Not reported: files that run auditwheel or cibuildwheel, or build in a manylinux image (`quay.io/pypa/
    manylinux...`): there the tag is checked or true.

    Bad (`.github/Dockerfile.buildwheel`):
        FROM quay.io/ascend/cann:8.1.rc1-910b-ubuntu22.04-py3.10
        RUN python3 setup.py bdist_wheel && \\
            for f in dist/*.whl; do mv "$f" "$(echo "$f" | sed 's/-linux_x86_64/-manylinux1_x86_64/')"; done

    Good:
        FROM quay.io/ascend/cann:8.1.rc1-910b-ubuntu22.04-py3.10
        RUN python3 setup.py bdist_wheel && \\
            auditwheel repair dist/*.whl --plat manylinux_2_35_x86_64 \\
              --exclude libascendcl.so --exclude libtorch_npu.so -w dist/

    Fix: let auditwheel decide the tag (`auditwheel repair`, excluding the CANN and torch_npu libraries the
    wheel must load from the system), build in a manylinux image, or keep the `linux_<arch>` tag.
    """

    id = "NPU324"
    name = "wheel-retagged-manylinux"
    severity = Severity.WARNING
    title = "A wheel named manylinux by renaming or retagging, without auditwheel"
    kinds = frozenset({ASCEND_DOCKERFILE, ASCEND_WORKFLOW, NPU_SCRIPT})
    needles = ("manylinux",)

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if "manylinux" not in src.text or _CHECKED.search(src.text):
            return
        lines = [n for n, text in enumerate(src.lines, start=1) if _RETAG.search(text.split(" #", 1)[0])]
        if not lines:
            return
        at = ctx.first_added(src.path, lines)
        others = [n for n in lines if n != at]
        also = f", also on line{'s' if len(others) > 1 else ''} {', '.join(map(str, others))}" if others else ""
        yield Hit(
            src.path,
            at,
            f"This gives the wheel a manylinux platform tag by its name alone (a rename or a retag{also}), and "
            "nothing here checks the tag: a wheel links against the glibc of the system it was built on (the CANN "
            "images' Ubuntu 22.04 and openEuler 24.03 have 2.35 and newer), so pip installs it on the older "
            "systems the manylinux tag names and it fails to load there (`GLIBC_2.3x not found`). "
            "Let `auditwheel repair` set the tag (excluding the CANN and torch_npu libraries), build in a "
            "manylinux image, or keep the `linux_<arch>` tag.",
            related=tuple(Related(src.path, n, "also retagged") for n in others),
        )
