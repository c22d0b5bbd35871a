"""The App's configuration, read once from the environment into a frozen object whose repr hides secrets."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_API_URL = "https://api.github.com"
DEFAULT_PORT = 8080


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
    app_id: str
    private_key: Secret
    webhook_secret: Secret
    api_url: str = DEFAULT_API_URL
    port: int = DEFAULT_PORT
    log_json: bool = False
    # Work limits (see bot/review.py): how many reviews run at once, and the longest a review may take.
    max_concurrent_reviews: int = 4
    review_timeout_s: float = 600.0
    # First delay before concluding again a check run GitHub refused to conclude (then doubling).
    completion_retry_s: float = 30.0
    extra: Mapping[str, str] = field(default_factory=dict)

    @property
    def graphql_url(self) -> str:
        return self.api_url.rstrip("/") + "/graphql"


def _required(env: Mapping[str, str], name: str, hint: str) -> str:
    value = env.get(name, "").strip()
    if not value:
        raise SettingsError(f"{name} is not set: {hint}")
    return value


def from_env(env: Mapping[str, str] | None = None) -> Settings:
    env = os.environ if env is None else env
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
    api_url = env.get("GITHUB_API_URL", "").strip() or DEFAULT_API_URL
    if not api_url.startswith(("https://", "http://")):
        raise SettingsError(f"GITHUB_API_URL must be an http(s) URL, got {api_url!r}")
    port_text = env.get("PORT", "").strip() or str(DEFAULT_PORT)
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise SettingsError(f"PORT must be a port number, got {port_text!r}")
    return Settings(
        app_id=app_id,
        private_key=Secret(key),
        webhook_secret=Secret(secret),
        api_url=api_url.rstrip("/"),
        port=int(port_text),
        log_json=env.get("NPU_REVIEW_LOG_FORMAT", "").lower() == "json",
        completion_retry_s=_seconds(env, "NPU_REVIEW_COMPLETION_RETRY_S", 30.0),
    )


def _seconds(env: Mapping[str, str], name: str, default: float) -> float:
    text = env.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        raise SettingsError(f"{name} must be a number of seconds, got {text!r}") from None
    if value <= 0:
        raise SettingsError(f"{name} must be positive, got {text!r}")
    return value
