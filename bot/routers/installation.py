"""Installation events: logged, and the status page's list of installations refreshed (tokens are fetched on
demand)."""

from __future__ import annotations

import logging
from typing import Any

from gidgethub import sansio
from gidgethub.routing import Router

from npu_review.bot.services import Intake, Services

log = logging.getLogger(__name__)
router = Router()


@router.register("installation")
@router.register("installation_repositories")
async def on_installation(event: sansio.Event, services: Services, intake: Intake) -> None:
    services.forget_installations()
    found = event.data.get("installation")
    inst: dict[str, Any] = found if isinstance(found, dict) else {}
    listed = event.data.get("repositories") or event.data.get("repositories_added") or []
    repos = listed if isinstance(listed, list) else []
    log.info(
        "%s %s: installation %s on %s (%d repositories)",
        event.event,
        event.data.get("action"),
        inst.get("id"),
        account.get("login") if isinstance(account := inst.get("account"), dict) else None,
        len(repos),
    )
