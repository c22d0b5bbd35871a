"""The App as a real server process (`python -m npu_review serve`) pointed at the fake GitHub."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from npu_review.bot.clock import Clock
from npu_review.bot.runtime import Runtime
from npu_review.bot.services import Services
from tests.fakeclock import FakeClock
from tests.fakegithub import FakeGitHub
from tests.fakegithub.state import CheckRun, Pull

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class AppProcess:
    url: str
    proc: asyncio.subprocess.Process
    session: aiohttp.ClientSession
    log_path: Path

    async def post(self, delivery: object) -> tuple[int, str]:
        return await delivery.post(self.session, self.url + "/webhook")  # type: ignore[attr-defined,no-any-return]

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    async def stop(self, sig: int = signal.SIGTERM, timeout: float = 40) -> int:
        if self.proc.returncode is None:
            self.proc.send_signal(sig)
            try:
                await asyncio.wait_for(self.proc.wait(), timeout)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()
        return self.proc.returncode or 0


# The App as `npu-review serve` runs by default: its reviews in a worker process beside the server (the rules in
# that worker's thread, unless NPU_REVIEW_PROCESSES is unset too).
AS_DEPLOYED = {"NPU_REVIEW_WORKER_PROCESS": "1"}


def app_env(
    fake: FakeGitHub,
    private_pem: str,
    app_id: int,
    secret: str,
    port: int,
    extra_env: dict[str, str] | None,
    credentials: bool = True,
) -> dict[str, str]:
    creds = (
        {"GITHUB_APP_ID": str(app_id), "GITHUB_PRIVATE_KEY": private_pem, "GITHUB_WEBHOOK_SECRET": secret}
        if credentials
        else {}
    )
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")},
        **creds,
        "GITHUB_API_URL": fake.base_url,
        "GITHUB_URL": fake.base_url,
        # Never the credentials file of the machine's user.
        "NPU_REVIEW_CREDENTIALS_FILE": f"{ROOT}/.no-such-dir/app-credentials.json",
        "PORT": str(port),
        "PYTHONPATH": str(ROOT),
        # Retries back off from 10 ms instead of 500 ms, and a job GitHub could not serve is tried again after
        # about 50 ms instead of 5 s: the fault tests wait on GitHub, not on timers.
        "NPU_REVIEW_BACKOFF_BASE_S": "0.01",
        "NPU_REVIEW_RETRY_BASE_S": "0.05",
        # The rules in a thread, and the reviews in the server's own process: a process pool, like the worker
        # process, costs each App start about a second. The tests that start the App as deployed (AS_DEPLOYED:
        # test_app_e2e.py, the restarts of test_app_durable.py, SIGTERM, the browser) run them in both.
        "NPU_REVIEW_PROCESSES": "0",
        "NPU_REVIEW_WORKER_PROCESS": "0",
        **(extra_env or {}),
    }


async def start_app(
    fake: FakeGitHub,
    private_pem: str,
    app_id: int,
    secret: str,
    tmp: Path,
    extra_env: dict[str, str] | None = None,
    credentials: bool = True,
) -> AppProcess:
    """The App as `npu-review serve`; credentials=False starts it with none (its setup page), its credentials
    file in tmp/state/."""
    port = free_port()
    # Each App its own queue file, unless given one (a restart test passes the same file again).
    own = {
        "NPU_REVIEW_QUEUE": queue_in(tmp, port),
        "NPU_REVIEW_CREDENTIALS_FILE": str(tmp / "state" / "app-credentials.json"),
    }
    env = app_env(fake, private_pem, app_id, secret, port, {**own, **(extra_env or {})}, credentials)
    log_path = tmp / f"app-{port}.log"
    log_file = log_path.open("wb")
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "npu_review",
        "serve",
        "--host",
        "127.0.0.1",
        env=env,
        stdout=log_file,
        stderr=log_file,
        cwd=str(ROOT),
    )
    session = aiohttp.ClientSession()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while True:
        try:
            async with session.get(url + "/healthz") as r:
                if r.status == 200:
                    break
        except aiohttp.ClientError:
            pass
        if proc.returncode is not None or time.monotonic() > deadline:
            await session.close()
            raise RuntimeError(f"the App did not start:\n{log_path.read_text(errors='replace')}")
        await asyncio.sleep(0.05)
    app = AppProcess(url, proc, session, log_path)
    deadline = time.monotonic() + 20
    if credentials and env["NPU_REVIEW_WORKER_PROCESS"] == "1" and env["NPU_REVIEW_QUEUE"].startswith("sqlite:"):
        # Its worker process takes jobs once it is ready (accepted ones wait in the queue till then): the tests
        # start from there, as a server that has been up a while.
        while "worker process ready" not in app.log():
            if proc.returncode is not None or time.monotonic() > deadline:
                await session.close()
                raise RuntimeError(f"the App's worker process did not start:\n{app.log()}")
            await asyncio.sleep(0.05)
    return app


def queue_in(tmp: Path, port: int) -> str:
    return f"sqlite:///{tmp}/queue-{port}.sqlite3"


@dataclass
class WorkerProcess:
    proc: asyncio.subprocess.Process
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    async def stop(self, sig: int = signal.SIGTERM, timeout: float = 40) -> int:
        if self.proc.returncode is None:
            self.proc.send_signal(sig)
            try:
                await asyncio.wait_for(self.proc.wait(), timeout)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()
        return self.proc.returncode or 0


async def start_worker(
    fake: FakeGitHub, private_pem: str, app_id: int, secret: str, tmp: Path, extra_env: dict[str, str], name: str
) -> WorkerProcess:
    """`npu-review worker` on a Redis queue (extra_env carries NPU_REVIEW_QUEUE); returns once it consumes."""
    env = app_env(fake, private_pem, app_id, secret, free_port(), extra_env)
    log_path = tmp / f"worker-{name}.log"
    log_file = log_path.open("wb")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "npu_review", "worker", env=env, stdout=log_file, stderr=log_file, cwd=str(ROOT)
    )
    worker = WorkerProcess(proc, log_path)
    deadline = time.monotonic() + 20
    while "npu-review worker ready" not in worker.log():
        if proc.returncode is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the worker did not start:\n{worker.log()}")
        await asyncio.sleep(0.05)
    return worker


def descendants(pid: int) -> set[int]:
    """Every process below `pid` (children, their children, ...)."""
    out: set[int] = set()
    todo = [pid]
    while todo:
        for task in Path(f"/proc/{todo.pop()}/task").glob("*"):
            try:
                found = {int(c) for c in (task / "children").read_text().split()}
            except OSError:
                continue
            todo.extend(found - out)
            out |= found
    return out


def worker_pid(app: AppProcess) -> int:
    """The pid of the server's worker process (the embedded queue's, bot/embedded.py)."""
    for pid in descendants(app.proc.pid):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"npu_review.bot.embedded" in cmdline:
            return pid
    raise AssertionError("the App has no worker process")


# A machine shared with other work (a load of 10 on 2 cores) runs the App's real processes several times slower:
# a wait for what must happen gets this much more wall time before it fails (it returns as soon as it happens).
_LOADED_MACHINE_SLACK = 3


async def wait_until(pred: Callable[[], bool], timeout: float = 20, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout * _LOADED_MACHINE_SLACK
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


def completed_runs(fake: FakeGitHub, pull: Pull, sha: str | None = None) -> list[CheckRun]:
    return [r for r in fake.check_runs_for(pull.repo, sha or pull.head_sha, "npu-review") if r.status == "completed"]


async def wait_completed(
    fake: FakeGitHub, pull: Pull, count: int = 1, sha: str | None = None, timeout: float = 20
) -> CheckRun:
    """Waits until check runs on the head have been completed `count` times in all (each run makes a new
    check run) and none is in progress; returns the newest."""

    def done() -> bool:
        runs = fake.check_runs_for(pull.repo, sha or pull.head_sha, "npu-review")
        completions = sum(1 for r in runs for body in r.updates if body.get("status") == "completed")
        return completions >= count and all(r.status == "completed" for r in runs)

    await wait_until(done, timeout, f"{count} completion(s) of the check run")
    return max(fake.check_runs_for(pull.repo, sha or pull.head_sha, "npu-review"), key=lambda r: r.id)


async def settle(app: AppProcess, timeout: float = 10) -> None:
    """Waits until the App's queue is empty (its /metrics gauge), i.e. every accepted job has finished."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        async with app.session.get(app.url + "/metrics") as r:
            text = await r.text()
        if "npu_review_queue_depth 0\n" in text:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the App's queue did not drain")


# ---------------------------------------------------------------------------------------------------------
# The App in the test's own event loop (create_app served over loopback), with an injected clock: for the
# scenarios that last hours (outages, backoff, cooldowns), driven by moving the clock instead of waiting.
# ---------------------------------------------------------------------------------------------------------


@dataclass
class LiveApp:
    server: object  # aiohttp.test_utils.TestServer
    session: aiohttp.ClientSession
    runtime: Runtime
    url: str

    @property
    def services(self) -> Services:
        assert self.runtime.services is not None
        return self.runtime.services

    async def post(self, delivery: object) -> tuple[int, str]:
        return await delivery.post(self.session, self.url + "/webhook")  # type: ignore[attr-defined,no-any-return]

    async def get_json(self, path: str, token: str | None = None) -> tuple[int, Any]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with self.session.get(self.url + path, headers=headers) as r:
            return r.status, await r.json()

    async def close(self) -> None:
        await self.session.close()
        await self.server.close()  # type: ignore[attr-defined]


async def start_live_app(
    fake: FakeGitHub,
    private_pem: str,
    app_id: int,
    secret: str,
    clock: Clock,
    run_jobs: bool | None = True,
    **settings: Any,
) -> LiveApp:
    from aiohttp.test_utils import TestServer

    from npu_review.bot.app import create_app
    from npu_review.bot.runtime import RUNTIME
    from npu_review.bot.settings import Secret, Settings

    config = Settings(
        app_id=str(app_id),
        private_key=Secret(private_pem),
        webhook_secret=Secret(secret),
        api_url=fake.base_url,
        backoff_base_s=0.001,  # a request's own retries: at once (the job's backoff is on the clock)
        review_processes=0,
        **settings,
    )
    app = create_app(config, run_jobs=run_jobs, clock=clock)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    return LiveApp(server, aiohttp.ClientSession(), app[RUNTIME], str(server.make_url("")).rstrip("/"))


async def ride_out(
    app: LiveApp, clock: FakeClock, seconds: float, done: Callable[[], bool] = lambda: False, timeout: float = 60
) -> int:
    """Moves the clock on by `seconds` from one retry of a job waiting on GitHub to the next (at least a second
    at a time, so that every loop asleep on the clock wakes), letting each try finish; stops early when `done()`.
    Returns the number of steps."""
    end = clock.time() + seconds
    steps = 0
    deadline = time.monotonic() + timeout
    while clock.time() < end and not done():
        assert time.monotonic() < deadline, "ride_out took too long in real time"
        waiting = await app.services.jobs.waiting_on_github()
        step = max(min(w.next_try for w in waiting) - clock.time(), 0.0) + 1.0 if waiting else 1.0
        await clock.advance(min(step, max(end - clock.time(), 0.001)))
        steps += 1
        await wait_until(lambda: app.services.jobs.running() == 0, 20, "the try to end")
        await asyncio.sleep(0.01)
    return steps
