"""npu-review: reviews pull requests for Ascend NPU mistakes (the CLI, the rule engine `npu_review.checks` and
the GitHub App `npu_review.bot`)."""

from __future__ import annotations


def version() -> str:
    """The installed distribution's version ("0+unknown" when run from a checkout that is not installed)."""
    from importlib import metadata

    try:
        return metadata.version("npu-review")
    except metadata.PackageNotFoundError:
        return "0+unknown"
