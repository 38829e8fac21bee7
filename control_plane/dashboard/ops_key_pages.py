"""The operator console's trusted package keys: the platform keyring every site trusts — add a publisher's
key, let one expire at a time, revoke one (confirmed: it is refused on every site at once).

Each write is the operator API's own audited action (``PlatformKeyService``: ``package.key.platform.*``),
and a member's token is refused here exactly like there (403).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from litestar import Controller, Request, Response, get, post

from control_plane.auth import Principal
from control_plane.container import Services
from control_plane.dashboard.commands import command_redirect
from control_plane.dashboard.forms import FormData, checked, text, utc_instant
from control_plane.dashboard.ops_pages import require_operator
from control_plane.dashboard.views import error_message, flash_error, notice, page, see_other, url
from dispatch.runtime.packages import PackageKeyOut
from tenant_runtime.errors import BadRequest, PressroomError
from tenant_runtime.ids import utcnow

KEY_NAME_LIMIT = 100


def _future(raw: str, field: str = "at") -> datetime:
    """A ``datetime-local`` field (UTC, as the form says) as an aware instant later than now."""
    at = utc_instant(raw, field)
    if at <= utcnow():
        raise BadRequest(
            "Pick a time still to come; to stop trusting the key now, revoke it.",
            details={"field": field, "at": at.isoformat()},
            code="expiry_in_past",
        )
    return at


class OperatorKeyPages(Controller):
    """``/dashboard/ops/keys``."""

    path = "/ops/keys"

    @get("/", sync_to_thread=True)
    def keys(self, request: Request[Any, Any, Any], signed_in: Principal, services: Services) -> Response[str]:
        """The platform's keys with their status, newest trust first, and the form to add one."""
        operator = require_operator(signed_in)
        return _listing(request, services, operator)

    @post("/", sync_to_thread=True)
    def add(
        self, request: Request[Any, Any, Any], data: FormData, signed_in: Principal, services: Services
    ) -> Response[Any]:
        """Trust a publisher's Ed25519 key (base64) on every site; a bad key is shown in place, nothing kept."""
        operator = require_operator(signed_in)
        typed = {"public_key": text(data, "public_key").strip(), "name": text(data, "name").strip()}
        try:
            if len(typed["name"]) > KEY_NAME_LIMIT:
                raise BadRequest(f"A key's name is at most {KEY_NAME_LIMIT} characters.", details={"field": "name"})
            expires = _future(text(data, "expires_at"), "expires_at") if text(data, "expires_at").strip() else None
            added = services.platform_keys.add(operator, typed["public_key"], name=typed["name"], expires_at=expires)
        except PressroomError as exc:
            return _listing(request, services, operator, typed=typed, errors=[error_message(exc)], status=exc.status)
        notice(request, f"Packages signed by {added.key_id} are trusted on every site.")
        return see_other(url("ops", "keys") + f"#key-{added.key_id}")

    @get("/{key_id:str}/revoke", sync_to_thread=True)
    def confirm_revoke(
        self, request: Request[Any, Any, Any], key_id: str, signed_in: Principal, services: Services
    ) -> Response[Any]:
        """What revoking the key does, and the box to tick."""
        operator = require_operator(signed_in)
        return _confirm(request, services, operator, key_id)

    @post("/{key_id:str}/revoke", sync_to_thread=True)
    def revoke(
        self, request: Request[Any, Any, Any], key_id: str, data: FormData, signed_in: Principal, services: Services
    ) -> Response[Any]:
        """Revoke the key on every site at once (ticked); unticked, the confirmation again, nothing changed."""
        operator = require_operator(signed_in)
        if not checked(data, "confirm"):
            refused = BadRequest("Tick the box to confirm.", code="confirmation_required")
            return _confirm(request, services, operator, key_id, error=refused, status=400)
        return command_redirect(
            request,
            url("ops", "keys"),
            lambda: services.platform_keys.revoke(operator, key_id),
            lambda key: f"{key.key_id} is revoked: no site installs, upgrades or rolls back to a package it signed.",
            then=lambda key: url("ops", "keys") + f"#key-{key.key_id}",
        )

    @post("/{key_id:str}/expire", sync_to_thread=True)
    def expire(
        self, request: Request[Any, Any, Any], key_id: str, data: FormData, signed_in: Principal, services: Services
    ) -> Response[Any]:
        """Trust the key until a time still to come (UTC)."""
        operator = require_operator(signed_in)
        return command_redirect(
            request,
            url("ops", "keys"),
            lambda: services.platform_keys.expire(operator, key_id, _future(text(data, "at"))),
            lambda key: f"{key.key_id} is trusted on every site until {key.expires_at:%Y-%m-%d %H:%M} UTC.",
            then=lambda key: url("ops", "keys") + f"#key-{key.key_id}",
        )


def _listing(
    request: Request[Any, Any, Any],
    services: Services,
    operator: Principal,
    *,
    typed: dict[str, str] | None = None,
    errors: list[dict[str, Any]] | None = None,
    status: int = 200,
) -> Response[str]:
    keys = sorted(services.platform_keys.keys(operator), key=_newest_first)
    return page(
        request,
        "ops_keys.html",
        status_code=status,
        errors=errors,
        principal=operator,
        keys=keys,
        typed=typed or {},
    )


def _newest_first(key: PackageKeyOut) -> tuple[int, float, str]:
    """Trusted keys first, then expired, then revoked; within each, the latest added first."""
    rank = {"trusted": 0, "expired": 1}.get(key.status, 2)
    return rank, -(key.added_at.timestamp() if key.added_at else 0.0), key.key_id


def _confirm(
    request: Request[Any, Any, Any],
    services: Services,
    operator: Principal,
    key_id: str,
    *,
    error: PressroomError | None = None,
    status: int = 200,
) -> Response[Any]:
    try:
        key = services.platform_keys.key(operator, key_id)
    except PressroomError as exc:
        flash_error(request, exc)
        return see_other(url("ops", "keys"))
    return page(
        request,
        "ops_key_confirm.html",
        status_code=status,
        errors=[error_message(error)] if error is not None else None,
        principal=operator,
        key=key,
    )


__all__ = ["OperatorKeyPages"]
