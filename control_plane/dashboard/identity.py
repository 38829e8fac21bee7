"""Who a dashboard session is: the session holds a token id, resolved again on every request.

Resolving per request means a revoked token or a removed membership ends the
browser session at once, exactly as it ends API access.
"""

from __future__ import annotations

from sqlalchemy import Engine
from sqlmodel import Session, select

from control_plane.db.models import ApiToken, Membership, Tenant
from control_plane.services.auth import Principal


def principal_for_token_id(engine: Engine, token_id: str) -> Principal | None:
    """The principal of an unrevoked token, or None; mirrors ``TokenService.resolve`` after the hash lookup."""
    with Session(engine) as session:
        row = session.get(ApiToken, token_id)
        if row is None or row.revoked_at is not None:
            return None
        if row.kind == "operator":
            return Principal(token_id=row.id, kind="operator")
        found = session.exec(
            select(Membership, Tenant)
            .join(Tenant, Tenant.id == Membership.tenant_id)
            .where(Membership.user_id == row.user_id, Membership.tenant_id == row.tenant_id)
        ).first()
        if found is None:
            return None
        member, tenant = found
        return Principal(token_id=row.id, kind="member", user_id=row.user_id, tenant_slug=tenant.slug,
                         role=member.role)


__all__ = ["principal_for_token_id"]
