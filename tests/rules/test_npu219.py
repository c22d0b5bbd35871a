"""NPU219 ci-image-version-drift: its fixture cases, and what they do not say."""

from __future__ import annotations

from tests.rules.support import change, fixture_tests, got

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU219")


def _wf(tag: str) -> str:
    return (
        f"name: x\non: [push]\njobs:\n  t:\n    runs-on: npu\n    container:\n      image: quay.io/ascend/cann:{tag}\n"
    )


def test_an_upgrade_that_leaves_one_workflow_behind_reports_the_untouched_one() -> None:
    old, new = "9.0.0-910b-ubuntu22.04-py3.11", "9.0.0-910b-ubuntu22.04-py3.12"
    base = {
        "Dockerfile": f"FROM quay.io/ascend/cann:{old}\n",
        ".github/workflows/a.yml": _wf(old),
        ".github/workflows/b.yml": _wf(old),
        ".github/workflows/c.yml": _wf(old),
    }
    head = dict(base, **{"Dockerfile": f"FROM quay.io/ascend/cann:{new}\n"})
    head.update({".github/workflows/a.yml": _wf(new), ".github/workflows/b.yml": _wf(new)})
    assert got(change(base, head), "NPU219") == [
        (
            ".github/workflows/c.yml",
            7,
            "warning",
            f"`{old}` is on Python py3.11 for 910b, while `.github/workflows/a.yml`, `.github/workflows/b.yml` and "
            "`Dockerfile` use py3.12: CI tests another Python here than the rest. Bring them to one version, or say "
            "in a comment why this one differs.",
        )
    ]
