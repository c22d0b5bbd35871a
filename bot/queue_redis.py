"""The Redis queue, for several replicas: stateless receivers and `npu-review worker` processes on any hosts.

Redis Streams with one consumer group, through the `redis` package's asyncio client. Not arq: arq hands a job
back only when its whole timeout has passed, pickles its jobs, and would still need the per-head dedupe and the
per-PR coalescing written beside it; a consumer group gives at-least-once delivery, and XAUTOCLAIM takes over
the entries a dead worker had claimed once they have been idle for the visibility timeout.

Keys (all under the prefix, one Redis, not a cluster):
  jobs (stream)            one entry per job ready to run: {id}; consumer group "workers"
  delayed (sorted set)     jobs waiting on GitHub, scored by their due time (epoch ms); moved back to the stream
                           when due (any worker, atomically)
  job:<id> (hash)          the job (JSON), "started" once a worker began it, "attempts" (claims)
  waiting:<pr>             the id of the PR's job not yet started; a newer submission takes its place
  running:<pr>             the id of the PR's running job, with a lease the worker renews
  head:<pr>:<sha>          this head is queued, running or reviewed (dedupe, HEAD_TTL_S)
  delivery:<id|digest>     a delivery taken (DELIVERY_TTL_S)
  latest:<pr>, prhead:<repo>:<sha>   the newest head of a PR, the PR of a head
  token:<installation>, tokenlock:<installation>   the shared installation-token cache
  win:<installation>:<window> (sorted set)        the content-creating windows (bot/limits.py)
A worker renews its claim (XCLAIM to itself, which resets the entry's idle time) and the PR lease every third of
the visibility timeout; results stay idempotent when a slow worker and its successor overlap (the check run is
looked up by external_id = job id before one is made, comments carry fingerprints). A worker that stops leaves
the consumer group (its unfinished entries put back first); one that died is removed by the others once its
entries have been taken over and it has been silent for a while (REAP_IDLE_S), so the group does not fill with
the names of dead processes.
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
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from npu_review.bot.auth import InstallationToken
from npu_review.bot.clock import SYSTEM_CLOCK, Clock
from npu_review.bot.fairgate import HELD, Lender
from npu_review.bot.github import SharedState
from npu_review.bot.jobs import (
    CONCLUDE,
    DELIVERY_TTL_S,
    DONE,
    FAILED,
    HEAD_TTL_S,
    RETRY,
    RETRY_BASE_S,
    REVIEW,
    Job,
    Runner,
    RunResult,
    StorageUnavailable,
    Waiting,
    drain_tasks,
    retry_delay,
)
from npu_review.bot.supervise import Supervisor

log = logging.getLogger(__name__)

GROUP = "workers"
# A job whose worker died this many times is not tried again (its check run is concluded instead).
MAX_ATTEMPTS = 3
# How long a worker waits for a job of a PR whose other job runs elsewhere, between looks.
BUSY_POLL_S = 0.2
# How often a worker moves due jobs from `delayed` back to the stream (at most this many at a time).
PROMOTE_EVERY_S = 1.0
PROMOTE_BATCH = 100
# A consumer with nothing pending that has been silent this long (and at least 3 visibility timeouts, and 3 of
# its blocking reads) is removed: a dead worker's name does not stay in the group forever. (Redis does not count
# an empty read as activity, so an idle live worker may be removed too; it is added again, by Redis, with the
# next entry it is handed. Nothing pending is ever removed: the check and the removal are one script.)
REAP_IDLE_S = 60.0
# A worker's read of the stream waits this long for an entry (a live consumer is seen at least this often).
READ_BLOCK_MS = 1000
# A health check of Redis gives up after this long.
PING_TIMEOUT_S = 2.0

# Queue a job. KEYS: head, waiting, job, stream. ARGV: id, job JSON, dedupe (1/0), head ttl, prefix, recheck (1/0).
SUBMIT = """
if ARGV[6] == '1' and redis.call('EXISTS', KEYS[2]) == 1 then return 'coalesced' end
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

# Put a job GitHub could not serve aside until it is due. KEYS: job, running, stream, delayed.
# ARGV: lease owner, job JSON, due ms, id, entry id, group.
PUT_ASIDE = """
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HSET', KEYS[1], 'job', ARGV[2])
  redis.call('HDEL', KEYS[1], 'entry')
  redis.call('ZADD', KEYS[4], ARGV[3], ARGV[4])
end
redis.call('XACK', KEYS[3], ARGV[6], ARGV[5])
redis.call('XDEL', KEYS[3], ARGV[5])
return 1
"""

# Move the due jobs back to the stream. KEYS: delayed, stream. ARGV: now ms, prefix, at most this many.
PROMOTE = """
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
for _, id in ipairs(ids) do
  redis.call('ZREM', KEYS[1], id)
  local job = ARGV[2] .. 'job:' .. id
  if redis.call('EXISTS', job) == 1 then
    local entry = redis.call('XADD', KEYS[2], '*', 'id', id)
    redis.call('HSET', job, 'entry', entry)
  end
end
return #ids
"""

# Remove the consumers that have no pending entry and have been silent this long (dead workers whose entries
# were taken over). Atomic, so that no entry is read by a consumer between the look and the removal.
# KEYS: stream. ARGV: group, idle ms, this consumer.
REAP = """
local removed = 0
for _, c in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])) do
  local info = {}
  for i = 1, #c, 2 do info[c[i]] = c[i + 1] end
  if info['name'] ~= ARGV[3] and tonumber(info['pending']) == 0 and tonumber(info['idle']) > tonumber(ARGV[2]) then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], info['name'])
    removed = removed + 1
  end
end
return removed
"""

# Give an entry this worker holds back to the stream (a new entry for the same job). KEYS: stream, job.
# ARGV: entry id, group, job id.
RELEASE = """
if redis.call('EXISTS', KEYS[2]) == 1 then
  local entry = redis.call('XADD', KEYS[1], '*', 'id', ARGV[3])
  redis.call('HSET', KEYS[2], 'entry', entry)
end
redis.call('XACK', KEYS[1], ARGV[2], ARGV[1])
redis.call('XDEL', KEYS[1], ARGV[1])
return 1
"""


# Count a content-creating request in every window, or say how long until there may be room (bot/limits.py's
# `verdict`, the same rule). KEYS: one sorted set per window (members "<repo>|<uuid>").
# ARGV: now ms, member uuid, repo ("" for none), then (window ms, limit) per key.
WINDOW_TAKE = """
local now = tonumber(ARGV[1])
local repo = ARGV[3]
local wait = 0
for i, key in ipairs(KEYS) do
  local window = tonumber(ARGV[2 + 2 * i])
  local limit = tonumber(ARGV[3 + 2 * i])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  local items = redis.call('ZRANGE', key, 0, -1, 'WITHSCORES')
  local times, repos = {}, {}
  for j = 1, #items, 2 do
    local sep = string.find(items[j], '|', 1, true)
    table.insert(repos, sep and string.sub(items[j], 1, sep - 1) or '')
    table.insert(times, tonumber(items[j + 1]))
  end
  local total = #times
  local w = 0
  if total >= limit then
    w = times[total - limit + 1] + window - now
  elseif repo ~= '' then
    local keep = 0
    if limit > 1 then keep = math.max(1, math.floor(limit / 8)) end
    local mine, seen, active = {}, {}, 0
    for j = 1, total do
      if repos[j] == repo then table.insert(mine, times[j]) end
      if repos[j] ~= '' and not seen[repos[j]] then seen[repos[j]] = true; active = active + 1 end
    end
    if not seen[repo] then active = active + 1 end
    if #mine >= limit - keep then
      w = mine[#mine - (limit - keep) + 1] + window - now
    elseif total >= limit - keep and #mine >= limit / active then
      w = times[total - (limit - keep) + 1] + window - now
    end
  end
  if w > wait then wait = w end
end
if wait > 0 then return math.ceil(wait) end
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, now, repo .. '|' .. ARGV[2])
  redis.call('PEXPIRE', key, tonumber(ARGV[2 + 2 * i]))
end
return 0
"""


class RedisWindows:
    """bot/limits.py's windows in Redis, shared by every replica."""

    def __init__(self, client: aioredis.Redis, prefix: str, clock: Callable[[], float] = time.time) -> None:
        self._r = client
        self._p = prefix
        self._clock = clock
        self._take = client.register_script(WINDOW_TAKE)

    def _keys(self, installation_id: int | str, limits: tuple[tuple[float, int], ...]) -> list[str]:
        return [f"{self._p}win:{installation_id}:{int(w)}" for w, _ in limits]

    async def take(self, installation_id: int | str, limits: tuple[tuple[float, int], ...], repo: str = "") -> float:
        args: list[Any] = [int(self._clock() * 1000), uuid.uuid4().hex, repo]
        for window, limit in limits:
            args += [int(window * 1000), limit]
        wait_ms = await self._take(keys=self._keys(installation_id, limits), args=args)
        return float(wait_ms) / 1000.0

    async def used(self, installation_id: int | str, limits: tuple[tuple[float, int], ...]) -> list[int]:
        now = int(self._clock() * 1000)
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

    async def forget(self, installation_id: int, token: str | None = None) -> None:
        key = f"{self._p}token:{installation_id}"
        if token is not None:
            current = await self.get(installation_id)
            if current is None or current.token != token:
                return  # another replica has fetched a new one already
        await self._r.delete(key)

    @contextlib.asynccontextmanager
    async def lock(self, installation_id: int) -> AsyncIterator[None]:
        # One replica fetches; the others wait (at most 10 s, GitHub answers in well under that).
        async with self._r.lock(f"{self._p}tokenlock:{installation_id}", timeout=10, blocking_timeout=10):
            yield


_REDIS_ERRORS = (OSError, aioredis.RedisError)


@contextlib.contextmanager
def _storage() -> Iterator[None]:
    try:
        yield
    except _REDIS_ERRORS as exc:
        raise StorageUnavailable(f"Redis: {type(exc).__name__}: {exc}") from exc


class RedisDeliveries:
    def __init__(self, client: aioredis.Redis, prefix: str) -> None:
        self._r = client
        self._p = prefix

    async def begin(self, delivery: str, digest: str) -> bool:
        keys = [f"{self._p}delivery:{k}" for k in (delivery, digest) if k]
        with _storage():
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

    async def forget(self, delivery: str, digest: str) -> None:
        with _storage():
            await self._r.delete(f"{self._p}delivery:{delivery}", f"{self._p}delivery:{digest}")


class RedisHeads:
    def __init__(self, client: aioredis.Redis, prefix: str) -> None:
        self._r = client
        self._p = prefix

    async def note_head(self, pr: str, repo: str, number: int, head: str) -> None:
        with _storage():
            async with self._r.pipeline(transaction=True) as pipe:
                pipe.set(f"{self._p}latest:{pr}", head, ex=HEAD_TTL_S)
                pipe.set(f"{self._p}prhead:{repo}:{head}", number, ex=HEAD_TTL_S)
                await pipe.execute()

    async def latest_head(self, pr: str) -> str | None:
        with _storage():
            value = await self._r.get(f"{self._p}latest:{pr}")
        return str(value) if value is not None else None

    async def pr_for_head(self, repo: str, head: str) -> int | None:
        with _storage():
            value = await self._r.get(f"{self._p}prhead:{repo}:{head}")
        return int(value) if value is not None else None

    async def last_recheck(self, pr: str) -> tuple[str, float] | None:
        with _storage():
            raw = await self._r.get(f"{self._p}recheck:{pr}")
        if raw is None:
            return None
        data = json.loads(raw)
        return str(data["state"]), float(data["at"])

    async def note_recheck(self, pr: str, state: str, at: float) -> None:
        with _storage():
            await self._r.set(f"{self._p}recheck:{pr}", json.dumps({"state": state, "at": at}), ex=HEAD_TTL_S)


class RedisJobs:
    def __init__(
        self,
        client: aioredis.Redis,
        prefix: str,
        concurrency: int = 4,
        visibility_timeout_s: float = 30.0,
        clock: Clock = SYSTEM_CLOCK,
        retry_base_s: float = RETRY_BASE_S,
    ) -> None:
        self._r = client
        self._p = prefix
        self._stream = self._p + "jobs"
        self._delayed = self._p + "delayed"
        self._concurrency = concurrency
        self._vt_ms = int(visibility_timeout_s * 1000)
        self._clock = clock
        self._retry_base_s = retry_base_s
        self.consumer = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self._submit = client.register_script(SUBMIT)
        self._claim = client.register_script(CLAIM)
        self._renew = client.register_script(RENEW)
        self._finish = client.register_script(FINISH)
        self._put_aside_script = client.register_script(PUT_ASIDE)
        self._promote = client.register_script(PROMOTE)
        self._reap = client.register_script(REAP)
        self._release = client.register_script(RELEASE)
        self._runner: Runner | None = None
        self.supervisor = Supervisor("redis-queue", clock)
        self._running: set[asyncio.Task[None]] = set()
        self._active = 0
        self._stopping = False
        self._gate: asyncio.Semaphore | None = None
        self.loop_errors: dict[str, str] = {}  # loop -> its last Redis error, while it fails

    # -- start-up ------------------------------------------------------------------------------------------
    async def open(self, runner: Runner | None) -> None:
        with _storage():
            try:
                await self._r.xgroup_create(self._stream, GROUP, id="0", mkstream=True)
            except ResponseError as exc:
                if "BUSYGROUP" not in str(exc):
                    raise
        self._runner = runner
        if runner is None:
            return
        with _storage():
            # Listed in the group from the start (Redis adds a consumer only once it is handed an entry).
            await self._r.xgroup_createconsumer(self._stream, GROUP, self.consumer)
        self._gate = asyncio.Semaphore(self._concurrency)
        self.supervisor.loop("read", self._read_loop)
        self.supervisor.loop("takeover", self._takeover_loop)
        self.supervisor.loop("promote", self._promote_loop)
        self.supervisor.loop("reap", self._reap_loop)
        log.info("worker %s consuming %s (visibility timeout %.0f s)", self.consumer, self._stream, self._vt_ms / 1e3)

    # -- jobs ----------------------------------------------------------------------------------------------
    def _head_key(self, job: Job) -> str:
        return f"{self._p}head:{job.pr}:{job.head}" if job.head and not job.force else ""

    async def submit(self, job: Job) -> str:
        head_key = self._head_key(job)
        keys = [head_key or f"{self._p}head:-", f"{self._p}waiting:{job.pr}", f"{self._p}job:{job.id}", self._stream]
        recheck = "1" if job.joins_waiting else "0"
        args = [job.id, json.dumps(job.to_json()), "1" if head_key else "0", HEAD_TTL_S, self._p, recheck]
        with _storage():
            return str(await self._submit(keys=keys, args=args))

    async def depth(self) -> int:
        """Entries in the stream (jobs waiting or running on any worker; finished ones are deleted) and jobs
        waiting on GitHub."""
        with _storage():
            async with self._r.pipeline(transaction=False) as pipe:
                pipe.xlen(self._stream)
                pipe.zcard(self._delayed)
                ready, delayed = await pipe.execute()
        return int(ready) + int(delayed)

    async def waiting_on_github(self) -> list[Waiting]:
        with _storage():
            items: Any = await self._r.zrange(self._delayed, 0, 99, withscores=True)
            out = []
            for job_id, due in items:
                raw = await self._r.hget(f"{self._p}job:{job_id}", "job")
                if raw is None:
                    continue
                job = Job.from_json(json.loads(raw))
                out.append(Waiting(job.pr, job.head, job.retries, job.failing_since, float(due) / 1000, job.error))
        return out

    def running(self) -> int:
        return self._active

    def problems(self) -> list[str]:
        out = [f"background loop {name} is dead: {why}" for name, why in self.supervisor.dead.items()]
        out += [f"{name}: {why}" for name, why in self.loop_errors.items()]
        return out

    def _failing(self, loop: str, exc: BaseException | None) -> None:
        if exc is None:
            self.loop_errors.pop(loop, None)
        else:
            self.loop_errors[loop] = f"Redis unreachable ({type(exc).__name__})"

    async def _read_loop(self) -> None:
        assert self._gate is not None
        while not self._stopping:
            await self._gate.acquire()
            try:
                got: Any = await self._r.xreadgroup(
                    GROUP, self.consumer, {self._stream: ">"}, count=1, block=READ_BLOCK_MS
                )
            except _REDIS_ERRORS as exc:
                self._gate.release()
                self._failing("reading the queue", exc)
                log.warning("reading the queue failed (%s); trying again", exc)
                await asyncio.sleep(1)
                continue
            except BaseException:
                self._gate.release()
                raise
            self._failing("reading the queue", None)
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
                    self._stream, GROUP, self.consumer, min_idle_time=self._vt_ms, start_id="0-0", count=1
                )
            except _REDIS_ERRORS as exc:
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

    async def promote_due(self) -> int:
        """Moves the jobs whose retry is due back to the stream; how many."""
        now_ms = int(self._clock.time() * 1000)
        return int(await self._promote(keys=[self._delayed, self._stream], args=[now_ms, self._p, PROMOTE_BATCH]))

    async def _promote_loop(self) -> None:
        while not self._stopping:
            try:
                await self.promote_due()
                self._failing("moving due retries", None)
            except _REDIS_ERRORS as exc:
                self._failing("moving due retries", exc)
                log.warning("moving due retries failed (%s)", exc)
            await self._clock.sleep(PROMOTE_EVERY_S)

    async def reap(self) -> int:
        """Removes dead consumers from the group (nothing pending, silent for REAP_IDLE_S); how many."""
        idle_ms = int(max(REAP_IDLE_S * 1000, 3 * self._vt_ms, 3 * READ_BLOCK_MS))
        return int(await self._reap(keys=[self._stream], args=[GROUP, idle_ms, self.consumer]))

    async def _reap_loop(self) -> None:
        while not self._stopping:
            await asyncio.sleep(max(REAP_IDLE_S, 3 * self._vt_ms / 1000, 3 * READ_BLOCK_MS / 1000) / 2)
            try:
                removed = await self.reap()
            except _REDIS_ERRORS as exc:
                log.warning("looking for dead consumers failed (%s)", exc)
                continue
            if removed:
                log.info("removed %d dead consumer(s) from the queue's group", removed)

    def _owner(self, job_id: str) -> str:
        return f"{job_id}|{self.consumer}"

    def _spawn(self, entry_id: str, job_id: str) -> None:
        task = self.supervisor.spawn(f"job {job_id}", self._handle(entry_id, job_id))
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    async def _handle(self, entry_id: str, job_id: str) -> None:
        assert self._gate is not None and self._runner is not None
        heartbeat: asyncio.Task[None] | None = None
        # While the job only waits for room in the installation's window, its slot serves another job.
        token = HELD.set(Lender(self._gate.release, self._gate.acquire))
        try:
            heartbeat = self.supervisor.spawn(f"heartbeat {job_id}", self._heartbeat(entry_id, job_id))
            await self._process(entry_id, job_id)
        finally:
            HELD.reset(token)
            if heartbeat is not None:
                heartbeat.cancel()
            self._gate.release()

    async def _heartbeat(self, entry_id: str, job_id: str) -> None:
        """Keeps the entry ours (its idle time reset) and the PR lease alive while the job runs."""
        with contextlib.suppress(asyncio.CancelledError):
            while True:
                await asyncio.sleep(self._vt_ms / 3000)
                try:
                    await self._r.xclaim(self._stream, GROUP, self.consumer, 0, [entry_id], justid=True)
                    raw = await self._r.hget(f"{self._p}job:{job_id}", "job")
                    if raw:
                        pr = json.loads(raw)["pr"]
                        await self._renew(keys=[f"{self._p}running:{pr}"], args=[self._owner(job_id), self._vt_ms])
                except _REDIS_ERRORS as exc:
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
        claims = int(await self._r.hget(job_key, "attempts") or 1)
        crashes = claims - 1 - job.retries  # claims that were neither the first nor a retry: a worker died
        if crashes > 0:
            job = Job.from_json({**job.to_json(), "attempts": crashes})
            if crashes >= MAX_ATTEMPTS:
                log.error("job %s was taken over %d times; concluding its check run instead", job.id, crashes)
                job = Job.from_json({**job.to_json(), "kind": CONCLUDE})
        result = FAILED
        self._active += 1
        try:
            result = await self._runner(job)
        except asyncio.CancelledError:
            log.warning("job %s for %s cancelled", job.id, job.pr)
            raise
        except Exception:
            log.exception("job %s for %s failed", job.id, job.pr)
        finally:
            try:
                await asyncio.shield(self._settle(entry_id, job, result))
            finally:
                self._active -= 1

    async def _settle(self, entry_id: str, job: Job, result: RunResult) -> None:
        """Records how the job ended, until Redis takes it (a job is not lost to a Redis blip)."""
        delay = 0.5
        while True:
            try:
                if result.verdict == RETRY:
                    await self._put_aside(entry_id, job, result.error)
                else:
                    await self._finish_job(entry_id, job, result.verdict == DONE)
                self._failing("recording a finished job", None)
                return
            except _REDIS_ERRORS as exc:
                self._failing("recording a finished job", exc)
                log.error("recording job %s failed (%s); trying again in %.1f s", job.id, exc, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 30.0)

    async def _put_aside(self, entry_id: str, job: Job, error: str) -> None:
        now = self._clock.time()
        again = job.failed_again(now, error)
        due_ms = int((now + retry_delay(again.retries, self._retry_base_s)) * 1000)
        await self._put_aside_script(
            keys=[f"{self._p}job:{job.id}", f"{self._p}running:{job.pr}", self._stream, self._delayed],
            args=[self._owner(job.id), json.dumps(again.to_json()), due_ms, job.id, entry_id, GROUP],
        )

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
        await drain_tasks(self._running, timeout)
        await self.supervisor.cancel_all()
        if self._runner is not None:
            await self._leave()

    async def _leave(self) -> None:
        """Puts back what this worker still holds and leaves the consumer group."""
        try:
            pending: Any = await self._r.xpending_range(self._stream, GROUP, "-", "+", 1000, consumername=self.consumer)
            for item in pending:
                entry_id = item["message_id"]
                entries: Any = await self._r.xrange(self._stream, entry_id, entry_id)
                job_id = entries[0][1].get("id", "") if entries else ""
                await self._release(keys=[self._stream, f"{self._p}job:{job_id}"], args=[entry_id, GROUP, job_id])
            await self._r.xgroup_delconsumer(self._stream, GROUP, self.consumer)
        except _REDIS_ERRORS as exc:
            log.warning("could not leave the consumer group (%s); the others remove this consumer later", exc)


class RedisStore:
    """The three roles over one Redis (bot/jobs.py), and what replicas share: tokens and windows."""

    def __init__(
        self,
        url: str,
        prefix: str = "npu-review",
        concurrency: int = 4,
        visibility_timeout_s: float = 30.0,
        clock: Clock = SYSTEM_CLOCK,
        retry_base_s: float = RETRY_BASE_S,
    ) -> None:
        self._r: aioredis.Redis = aioredis.from_url(url, decode_responses=True)
        p = prefix.rstrip(":") + ":"
        self.deliveries = RedisDeliveries(self._r, p)
        self.heads = RedisHeads(self._r, p)
        self.jobs = RedisJobs(self._r, p, concurrency, visibility_timeout_s, clock, retry_base_s)
        self.shared: SharedState | None = SharedState(
            tokens=RedisTokens(self._r, p), windows=RedisWindows(self._r, p, clock.time)
        )

    def problems(self) -> list[str]:
        return self.jobs.problems()

    async def ping(self) -> str | None:
        try:
            await asyncio.wait_for(self._r.ping(), PING_TIMEOUT_S)
        except (*_REDIS_ERRORS, TimeoutError) as exc:
            return f"Redis does not answer ({type(exc).__name__})"
        return None

    async def close(self) -> None:
        await self._r.aclose()
