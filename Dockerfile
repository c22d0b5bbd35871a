# The npu-review GitHub App: `npu-review serve` on port 8080 (or `npu-review worker` with a Redis queue), as a
# numeric non-root user, so that Kubernetes' runAsNonRoot can verify it without resolving a name.
# The base image is pinned to a full release (add @sha256:<digest> where your registry can resolve it).
FROM python:3.12.8-slim-bookworm
LABEL org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/npu-review/npu-review"

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PORT=8080 \
    NPU_REVIEW_QUEUE=sqlite:////data/queue.sqlite3 \
    NPU_REVIEW_CREDENTIALS_FILE=/data/app-credentials.json

# git is needed by `npu-review check` (the CLI); the server itself reads everything through the API.
RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
# The App's dependencies and the build backend, pinned with their hashes (requirements/app.lock, generated from
# pyproject.toml's `app` extra by pip-compile --generate-hashes); then the package itself, from these sources only.
COPY requirements/app.lock ./requirements/
RUN pip install --require-hashes --no-deps -r requirements/app.lock
COPY pyproject.toml README.md LICENSE ./
COPY checks ./checks
COPY bot ./bot
COPY npu_review ./npu_review
RUN pip install --no-deps --no-build-isolation . \
    && pip check \
    && mkdir -p /data \
    && chown 10001:10001 /data

# The embedded queue's SQLite file lives here, and the credentials the setup page stores (mode 0600): mount a
# volume so that accepted work and the App's registration survive a new container.
VOLUME ["/data"]
USER 10001:10001
EXPOSE 8080
# On SIGTERM the App stops taking deliveries and gives running reviews 25 s (bot/app.py SHUTDOWN_DEADLINE_S);
# Docker's default stop timeout is 10 s, so run with `docker run --stop-timeout 35` (compose.yaml sets
# stop_grace_period: 35s; Kubernetes: terminationGracePeriodSeconds: 35).
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen(f'http://127.0.0.1:{os.environ.get(\"PORT\", \"8080\")}/healthz', timeout=4)"]
CMD ["npu-review", "serve"]
