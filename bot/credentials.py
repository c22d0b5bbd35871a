"""The App's credentials file: written once by the setup page, readable by the server's user only (mode 0600)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from npu_review.bot.settings import AppCredentials, Secret, SettingsError

FILE_MODE = 0o600
DIR_MODE = 0o700
FORMAT_VERSION = 1


def credentials_from_conversion(data: dict[str, Any]) -> AppCredentials:
    """The credentials in GitHub's answer to `POST /app-manifests/{code}/conversions`."""
    try:
        owner = data.get("owner") or {}
        return AppCredentials(
            app_id=int(data["id"]),
            slug=str(data["slug"]),
            name=str(data.get("name") or data["slug"]),
            html_url=str(data["html_url"]),
            owner=str(owner.get("login") or ""),
            private_key=Secret(str(data["pem"])),
            webhook_secret=Secret(str(data["webhook_secret"] or "")),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"GitHub's answer lacks the App's {exc}") from None


def write_credentials(path: Path, creds: AppCredentials) -> None:
    """Write atomically: a new file created with mode 0600 (never wider, whatever the umask), then renamed."""
    path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    doc = {
        "version": FORMAT_VERSION,
        "app_id": creds.app_id,
        "slug": creds.slug,
        "name": creds.name,
        "html_url": creds.html_url,
        "owner": creds.owner,
        "private_key": creds.private_key.reveal(),
        "webhook_secret": creds.webhook_secret.reveal(),
    }
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)  # O_CREAT's mode is masked by the umask; this is exact
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def load_credentials(path: Path) -> AppCredentials | None:
    """The credentials the setup page stored, None when there is no file yet. A file others may read, or one
    that is not ours, stops start-up (SettingsError) rather than being used."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SettingsError(f"cannot read the credentials file {path}: {exc.strerror}") from None
    if stat.S_IMODE(st.st_mode) & 0o077:
        raise SettingsError(
            f"the credentials file {path} is readable by other users (mode {stat.S_IMODE(st.st_mode):o}): "
            f"run `chmod 600 {path}`"
        )
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        if doc.get("version") != FORMAT_VERSION:
            raise ValueError(f"unknown format version {doc.get('version')!r}")
        return AppCredentials(
            app_id=int(doc["app_id"]),
            slug=str(doc["slug"]),
            name=str(doc["name"]),
            html_url=str(doc["html_url"]),
            owner=str(doc.get("owner", "")),
            private_key=Secret(str(doc["private_key"])),
            webhook_secret=Secret(str(doc["webhook_secret"])),
        )
    except OSError as exc:
        raise SettingsError(f"cannot read the credentials file {path}: {exc.strerror}") from None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise SettingsError(
            f"the credentials file {path} is not valid ({exc}); move it away to register the App again"
        ) from None
