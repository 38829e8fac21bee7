"""The site: its settings (title, timezone), navigation and redirects (drafts, published by a release),
webhooks (the signing secret shown once) and the search index — each through the API's own services."""

from __future__ import annotations

from typing import Any
from zoneinfo import available_timezones

import msgspec
from litestar import Controller, Request, Response, get, post

from control_plane.auth import Principal
from control_plane.container import Services
from control_plane.dashboard.commands import command_redirect
from control_plane.dashboard.context import site_for
from control_plane.dashboard.forms import FormData, checked, form_key, new_form_key, number, text
from control_plane.dashboard.views import error_message, flash_error, notice, page, see_other, url
from control_plane.site.schemas import ResourceUpdate, SettingsUpdate
from control_plane.webhooks.schemas import WebhookCreate
from dispatch.runtime import CommandResult
from tenant_runtime.errors import BadRequest, PressroomError

TIMEZONES = sorted(available_timezones() - {"localtime", "Factory"})
BLANK_ROWS = 3  # empty rows offered below a list's items; saving with more filled gives more next time
MAX_ROWS = 200
REDIRECT_STATUSES = (301, 302, 307, 308)
SETTING_HINTS = {
    "title": "A title is 1-200 characters.",
    "description": "A description is at most 500 characters.",
    "language": "A language is a tag such as en, fr or pt-BR (2-35 characters).",
    "timezone": "Pick a timezone from the list (e.g. Europe/Berlin).",
}
SETTING_CODES = {f"invalid_{name}": name for name in SETTING_HINTS}


def navigation_rows(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The navigation editor's rows in order; fully empty rows are dropped."""
    rows = []
    for i in range(MAX_ROWS + BLANK_ROWS):
        label, href = text(data, f"label_{i}").strip(), text(data, f"href_{i}").strip()
        if label or href:
            rows.append({"label": label, "href": href})
    return rows


def redirect_rows(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The redirects editor's rows in order; fully empty rows are dropped."""
    rows = []
    for i in range(MAX_ROWS + BLANK_ROWS):
        source, target = text(data, f"from_{i}").strip(), text(data, f"to_{i}").strip()
        if source or target:
            status = number(data, f"status_{i}")
            rows.append({"from": source, "to": target, "status": status if status in REDIRECT_STATUSES else 301})
    return rows


# The versioned entity types a retention policy covers, as the page names them.
RETENTION_TYPES = {"document": "documents", "site_resource": "navigation, redirects and theme"}


class SitePages(Controller):
    """``/dashboard/sites/{tenant}/site``."""

    path = "/sites/{tenant:str}/site"

    @get("/", sync_to_thread=True)
    def site(
        self, request: Request[Any, Any, Any], tenant: str, signed_in: Principal, services: Services
    ) -> Response[str]:
        """Settings, navigation, redirects, webhooks and search, one section each."""
        return self._page(request, services, signed_in, tenant)

    @post("/settings", sync_to_thread=True)
    def settings(
        self, request: Request[Any, Any, Any], tenant: str, data: FormData, signed_in: Principal, services: Services
    ) -> Response[Any]:
        """Save the title, description, language and timezone (dates in the dashboard and on the site follow it);
        the public site shows them on the next request."""
        # A field the form did not send stays as it is (None); one it sent empty is checked like the API.
        typed = {name: text(data, name).strip() for name in SETTING_HINTS if name in data}
        if not typed.get("title") or len(typed["title"]) > 200:
            errors = {"title": SETTING_HINTS["title"]}
            return self._page(request, services, signed_in, tenant, typed=typed, field_errors=errors)
        try:
            services.site.configure(
                signed_in, tenant, msgspec.convert(typed, SettingsUpdate), idempotency_key=form_key(data)
            )
        except msgspec.ValidationError as exc:
            named = str(exc).rpartition("$.")[2].rstrip("`").strip()  # "... - at `$.language`"
            field = named if named in typed else "title"
            errors = {field: SETTING_HINTS[field]}
            return self._page(request, services, signed_in, tenant, typed=typed, field_errors=errors)
        except PressroomError as exc:
            coded = SETTING_CODES.get(exc.code)
            if coded is not None:
                hint = f"“{typed.get('timezone')}” is not a timezone; pick one from the list (e.g. Europe/Berlin)."
                errors = {coded: hint if coded == "timezone" else SETTING_HINTS[coded]}
                return self._page(request, services, signed_in, tenant, typed=typed, field_errors=errors)
            return self._page(
                request, services, signed_in, tenant, typed=typed, errors=[error_message(exc)], status=exc.status
            )
        saved = services.site.settings(signed_in, tenant)
        notice(request, f"Settings saved: “{saved.title}”, times in {saved.timezone}.")
        return see_other(url("sites", tenant, "site"))

    @post("/navigation", sync_to_thread=True)
    def navigation(
        self, request: Request[Any, Any, Any], tenant: str, data: FormData, signed_in: Principal, services: Services
    ) -> Response[Any]:
        """Save a new draft version of the navigation (a release publishes it)."""
        return self._resource(request, services, signed_in, tenant, "navigation", navigation_rows(data), data)

    @post("/redirects", sync_to_thread=True)
    def redirects(
        self, request: Request[Any, Any, Any], tenant: str, data: FormData, signed_in: Principal, services: Services
    ) -> Response[Any]:
        """Save a new draft version of the redirects (a release publishes them)."""
        return self._resource(request, services, signed_in, tenant, "redirects", redirect_rows(data), data)

    @post("/webhooks", sync_to_thread=True)
    def register_webhook(
        self, request: Request[Any, Any, Any], tenant: str, data: FormData, signed_in: Principal, services: Services
    ) -> Response[Any]:
        """Register an endpoint; the page shows its signing secret this once."""
        endpoint = text(data, "url").strip()
        try:
            create = msgspec.convert({"url": endpoint}, WebhookCreate)
        except msgspec.ValidationError:
            return self._page(
                request,
                services,
                signed_in,
                tenant,
                typed={"url": endpoint},
                field_errors={"url": "Enter an http:// or https:// address (8-2000 characters, no spaces)."},
            )
        try:
            outcome = services.webhooks.register(signed_in, tenant, create, idempotency_key=form_key(data))
        except PressroomError as exc:
            if isinstance(exc, BadRequest):
                return self._page(
                    request, services, signed_in, tenant, typed={"url": endpoint}, field_errors={"url": exc.message}
                )
            return self._page(request, services, signed_in, tenant, errors=[error_message(exc)], status=exc.status)
        return self._page(request, services, signed_in, tenant, new_secret=outcome.body, status=201)

    @post("/webhooks/{endpoint_id:str}/{verb:str}", sync_to_thread=True)
    def toggle_webhook(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        endpoint_id: str,
        verb: str,
        signed_in: Principal,
        services: Services,
    ) -> Response[Any]:
        """Enable or disable an endpoint (a disabled one gets nothing, pending retries included)."""
        back = url("sites", tenant, "site") + "#webhooks"
        if verb not in ("enable", "disable"):
            flash_error(request, BadRequest("Enable or disable.", details={"verb": verb}))
            return see_other(back)
        return command_redirect(
            request,
            back,
            lambda: services.webhooks.set_enabled(signed_in, tenant, endpoint_id, verb == "enable"),
            lambda _: f"Webhook {endpoint_id} {verb}d.",
        )

    @post("/search", sync_to_thread=True)
    def rebuild_search(
        self, request: Request[Any, Any, Any], tenant: str, data: FormData, signed_in: Principal, services: Services
    ) -> Response[Any]:
        """Replay every published document into a fresh search index."""
        back = url("sites", tenant, "site") + "#search"

        def says(outcome: CommandResult) -> str:
            if operation_id := outcome.body.get("operation_id"):
                return f"Search rebuild requested: operation {operation_id} is {outcome.body.get('status')}."
            return "The search index is already populated; tick “even if populated” to rebuild it anyway."

        def then(outcome: CommandResult) -> str:
            operation_id = outcome.body.get("operation_id")
            return url("sites", tenant, "operations", operation_id) if operation_id else back

        return command_redirect(
            request,
            back,
            lambda: services.site.rebuild_search(
                signed_in, tenant, force=checked(data, "force"), idempotency_key=form_key(data)
            ),
            says,
            then=then,
        )

    @post("/retention/prune", sync_to_thread=True)
    def prune_versions(
        self, request: Request[Any, Any, Any], tenant: str, data: FormData, signed_in: Principal, services: Services
    ) -> Response[Any]:
        """Run prune_policies now (it also runs nightly at 04:00 UTC): versions beyond the policy go for good."""
        back = url("sites", tenant, "site") + "#retention"
        return command_redirect(
            request,
            back,
            lambda: services.retention.prune(
                signed_in, tenant, confirm=checked(data, "confirm"), idempotency_key=form_key(data)
            ),
            lambda outcome: f"Pruning requested: operation {outcome.body.get('operation_id')}.",
            then=lambda outcome: url("sites", tenant, "operations", str(outcome.body["operation_id"])),
        )

    @post("/retention/{entity_type:str}", sync_to_thread=True)
    def set_retention(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        entity_type: str,
        data: FormData,
        signed_in: Principal,
        services: Services,
    ) -> Response[Any]:
        """Keep the last N versions of each entity of a type, and every version younger than D days."""
        back = url("sites", tenant, "site") + "#retention"
        keep_last, keep_days = number(data, "keep_last"), number(data, "keep_days")

        def call() -> CommandResult:
            if entity_type not in RETENTION_TYPES:
                raise BadRequest("No such kind of versioned entity.", details={"entity_type": entity_type})
            last_ok = keep_last is not None and 1 <= keep_last <= 10_000
            if keep_last is None or not last_ok or keep_days is None or not 0 <= keep_days <= 3650:
                raise BadRequest(
                    "Keep between 1 and 10,000 versions and between 0 and 3,650 days.",
                    details={"field": "keep_days" if last_ok else "keep_last"},
                )
            return services.retention.set_policy(
                signed_in, tenant, entity_type, keep_last=keep_last, keep_days=keep_days, idempotency_key=form_key(data)
            )

        return command_redirect(
            request,
            back,
            call,
            lambda _: (
                f"Retention of {RETENTION_TYPES[entity_type]}: the last {keep_last} versions, "
                f"and every version younger than {keep_days} days."
            ),
        )

    def _resource(
        self,
        request: Request[Any, Any, Any],
        services: Services,
        principal: Principal,
        tenant: str,
        name: str,
        rows: list[dict[str, Any]],
        data: dict[str, Any],
    ) -> Response[Any]:
        version = number(data, "version")
        try:
            if version is None:
                raise BadRequest("The form lost its version; reload the page.", details={"field": "version"})
            outcome = services.site.update_resource(
                principal, tenant, name, ResourceUpdate(version=version, content=rows), idempotency_key=form_key(data)
            )
        except PressroomError as exc:
            message = error_message(exc)["message"]
            if exc.code == "version_conflict":  # the friendly text speaks of documents
                message = f"{exc.message} Reload the page to see the current version; your rows are kept below."
            return self._page(
                request,
                services,
                principal,
                tenant,
                rows={name: rows},
                field_errors={name: message},
                status=exc.status,
            )
        notice(
            request,
            f"{name.capitalize()} saved as draft version {outcome.body.get('version')}; publish it with a release.",
        )
        return see_other(url("sites", tenant, "site") + f"#{name}")

    @staticmethod
    def _page(
        request: Request[Any, Any, Any],
        services: Services,
        principal: Principal,
        tenant: str,
        *,
        typed: dict[str, str] | None = None,
        rows: dict[str, list[dict[str, Any]]] | None = None,
        field_errors: dict[str, str] | None = None,
        errors: list[dict[str, Any]] | None = None,
        new_secret: dict[str, Any] | None = None,
        status: int | None = None,
    ) -> Response[str]:
        site = site_for(services, principal, tenant)
        settings = services.site.settings(principal, tenant)
        navigation = services.site.resource(principal, tenant, "navigation")
        redirects = services.site.resource(principal, tenant, "redirects")
        rows = rows or {}
        webhooks = services.webhooks.list(principal, tenant) if site.can("site.admin") else []
        retention = services.retention.get(principal, tenant)
        return page(
            request,
            "site.html",
            status_code=status or (400 if field_errors else 200),
            errors=errors,
            principal=principal,
            site=site,
            settings=settings,
            typed=typed or {},
            timezones=TIMEZONES,
            navigation=navigation,
            redirects=redirects,
            navigation_rows=rows.get("navigation", navigation.content or []),
            redirect_rows=rows.get("redirects", redirects.content or []),
            blank_rows=BLANK_ROWS,
            redirect_statuses=REDIRECT_STATUSES,
            webhooks=webhooks,
            retention=retention,
            retention_types=RETENTION_TYPES,
            new_secret=new_secret,
            field_errors=field_errors or {},
            form_key=new_form_key(),
        )


__all__ = ["SitePages", "navigation_rows", "redirect_rows"]
