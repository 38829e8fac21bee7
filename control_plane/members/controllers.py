"""Tenant API: the site's members and API tokens (``site.admin``), and its audit log."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlencode

from litestar import Controller, Request, Response, delete, get, patch, post
from litestar.datastructures import ResponseHeader
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import Parameter

from control_plane.audit.schemas import AuditAction, AuditBefore, AuditEntryOut, AuditLimit, AuditOffset
from control_plane.audit.services import AuditCursor
from control_plane.auth import Principal
from control_plane.container import Services
from control_plane.http.params import IdempotencyKey, Limit, Offset
from control_plane.http.responses import respond
from control_plane.members.schemas import (
    ApiTokenOut,
    InviteOut,
    MemberInvite,
    MemberOut,
    MemberRemove,
    MemberTokenCreate,
    MemberUpdate,
    TokenIssued,
    TokenRevoke,
)


def _answer(status: int, body: type[Any], description: str) -> dict[int, ResponseSpec]:
    """The OpenAPI answer of a command that returns ``Response[dict]`` (the error answers are added by
    ``document_errors``)."""
    return {status: ResponseSpec(data_container=body, description=description, generate_examples=False)}


NEXT_PAGE = ResponseHeader(
    name="Link",
    description='On a full page: `<…?before=<cursor>>; rel="next"`, the older rows.',
    documentation_only=True,
)
WithRevoked = Annotated[bool, Parameter(required=False, description="List revoked tokens too.")]


class MemberController(Controller):
    path = "/api/tenants/{tenant:str}/members"
    tags = ("members",)

    @get("/", sync_to_thread=True)
    def list(
        self, tenant: str, principal: Principal, services: Services, limit: Limit = 100, offset: Offset = 0
    ) -> list[MemberOut]:
        """The site's members with their roles, owners first."""
        return services.members.members(principal, tenant, limit=limit, offset=offset)

    @post(
        "/",
        sync_to_thread=True,
        status_code=201,
        responses=_answer(201, InviteOut, "The member and their first token (shown once)"),
    )
    def invite(
        self,
        tenant: str,
        data: MemberInvite,
        principal: Principal,
        services: Services,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[dict[str, Any]]:
        """Invite a member with a role: 201 with the member and their first token, whose secret is in this
        answer only (an Idempotency-Key repeat answers ``"token": null``)."""
        return respond(services.members.invite(principal, tenant, data, idempotency_key=idempotency_key))

    @patch("/{member_id:str}", sync_to_thread=True, responses=_answer(200, MemberOut, "The member with the new role"))
    def set_role(
        self,
        tenant: str,
        member_id: str,
        data: MemberUpdate,
        principal: Principal,
        services: Services,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[dict[str, Any]]:
        """Change a member's role; demoting the site's last owner is a 409 ``last_owner``."""
        return respond(
            services.members.set_role(principal, tenant, member_id, data.role, idempotency_key=idempotency_key)
        )

    @delete(
        "/{member_id:str}",
        sync_to_thread=True,
        status_code=200,
        responses=_answer(200, MemberOut, "The removed member (``revoked_tokens``: how many)"),
    )
    def remove(
        self, tenant: str, member_id: str, principal: Principal, services: Services, data: MemberRemove | None = None
    ) -> Response[dict[str, Any]]:
        """Remove a member (``{"confirm": true}``) and revoke their tokens; the last owner is a 409
        ``last_owner``."""
        data = data or MemberRemove()
        return respond(services.members.remove(principal, tenant, member_id, confirm=data.confirm))


class TokenController(Controller):
    path = "/api/tenants/{tenant:str}/tokens"
    tags = ("members",)

    @get("/", sync_to_thread=True)
    def list(
        self,
        tenant: str,
        principal: Principal,
        services: Services,
        revoked: WithRevoked = False,
        limit: Limit = 100,
        offset: Offset = 0,
    ) -> list[ApiTokenOut]:
        """The site's member tokens newest first: ids, labels and holders, never a secret."""
        return services.members.tokens(principal, tenant, revoked=revoked, limit=limit, offset=offset)

    @post(
        "/",
        sync_to_thread=True,
        status_code=201,
        responses=_answer(201, TokenIssued, "The token, its secret shown once"),
    )
    def create(
        self,
        tenant: str,
        data: MemberTokenCreate,
        principal: Principal,
        services: Services,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[dict[str, Any]]:
        """A new token for a member (the caller by default): 201 with its secret, shown in this answer only
        and stored as its SHA-256."""
        return respond(services.members.create_token(principal, tenant, data, idempotency_key=idempotency_key))

    @post(
        "/{token_id:str}/revoke",
        sync_to_thread=True,
        status_code=200,
        responses=_answer(200, ApiTokenOut, "The revoked token"),
    )
    def revoke(
        self, tenant: str, token_id: str, principal: Principal, services: Services, data: TokenRevoke | None = None
    ) -> Response[dict[str, Any]]:
        """Revoke a token (``{"confirm": true}``): it answers 401 from now on. The last token any owner
        holds is a 409 ``last_owner_token``."""
        data = data or TokenRevoke()
        return respond(services.members.revoke_token(principal, tenant, token_id, confirm=data.confirm))


class AuditController(Controller):
    path = "/api/tenants/{tenant:str}/audit"
    tags = ("audit",)

    @get("/", sync_to_thread=True, response_headers=[NEXT_PAGE])
    def read(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        principal: Principal,
        services: Services,
        action: AuditAction = None,
        limit: AuditLimit = 100,
        offset: AuditOffset = 0,
        before: AuditBefore = None,
    ) -> Response[list[AuditEntryOut]]:
        """Who did what to the site, newest first: its content, operations and settings, its members and
        tokens, and operators' changes to it (``?action=member.invite``, ``?limit=50``; ``site.admin``). A
        full page carries ``Link: <…?before=…>; rel="next"`` to the older rows."""
        cursor = AuditCursor.parse(before) if before is not None else None
        found = services.audit.read(principal, tenant, action=action, limit=limit, offset=offset, before=cursor)
        headers = {}
        if found.next is not None:
            query = urlencode({k: v for k, v in (("action", action), ("limit", limit)) if v} | {"before": found.next})
            headers["Link"] = f'<{request.url.path}?{query}>; rel="next"'
        return Response(found.rows, headers=headers)


__all__ = ["AuditController", "MemberController", "TokenController"]
