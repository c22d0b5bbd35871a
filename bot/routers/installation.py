"""Installation events: logged, and the status page's list of installations refreshed (tokens are fetched on
demand)."""

from __future__ import annotations

import logging

from gidgethub import sansio
from gidgethub.routing import Router

from npu_review.bot.services import Services

log = logging.getLogger(__name__)
router = Router()


@router.register("installation")
@router.register("installation_repositories")
async def on_installation(event: sansio.Event, services: Services) -> None:
    services.forget_installations()
    inst = event.data.get("installation", {})
    repos = event.data.get("repositories") or event.data.get("repositories_added") or []
    log.info(
        "%s %s: installation %s on %s (%d repositories)",
        event.event,
        event.data.get("action"),
        inst.get("id"),
        (inst.get("account") or {}).get("login"),
        len(repos),
    )
