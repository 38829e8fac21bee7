"""Members and tokens (owners only): invite by role, change and remove roles, create and revoke tokens
(the secret shown once); and the site's audit log filtered by action — the members and audit services of
the tenant API, so the same command layer (``site.admin``, confirmation, idempotency, the last-owner
guards, audit)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import msgspec
from litestar import Controller, Request, Response, get, post

from control_plane.audit.services import AuditCursor, AuditPage
from control_plane.auth import Principal
from control_plane.container import Services
from control_plane.dashboard.commands import command_redirect
from control_plane.dashboard.context import site_for
from control_plane.dashboard.forms import FormData, checked, form_key, new_form_key, text
from control_plane.dashboard.views import error_message, flash_error, notice, page, see_other, url
from control_plane.members.schemas import MemberInvite, MemberTokenCreate
from control_plane.members.services import PERMISSION
from dispatch.runtime import CommandResult
from tenant_runtime.errors import BadRequest, Forbidden, NotFound, PressroomError

AUDIT_PAGE = 50
ROLES = ("owner", "editor", "viewer")


def _invite_errors(typed: dict[str, str]) -> dict[str, str]:
    """Field messages for an invitation the API schema refuses."""
    found: dict[str, str] = {}
    checks = {
        "name": ({"name": typed["name"], "role": "viewer"}, "A name is 1-200 visible characters."),
        "email": (
            {"name": "x", "role": "viewer", "email": typed["email"] or None},
            "Enter an email address like name@example.com, or leave it empty.",
        ),
        "role": ({"name": "x", "role": typed["role"]}, "Choose owner, editor or viewer."),
    }
    for field, (values, message) in checks.items():
        try:
            msgspec.convert(values, MemberInvite)
        except msgspec.ValidationError:
            found[field] = message
    return found


class MemberPages(Controller):
    """``/dashboard/sites/{tenant}/members`` and ``/dashboard/sites/{tenant}/audit``."""

    path = "/sites/{tenant:str}"

    @get("/members", sync_to_thread=True)
    def members(
        self, request: Request[Any, Any, Any], tenant: str, signed_in: Principal, services: Services
    ) -> Response[str]:
        """Members with their roles, the site's tokens, and the forms to invite and to create a token."""
        return self._page(request, services, signed_in, tenant)

    @post("/members", sync_to_thread=True)
    def invite(
        self, request: Request[Any, Any, Any], tenant: str, data: FormData, signed_in: Principal, services: Services
    ) -> Response[Any]:
        """Invite a member; the page shows their first token this once."""
        typed = {"name": text(data, "name").strip(), "email": text(data, "email").strip(), "role": text(data, "role")}
        field_errors = _invite_errors(typed)
        if field_errors:
            return self._page(request, services, signed_in, tenant, typed=typed, field_errors=field_errors)
        invite = msgspec.convert(
            {"name": typed["name"], "role": typed["role"], "email": typed["email"] or None}, MemberInvite
        )
        try:
            outcome = services.members.invite(signed_in, tenant, invite, idempotency_key=form_key(data))
        except PressroomError as exc:
            return self._page(
                request, services, signed_in, tenant, typed=typed, errors=[error_message(exc)], status=exc.status
            )
        member, token = outcome.body["member"], outcome.body["token"]
        return self._page(
            request,
            services,
            signed_in,
            tenant,
            new_token={**token, "member_name": member["name"], "invited": True},
            status=outcome.status_code,
        )

    @post("/members/{member_id:str}/role", sync_to_thread=True)
    def set_role(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        member_id: str,
        data: FormData,
        signed_in: Principal,
        services: Services,
    ) -> Response[Any]:
        """Give a member another role (their tokens follow at once)."""
        role = text(data, "role")

        def change() -> CommandResult:
            if role not in ROLES:
                raise BadRequest("Choose owner, editor or viewer.", details={"field": "role"})
            return services.members.set_role(signed_in, tenant, member_id, role, idempotency_key=form_key(data))

        back = url("sites", tenant, "members") + f"#member-{member_id}"
        return command_redirect(request, back, change, lambda done: f"{done.body['name']} is now {role}.")

    @get("/members/{member_id:str}/remove", sync_to_thread=True)
    def confirm_remove(
        self, request: Request[Any, Any, Any], tenant: str, member_id: str, signed_in: Principal, services: Services
    ) -> Response[Any]:
        """What removing the member does, and the box to tick."""
        return self._confirm(request, services, signed_in, tenant, member_id=member_id)

    @post("/members/{member_id:str}/remove", sync_to_thread=True)
    def remove(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        member_id: str,
        data: FormData,
        signed_in: Principal,
        services: Services,
    ) -> Response[Any]:
        """Remove the member and revoke every token they hold here."""
        try:
            outcome = services.members.remove(signed_in, tenant, member_id, confirm=checked(data, "confirm"))
        except PressroomError as exc:
            return self._confirm(
                request, services, signed_in, tenant, member_id=member_id, error=exc, status=exc.status
            )
        revoked = outcome.body["revoked_tokens"]
        notice(request, f"{outcome.body['name']} is no longer a member; {revoked} token(s) revoked.")
        return see_other(url("sites", tenant, "members"))

    @post("/tokens", sync_to_thread=True)
    def create_token(
        self, request: Request[Any, Any, Any], tenant: str, data: FormData, signed_in: Principal, services: Services
    ) -> Response[Any]:
        """A new token for a member; the page shows it this once."""
        label, member_id = text(data, "label").strip(), text(data, "member_id").strip()
        typed = {"label": label, "member_id": member_id}
        try:
            create = msgspec.convert({"label": label, "member_id": member_id or None}, MemberTokenCreate)
        except msgspec.ValidationError:
            return self._page(
                request,
                services,
                signed_in,
                tenant,
                typed=typed,
                field_errors={"label": "A label is at most 200 characters, on one line."},
            )
        try:
            outcome = services.members.create_token(signed_in, tenant, create, idempotency_key=form_key(data))
        except PressroomError as exc:
            return self._page(
                request, services, signed_in, tenant, typed=typed, errors=[error_message(exc)], status=exc.status
            )
        holder = next(
            (
                m.name
                for m in services.members.members(signed_in, tenant, limit=500)
                if m.id == outcome.body["member_id"]
            ),
            outcome.body["member_id"],
        )
        return self._page(
            request, services, signed_in, tenant, new_token={**outcome.body, "member_name": holder}, status=201
        )

    @get("/tokens/{token_id:str}/revoke", sync_to_thread=True)
    def confirm_revoke(
        self, request: Request[Any, Any, Any], tenant: str, token_id: str, signed_in: Principal, services: Services
    ) -> Response[Any]:
        """What revoking the token does, and the box to tick."""
        return self._confirm(request, services, signed_in, tenant, token_id=token_id)

    @post("/tokens/{token_id:str}/revoke", sync_to_thread=True)
    def revoke(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        token_id: str,
        data: FormData,
        signed_in: Principal,
        services: Services,
    ) -> Response[Any]:
        """Revoke the token: requests with it are refused from now on (a session signed in with it ends)."""
        try:
            outcome = services.members.revoke_token(signed_in, tenant, token_id, confirm=checked(data, "confirm"))
        except PressroomError as exc:
            return self._confirm(request, services, signed_in, tenant, token_id=token_id, error=exc, status=exc.status)
        label = outcome.body["label"] or outcome.body["id"]
        notice(request, f"Token “{label}” of {outcome.body['member_name']} is revoked.")
        return see_other(url("sites", tenant, "members") + "#tokens")

    @get("/audit", sync_to_thread=True)
    def audit(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        signed_in: Principal,
        services: Services,
        action: str = "",
        before: str = "",
    ) -> Response[str]:
        """Who did what, when, newest first, filtered by action, a page at a time (older pages by cursor)."""
        chosen = action.strip()[:80]
        errors: list[dict[str, Any]] = []
        found = AuditPage()
        try:
            cursor = AuditCursor.parse(before) if before else None
            found = services.audit.read(signed_in, tenant, action=chosen or None, limit=AUDIT_PAGE, before=cursor)
        except BadRequest as exc:  # a malformed action or cursor typed into the address
            errors = [error_message(exc)]
        keep = {"action": chosen} if chosen else {}
        return page(
            request,
            "audit.html",
            status_code=400 if errors else 200,
            errors=errors,
            principal=signed_in,
            site=site_for(services, signed_in, tenant),
            settings=services.site.settings(signed_in, tenant),
            rows=found.rows,
            action=chosen,
            actions=sorted(set(services.audit.actions(signed_in, tenant)) | ({chosen} if chosen else set())),
            previous=f"?{urlencode(keep)}" if before else None,
            next=f"?{urlencode(keep | {'before': str(found.next)})}" if found.next is not None else None,
        )

    # --- rendering -----------------------------------------------------------------------------------

    @staticmethod
    def _page(
        request: Request[Any, Any, Any],
        services: Services,
        principal: Principal,
        tenant: str,
        *,
        typed: dict[str, str] | None = None,
        field_errors: dict[str, str] | None = None,
        errors: list[dict[str, Any]] | None = None,
        new_token: dict[str, Any] | None = None,
        status: int | None = None,
    ) -> Response[str]:
        site = site_for(services, principal, tenant)
        if not site.can(PERMISSION):  # the service refuses too; this says it in the page's words
            raise Forbidden(
                "Only the site's owners manage members and tokens.",
                details={"permission": PERMISSION, "role": principal.role},
            )
        return page(
            request,
            "members.html",
            status_code=status or (400 if field_errors else 200),
            errors=errors,
            principal=principal,
            site=site,
            settings=services.site.settings(principal, tenant),
            members=services.members.members(principal, tenant, limit=500),
            tokens=services.members.tokens(principal, tenant, limit=500),
            roles=ROLES,
            me=principal.user_id,
            my_token=principal.token_id,
            typed=typed or {},
            field_errors=field_errors or {},
            new_token=new_token,
            form_key=new_form_key(),
        )

    @staticmethod
    def _confirm(
        request: Request[Any, Any, Any],
        services: Services,
        principal: Principal,
        tenant: str,
        *,
        member_id: str | None = None,
        token_id: str | None = None,
        error: PressroomError | None = None,
        status: int = 200,
    ) -> Response[Any]:
        site = site_for(services, principal, tenant)
        member = token = None
        if member_id is not None:
            member = next(
                (m for m in services.members.members(principal, tenant, limit=500) if m.id == member_id), None
            )
            if member is None:
                flash_error(request, _not_found("member", member_id))
        if token_id is not None:
            token = next((t for t in services.members.tokens(principal, tenant, limit=500) if t.id == token_id), None)
            if token is None:
                flash_error(request, _not_found("token", token_id))
        if member is None and token is None:
            return see_other(url("sites", tenant, "members"))
        errors = []
        if error is not None:
            entry = error_message(error)
            if error.code == "confirmation_required":
                entry["message"] = "Tick the box to confirm."
            errors.append(entry)
        return page(
            request,
            "member_confirm.html",
            status_code=status,
            errors=errors,
            principal=principal,
            site=site,
            member=member,
            token=token,
            me=principal.user_id,
            my_token=principal.token_id,
            form_key=new_form_key(),
        )


def _not_found(kind: str, identifier: str) -> PressroomError:
    return NotFound(f"No {kind} {identifier} in this site (it may have been removed already).")


__all__ = ["MemberPages"]
