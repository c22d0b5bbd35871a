"""Start the fake GitHub in a child process and drive it through its control endpoints (for end-to-end tests)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

from .faults import Fault

PROJECT_ROOT = Path(__file__).resolve().parents[2]


class FakeGitHubProcess:
    """`with FakeGitHubProcess(app_id, public_pem, seed) as gh: ...` — gh.url, gh.violations(), gh.inject(...)."""

    def __init__(
        self,
        app_id: int,
        public_key: str,
        seed: dict[str, Any] | None = None,
        *,
        token_lifetime: float = 3600.0,
        startup_timeout: float = 20.0,
    ) -> None:
        self.app_id = app_id
        self.public_key = public_key
        self.seed = seed or {}
        self.token_lifetime = token_lifetime
        self.startup_timeout = startup_timeout
        self.url = ""
        self.seeded: dict[str, Any] = {}
        self._proc: subprocess.Popen[str] | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None

    def __enter__(self) -> FakeGitHubProcess:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="fakegithub-")
        key = Path(self._tmp.name, "app.pub.pem")
        key.write_text(self.public_key, encoding="utf-8")
        seed = Path(self._tmp.name, "seed.json")
        seed.write_text(json.dumps(self.seed), encoding="utf-8")
        cmd = [
            sys.executable,
            "-m",
            "tests.fakegithub",
            "--port",
            "0",
            "--app-id",
            str(self.app_id),
            "--public-key",
            str(key),
            "--state-file",
            str(seed),
            "--token-lifetime",
            str(self.token_lifetime),
        ]
        env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
        self._proc = subprocess.Popen(cmd, cwd=PROJECT_ROOT, stdout=subprocess.PIPE, text=True, env=env)
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            self.stop()
            raise RuntimeError("the fake GitHub process exited before it listened")
        hello = json.loads(line)
        self.url, self.seeded = hello["url"], hello["seeded"]

    def stop(self) -> None:
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            if self._proc.stdout is not None:
                self._proc.stdout.close()
            self._proc = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def _call(self, method: str, action: str, body: Any = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            f"{self.url}/_fake/{action}", data=data, method=method, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read() or b"null")

    def log(self) -> dict[str, Any]:
        return self._call("GET", "log")

    def requests(self) -> list[dict[str, Any]]:
        return self.log()["requests"]

    def violations(self) -> list[dict[str, Any]]:
        return self.log()["violations"]

    def state(self) -> dict[str, Any]:
        return self._call("GET", "state")

    def seed_more(self, seed: dict[str, Any]) -> dict[str, Any]:
        return self._call("POST", "seed", seed)

    def inject(self, route: str, fault: Fault, times: int = 1) -> None:
        self._call("POST", "faults", {"route": route, "fault": fault.to_json(), "times": times})

    def set_rate_limit(self, remaining: int, reset_in: float = 3600, resource: str = "core") -> None:
        self._call("POST", "rate-limit", {"remaining": remaining, "reset_in": reset_in, "resource": resource})

    def outage(self, on: bool = True, fault: Fault | None = None) -> None:
        self._call("POST", "outage", {"on": on, "fault": fault.to_json() if fault else None})

    def revoke_tokens(self) -> None:
        self._call("POST", "revoke-tokens", {})

    def push(self, repo: str, number: int, head_files: dict[str, str]) -> dict[str, str]:
        return self._call("POST", "push", {"repo": repo, "number": number, "head_files": head_files})

    def payload(self, event: str, **fields: Any) -> dict[str, Any]:
        """A webhook payload built from the fake's state, e.g. payload("pull_request", repo=..., number=1)."""
        return self._call("POST", "payload", {"event": event, **fields})
