"""What every dashboard page needs: the signed-in principal and the site it looks at."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from litestar import Request

from control_plane.auth import Principal
from control_plane.container import Services
from control_plane.dashboard.errors import SignInRequired
from control_plane.dashboard.session import signed_in_token_id


def provide_signed_in(request: Request[Any, Any, Any], services: Services) -> Principal:
    """The session's principal, resolved again on every request (a revoked token ends the session at once);
    no or a revoked sign-in raises ``SignInRequired`` (→ the sign-in form)."""
    token_id = signed_in_token_id(request.session)
    principal = services.tokens.resolve_id(token_id) if token_id else None
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
    status_reason: str | None = None  # why the operator suspended it, shown on every page

    def can(self, permission: str) -> bool:
        """Whether to offer an action; the command layer still decides."""
        return permission in self.permissions


def site_for(services: Services, principal: Principal, tenant: str) -> Site:
    """The site ``tenant`` as ``principal`` sees it; another tenant's site is NotFound."""
    actor = principal.tenant_actor(tenant)
    row = services.tenants.get(tenant)
    return Site(
        slug=row.slug,
        name=row.name,
        status=row.status,
        permissions=actor.permissions,
        public_url=f"{services.settings.runtime.site_url}/{row.slug}",
        status_reason=row.status_reason,
    )


__all__ = ["Site", "provide_signed_in", "site_for"]
