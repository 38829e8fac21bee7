"""A site's members and tokens: each change checks, executes and writes its audit row in one transaction.

They live in the control-plane database (tokens are resolved there), so their audit rows do too, in
``operator_audit`` with the tenant's slug; ``GET /api/tenants/{t}/audit`` shows them beside the site's own:

    member.invite  member.role.set  member.remove  token.create  token.revoke

Two guards keep a site manageable: its last owner can be neither demoted nor removed (409 ``last_owner``),
and the last unrevoked token of its owners cannot be revoked (409 ``last_owner_token``). Both count under
a lock of the tenant's row, so two owners demoting each other at once cannot both win.
"""

from __future__ import annotations

from sqlmodel import Session, col, func, select

from control_plane.auth import new_token_for
from control_plane.db.models import ApiToken, Membership, Tenant, User
from control_plane.tenants.actions import record
from tenant_runtime.errors import AlreadyExists, Conflict, NotFound
from tenant_runtime.ids import utcnow


def _tenant_id(tenant: Tenant) -> int:
    if tenant.id is None:
        raise ValueError("the tenant has no row yet")
    return tenant.id


def _lock(session: Session, tenant: Tenant) -> None:
    """Serialise member changes of one tenant (a row lock on PostgreSQL; SQLite has one writer anyway)."""
    session.exec(select(Tenant.id).where(Tenant.id == tenant.id).with_for_update()).first()


def membership(session: Session, tenant: Tenant, member_id: str) -> tuple[Membership, User]:
    """The member's row in this tenant; a member of another tenant is not found, like a missing one."""
    found = session.exec(
        select(Membership, User)
        .join(User, col(User.id) == col(Membership.user_id))
        .where(Membership.tenant_id == _tenant_id(tenant), Membership.user_id == member_id)
    ).first()
    if found is None:
        raise NotFound(f"Member {member_id!r} not found.", details={"member_id": member_id})
    return found


def token_row(session: Session, tenant: Tenant, token_id: str) -> ApiToken:
    """One of this tenant's member tokens; any other token (another tenant's, an operator's) is not found."""
    row = session.get(ApiToken, token_id)
    if row is None or row.kind != "member" or row.tenant_id != _tenant_id(tenant):
        raise NotFound(f"Token {token_id!r} not found.", details={"token_id": token_id})
    return row


def owners(session: Session, tenant: Tenant) -> int:
    query = select(func.count()).where(Membership.tenant_id == _tenant_id(tenant), Membership.role == "owner")
    return int(session.exec(query).one())


def owner_tokens(session: Session, tenant: Tenant) -> int:
    """Unrevoked tokens held by the tenant's owners."""
    query = (
        select(func.count())
        .select_from(ApiToken)
        .join(
            Membership,
            (col(Membership.user_id) == col(ApiToken.user_id)) & (col(Membership.tenant_id) == col(ApiToken.tenant_id)),
        )
        .where(
            ApiToken.tenant_id == _tenant_id(tenant),
            Membership.role == "owner",
            col(ApiToken.revoked_at).is_(None),
        )
    )
    return int(session.exec(query).one())


def _refuse_last_owner(session: Session, tenant: Tenant, member: Membership, change: str) -> None:
    if member.role == "owner" and owners(session, tenant) <= 1:
        raise Conflict(
            f"This is the site's last owner: make another member owner before you {change} them.",
            details={"member_id": member.user_id, "owners": 1},
            code="last_owner",
        )


def invite(
    session: Session, actor: str, tenant: Tenant, *, name: str, role: str, email: str | None
) -> tuple[Membership, User, str, ApiToken]:
    """A member with ``role`` and their first token (returned once). An email already known to the
    platform joins that user to this site; the same person twice in one site is a 409 ``member_exists``."""
    tenant_id = _tenant_id(tenant)
    email = email.strip().lower() if email else None
    user = session.exec(select(User).where(User.email == email)).first() if email else None
    if user is None:
        user = User(name=name.strip(), email=email)
        session.add(user)
        session.flush()
    elif session.exec(
        select(Membership).where(Membership.user_id == user.id, Membership.tenant_id == tenant_id)
    ).first():
        raise AlreadyExists("This person is a member of the site already.", code="member_exists")
    member = Membership(user_id=user.id, tenant_id=tenant_id, role=role, name=name.strip())
    session.add(member)
    token, row = new_token_for(session, user.id, tenant_id, label="invitation")
    record(session, actor, "member.invite", tenant=tenant.slug, object_type="member", object_id=user.id, role=role)
    return member, user, token, row


def set_role(session: Session, actor: str, tenant: Tenant, member_id: str, role: str) -> tuple[Membership, User]:
    """Change a member's role (its tokens follow at once: a token's role is its member's)."""
    _lock(session, tenant)
    member, user = membership(session, tenant, member_id)
    before = member.role
    if role != "owner":
        _refuse_last_owner(session, tenant, member, "demote")
    member.role = role
    session.add(member)
    record(
        session,
        actor,
        "member.role.set",
        tenant=tenant.slug,
        object_type="member",
        object_id=member_id,
        role=role,
        before=before,
    )
    return member, user


def remove(session: Session, actor: str, tenant: Tenant, member_id: str) -> tuple[Membership, User, int]:
    """Take a member out of the site and revoke every token they hold in it; the count revoked."""
    _lock(session, tenant)
    member, user = membership(session, tenant, member_id)
    _refuse_last_owner(session, tenant, member, "remove")
    now = utcnow()
    tokens = session.exec(
        select(ApiToken).where(
            ApiToken.tenant_id == tenant.id, ApiToken.user_id == member_id, col(ApiToken.revoked_at).is_(None)
        )
    ).all()
    for row in tokens:
        row.revoked_at = now
        session.add(row)
    session.delete(member)
    record(
        session,
        actor,
        "member.remove",
        tenant=tenant.slug,
        object_type="member",
        object_id=member_id,
        role=member.role,
        revoked_tokens=len(tokens),
    )
    return member, user, len(tokens)


def create_token(
    session: Session, actor: str, tenant: Tenant, member_id: str, label: str
) -> tuple[str, ApiToken, Membership]:
    """A new token of the member (returned once; only its hash is kept). The audit row names it, never
    its value."""
    member, _ = membership(session, tenant, member_id)
    token, row = new_token_for(session, member_id, _tenant_id(tenant), label=label)
    record(
        session,
        actor,
        "token.create",
        tenant=tenant.slug,
        object_type="api_token",
        object_id=row.id,
        member_id=member_id,
        role=member.role,
        label=label,
    )
    return token, row, member


def revoke_token(session: Session, actor: str, tenant: Tenant, token_id: str) -> ApiToken:
    """Revoke one token (it answers 401 from now on); revoking a revoked token changes nothing."""
    _lock(session, tenant)
    row = token_row(session, tenant, token_id)
    if row.revoked_at is not None:
        return row
    holder = session.exec(
        select(Membership).where(Membership.tenant_id == tenant.id, Membership.user_id == row.user_id)
    ).first()
    if holder is not None and holder.role == "owner" and owner_tokens(session, tenant) <= 1:
        raise Conflict(
            "This is the last token any owner of the site holds: create another owner token before you revoke it.",
            details={"token_id": token_id},
            code="last_owner_token",
        )
    row.revoked_at = utcnow()
    session.add(row)
    record(
        session,
        actor,
        "token.revoke",
        tenant=tenant.slug,
        object_type="api_token",
        object_id=token_id,
        member_id=row.user_id,
    )
    return row


__all__ = [
    "create_token",
    "invite",
    "membership",
    "owner_tokens",
    "owners",
    "remove",
    "revoke_token",
    "set_role",
    "token_row",
]
