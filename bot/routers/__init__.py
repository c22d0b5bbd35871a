"""One router per concern (as in bedevere), composed once in bot.app."""

from gidgethub.routing import Router

from npu_review.bot.routers import checks, installation, pull_request, recheck

router = Router(pull_request.router, recheck.router, checks.router, installation.router)

__all__ = ["router"]
