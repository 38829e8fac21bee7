"""Operator actions: every operator write checks, executes and writes its audit row in one transaction.

Dotted action names, kept in the control-plane database (``operator_audit``)
and readable through ``GET /ops/audit``:

    tenant.create  tenant.suspend  tenant.resume  tenant.quota.set  tenant.retention.set
    tenant.move.start  tenant.move  tenant.move.failed  (control_plane.placement)
    token.issue    token.operator.issue
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sqlmodel import Session, select

from control_plane.auth import MEMBER_ROLES, Principal, new_member_token, new_operator_token
from control_plane.db.models import ApiToken, OperatorAudit, Tenant
from dispatch.retention import MAX_DAYS
from tenant_runtime.errors import AlreadyExists, BadRequest, Forbidden, NotFound
from tenant_runtime.ids import check_tenant_slug, utcnow

STATUSES = ("active", "suspended")
# A write to one tenant's row by an operator: (session, operator, slug, value) -> the row.
TenantWrite = Callable[[Session, Principal, str, Any], Tenant]
MAX_PUBLISHES_PER_HOUR = 1_000_000
# A tenant's retention fields, each stored as ``tenant.retention_<field>`` (None: the default).
RETENTION_FIELDS = ("succeeded_days", "failed_days", "cancelled_days")


def _operator(principal: Principal) -> str:
    if not principal.is_operator:
        raise Forbidden("Only an operator may do this.")
    return f"operator:{principal.token_id}"


def operator_actor(principal: Principal) -> str:
    """The audit name of an operator (``operator:<token id>``); anyone else is refused."""
    return _operator(principal)


def record(
    session: Session, actor: str, action: str, *, tenant: str | None, object_type: str, object_id: str, **data: Any
) -> OperatorAudit:
    """Add the audit row of an operator write to its transaction."""
    entry = OperatorAudit(
        action=action, actor=actor, tenant=tenant, object_type=object_type, object_id=object_id, data=data
    )
    session.add(entry)
    return entry


def tenant_row(session: Session, slug: str) -> Tenant:
    tenant = session.exec(select(Tenant).where(Tenant.slug == slug)).first()
    if tenant is None:
        raise NotFound(f"Tenant {slug!r} not found.", details={"tenant": slug})
    return tenant


def check_new_tenant(session: Session, slug: str, name: str) -> str:
    """A valid, unused slug and a 1-200 character name; returns the trimmed name."""
    check_tenant_slug(slug)
    name = name.strip()
    if not name or len(name) > 200:
        raise BadRequest("A site name is 1-200 characters.", details={"field": "name"})
    if session.exec(select(Tenant).where(Tenant.slug == slug)).first() is not None:
        raise AlreadyExists("A tenant with this slug exists.", details={"slug": slug})
    return name


def create_tenant(session: Session, principal: Principal, slug: str, name: str, *, publishes_per_hour: int) -> Tenant:
    """The tenant's control-plane row (its workspace is created first, idempotently, by the service)."""
    actor = _operator(principal)
    name = check_new_tenant(session, slug, name)
    tenant = Tenant(slug=slug, name=name, publishes_per_hour=publishes_per_hour)
    session.add(tenant)
    record(
        session,
        actor,
        "tenant.create",
        tenant=slug,
        object_type="tenant",
        object_id=slug,
        name=name,
        publishes_per_hour=publishes_per_hour,
    )
    return tenant


def set_status(session: Session, principal: Principal, slug: str, status: str, reason: str | None = None) -> Tenant:
    """Suspend (with the reason its editors are shown, if given) or resume (which clears it); the service
    pauses or resumes the tenant's queue first."""
    actor = _operator(principal)
    if status not in STATUSES:
        raise BadRequest("status is active or suspended.", details={"status": status, "allowed": list(STATUSES)})
    tenant = tenant_row(session, slug)
    before = tenant.status
    if status != "suspended":
        reason = None
    reason = "".join(ch for ch in (reason or "") if ch.isprintable()).strip()[:500] or None
    tenant.status, tenant.status_reason, tenant.updated_at = status, reason, utcnow()
    session.add(tenant)
    action = "tenant.suspend" if status == "suspended" else "tenant.resume"
    extra = {"reason": reason} if reason else {}
    record(session, actor, action, tenant=slug, object_type="tenant", object_id=slug, before=before, **extra)
    return tenant


def set_quota(session: Session, principal: Principal, slug: str, publishes_per_hour: int) -> Tenant:
    actor = _operator(principal)
    if not 0 <= publishes_per_hour <= MAX_PUBLISHES_PER_HOUR:
        raise BadRequest(f"publishes_per_hour is 0-{MAX_PUBLISHES_PER_HOUR}.", details={"field": "publishes_per_hour"})
    tenant = tenant_row(session, slug)
    before = tenant.publishes_per_hour
    tenant.publishes_per_hour, tenant.updated_at = publishes_per_hour, utcnow()
    session.add(tenant)
    record(
        session,
        actor,
        "tenant.quota.set",
        tenant=slug,
        object_type="tenant",
        object_id=slug,
        publishes_per_hour=publishes_per_hour,
        before=before,
    )
    return tenant


def retention_of(tenant: Tenant) -> dict[str, int | None]:
    """The tenant's own retention days per outcome (None where it keeps the default)."""
    return {name: getattr(tenant, f"retention_{name}") for name in RETENTION_FIELDS}


def set_retention(session: Session, principal: Principal, slug: str, changes: Mapping[str, int | None]) -> Tenant:
    """Override (or, with None, stop overriding) how long the tenant's finished runs stay in Prefect."""
    actor = _operator(principal)
    unknown = sorted(set(changes) - set(RETENTION_FIELDS))
    if unknown or not changes:
        raise BadRequest(
            "Give at least one of succeeded_days, failed_days, cancelled_days.",
            details={"unknown": unknown, "allowed": list(RETENTION_FIELDS)},
        )
    for name, days in changes.items():
        if days is not None and (isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_DAYS):
            raise BadRequest(f"{name} is 1-{MAX_DAYS} days, or null for the default.", details={"field": name})
    tenant = tenant_row(session, slug)
    before = retention_of(tenant)
    for name, days in changes.items():
        setattr(tenant, f"retention_{name}", days)
    tenant.updated_at = utcnow()
    session.add(tenant)
    record(
        session,
        actor,
        "tenant.retention.set",
        tenant=slug,
        object_type="tenant",
        object_id=slug,
        retention=retention_of(tenant),
        before=before,
    )
    return tenant


def issue_member_token(
    session: Session, principal: Principal, slug: str, role: str, name: str = ""
) -> tuple[str, ApiToken]:
    """A member token with ``role`` in the tenant; the audit row names the token, never its value."""
    actor = _operator(principal)
    if role not in MEMBER_ROLES:
        raise BadRequest(
            "role is owner, editor or viewer.",
            details={"role": role, "allowed": list(MEMBER_ROLES)},
            code="invalid_role",
        )
    token, row = new_member_token(session, tenant_row(session, slug), role, name=name)
    record(session, actor, "token.issue", tenant=slug, object_type="api_token", object_id=row.id, role=role)
    return token, row


def issue_operator_token(session: Session, principal: Principal, label: str = "") -> tuple[str, ApiToken]:
    actor = _operator(principal)
    token, row = new_operator_token(session, label)
    record(session, actor, "token.operator.issue", tenant=None, object_type="api_token", object_id=row.id, label=label)
    return token, row


__all__ = [
    "TenantWrite",
    "check_new_tenant",
    "create_tenant",
    "issue_member_token",
    "issue_operator_token",
    "operator_actor",
    "record",
    "retention_of",
    "set_quota",
    "set_retention",
    "set_status",
    "tenant_row",
]
