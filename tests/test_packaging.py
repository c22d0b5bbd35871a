"""What ships besides the code: the App manifest, the Dockerfile (which must pass our own rules), pre-commit."""

from __future__ import annotations

from pathlib import Path

import yaml

from npu_review.checks import ChangeSet, MemoryTree, run

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
    assert "HEALTHCHECK" in text and "/healthz" in text
    assert 'CMD ["npu-review", "serve"]' in text


def test_the_image_runs_as_a_numeric_user_on_a_pinned_base_with_a_queue_volume() -> None:
    import re

    text = (ROOT / "Dockerfile").read_text()
    (base,) = re.findall(r"^FROM (\S+)", text, re.M)
    assert re.fullmatch(r"python:3\.12\.\d+-slim-bookworm(@sha256:[0-9a-f]{64})?", base)
    assert re.findall(r"^USER (\S+)", text, re.M) == ["10001:10001"]
    assert "NPU_REVIEW_QUEUE=sqlite:////data/queue.sqlite3" in text and 'VOLUME ["/data"]' in text


def test_compose_runs_the_app_redis_and_two_workers() -> None:
    import re

    from npu_review.bot.app import SHUTDOWN_DEADLINE_S

    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    services = compose["services"]
    assert sorted(services) == ["app", "redis", "worker"]
    assert services["app"]["command"] == ["npu-review", "serve"]
    assert services["worker"]["command"] == ["npu-review", "worker"]
    assert services["worker"]["deploy"]["replicas"] == 2
    for name in ("app", "worker"):
        svc = services[name]
        assert svc["environment"]["NPU_REVIEW_QUEUE"] == "redis://redis:6379/0"
        # The private key is a mounted file, never an environment value.
        assert svc["environment"]["GITHUB_PRIVATE_KEY_PATH"] == "/run/secrets/github-app-key"
        assert "GITHUB_PRIVATE_KEY" not in svc["environment"]
        assert svc["secrets"] == ["github-app-key"]
        assert int(svc["stop_grace_period"].removesuffix("s")) >= SHUTDOWN_DEADLINE_S + 5
    assert compose["secrets"]["github-app-key"]["file"] == "./secrets/github-app.pem"
    assert re.fullmatch(r"redis:7\.\d+\.\d+-alpine", services["redis"]["image"])


def test_worker_refuses_the_embedded_queue() -> None:
    import os
    import subprocess
    import sys

    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "NPU_REVIEW_"))},
        "GITHUB_APP_ID": "1",
        "GITHUB_PRIVATE_KEY": "-----BEGIN RSA PRIVATE KEY-----\nx\n-----END RSA PRIVATE KEY-----",
        "GITHUB_WEBHOOK_SECRET": "s",
    }
    proc = subprocess.run(
        [sys.executable, "-m", "npu_review", "worker"], env=env, capture_output=True, text=True, cwd=ROOT
    )
    assert proc.returncode == 2
    assert (
        proc.stderr.startswith("npu-review worker: NPU_REVIEW_QUEUE must be a redis:// URL")
        and proc.stderr.count("\n") == 1
    )


def test_serve_refuses_to_start_with_part_of_its_settings() -> None:
    """Some credentials set and others missing is a mistake, not a server to set up (that is when none is)."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env["GITHUB_WEBHOOK_SECRET"] = "s3cret"
    cmd = [sys.executable, "-m", "npu_review", "serve", "--port", "0"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 2
    assert (
        proc.stderr == "npu-review serve: GITHUB_APP_ID is not set: the numeric App ID from the App's settings page\n"
    )
