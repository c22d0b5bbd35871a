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


def test_new_jobs_on_a_newer_image_leave_the_established_job_alone() -> None:
    """The change adds three workflows on CANN 8.5.0 beside a job that stays on 8.3.rc1: it upgraded nothing, so
    the untouched job was not left behind by it (verl 6e971843: the MindSpeed job kept 8.3.rc1 on purpose, judged
    noise blind); the audit still names it."""
    old, new = "8.3.rc1-a3-ubuntu22.04-py3.11", "8.5.0-a3-ubuntu22.04-py3.11"
    base = {".github/workflows/mindspeed.yml": _wf(old)}
    head = dict(base)
    head.update({f".github/workflows/sglang_{n}.yml": _wf(new) for n in ("a", "b", "c")})
    assert got(change(base, head), "NPU219") == []
