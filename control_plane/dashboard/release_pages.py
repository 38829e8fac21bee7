"""Releases: pick documents, navigation, redirects and theme; see what changes (before → after);
publish now or schedule in the site's timezone; scheduled ones are cancelled or moved on their
operation page. Every release is the tenant API's release command."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from litestar import Controller, Request, Response, get, post

from control_plane.auth import Principal
from control_plane.container import Services
from control_plane.dashboard.context import site_for
from control_plane.dashboard.forms import FormData, checked, form_key, new_form_key, text
from control_plane.dashboard.local_time import bounds, parse_local
from control_plane.dashboard.release_preview import Picked, preview
from control_plane.dashboard.views import error_message, notice, page, see_other, url
from control_plane.releases.schemas import ReleaseCreate, ReleaseDocument
from tenant_runtime.actions.site_resources import THEMES
from tenant_runtime.errors import InvalidSchedule, PressroomError
from tenant_runtime.operation_states import SCHEDULED

CANDIDATES = 50  # documents offered per list (drafts, changed since publish); search narrows them


def _all(data: dict[str, Any], name: str) -> list[str]:
    value = data.get(name)
    if value is None:
        return []
    return [v for v in (value if isinstance(value, list) else [value]) if isinstance(v, str)]


def _version(raw: str) -> int | None:
    raw = raw.strip()
    return int(raw) if raw.isascii() and raw.isdigit() and 0 < len(raw) <= 10 else None


def picked_from(data: dict[str, Any]) -> Picked:
    """The release the form describes; ``doc`` values are ``{id}:{version}``, malformed ones are dropped."""
    documents: list[tuple[str, int]] = []
    for value in _all(data, "doc"):
        document_id, _, version = value.partition(":")
        number = _version(version)
        if document_id and number is not None and (document_id, number) not in documents:
            documents.append((document_id[:64], number))
    theme = text(data, "theme").strip()
    return Picked(
        documents=documents[:100],
        navigation_version=_version(text(data, "navigation")),
        redirects_version=_version(text(data, "redirects")),
        theme=theme if theme in THEMES else None,
    )


class ReleasePages(Controller):
    """``/dashboard/sites/{tenant}/releases``."""

    path = "/sites/{tenant:str}/releases"

    @get("/", sync_to_thread=True)
    def releases(
        self, request: Request[Any, Any, Any], tenant: str, signed_in: Principal, services: Services
    ) -> Response[str]:
        """Scheduled releases (soonest first) and the form to start a new one."""
        # Releases only, in the query: a site's other scheduled operations (publishes, chores) are not read.
        scheduled = services.operations.list(signed_in, tenant, status=SCHEDULED, limit=200, kinds=("release",))
        scheduled.sort(key=lambda op: op.scheduled_for or op.created_at)
        return self._new(request, services, signed_in, tenant, scheduled=scheduled, q="")

    @get("/new", sync_to_thread=True)
    def new(
        self, request: Request[Any, Any, Any], tenant: str, signed_in: Principal, services: Services, q: str = ""
    ) -> Response[str]:
        """Pick what the release publishes."""
        return self._new(request, services, signed_in, tenant, scheduled=None, q=q[:200])

    @get("/preview", sync_to_thread=True)
    def review(
        self, request: Request[Any, Any, Any], tenant: str, signed_in: Principal, services: Services
    ) -> Response[str]:
        """Before → after for every entity, then the confirmation (publish now, or at a time)."""
        data = {key: request.query_params.getall(key) for key in request.query_params}
        return self._preview(request, services, signed_in, tenant, data)

    @post("/", sync_to_thread=True)
    def create(
        self, request: Request[Any, Any, Any], tenant: str, data: FormData, signed_in: Principal, services: Services
    ) -> Response[Any]:
        """Publish the reviewed release now, or schedule it."""
        picked = picked_from(data)
        settings = services.site.settings(signed_in, tenant)
        try:
            when: datetime | None = None
            if text(data, "when") == "later":
                when = parse_local(text(data, "at"), settings.timezone)
            release = ReleaseCreate(
                documents=[ReleaseDocument(id=d, version=v) for d, v in picked.documents],
                navigation_version=picked.navigation_version,
                redirects_version=picked.redirects_version,
                theme=picked.theme,
                publish_at=when,
                confirm=checked(data, "confirm"),
            )
            outcome = services.releases.create(signed_in, tenant, release, idempotency_key=form_key(data))
        except InvalidSchedule as exc:
            return self._preview(request, services, signed_in, tenant, data, field_error=exc.message)
        except PressroomError as exc:
            return self._preview(
                request, services, signed_in, tenant, data, errors=[error_message(exc)], status=exc.status
            )
        operation_id = outcome.body["operation_id"]
        verb = "scheduled" if outcome.body["status"] == SCHEDULED else "published"
        notice(request, f"Release {verb}: operation {operation_id} is {outcome.body['status']}.")
        return see_other(url("sites", tenant, "operations", operation_id))

    @staticmethod
    def _new(
        request: Request[Any, Any, Any],
        services: Services,
        principal: Principal,
        tenant: str,
        *,
        scheduled: list[Any] | None,
        q: str,
    ) -> Response[str]:
        drafts = services.documents.find(principal, tenant, q=q, status="draft", limit=CANDIDATES)
        changed = services.documents.find(principal, tenant, q=q, status="changed", limit=CANDIDATES)
        return page(
            request,
            "releases.html",
            principal=principal,
            site=site_for(services, principal, tenant),
            settings=services.site.settings(principal, tenant),
            scheduled=scheduled,
            drafts=drafts,
            changed=changed,
            navigation=services.site.resource(principal, tenant, "navigation"),
            redirects=services.site.resource(principal, tenant, "redirects"),
            themes=THEMES,
            q=q,
        )

    @staticmethod
    def _preview(
        request: Request[Any, Any, Any],
        services: Services,
        principal: Principal,
        tenant: str,
        data: dict[str, Any],
        *,
        field_error: str | None = None,
        errors: list[dict[str, Any]] | None = None,
        status: int | None = None,
    ) -> Response[str]:
        picked = picked_from(data)
        settings = services.site.settings(principal, tenant)
        when_choice = "later" if text(data, "when") == "later" else "now"
        at = text(data, "at")
        when = None
        if when_choice == "later" and at and field_error is None:
            try:
                when = parse_local(at, settings.timezone)
            except InvalidSchedule as exc:
                field_error = exc.message
        earliest, latest = bounds(settings.timezone)
        code = status or (400 if field_error or picked.empty else 200)
        return page(
            request,
            "release_preview.html",
            status_code=code,
            errors=errors,
            principal=principal,
            site=site_for(services, principal, tenant),
            settings=settings,
            picked=picked,
            changes=preview(services, principal, tenant, picked),
            when_choice=when_choice,
            at=at,
            when=when,
            field_error=field_error,
            earliest=earliest,
            latest=latest,
            form_key=new_form_key(),
        )


__all__ = ["ReleasePages", "picked_from"]
