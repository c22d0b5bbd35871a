"""What ships besides the code: the App manifest, the Dockerfile (which must pass our own rules), pre-commit."""

from __future__ import annotations

from pathlib import Path

import yaml

from checks import ChangeSet, MemoryTree, run

ROOT = Path(__file__).resolve().parent.parent


def test_app_manifest() -> None:
    manifest = yaml.safe_load((ROOT / "app.yaml").read_text())
    assert manifest["name"] == "npu-review"
    assert manifest["public"] is False
    assert manifest["hook_attributes"]["url"].endswith("/webhook")
    assert manifest["redirect_url"] and manifest["url"]
    assert manifest["default_permissions"] == {
        "checks": "write",
        "pull_requests": "write",
        "contents": "read",
        "issues": "write",
        "metadata": "read",
    }
    assert manifest["default_events"] == ["pull_request", "issue_comment", "check_run", "check_suite"]


def test_our_dockerfile_passes_our_own_rules() -> None:
    text = (ROOT / "Dockerfile").read_text()
    # Reviewed both as it stands and as if it lived among the Ascend images (where every NPU3xx rule applies).
    for path in ("Dockerfile", "docker/ascend/Dockerfile.npu-review"):
        report = run(ChangeSet(head=MemoryTree({path: text}), audit=True))
        assert report.findings == [] and report.errors == [], [f.message for f in report.findings]
    assert "USER npu-review" in text and "HEALTHCHECK" in text and "/healthz" in text
    assert 'CMD ["npu-review", "serve"]' in text


def test_pre_commit_hook_runs_the_staged_check() -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "npu-review"
    assert hook["entry"] == "npu-review check --staged"
    assert hook["pass_filenames"] is False


def test_serve_refuses_to_start_without_its_settings() -> None:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    proc = subprocess.run(
        [sys.executable, "-m", "npu_review", "serve", "--port", "0"], env=env, capture_output=True, text=True, cwd=ROOT
    )
    assert proc.returncode == 2
    assert (
        proc.stderr == "npu-review serve: GITHUB_APP_ID is not set: the numeric App ID from the App's settings page\n"
    )
