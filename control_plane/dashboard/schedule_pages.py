"""Scheduling a document: pick a time in the site's timezone, read exactly what will happen, confirm.

A schedule is a release of that one document version with ``publish_at`` (the same
command as the tenant API's releases): stored in UTC, shown in the site's timezone
with the UTC instant beside it, refused in the past and more than 90 days ahead.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from litestar import Controller, Request, Response, get, post

from control_plane.auth import Principal
from control_plane.container import Services
from control_plane.dashboard.context import site_for
from control_plane.dashboard.forms import FormData, checked, form_key, new_form_key, number, text
from control_plane.dashboard.local_time import bounds, parse_local
from control_plane.dashboard.views import error_message, flash_error, notice, page, see_other, url
from control_plane.releases.schemas import ReleaseCreate, ReleaseDocument
from tenant_runtime.errors import InvalidSchedule, PressroomError


def _schedule_page(
    request: Request[Any, Any, Any],
    services: Services,
    principal: Principal,
    tenant: str,
    document_id: str,
    *,
    at: str,
    when: datetime | None,
    field_error: str | None,
    status_code: int = 200,
    errors: list[dict[str, Any]] | None = None,
) -> Response[str]:
    settings = services.site.settings(principal, tenant)
    earliest, latest = bounds(settings.timezone)
    return page(
        request,
        "schedule.html",
        status_code=status_code,
        errors=errors,
        principal=principal,
        site=site_for(services, principal, tenant),
        doc=services.documents.get(principal, tenant, document_id),
        settings=settings,
        at=at,
        when=when,
        field_error=field_error,
        earliest=earliest,
        latest=latest,
        form_key=new_form_key(),
    )


class SchedulePages(Controller):
    """``/dashboard/sites/{tenant}/documents/{id}/schedule``."""

    path = "/sites/{tenant:str}/documents/{document_id:str}/schedule"

    @get("/", sync_to_thread=True)
    def schedule_form(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        document_id: str,
        signed_in: Principal,
        services: Services,
        at: str = "",
    ) -> Response[str]:
        """Pick the time; with ``at``, the check and the confirmation of exactly what will happen."""
        if not at:
            return _schedule_page(request, services, signed_in, tenant, document_id, at="", when=None, field_error=None)
        settings = services.site.settings(signed_in, tenant)
        try:
            when = parse_local(at, settings.timezone)
        except InvalidSchedule as exc:
            return _schedule_page(
                request,
                services,
                signed_in,
                tenant,
                document_id,
                at=at,
                when=None,
                field_error=exc.message,
                status_code=400,
            )
        return _schedule_page(request, services, signed_in, tenant, document_id, at=at, when=when, field_error=None)

    @post("/", sync_to_thread=True)
    def schedule(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        document_id: str,
        data: FormData,
        signed_in: Principal,
        services: Services,
    ) -> Response[Any]:
        """Schedule the version the user confirmed, for the time they confirmed (re-checked now)."""
        at = text(data, "at")
        settings = services.site.settings(signed_in, tenant)
        when: datetime | None = None
        try:
            when = parse_local(at, settings.timezone)
            version = number(data, "version")
            if version is None:
                raise InvalidSchedule("The form lost its version; reload the page.", details={"field": "version"})
            release = ReleaseCreate(
                documents=[ReleaseDocument(id=document_id, version=version)],
                publish_at=when,
                confirm=checked(data, "confirm"),
            )
            outcome = services.releases.create(signed_in, tenant, release, idempotency_key=form_key(data))
        except InvalidSchedule as exc:
            return _schedule_page(
                request,
                services,
                signed_in,
                tenant,
                document_id,
                at=at,
                when=None,
                field_error=exc.message,
                status_code=400,
            )
        except PressroomError as exc:
            if exc.code == "confirmation_required":
                return _schedule_page(
                    request,
                    services,
                    signed_in,
                    tenant,
                    document_id,
                    at=at,
                    when=when,
                    field_error=None,
                    status_code=400,
                    errors=[error_message(exc)],
                )
            flash_error(request, exc)
            return see_other(url("sites", tenant, "documents", document_id))
        notice(request, f"Scheduled: operation {outcome.body['operation_id']} is {outcome.body['status']}.")
        return see_other(url("sites", tenant, "documents", document_id))


__all__ = ["SchedulePages"]
