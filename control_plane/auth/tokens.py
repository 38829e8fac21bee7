"""Bearer tokens: issue (shown once), store hashed, resolve to a principal."""

from __future__ import annotations

import hashlib
import hmac
import secrets

from sqlalchemy import Engine
from sqlmodel import Session, col, select

from control_plane.auth.principals import Principal
from control_plane.db.models import ApiToken, Membership, Tenant, User
from control_plane.db.read_cache import ReadCache
from tenant_runtime.errors import BadRequest, Unauthorized

MEMBER_ROLES = ("owner", "editor", "viewer")


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _principal(session: Session, row: ApiToken) -> Principal | None:
    """Who an unrevoked token is: an operator, or a member of its tenant with their role."""
    if row.revoked_at is not None:
        return None
    if row.kind == "operator":
        return Principal(token_id=row.id, kind="operator")
    membership = session.exec(
        select(Membership, Tenant)
        .join(Tenant, col(Tenant.id) == col(Membership.tenant_id))
        .where(Membership.user_id == row.user_id, Membership.tenant_id == row.tenant_id)
    ).first()
    if membership is None:
        return None
    member, tenant = membership
    return Principal(token_id=row.id, kind="member", user_id=row.user_id, tenant_slug=tenant.slug, role=member.role)


def _digest_of(authorization: str | None) -> str:
    if not authorization:
        raise Unauthorized("Send an Authorization: Bearer <token> header.")
    scheme, _, token = authorization.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > 200:
        raise Unauthorized("Send an Authorization: Bearer <token> header.")
    return hash_token(token)


class TokenService:
    def __init__(self, engine: Engine, cache: ReadCache | None = None) -> None:
        self.engine = engine
        self.cache = cache or ReadCache(None)

    def resolve(self, authorization: str | None) -> Principal:
        """Parse ``Authorization: Bearer <token>`` and look the token up by its hash."""
        digest = _digest_of(authorization)
        # Cached until the control-plane database next changes (a revoked token is refused at once).
        return self.cache.get("principal", digest, lambda: self._principal_of(digest))

    def resolve_cached(self, authorization: str | None) -> Principal | None:
        """``resolve``'s answer when it is in the cache and current, else None (no database read)."""
        try:
            principal = self.cache.peek("principal", _digest_of(authorization))
        except Unauthorized:
            return None
        return principal if isinstance(principal, Principal) else None

    def _principal_of(self, digest: str) -> Principal:
        with Session(self.engine) as session:
            row = session.exec(select(ApiToken).where(ApiToken.token_hash == digest)).first()
            if row is None or not hmac.compare_digest(row.token_hash, digest):
                raise Unauthorized("The token is not valid.")
            principal = _principal(session, row)
        if principal is None:
            raise Unauthorized("The token is not valid.")
        return principal

    def resolve_id(self, token_id: str) -> Principal | None:
        """The principal of an unrevoked token by its id (dashboard sessions hold only the id)."""
        with Session(self.engine) as session:
            row = session.get(ApiToken, token_id)
            return _principal(session, row) if row is not None else None

    def as_member_of(self, principal: Principal, tenant: str) -> Principal | None:
        """The same user as a member of ``tenant`` (their membership there, their role there); None when the
        principal is no member of it (an operator is not a member: it needs no other principal)."""
        if principal.is_operator or principal.user_id is None:
            return None
        with Session(self.engine) as session:
            row = session.exec(
                select(Membership)
                .join(Tenant, col(Tenant.id) == col(Membership.tenant_id))
                .where(Membership.user_id == principal.user_id, Tenant.slug == tenant)
            ).first()
        if row is None:
            return None
        return Principal(
            token_id=principal.token_id, kind="member", user_id=principal.user_id, tenant_slug=tenant, role=row.role
        )

    def ensure_operator_token(self, token: str, label: str = "configured") -> None:
        """Register an operator token given in settings (stored hashed; idempotent)."""
        digest = hash_token(token)
        with Session(self.engine) as session:
            if session.exec(select(ApiToken).where(ApiToken.token_hash == digest)).first() is None:
                session.add(ApiToken(token_hash=digest, kind="operator", label=label))
                session.commit()


def new_operator_token(session: Session, label: str = "") -> tuple[str, ApiToken]:
    """Add an operator token to ``session``; the token is returned once (the caller commits)."""
    token = "pro_" + secrets.token_urlsafe(32)
    row = ApiToken(token_hash=hash_token(token), kind="operator", label=label)
    session.add(row)
    session.flush()
    return token, row


def new_member_token(session: Session, tenant: Tenant, role: str, *, name: str = "") -> tuple[str, ApiToken]:
    """Add a user with ``role`` in ``tenant`` and a token for them to ``session``; the token is returned once."""
    if role not in MEMBER_ROLES:
        raise BadRequest(
            "role is owner, editor or viewer.",
            details={"role": role, "allowed": list(MEMBER_ROLES)},
            code="invalid_role",
        )
    if tenant.id is None:
        raise ValueError("the tenant has no row yet")
    user = User(name=name or f"{tenant.slug} {role}")
    session.add(user)
    session.flush()
    session.add(Membership(user_id=user.id, tenant_id=tenant.id, role=role, name=user.name))
    return new_token_for(session, user.id, tenant.id, label=name)


def new_token_for(session: Session, user_id: str, tenant_id: int, *, label: str = "") -> tuple[str, ApiToken]:
    """Add a token of member ``user_id`` in tenant ``tenant_id`` to ``session``; the token is returned once."""
    token = "prt_" + secrets.token_urlsafe(32)
    row = ApiToken(token_hash=hash_token(token), kind="member", user_id=user_id, tenant_id=tenant_id, label=label)
    session.add(row)
    session.flush()
    return token, row


__all__ = [
    "MEMBER_ROLES",
    "TokenService",
    "hash_token",
    "new_member_token",
    "new_operator_token",
    "new_token_for",
]
