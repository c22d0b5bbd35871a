"""The Redis queue, for several replicas: stateless receivers and `npu-review worker` processes on any hosts.

Redis Streams with one consumer group, through the `redis` package's asyncio client. Not arq: arq hands a job
back only when its whole timeout has passed, pickles its jobs, and would still need the per-head dedupe and the
per-PR coalescing written beside it; a consumer group gives at-least-once delivery, and XAUTOCLAIM takes over
the entries a dead worker had claimed once they have been idle for the visibility timeout.

Keys (all under the prefix, one Redis, not a cluster):
  jobs (stream)            one entry per job: {id}; consumer group "workers"
  job:<id> (hash)          the job (JSON), "started" once a worker began it, "attempts"
  waiting:<pr>             the id of the PR's job not yet started; a newer submission takes its place
  running:<pr>             the id of the PR's running job, with a lease the worker renews
  head:<pr>:<sha>          this head is queued, running or reviewed (dedupe, HEAD_TTL_S)
  delivery:<id|digest>     a delivery taken (DELIVERY_TTL_S)
  latest:<pr>, prhead:<repo>:<sha>   the newest head of a PR, the PR of a head
  token:<installation>, tokenlock:<installation>   the shared installation-token cache
  win:<installation>:<window> (sorted set)        the content-creating windows (bot/limits.py)
A worker renews its claim (XCLAIM to itself, which resets the entry's idle time) and the PR lease every third of
the visibility timeout; results stay idempotent when a slow worker and its successor overlap (the check run is
looked up by external_id = job id before one is made, comments carry fingerprints).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from npu_review.bot.auth import InstallationToken
from npu_review.bot.github import SharedState
from npu_review.bot.jobs import CONCLUDE, DELIVERY_TTL_S, HEAD_TTL_S, REVIEW, Job, Runner, drain_tasks

log = logging.getLogger(__name__)

GROUP = "workers"
# A job whose worker died this many times is not tried again (its check run is concluded instead).
MAX_ATTEMPTS = 3
# How long a worker waits for a job of a PR whose other job runs elsewhere, between looks.
BUSY_POLL_S = 0.2

# Queue a job. KEYS: head, waiting, job, stream. ARGV: id, job JSON, dedupe (1/0), head ttl, prefix.
SUBMIT = """
if ARGV[3] == '1' then
  if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[4]) then return 'duplicate' end
end
local old = redis.call('GET', KEYS[2])
redis.call('SET', KEYS[2], ARGV[1])
local entry = redis.call('XADD', KEYS[4], '*', 'id', ARGV[1])
redis.call('HSET', KEYS[3], 'job', ARGV[2], 'headkey', ARGV[3] == '1' and KEYS[1] or '', 'entry', entry)
if old then
  local oldjob = ARGV[5] .. 'job:' .. old
  local oldhead = redis.call('HGET', oldjob, 'headkey')
  if oldhead and oldhead ~= '' then redis.call('DEL', oldhead) end
  local oldentry = redis.call('HGET', oldjob, 'entry')
  if oldentry then redis.call('XDEL', KEYS[4], oldentry) end
  redis.call('DEL', oldjob)
  return 'replaced'
end
return 'queued'
"""

# May this worker run the job now? KEYS: job, waiting, running. ARGV: id, lease ms, lease owner ("id|consumer").
# 'gone' (replaced or finished), 'busy' (another job of the PR runs, or this one on a worker still renewing
# its lease), 'run', 'resume' (it had been started).
CLAIM = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 'gone' end
local running = redis.call('GET', KEYS[3])
if running and running ~= ARGV[3] then return 'busy' end
local started = redis.call('HGET', KEYS[1], 'started')
if not started then
  if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 'gone' end
  redis.call('DEL', KEYS[2])
  redis.call('HSET', KEYS[1], 'started', '1')
end
redis.call('HINCRBY', KEYS[1], 'attempts', 1)
redis.call('SET', KEYS[3], ARGV[3], 'PX', ARGV[2])
if started then return 'resume' end
return 'run'
"""

# Renew the PR lease if it is still ours. KEYS: running. ARGV: lease owner, lease ms.
RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""

# Finish a job. KEYS: job, running, head, delivery, digest. ARGV: lease owner, ok (1/0), head ttl.
FINISH = """
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
redis.call('DEL', KEYS[1])
if ARGV[2] == '0' then
  redis.call('DEL', KEYS[4], KEYS[5])
  if KEYS[3] ~= '' then redis.call('DEL', KEYS[3]) end
elseif KEYS[3] ~= '' then
  redis.call('EXPIRE', KEYS[3], ARGV[3])
end
return 1
"""

# Count a content-creating request in every window, or say how long until there is room.
# KEYS: one sorted set per window. ARGV: now ms, member, then (window ms, limit) per key.
WINDOW_TAKE = """
local now = tonumber(ARGV[1])
local wait = 0
for i, key in ipairs(KEYS) do
  local window = tonumber(ARGV[1 + 2 * i])
  local limit = tonumber(ARGV[2 + 2 * i])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  local n = redis.call('ZCARD', key)
  if n >= limit then
    local oldest = redis.call('ZRANGE', key, n - limit, n - limit, 'WITHSCORES')
    local w = tonumber(oldest[2]) + window - now
    if w > wait then wait = w end
  end
end
if wait > 0 then return wait end
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, now, ARGV[2])
  redis.call('PEXPIRE', key, tonumber(ARGV[1 + 2 * i]))
end
return 0
"""


class RedisWindows:
    """bot/limits.py's windows in Redis, shared by every replica."""

    def __init__(self, client: aioredis.Redis, prefix: str) -> None:
        self._r = client
        self._p = prefix
        self._take = client.register_script(WINDOW_TAKE)

    def _keys(self, installation_id: int, limits: tuple[tuple[float, int], ...]) -> list[str]:
        return [f"{self._p}win:{installation_id}:{int(w)}" for w, _ in limits]

    async def take(self, installation_id: int, limits: tuple[tuple[float, int], ...]) -> float:
        args: list[Any] = [int(time.time() * 1000), uuid.uuid4().hex]
        for window, limit in limits:
            args += [int(window * 1000), limit]
        wait_ms = await self._take(keys=self._keys(installation_id, limits), args=args)
        return float(wait_ms) / 1000.0

    async def used(self, installation_id: int, limits: tuple[tuple[float, int], ...]) -> list[int]:
        now = int(time.time() * 1000)
        out = []
        for key, (window, _) in zip(self._keys(installation_id, limits), limits, strict=True):
            out.append(int(await self._r.zcount(key, now - int(window * 1000), "+inf")))
        return out


class RedisTokens:
    """The installation-token cache shared by every replica (kept until GitHub's expiry, never logged)."""

    def __init__(self, client: aioredis.Redis, prefix: str) -> None:
        self._r = client
        self._p = prefix

    async def get(self, installation_id: int) -> InstallationToken | None:
        raw = await self._r.get(f"{self._p}token:{installation_id}")
        if raw is None:
            return None
        data = json.loads(raw)
        return InstallationToken(str(data["token"]), float(data["expires_at"]))

    async def put(self, installation_id: int, token: InstallationToken) -> None:
        ttl = max(1, int(token.expires_at - time.time()))
        doc = json.dumps({"token": token.token, "expires_at": token.expires_at})
        await self._r.set(f"{self._p}token:{installation_id}", doc, ex=ttl)

    async def forget(self, installation_id: int) -> None:
        await self._r.delete(f"{self._p}token:{installation_id}")

    @contextlib.asynccontextmanager
    async def lock(self, installation_id: int) -> AsyncIterator[None]:
        # One replica fetches; the others wait (at most 10 s, GitHub answers in well under that).
        async with self._r.lock(f"{self._p}tokenlock:{installation_id}", timeout=10, blocking_timeout=10):
            yield


class RedisQueue:
    def __init__(
        self, url: str, prefix: str = "npu-review", concurrency: int = 4, visibility_timeout_s: float = 30.0
    ) -> None:
        self._r: aioredis.Redis = aioredis.from_url(url, decode_responses=True)
        self._p = prefix.rstrip(":") + ":"
        self._stream = self._p + "jobs"
        self._concurrency = concurrency
        self._vt_ms = int(visibility_timeout_s * 1000)
        self._consumer = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self._submit = self._r.register_script(SUBMIT)
        self._claim = self._r.register_script(CLAIM)
        self._renew = self._r.register_script(RENEW)
        self._finish = self._r.register_script(FINISH)
        self.shared = SharedState(tokens=RedisTokens(self._r, self._p), windows=RedisWindows(self._r, self._p))
        self._runner: Runner | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._running: set[asyncio.Task[None]] = set()
        self._stopping = False
        self._gate: asyncio.Semaphore | None = None

    # -- start-up ------------------------------------------------------------------------------------------
    async def open(self, runner: Runner | None) -> None:
        try:
            await self._r.xgroup_create(self._stream, GROUP, id="0", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise
        self._runner = runner
        if runner is None:
            return
        self._gate = asyncio.Semaphore(self._concurrency)
        loop = asyncio.get_running_loop()
        for coro in (self._read_loop(), self._takeover_loop()):
            task = loop.create_task(coro)
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        log.info("worker %s consuming %s (visibility timeout %.0f s)", self._consumer, self._stream, self._vt_ms / 1e3)

    # -- deliveries and heads ------------------------------------------------------------------------------
    async def begin_delivery(self, delivery: str, digest: str) -> bool:
        keys = [f"{self._p}delivery:{k}" for k in (delivery, digest) if k]
        async with self._r.pipeline(transaction=True) as pipe:
            for key in keys:
                pipe.set(key, "1", nx=True, ex=DELIVERY_TTL_S)
            taken = await pipe.execute()
        if all(taken):
            return True
        # One was known: undo what this call set, so a later forget/redelivery sees the old state only.
        fresh = [k for k, t in zip(keys, taken, strict=True) if t]
        if fresh:
            await self._r.delete(*fresh)
        return False

    async def forget_delivery(self, delivery: str, digest: str) -> None:
        await self._r.delete(f"{self._p}delivery:{delivery}", f"{self._p}delivery:{digest}")

    async def note_head(self, pr: str, repo: str, number: int, head: str) -> None:
        async with self._r.pipeline(transaction=True) as pipe:
            pipe.set(f"{self._p}latest:{pr}", head, ex=HEAD_TTL_S)
            pipe.set(f"{self._p}prhead:{repo}:{head}", number, ex=HEAD_TTL_S)
            await pipe.execute()

    async def latest_head(self, pr: str) -> str | None:
        value = await self._r.get(f"{self._p}latest:{pr}")
        return str(value) if value is not None else None

    async def pr_for_head(self, repo: str, head: str) -> int | None:
        value = await self._r.get(f"{self._p}prhead:{repo}:{head}")
        return int(value) if value is not None else None

    # -- jobs ----------------------------------------------------------------------------------------------
    def _head_key(self, job: Job) -> str:
        return f"{self._p}head:{job.pr}:{job.head}" if job.head and not job.force else ""

    async def submit(self, job: Job) -> str:
        head_key = self._head_key(job)
        keys = [head_key or f"{self._p}head:-", f"{self._p}waiting:{job.pr}", f"{self._p}job:{job.id}", self._stream]
        args = [job.id, json.dumps(job.to_json()), "1" if head_key else "0", HEAD_TTL_S, self._p]
        return str(await self._submit(keys=keys, args=args))

    async def depth(self) -> int:
        """Entries in the stream: jobs waiting or running on any worker (finished ones are deleted)."""
        return int(await self._r.xlen(self._stream))

    async def _read_loop(self) -> None:
        assert self._gate is not None
        while not self._stopping:
            await self._gate.acquire()
            try:
                got: Any = await self._r.xreadgroup(GROUP, self._consumer, {self._stream: ">"}, count=1, block=1000)
            except (OSError, aioredis.RedisError) as exc:
                self._gate.release()
                log.warning("reading the queue failed (%s); trying again", exc)
                await asyncio.sleep(1)
                continue
            except BaseException:
                self._gate.release()
                raise
            entries = [e for _, stream_entries in got or [] for e in stream_entries]
            if not entries:
                self._gate.release()
                continue
            for entry_id, fields in entries:
                self._spawn(entry_id, fields.get("id", ""))

    async def _takeover_loop(self) -> None:
        """Claims the entries of workers that stopped renewing them (dead) for longer than the timeout; only when
        this worker has a free slot, so that a claimed entry starts its heartbeat at once."""
        assert self._gate is not None
        while not self._stopping:
            await asyncio.sleep(self._vt_ms / 2000)
            await self._gate.acquire()
            try:
                answer: Any = await self._r.xautoclaim(
                    self._stream, GROUP, self._consumer, min_idle_time=self._vt_ms, start_id="0-0", count=1
                )
            except (OSError, aioredis.RedisError) as exc:
                self._gate.release()
                log.warning("looking for abandoned jobs failed (%s)", exc)
                continue
            except BaseException:
                self._gate.release()
                raise
            claimed = [(e, f) for e, f in answer[1] if f is not None]  # None: deleted meanwhile
            if not claimed or self._stopping:
                self._gate.release()
                continue
            entry_id, fields = claimed[0]
            log.info("taking over job %s (its worker stopped renewing it)", fields.get("id"))
            self._spawn(entry_id, fields.get("id", ""))

    def _owner(self, job_id: str) -> str:
        return f"{job_id}|{self._consumer}"

    def _spawn(self, entry_id: str, job_id: str) -> None:
        task = asyncio.get_running_loop().create_task(self._handle(entry_id, job_id))
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    async def _handle(self, entry_id: str, job_id: str) -> None:
        assert self._gate is not None and self._runner is not None
        heartbeat: asyncio.Task[None] | None = None
        try:
            heartbeat = asyncio.get_running_loop().create_task(self._heartbeat(entry_id, job_id))
            await self._process(entry_id, job_id)
        finally:
            if heartbeat is not None:
                heartbeat.cancel()
            self._gate.release()

    async def _heartbeat(self, entry_id: str, job_id: str) -> None:
        """Keeps the entry ours (its idle time reset) and the PR lease alive while the job runs."""
        with contextlib.suppress(asyncio.CancelledError):
            while True:
                await asyncio.sleep(self._vt_ms / 3000)
                try:
                    await self._r.xclaim(self._stream, GROUP, self._consumer, 0, [entry_id], justid=True)
                    raw = await self._r.hget(f"{self._p}job:{job_id}", "job")
                    if raw:
                        pr = json.loads(raw)["pr"]
                        await self._renew(keys=[f"{self._p}running:{pr}"], args=[self._owner(job_id), self._vt_ms])
                except (OSError, aioredis.RedisError) as exc:
                    log.warning("renewing job %s failed (%s)", job_id, exc)

    async def _done_entry(self, entry_id: str) -> None:
        async with self._r.pipeline(transaction=True) as pipe:
            pipe.xack(self._stream, GROUP, entry_id)
            pipe.xdel(self._stream, entry_id)
            await pipe.execute()

    async def _process(self, entry_id: str, job_id: str) -> None:
        assert self._runner is not None
        job_key = f"{self._p}job:{job_id}"
        raw = await self._r.hget(job_key, "job")
        if raw is None:  # replaced by a newer job of its PR before it started, or already finished
            await self._done_entry(entry_id)
            return
        job = Job.from_json(json.loads(raw))
        keys = [job_key, f"{self._p}waiting:{job.pr}", f"{self._p}running:{job.pr}"]
        while True:
            verdict = await self._claim(keys=keys, args=[job.id, self._vt_ms, self._owner(job.id)])
            if verdict != "busy":
                break
            if self._stopping:
                return  # left pending: another worker (or this one's successor) takes it over
            await asyncio.sleep(BUSY_POLL_S)
        if verdict == "gone":
            await self._done_entry(entry_id)
            return
        attempts = int(await self._r.hget(job_key, "attempts") or 1)
        if verdict == "resume" or attempts > 1:
            job = Job.from_json({**job.to_json(), "attempts": attempts - 1})
            if attempts > MAX_ATTEMPTS:
                log.error("job %s was taken over %d times; concluding its check run instead", job.id, attempts - 1)
                job = Job.from_json({**job.to_json(), "kind": CONCLUDE})
        ok = False
        try:
            await self._runner(job)
            ok = True
        except asyncio.CancelledError:
            log.warning("job %s for %s cancelled", job.id, job.pr)
            raise
        except Exception:
            log.exception("job %s for %s failed", job.id, job.pr)
        finally:
            await asyncio.shield(self._finish_job(entry_id, job, ok))

    async def _finish_job(self, entry_id: str, job: Job, ok: bool) -> None:
        ok = ok or job.kind != REVIEW
        keys = [
            f"{self._p}job:{job.id}",
            f"{self._p}running:{job.pr}",
            self._head_key(job),
            f"{self._p}delivery:{job.delivery}",
            f"{self._p}delivery:{job.digest}",
        ]
        await self._finish(keys=keys, args=[self._owner(job.id), "1" if ok else "0", HEAD_TTL_S])
        await self._done_entry(entry_id)

    async def drain(self, timeout: float) -> None:
        self._stopping = True
        for task in list(self._tasks):
            task.cancel()
        await drain_tasks(self._running, timeout)

    async def close(self) -> None:
        await self._r.aclose()
