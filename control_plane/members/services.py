"""Members and tokens as commands: the command layer's checks, then one control-plane transaction.

Each command passes ``CommandGate.admit`` (tenant access 404, active 423, ``site.admin`` 403, confirmation
400 where it takes something away) and then runs its action (``members.actions``) with its audit row and
its idempotency record in one transaction of the control-plane database, where members and tokens live.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
from sqlalchemy import Engine
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlmodel import Session, col, func, select

from control_plane import idempotency
from control_plane.auth import Principal
from control_plane.commands import CommandGate
from control_plane.db.models import ApiToken, Membership, Tenant, User
from control_plane.members import actions
from control_plane.members.schemas import (
    ApiTokenOut,
    InviteOut,
    MemberInvite,
    MemberOut,
    MemberTokenCreate,
    TokenIssued,
)
from control_plane.metrics.instruments import observe_command
from control_plane.tenants.actions import tenant_row
from dispatch.runtime import CommandResult
from tenant_runtime.errors import BadRequest, Conflict
from tenant_runtime.ids import as_utc

PERMISSION = "site.admin"
# What an action gives back: the status, the answer, and the answer an idempotent repeat may show.
Answer = tuple[int, dict[str, Any], dict[str, Any]]


def member_out(member: Membership, user: User, active_tokens: int) -> MemberOut:
    return MemberOut(
        id=user.id,
        name=member.display_name(user),
        email=user.email,
        role=member.role,
        created_at=as_utc(member.created_at),
        active_tokens=active_tokens,
    )


def issued(token: str | None, row: ApiToken, role: str, tenant: str) -> TokenIssued:
    return TokenIssued(
        id=row.id,
        token=token,
        label=row.label,
        member_id=row.user_id or "",
        role=role,
        tenant=tenant,
        created_at=as_utc(row.created_at),
    )


def without_secret(token: dict[str, Any]) -> dict[str, Any]:
    """A token's answer as an idempotent repeat gives it: the secret is never stored, so never shown twice."""
    return {**token, "token": None}


def token_out(token: ApiToken, member_name: str, role: str) -> ApiTokenOut:
    return ApiTokenOut(
        id=token.id,
        label=token.label,
        member_id=token.user_id or "",
        member_name=member_name,
        role=role,
        created_at=as_utc(token.created_at),
        revoked_at=as_utc(token.revoked_at) if token.revoked_at is not None else None,
    )


class MemberService:
    def __init__(self, engine: Engine, gate: CommandGate) -> None:
        self.engine = engine
        self.gate = gate

    # --- reads ---------------------------------------------------------------------------------------

    def members(self, principal: Principal, tenant: str, *, limit: int = 100, offset: int = 0) -> list[MemberOut]:
        """The site's members, owners first, then by name."""
        self.gate.reader(principal, tenant, PERMISSION)
        with Session(self.engine) as session:
            row = tenant_row(session, tenant)
            active = (
                select(ApiToken.user_id, func.count().label("n"))
                .where(ApiToken.tenant_id == row.id, col(ApiToken.revoked_at).is_(None))
                .group_by(col(ApiToken.user_id))
                .subquery()
            )
            query = (
                select(Membership, User, active.c.n)
                .join(User, col(User.id) == col(Membership.user_id))
                .outerjoin(active, active.c.user_id == col(Membership.user_id))
                .where(Membership.tenant_id == row.id)
                .order_by(
                    col(Membership.role) != "owner", func.coalesce(col(Membership.name), col(User.name)), col(User.id)
                )
                .offset(offset)
                .limit(limit)
            )
            return [member_out(member, user, int(n or 0)) for member, user, n in session.exec(query)]

    def tokens(
        self, principal: Principal, tenant: str, *, revoked: bool = False, limit: int = 100, offset: int = 0
    ) -> list[ApiTokenOut]:
        """The site's member tokens newest first (``revoked``: the revoked ones too); never a secret."""
        self.gate.reader(principal, tenant, PERMISSION)
        with Session(self.engine) as session:
            row = tenant_row(session, tenant)
            query = (
                select(ApiToken, Membership, User)
                .join(
                    Membership,
                    (col(Membership.user_id) == col(ApiToken.user_id))
                    & (col(Membership.tenant_id) == col(ApiToken.tenant_id)),
                )
                .join(User, col(User.id) == col(ApiToken.user_id))
                .where(ApiToken.tenant_id == row.id, ApiToken.kind == "member")
                .order_by(col(ApiToken.created_at).desc(), col(ApiToken.id).desc())
                .offset(offset)
                .limit(limit)
            )
            if not revoked:
                query = query.where(col(ApiToken.revoked_at).is_(None))
            return [
                token_out(token, member.display_name(user), member.role) for token, member, user in session.exec(query)
            ]

    # --- commands ------------------------------------------------------------------------------------

    def invite(
        self, principal: Principal, tenant: str, data: MemberInvite, *, idempotency_key: str | None = None
    ) -> CommandResult:
        """A new member with a role, and their first token (its secret in this answer only)."""

        def run(session: Session, actor: str, row: Tenant) -> Answer:
            member, user, token, token_row = actions.invite(
                session, actor, row, name=data.name, role=data.role, email=data.email
            )
            out = InviteOut(member_out(member, user, 1), issued(token, token_row, member.role, tenant))
            body = msgspec.to_builtins(out)
            return 201, body, {**body, "token": without_secret(body["token"])}

        payload = msgspec.to_builtins(data)
        return self._run(
            principal, tenant, "InviteMember", "members.invite", payload, run, idempotency_key=idempotency_key
        )

    def set_role(
        self, principal: Principal, tenant: str, member_id: str, role: str, *, idempotency_key: str | None = None
    ) -> CommandResult:
        """Give a member another role (409 ``last_owner`` for the site's last owner)."""

        def run(session: Session, actor: str, row: Tenant) -> Answer:
            member, user = actions.set_role(session, actor, row, member_id, role)
            body = msgspec.to_builtins(member_out(member, user, self._active(session, row, member_id)))
            return 200, body, body

        scope = f"members.role:{member_id}"
        return self._run(
            principal, tenant, "SetMemberRole", scope, {"role": role}, run, idempotency_key=idempotency_key
        )

    def remove(self, principal: Principal, tenant: str, member_id: str, *, confirm: bool) -> CommandResult:
        """Take a member out of the site; every token they hold in it is revoked in the same transaction."""

        def run(session: Session, actor: str, row: Tenant) -> Answer:
            member, user, revoked = actions.remove(session, actor, row, member_id)
            body = {**msgspec.to_builtins(member_out(member, user, 0)), "revoked_tokens": revoked}
            return 200, body, body

        effect = "This removes the member and revokes their tokens"
        scope = f"members.remove:{member_id}"
        return self._run(principal, tenant, "RemoveMember", scope, {}, run, confirm=confirm, effect=effect)

    def create_token(
        self, principal: Principal, tenant: str, data: MemberTokenCreate, *, idempotency_key: str | None = None
    ) -> CommandResult:
        """A new token for a member (the caller by default): its secret in this answer only."""
        member_id = data.member_id or principal.user_id
        if member_id is None:
            raise BadRequest("An operator names the member: send member_id.", details={"field": "member_id"})

        def run(session: Session, actor: str, row: Tenant) -> Answer:
            token, token_row, member = actions.create_token(session, actor, row, member_id, data.label)
            body = msgspec.to_builtins(issued(token, token_row, member.role, tenant))
            return 201, body, without_secret(body)

        payload = {"member_id": member_id, "label": data.label}
        return self._run(
            principal, tenant, "CreateToken", "tokens.create", payload, run, idempotency_key=idempotency_key
        )

    def revoke_token(self, principal: Principal, tenant: str, token_id: str, *, confirm: bool) -> CommandResult:
        """Revoke a token: requests with it answer 401 from now on (409 ``last_owner_token`` for the last
        token any owner holds)."""

        def run(session: Session, actor: str, row: Tenant) -> Answer:
            token = actions.revoke_token(session, actor, row, token_id)
            holder = session.exec(
                select(Membership).where(Membership.tenant_id == row.id, Membership.user_id == token.user_id)
            ).first()
            user = session.get(User, token.user_id)
            name = holder.display_name(user) if holder is not None and user is not None else ""
            role = holder.role if holder is not None else ""
            body = msgspec.to_builtins(token_out(token, name, role))
            return 200, body, body

        effect = "Requests with this token will be refused"
        scope = f"tokens.revoke:{token_id}"
        return self._run(principal, tenant, "RevokeToken", scope, {}, run, confirm=confirm, effect=effect)

    # --- the one path --------------------------------------------------------------------------------

    def _run(
        self,
        principal: Principal,
        tenant: str,
        kind: str,
        scope: str,
        payload: dict[str, Any],
        action: Callable[[Session, str, Tenant], Answer],
        *,
        confirm: bool | None = None,
        effect: str = "",
        idempotency_key: str | None = None,
    ) -> CommandResult:
        """The command as ``kind`` in the command metrics, through the gate, in one transaction."""
        with observe_command(kind) as outcome:
            outcome.result = self._transaction(
                principal, tenant, scope, payload, action, confirm, effect, idempotency_key
            )
            return outcome.result

    def _transaction(
        self,
        principal: Principal,
        tenant: str,
        scope: str,
        payload: dict[str, Any],
        action: Callable[[Session, str, Tenant], Answer],
        confirm: bool | None,
        effect: str,
        idempotency_key: str | None,
    ) -> CommandResult:
        actor, row = self.gate.admit(principal, tenant, PERMISSION, confirm, effect=effect)
        digest = idempotency.request_hash({"scope": scope, "payload": payload})
        key_scope = f"{tenant}|{actor.id}|{scope}"
        with Session(self.engine, expire_on_commit=False) as session:
            if idempotency_key is not None:
                first = idempotency.lookup(session, key_scope, idempotency_key, digest)
                if first is not None:
                    return CommandResult(first.status_code, {**first.response, "replayed": True}, replayed=True)
            try:
                status, body, kept = action(session, actor.id, row)
                if idempotency_key is not None:
                    idempotency.remember(session, key_scope, idempotency_key, digest, status, kept)
                session.commit()
            except (IntegrityError, OperationalError):
                # Another change to the same rows committed first (the same email invited twice at once, a
                # repeated key racing itself; SQLite's snapshot refusing the late writer): nothing of this
                # one was written, and a retry sees the winner.
                session.rollback()
                raise Conflict(
                    "Another change to the site's members landed at the same moment; nothing was changed. Try again.",
                    code="concurrent_change",
                ) from None
        return CommandResult(status, body)

    @staticmethod
    def _active(session: Session, tenant: Tenant, member_id: str) -> int:
        query = select(func.count()).where(
            ApiToken.tenant_id == tenant.id, ApiToken.user_id == member_id, col(ApiToken.revoked_at).is_(None)
        )
        return int(session.exec(query).one())


__all__ = ["MemberService"]
