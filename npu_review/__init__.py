"""npu-review: reviews pull requests for Ascend NPU mistakes (the CLI, the rule engine `npu_review.checks` and
the GitHub App `npu_review.bot`)."""

from __future__ import annotations

import functools
import os
import sys

_DIST = "npu_review"  # the distribution's name as its metadata folder spells it


@functools.cache
def version() -> str:
    """The installed distribution's version ("0+unknown" when run from a checkout that is not installed)."""
    found = _metadata_version()
    if found is not None:
        return found
    from importlib import metadata  # ~25 ms to import: only where the folder scan finds nothing

    try:
        return metadata.version("npu-review")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def _metadata_version() -> str | None:
    """The `Version:` of the first npu-review metadata folder on sys.path (where importlib.metadata looks first),
    read directly: importing importlib.metadata costs as much as starting the interpreter."""
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            stem, dot, ext = name.rpartition(".")
            if ext not in ("dist-info", "egg-info") or not dot:
                continue
            if stem.split("-", 1)[0].replace("-", "_").lower() != _DIST:
                continue
            meta = "METADATA" if ext == "dist-info" else "PKG-INFO"
            try:
                with open(os.path.join(entry or ".", name, meta), encoding="utf-8") as fh:
                    for line in fh:
                        if line.startswith("Version:"):
                            return line.partition(":")[2].strip()
                        if not line.strip():
                            break  # the headers end at the first blank line
            except OSError:
                continue
    return None
