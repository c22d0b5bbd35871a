"""The App's configuration, read once from the environment into a frozen object whose repr hides secrets."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

DEFAULT_API_URL = "https://api.github.com"
DEFAULT_WEB_URL = "https://github.com"
DEFAULT_PORT = 8080
DEFAULT_GITCODE_API_URL = "https://api.gitcode.com"
# Where the setup page stores the App's credentials (mode 0600) when no other place is named.
DEFAULT_CREDENTIALS_FILE = "~/.config/npu-review/app-credentials.json"
# The variables that carry the App's credentials; with none of them set, the server runs its setup page.
CREDENTIAL_VARIABLES = ("GITHUB_APP_ID", "GITHUB_PRIVATE_KEY", "GITHUB_PRIVATE_KEY_PATH", "GITHUB_WEBHOOK_SECRET")
# The embedded queue's file, relative to the working directory (the Docker image sets /data/queue.sqlite3).
DEFAULT_QUEUE = "sqlite:///npu-review-queue.sqlite3"


class SettingsError(ValueError):
    """A required setting is missing or malformed; the message says which and how to fix it."""


class Secret:
    """A string that never shows itself in logs, reprs or tracebacks' locals."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


@dataclass(frozen=True)
class Settings:
    """Everything the server needs. Before the App is registered (the setup page), app_id is "" and the two
    secrets are empty; `with_credentials` gives the settings of the registered App."""

    app_id: str
    private_key: Secret
    webhook_secret: Secret
    api_url: str = DEFAULT_API_URL
    # GitHub's web pages (the manifest form, the App's installation page); GitHub Enterprise: its host.
    web_url: str = DEFAULT_WEB_URL
    # This server's public address (for the manifest's webhook and redirect URLs); "" = the setup page's own.
    public_url: str = ""
    credentials_file: Path | None = None
    # Shown on the status page only to who presents it; None = the status page shows summary counts only.
    status_token: Secret | None = None
    setup_token: Secret | None = None  # guards the setup page; None = one is made at start-up and logged
    app_slug: str = ""  # known when the setup page registered the App (the installation link)
    app_html_url: str = ""
    port: int = DEFAULT_PORT
    log_json: bool = False
    # Work limits (see bot/review.py): how many reviews run at once, and the longest a review may take.
    max_concurrent_reviews: int = 4
    review_timeout_s: float = 600.0
    # First delay before a job GitHub could not serve is tried again (then doubling, up to 5 minutes; bot/jobs.py).
    retry_base_s: float = 5.0
    # Processes that run the rules (off the event loop that acknowledges deliveries); -1: one per core, at most
    # max_concurrent_reviews; 0: a thread of the process that runs the reviews.
    review_processes: int = -1
    # With the embedded queue (a SQLite file), the reviews run in a worker process that `npu-review serve` starts
    # and supervises beside itself (bot/embedded.py), so that no review's GitHub I/O or CPU shares the event loop
    # that acknowledges deliveries; False runs them in the server's own process.
    worker_process: bool = True
    # Where jobs wait: sqlite:///path (embedded, the default) or redis://host:port/db (several replicas).
    # The dataclass default keeps them in memory (programmatic use); from_env defaults to a file.
    queue_url: str = "sqlite://"
    # Keys of the Redis queue start with this (several Apps, or tests, can share one Redis).
    redis_prefix: str = "npu-review"
    # A Redis job whose worker stopped renewing its lease this long ago is taken over by another worker.
    visibility_timeout_s: float = 30.0
    # Reading a request: its headers (from the connection's start) and its body must arrive within these.
    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    # A review finishing within this creates its check run completed (one call; see bot/review.py).
    quick_review_s: float = 3.0
    # First backoff delay before retrying a failed GitHub call (then doubling, with jitter).
    backoff_base_s: float = 0.5
    # Content-creating requests per installation, in GitHub's one-minute and one-hour windows (bot/limits.py).
    mutations_per_minute: int = 70
    mutations_per_hour: int = 450
    # GitCode merge requests (bot/gitcode.py): a personal access token and the webhook's signing key; both or
    # neither. Password mode (X-GitCode-Token equal to the secret) only with gitcode_allow_password.
    gitcode_token: Secret | None = None
    gitcode_webhook_secret: Secret | None = None
    gitcode_api_url: str = DEFAULT_GITCODE_API_URL
    gitcode_allow_password: bool = False
    # The gate labels set on a reviewed merge request; content-creating GitCode calls a minute per owner (assumed:
    # GitCode documents no number).
    gitcode_pass_label: str = "npu-review: pass"
    gitcode_fail_label: str = "npu-review: fail"
    gitcode_writes_per_minute: int = 60
    extra: Mapping[str, str] = field(default_factory=dict)

    @property
    def uses_redis(self) -> bool:
        return self.queue_url.startswith(("redis://", "rediss://", "unix://"))

    @property
    def queue_in_memory(self) -> bool:
        """An embedded queue that lives in the process's memory (no file another process could share)."""
        return not self.uses_redis and self.queue_url.removeprefix("sqlite://") in ("", "/", "/:memory:")

    @property
    def graphql_url(self) -> str:
        return self.api_url.rstrip("/") + "/graphql"

    @property
    def registered(self) -> bool:
        """The GitHub App's credentials are known."""
        return bool(self.app_id)

    @property
    def gitcode(self) -> bool:
        """GitCode merge requests are served (its token and webhook secret are set)."""
        return self.gitcode_token is not None and self.gitcode_webhook_secret is not None

    @property
    def serving(self) -> bool:
        """Deliveries are taken: from GitHub (a registered App), from GitCode, or both."""
        return self.registered or self.gitcode

    def with_credentials(self, creds: AppCredentials) -> Settings:
        return replace(
            self,
            app_id=str(creds.app_id),
            private_key=creds.private_key,
            webhook_secret=creds.webhook_secret,
            app_slug=creds.slug,
            app_html_url=creds.html_url,
        )


def settings_to_json(settings: Settings) -> dict[str, Any]:
    """Every field, secrets revealed: for the embedded worker process only, over the socket it shares with its
    server (never logged, never written)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(settings):
        value = getattr(settings, f.name)
        if isinstance(value, Secret):
            value = {"secret": value.reveal()}
        elif isinstance(value, Path):
            value = {"path": str(value)}
        elif isinstance(value, Mapping):
            value = {"mapping": dict(value)}
        out[f.name] = value
    return out


def settings_from_json(data: Mapping[str, Any]) -> Settings:
    def value(v: Any) -> Any:
        if isinstance(v, dict):
            if "secret" in v:
                return Secret(str(v["secret"]))
            if "path" in v:
                return Path(v["path"])
            return dict(v["mapping"])
        return v

    names = {f.name for f in dataclasses.fields(Settings)}
    return Settings(**{k: value(v) for k, v in data.items() if k in names})


@dataclass(frozen=True)
class AppCredentials:
    """What GitHub's manifest conversion hands out and the credentials file keeps (the OAuth client secret,
    which the App never uses, is not kept)."""

    app_id: int
    slug: str
    name: str
    html_url: str
    owner: str
    private_key: Secret
    webhook_secret: Secret


def _required(env: Mapping[str, str], name: str, hint: str) -> str:
    value = env.get(name, "").strip()
    if not value:
        raise SettingsError(f"{name} is not set: {hint}")
    return value


def from_env(env: Mapping[str, str] | None = None) -> Settings:
    """The settings from the environment. With none of the credential variables set, the App's credentials come
    from the credentials file the setup page wrote; without that file either, the settings are unregistered
    (app_id "") and `npu-review serve` serves its setup page. A credential variable set alone is an error."""
    env = os.environ if env is None else env
    server = replace(_server_settings(env), **_gitcode_settings(env))
    if not any(env.get(name, "").strip() for name in CREDENTIAL_VARIABLES):
        assert server.credentials_file is not None
        from npu_review.bot.credentials import load_credentials  # the file format lives with its writer

        creds = load_credentials(server.credentials_file)
        return server if creds is None else server.with_credentials(creds)
    app_id = _required(env, "GITHUB_APP_ID", "the numeric App ID from the App's settings page")
    if not app_id.isdigit():
        raise SettingsError(f"GITHUB_APP_ID must be a number, got {app_id!r}")
    key = env.get("GITHUB_PRIVATE_KEY", "").strip()
    key_path = env.get("GITHUB_PRIVATE_KEY_PATH", "").strip()
    if not key and key_path:
        try:
            key = Path(key_path).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise SettingsError(f"GITHUB_PRIVATE_KEY_PATH: cannot read {key_path}: {exc.strerror}") from None
    if not key:
        raise SettingsError("set GITHUB_PRIVATE_KEY (PEM text) or GITHUB_PRIVATE_KEY_PATH (a .pem file)")
    if "PRIVATE KEY" not in key:
        raise SettingsError("the private key is not a PEM private key (expected '-----BEGIN ... PRIVATE KEY-----')")
    secret = _required(env, "GITHUB_WEBHOOK_SECRET", "the webhook secret set in the App's settings")
    return replace(server, app_id=app_id, private_key=Secret(key), webhook_secret=Secret(secret))


def _gitcode_settings(env: Mapping[str, str]) -> dict[str, Any]:
    """GITCODE_TOKEN and GITCODE_WEBHOOK_SECRET (both or neither), GITCODE_API_URL, GITCODE_ALLOW_PASSWORD."""
    token = env.get("GITCODE_TOKEN", "").strip()
    secret = env.get("GITCODE_WEBHOOK_SECRET", "").strip()
    if bool(token) != bool(secret):
        missing = "GITCODE_WEBHOOK_SECRET" if token else "GITCODE_TOKEN"
        raise SettingsError(
            f"{missing} is not set: GitCode merge requests need both GITCODE_TOKEN and GITCODE_WEBHOOK_SECRET"
        )
    labels = {
        "gitcode_pass_label": env.get("NPU_REVIEW_GITCODE_PASS_LABEL", "").strip() or "npu-review: pass",
        "gitcode_fail_label": env.get("NPU_REVIEW_GITCODE_FAIL_LABEL", "").strip() or "npu-review: fail",
    }
    if labels["gitcode_pass_label"] == labels["gitcode_fail_label"]:
        raise SettingsError("NPU_REVIEW_GITCODE_PASS_LABEL and NPU_REVIEW_GITCODE_FAIL_LABEL must differ")
    return {
        "gitcode_token": Secret(token) if token else None,
        "gitcode_webhook_secret": Secret(secret) if secret else None,
        "gitcode_api_url": _url(env, "GITCODE_API_URL", DEFAULT_GITCODE_API_URL),
        "gitcode_allow_password": _flag(env, "GITCODE_ALLOW_PASSWORD", False),
        "gitcode_writes_per_minute": _count(env, "NPU_REVIEW_GITCODE_WRITES_PER_MINUTE", 60),
        **labels,
    }


def _url(env: Mapping[str, str], name: str, default: str) -> str:
    value = env.get(name, "").strip() or default
    if value and not value.startswith(("https://", "http://")):
        raise SettingsError(f"{name} must be an http(s) URL, got {value!r}")
    return value.rstrip("/")


def _server_settings(env: Mapping[str, str]) -> Settings:
    """Everything but the App's credentials."""
    port_text = env.get("PORT", "").strip() or str(DEFAULT_PORT)
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise SettingsError(f"PORT must be a port number, got {port_text!r}")
    status_token = env.get("NPU_REVIEW_STATUS_TOKEN", "").strip()
    setup_token = env.get("NPU_REVIEW_SETUP_TOKEN", "").strip()
    creds_path = env.get("NPU_REVIEW_CREDENTIALS_FILE", "").strip() or DEFAULT_CREDENTIALS_FILE
    queue_url = env.get("NPU_REVIEW_QUEUE", "").strip() or DEFAULT_QUEUE
    if not queue_url.startswith(("sqlite://", "redis://", "rediss://", "unix://")):
        raise SettingsError(
            "NPU_REVIEW_QUEUE must be sqlite:///path/to/file or redis://host:port/db, got " + repr(queue_url[:40])
        )
    return Settings(
        app_id="",
        private_key=Secret(""),
        webhook_secret=Secret(""),
        api_url=_url(env, "GITHUB_API_URL", DEFAULT_API_URL),
        web_url=_url(env, "GITHUB_URL", DEFAULT_WEB_URL),
        public_url=_url(env, "NPU_REVIEW_PUBLIC_URL", ""),
        credentials_file=Path(creds_path).expanduser(),
        status_token=Secret(status_token) if status_token else None,
        setup_token=Secret(setup_token) if setup_token else None,
        port=int(port_text),
        log_json=env.get("NPU_REVIEW_LOG_FORMAT", "").lower() == "json",
        max_concurrent_reviews=_count(env, "NPU_REVIEW_CONCURRENCY", 4),
        retry_base_s=_seconds(env, "NPU_REVIEW_RETRY_BASE_S", 5.0),
        review_processes=_processes(env, "NPU_REVIEW_PROCESSES"),
        worker_process=_flag(env, "NPU_REVIEW_WORKER_PROCESS", True),
        queue_url=queue_url,
        redis_prefix=env.get("NPU_REVIEW_REDIS_PREFIX", "").strip() or "npu-review",
        visibility_timeout_s=_seconds(env, "NPU_REVIEW_VISIBILITY_TIMEOUT_S", 30.0),
        header_timeout_s=_seconds(env, "NPU_REVIEW_HEADER_TIMEOUT_S", 10.0),
        body_timeout_s=_seconds(env, "NPU_REVIEW_BODY_TIMEOUT_S", 30.0),
        quick_review_s=_seconds(env, "NPU_REVIEW_QUICK_S", 3.0, allow_zero=True),
        backoff_base_s=_seconds(env, "NPU_REVIEW_BACKOFF_BASE_S", 0.5, allow_zero=True),
        mutations_per_minute=_count(env, "NPU_REVIEW_MUTATIONS_PER_MINUTE", 70),
        mutations_per_hour=_count(env, "NPU_REVIEW_MUTATIONS_PER_HOUR", 450),
    )


def _count(env: Mapping[str, str], name: str, default: int) -> int:
    text = env.get(name, "").strip()
    if not text:
        return default
    if not text.isdigit() or int(text) < 1:
        raise SettingsError(f"{name} must be a positive whole number, got {text!r}")
    return int(text)


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    text = env.get(name, "").strip().lower()
    if not text:
        return default
    if text not in ("0", "1", "true", "false", "yes", "no"):
        raise SettingsError(f"{name} must be 1 or 0, got {text!r}")
    return text in ("1", "true", "yes")


def _processes(env: Mapping[str, str], name: str) -> int:
    text = env.get(name, "").strip()
    if not text:
        return -1
    if not text.isdigit():
        raise SettingsError(
            f"{name} must be a whole number of processes (0: none, the rules run in a thread), got {text!r}"
        )
    return int(text)


def _seconds(env: Mapping[str, str], name: str, default: float, allow_zero: bool = False) -> float:
    text = env.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        raise SettingsError(f"{name} must be a number of seconds, got {text!r}") from None
    if value < 0 or (value == 0 and not allow_zero) or value != value:
        raise SettingsError(f"{name} must be {'zero or more' if allow_zero else 'positive'}, got {text!r}")
    return value
