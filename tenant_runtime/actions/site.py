"""Site-level actions: the site's settings and its example content."""

from __future__ import annotations

from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlmodel import Session

from tenant_runtime import audit
from tenant_runtime.actions.operations import new_operation, new_operation_id
from tenant_runtime.errors import BadRequest
from tenant_runtime.ids import utcnow
from tenant_runtime.workflows import SeedExampleSiteParameters
from tenant_runtime.workspace.access import Actor
from tenant_runtime.workspace.models import Operation, SiteState


def request_seed(tx: Session, tenant: str, actor: Actor) -> Operation:
    """Queue the seed_example_site flow for this tenant."""
    actor.require("site.admin")
    operation = new_operation(tx, actor, SeedExampleSiteParameters(tenant=tenant, operation_id=new_operation_id()))
    audit.record(tx, "site.seed", actor, "site", tenant, operation_id=operation.id)
    return operation


def configure_site(tx: Session, actor: Actor, *, title: str | None = None, timezone: str | None = None) -> SiteState:
    """Set the site's title and timezone (an IANA name, checked here)."""
    actor.require("site.admin")
    state = tx.get(SiteState, 1) or SiteState()
    if title is not None:
        state.title = title.strip()[:200]
    if timezone is not None:
        try:
            ZoneInfo(timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise BadRequest("Unknown timezone.", details={"timezone": timezone}, code="invalid_timezone") from None
        state.timezone = timezone
    state.generation += 1
    state.updated_at = utcnow()
    tx.add(state)
    audit.record(tx, "site.configure", actor, "site", "site", title=state.title, timezone=state.timezone)
    return state
