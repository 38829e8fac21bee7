"""A site's health: its recent backup, import and restore runs (the failed step and its error), its backups,
the nightly chores (last fire, lateness, next fire), the last good backup's age with the operator API's 26 h
alarm, late runs (Prefect's view), dead operations with replay; start a backup, import one of the site's own
backups, and restore the site to a time after a dry run shows every change — each through the tenant API's
own backup service."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.response import Stream

from control_plane.auth import Principal
from control_plane.backups.controllers import tar_stream
from control_plane.container import Services
from control_plane.dashboard.commands import command_redirect
from control_plane.dashboard.context import site_for
from control_plane.dashboard.forms import FormData, checked, form_key, new_form_key, text
from control_plane.dashboard.local_time import to_input, wall_clock
from control_plane.dashboard.views import error_message, flash_error, page, see_other, url
from dispatch.prefect_port import PrefectUnavailable
from tenant_runtime.errors import BadRequest, PressroomError
from tenant_runtime.operation_states import DEAD, SCHEDULED, TERMINAL

LIFECYCLE_KINDS = ("backup", "import", "restore")
RECENT = 20
PREFECT_TIMEOUT = 3.0  # the page answers without late runs rather than wait on a slow Prefect


def instant(value: Any) -> datetime | None:
    """A time of the health view: a datetime in process, an ISO string when it crossed the runtime's wire."""
    if value is None or isinstance(value, datetime):
        return value
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def chore_rows(chores: dict[str, Any]) -> list[dict[str, Any]]:
    """The nightly chores in the order they fire, with their times as datetimes."""
    rows = [
        {
            "name": name,
            "cron": chore.get("cron"),
            "status": chore.get("status"),
            "due_at": instant(chore.get("due_at")),
            "lateness_seconds": float(chore.get("lateness_seconds") or 0.0),
            "next_due_at": instant(chore.get("next_due_at")),
            "recent": chore.get("recent") or [],
        }
        for name, chore in chores.items()
    ]
    return sorted(rows, key=lambda row: row["next_due_at"] or datetime.max.replace(tzinfo=UTC))


def change_rows(change: dict[str, Any]) -> list[tuple[str, str, str, bool]]:
    """One entity of a restore plan as table rows: field, before, after, whether it changes."""
    before, after = change.get("before") or {}, change.get("after") or {}
    rows = []
    for key in dict.fromkeys([*before, *after]):
        old, new = _shown(before.get(key)), _shown(after.get(key))
        rows.append((key.replace("_", " "), old, new, old != new))
    return rows


def _shown(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, list):
        return (
            f"{len(value)} item{'s' if len(value) != 1 else ''}: "
            + ", ".join(map(_item, value[:5]))
            + (" …" if len(value) > 5 else "")
        )
    return str(value)


def _item(value: Any) -> str:
    if isinstance(value, dict):
        return " → ".join(str(v) for v in value.values())
    return str(value)


async def late_runs(services: Services, tenant: str) -> dict[str, Any] | None:
    """How many of the tenant's runs Prefect shows Late, and by how long the oldest; None if it did not answer."""
    try:
        count, by = await asyncio.wait_for(services.prefect.late_runs(tenant), timeout=PREFECT_TIMEOUT)
    except (TimeoutError, PrefectUnavailable):
        return None
    return {"count": count, "by_seconds": by}


class HealthPages(Controller):
    """``/dashboard/sites/{tenant}/health``."""

    path = "/sites/{tenant:str}/health"

    @get("/")
    async def health(
        self, request: Request[Any, Any, Any], tenant: str, signed_in: Principal, services: Services
    ) -> Response[str]:
        """Everything at once; late runs come from Prefect (the page says so when it does not answer)."""
        await asyncio.to_thread(site_for, services, signed_in, tenant)  # another tenant's site: 404 first
        late = await late_runs(services, tenant)
        return await asyncio.to_thread(self._page, request, services, signed_in, tenant, late=late)

    @get("/backups/{backup_id:str}/download", sync_to_thread=True)
    def download(self, tenant: str, backup_id: str, signed_in: Principal, services: Services) -> Stream:
        """The backup as one tar, streamed from the store and checked part by part as the API streams it."""
        return tar_stream(services.backups.download(signed_in, tenant, backup_id))

    @get("/restore", sync_to_thread=True)
    def restore_preview(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        signed_in: Principal,
        services: Services,
        at: str = "",
    ) -> Response[str]:
        """The dry run of a restore to ``at`` (typed in the site's timezone): every change, before → after,
        then the confirmation. Nothing is written."""
        settings = services.site.settings(signed_in, tenant)
        try:
            when = wall_clock(at, settings.timezone, field="at")
            plan = services.backups.plan_restore(signed_in, tenant, when)
        except PressroomError as exc:
            if isinstance(exc, BadRequest):
                return self._page(request, services, signed_in, tenant, late=None, at=at, field_error=exc.message)
            return self._page(
                request, services, signed_in, tenant, late=None, at=at, errors=[error_message(exc)], status=exc.status
            )
        return page(
            request,
            "restore_preview.html",
            principal=signed_in,
            site=site_for(services, signed_in, tenant),
            settings=settings,
            at=plan.at,
            typed=at,
            changes=[{**change, "rows": change_rows(change)} for change in plan.changes],
            form_key=new_form_key(),
        )

    @post("/restore", sync_to_thread=True)
    def restore(
        self, request: Request[Any, Any, Any], tenant: str, data: FormData, signed_in: Principal, services: Services
    ) -> Response[Any]:
        """Restore the site to the instant the preview showed (a snapshot of now is taken first: undo-able)."""
        back = url("sites", tenant, "health")
        when = instant(text(data, "at"))
        if when is None:
            flash_error(request, BadRequest("The form lost its time; start again from the preview.", details={}))
            return see_other(back)
        return command_redirect(
            request,
            back,
            lambda: services.backups.restore(
                signed_in, tenant, when, confirm=checked(data, "confirm"), idempotency_key=form_key(data)
            ),
            lambda outcome: (
                f"Restore started: operation {outcome.body['operation_id']}; it took snapshot "
                f"{outcome.body['snapshot_id']} of the site first (undo the restore below)."
            ),
            then=lambda outcome: url("sites", tenant, "operations", outcome.body["operation_id"]),
        )

    @post("/undo-restore", sync_to_thread=True)
    def undo_restore(
        self, request: Request[Any, Any, Any], tenant: str, data: FormData, signed_in: Principal, services: Services
    ) -> Response[Any]:
        """Bring the site back to the snapshot the last restore took."""
        return command_redirect(
            request,
            url("sites", tenant, "health"),
            lambda: services.backups.undo_restore(
                signed_in, tenant, confirm=checked(data, "confirm"), idempotency_key=form_key(data)
            ),
            lambda outcome: f"Undo started: operation {outcome.body['operation_id']} imports the snapshot.",
            then=lambda outcome: url("sites", tenant, "operations", outcome.body["operation_id"]),
        )

    @post("/import", sync_to_thread=True)
    def import_backup(
        self, request: Request[Any, Any, Any], tenant: str, data: FormData, signed_in: Principal, services: Services
    ) -> Response[Any]:
        """Replace the site with one of its own backups (verified whole first, staged, swapped in at once)."""
        backup_id = text(data, "backup_id")
        return command_redirect(
            request,
            url("sites", tenant, "health"),
            lambda: services.backups.import_backup(
                signed_in,
                tenant,
                source_tenant=tenant,
                backup_id=backup_id,
                confirm=checked(data, "confirm"),
                idempotency_key=form_key(data),
            ),
            lambda outcome: f"Import of backup {backup_id} started: operation {outcome.body['operation_id']}.",
            then=lambda outcome: url("sites", tenant, "operations", outcome.body["operation_id"]),
        )

    @post("/backup", sync_to_thread=True)
    def backup(
        self, request: Request[Any, Any, Any], tenant: str, data: FormData, signed_in: Principal, services: Services
    ) -> Response[Any]:
        """Back the whole site up now."""
        return command_redirect(
            request,
            url("sites", tenant, "health"),
            lambda: services.backups.request(
                signed_in, tenant, confirm=checked(data, "confirm"), idempotency_key=form_key(data)
            ),
            lambda outcome: f"Backup {outcome.body['backup_id']} requested: operation {outcome.body['operation_id']}.",
        )

    @staticmethod
    def _page(
        request: Request[Any, Any, Any],
        services: Services,
        principal: Principal,
        tenant: str,
        *,
        late: dict[str, Any] | None,
        at: str | None = None,
        field_error: str | None = None,
        errors: list[dict[str, Any]] | None = None,
        status: int | None = None,
    ) -> Response[str]:
        site = site_for(services, principal, tenant)
        settings = services.site.settings(principal, tenant)
        health = services.backups.health(principal, tenant)
        last = health.last_good_backup or {}
        runs = services.operations.list(principal, tenant, kinds=LIFECYCLE_KINDS, limit=RECENT)
        return page(
            request,
            "health.html",
            status_code=status or (400 if field_error else 200),
            errors=errors,
            principal=principal,
            site=site,
            settings=settings,
            runs=runs,
            live=any(op.status not in TERMINAL and op.status != SCHEDULED for op in runs),
            backups=services.backups.list(principal, tenant, limit=10),
            dead=services.operations.list(principal, tenant, status=DEAD, limit=RECENT),
            health=health,
            last_good={"id": last.get("id"), "at": instant(last.get("at"))} if last else None,
            chores=chore_rows(health.chores),
            late=late,
            at=at if at is not None else to_input(datetime.now(UTC) - timedelta(days=1), settings.timezone),
            field_error=field_error,
            form_key=new_form_key(),
        )


__all__ = ["HealthPages", "change_rows", "chore_rows", "instant", "late_runs"]
