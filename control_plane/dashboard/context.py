"""What every dashboard page needs: the signed-in principal, the site it looks at, the outbox hand-off."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from litestar import Request
from litestar.background_tasks import BackgroundTask

from control_plane.dashboard.errors import SignInRequired
from control_plane.dashboard.identity import principal_for_token_id
from control_plane.dashboard.session import signed_in_token_id
from control_plane.services.auth import Principal
from control_plane.services.commands import Outcome
from control_plane.services.container import Services


def provide_signed_in(request: Request[Any, Any, Any], services: Services) -> Principal:
    """The session's principal; no or a revoked sign-in raises ``SignInRequired`` (→ the sign-in form)."""
    token_id = signed_in_token_id(request.session)
    principal = principal_for_token_id(services.engine, token_id) if token_id else None
    if principal is None:
        raise SignInRequired("Please sign in.")
    return principal


@dataclass(frozen=True)
class Site:
    """The tenant a page shows, and what the signed-in principal may do there."""

    slug: str
    name: str
    status: str
    permissions: frozenset[str]
    public_url: str

    def can(self, permission: str) -> bool:
        """Whether to offer an action; the command layer still decides."""
        return permission in self.permissions


def site_for(services: Services, principal: Principal, tenant: str) -> Site:
    """The site ``tenant`` as ``principal`` sees it; another tenant's site is NotFound."""
    actor = principal.tenant_actor(tenant)
    row = services.tenants.get(tenant)
    return Site(slug=row.slug, name=row.name, status=row.status, permissions=actor.permissions,
                public_url=f"{services.settings.runtime.site_url}/{row.slug}")


def relay_after(services: Services, tenant: str, outcome: Outcome) -> BackgroundTask | None:
    """Hand the command's outbox to the relay after the response is sent (never waiting on Prefect)."""
    return BackgroundTask(_relay, services, tenant) if outcome.relay else None


async def _relay(services: Services, tenant: str) -> None:
    try:
        await services.relay.relay_tenant(tenant)
    except Exception as exc:  # noqa: BLE001 -- the worker's sweeper re-sends whatever is left
        services.factory.open(tenant).log.warning("relay.after_commit_failed", error=str(exc))


__all__ = ["Site", "provide_signed_in", "relay_after", "site_for"]
