"""Documents of one site: list, write, edit, and publish or unpublish with an explicit confirmation.

Every write calls the same document service as the tenant API (it builds the
command; the page passes the principal, the form's idempotency key and the
confirmation); a refusal (role, version, confirmation, quota, suspension) comes
back as a message on the page, with its error code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from litestar import Controller, Request, Response, get, post
from litestar.params import Parameter

from control_plane.auth import Principal
from control_plane.container import Services
from control_plane.dashboard.context import site_for
from control_plane.dashboard.forms import (
    FormData,
    checked,
    document_values,
    form_key,
    new_form_key,
    number,
    text,
    to_create,
    to_update,
)
from control_plane.dashboard.paging import PAGE_SIZE, Pages
from control_plane.dashboard.views import error_message, flash_error, fragment, notice, page, see_other, url
from dispatch.runtime import CommandResult, DocumentOut
from tenant_runtime.errors import PressroomError
from tenant_runtime.queries import DOCUMENT_FILTERS
from tenant_runtime.rendering import render_markdown

MAX_BODY = 1_000_000
_BLANK = {"slug": "", "title": "", "body": "", "kind": "post"}
_VERBS = {"publish": "Publish", "unpublish": "Unpublish"}


def _document(services: Services, principal: Principal, tenant: str, document_id: str) -> DocumentOut:
    return services.documents.get(principal, tenant, document_id)


def _confirm(
    request: Request[Any, Any, Any],
    services: Services,
    principal: Principal,
    tenant: str,
    document_id: str,
    change: str,
) -> Response[str]:
    doc = _document(services, principal, tenant, document_id)
    verb = _VERBS[change]
    return page(
        request,
        "confirm.html",
        principal=principal,
        site=site_for(services, principal, tenant),
        doc=doc,
        change=change,
        verb=verb,
        delivery=services.documents.delivery(principal, tenant, document_id),
        settings=services.site.settings(principal, tenant),
        form_key=new_form_key(),
    )


class DocumentPages(Controller):
    """``/dashboard/sites/{tenant}/…``: the site's documents."""

    path = "/sites/{tenant:str}"

    @get("/", sync_to_thread=True)
    def documents(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        signed_in: Principal,
        services: Services,
        q: str = "",
        status: str = "",
        kind: str = "",
        page_number: Annotated[int, Parameter(query="page", ge=1, le=100_000)] = 1,
    ) -> Response[str]:
        """One page of documents, most recently edited first, searched and filtered on the server."""
        status_filter = status if status in DOCUMENT_FILTERS else None
        kind_filter = kind if kind in ("page", "post") else None
        found = services.documents.find(
            signed_in,
            tenant,
            q=q[:200],
            status=status_filter,
            kind=kind_filter,
            limit=PAGE_SIZE,
            offset=(page_number - 1) * PAGE_SIZE,
        )
        return page(
            request,
            "documents.html",
            principal=signed_in,
            site=site_for(services, signed_in, tenant),
            settings=services.site.settings(signed_in, tenant),
            rows=found.items,
            total=found.total,
            pages=Pages(page_number, PAGE_SIZE, found.total, {"q": q, "status": status, "kind": kind}),
            q=q,
            status_filter=status_filter or "",
            kind_filter=kind_filter or "",
            filters=DOCUMENT_FILTERS,
        )

    @post("/preview", sync_to_thread=True)
    def preview(self, tenant: str, data: FormData, signed_in: Principal, services: Services) -> Response[str]:
        """The editor's live Markdown preview: the body as typed, rendered and sanitized like the site does
        (media embeds point at the site's files, as on the saved page's preview)."""
        site = site_for(services, signed_in, tenant)  # the tenant check: another tenant's site is NotFound
        body = text(data, "body")[:MAX_BODY]
        return fragment(
            "_preview.html", preview=render_markdown(body, base_url=site.public_url), empty=not body.strip()
        )

    @get("/documents/{document_id:str}/delivery", sync_to_thread=True)
    def delivery(self, tenant: str, document_id: str, signed_in: Principal, services: Services) -> Response[str]:
        """The rendering indicator, polled by htmx until the document's delivery has landed."""
        return fragment(
            "_delivery.html",
            site=site_for(services, signed_in, tenant),
            doc=_document(services, signed_in, tenant, document_id),
            delivery=services.documents.delivery(signed_in, tenant, document_id),
            settings=services.site.settings(signed_in, tenant),
        )

    @get("/documents/new", sync_to_thread=True)
    def new(
        self, request: Request[Any, Any, Any], tenant: str, signed_in: Principal, services: Services
    ) -> Response[str]:
        """An empty document form."""
        return page(
            request,
            "document_form.html",
            principal=signed_in,
            site=site_for(services, signed_in, tenant),
            doc=None,
            values=_BLANK,
            form_key=new_form_key(),
            preview=None,
            delivery=None,
            settings=None,
        )

    @post("/documents", sync_to_thread=True)
    def create(
        self, request: Request[Any, Any, Any], tenant: str, data: FormData, signed_in: Principal, services: Services
    ) -> Response[Any]:
        """Create a draft; on a refusal the form comes back with what was typed."""
        values = document_values(data)
        try:
            payload = to_create(values)
            outcome = services.documents.create(signed_in, tenant, payload, idempotency_key=form_key(data))
        except PressroomError as exc:
            return page(
                request,
                "document_form.html",
                status_code=exc.status,
                errors=[error_message(exc)],
                principal=signed_in,
                site=site_for(services, signed_in, tenant),
                doc=None,
                values=values,
                form_key=new_form_key(),
                preview=None,
                delivery=None,
                settings=None,
            )
        notice(request, f"Draft “{outcome.body['title']}” created.")
        return see_other(url("sites", tenant, "documents", outcome.body["id"]))

    @get("/documents/{document_id:str}", sync_to_thread=True)
    def edit(
        self, request: Request[Any, Any, Any], tenant: str, document_id: str, signed_in: Principal, services: Services
    ) -> Response[str]:
        """The edit form with a sanitized preview of the saved body."""
        doc = _document(services, signed_in, tenant, document_id)
        values = {"slug": doc.slug, "title": doc.title, "body": doc.body, "kind": doc.kind}
        return page(
            request,
            "document_form.html",
            principal=signed_in,
            site=site_for(services, signed_in, tenant),
            doc=doc,
            values=values,
            form_key=new_form_key(),
            preview=render_markdown(doc.body, base_url=f"{services.settings.runtime.site_url}/{tenant}"),
            delivery=services.documents.delivery(signed_in, tenant, document_id),
            settings=services.site.settings(signed_in, tenant),
        )

    @post("/documents/{document_id:str}", sync_to_thread=True)
    def update(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        document_id: str,
        data: FormData,
        signed_in: Principal,
        services: Services,
    ) -> Response[Any]:
        """Save if the form's version is still current; a conflict keeps the typed text on the page."""
        values, version = document_values(data), number(data, "version")
        try:
            payload = to_update(values, version)
            outcome = services.documents.update(signed_in, tenant, document_id, payload, idempotency_key=form_key(data))
        except PressroomError as exc:
            doc = _document(services, signed_in, tenant, document_id)
            return page(
                request,
                "document_form.html",
                status_code=exc.status,
                errors=[error_message(exc)],
                principal=signed_in,
                site=site_for(services, signed_in, tenant),
                doc=doc,
                values=values,
                stale_version=version,
                form_key=new_form_key(),
                preview=None,
                delivery=None,
                settings=services.site.settings(signed_in, tenant),
            )
        notice(request, f"Saved version {outcome.body['version']}.")
        return see_other(url("sites", tenant, "documents", document_id))

    @get("/documents/{document_id:str}/publish", sync_to_thread=True)
    def confirm_publish(
        self, request: Request[Any, Any, Any], tenant: str, document_id: str, signed_in: Principal, services: Services
    ) -> Response[str]:
        """The explicit confirmation step before publishing."""
        return _confirm(request, services, signed_in, tenant, document_id, "publish")

    @get("/documents/{document_id:str}/unpublish", sync_to_thread=True)
    def confirm_unpublish(
        self, request: Request[Any, Any, Any], tenant: str, document_id: str, signed_in: Principal, services: Services
    ) -> Response[str]:
        """The explicit confirmation step before unpublishing."""
        return _confirm(request, services, signed_in, tenant, document_id, "unpublish")

    @post("/documents/{document_id:str}/publish", sync_to_thread=True)
    def publish(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        document_id: str,
        data: FormData,
        signed_in: Principal,
        services: Services,
    ) -> Response[Any]:
        """Publish the version the user confirmed (a newer save is a version conflict)."""
        return self._change(
            request,
            tenant,
            document_id,
            "publish",
            lambda: services.documents.publish(
                signed_in,
                tenant,
                document_id,
                version=number(data, "version"),
                confirm=checked(data, "confirm"),
                idempotency_key=form_key(data),
            ),
        )

    @post("/documents/{document_id:str}/unpublish", sync_to_thread=True)
    def unpublish(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        document_id: str,
        data: FormData,
        signed_in: Principal,
        services: Services,
    ) -> Response[Any]:
        """Take the page down now; its operation refreshes listings and feeds."""
        return self._change(
            request,
            tenant,
            document_id,
            "unpublish",
            lambda: services.documents.unpublish(
                signed_in, tenant, document_id, confirm=checked(data, "confirm"), idempotency_key=form_key(data)
            ),
        )

    @staticmethod
    def _change(
        request: Request[Any, Any, Any],
        tenant: str,
        document_id: str,
        change: str,
        command: Callable[[], CommandResult],
    ) -> Response[Any]:
        try:
            outcome = command()
        except PressroomError as exc:
            flash_error(request, exc)
            return see_other(url("sites", tenant, "documents", document_id, change))
        again = " (already sent: nothing was repeated)" if outcome.replayed else ""
        notice(
            request,
            f"{_VERBS[change]} requested: operation {outcome.body['operation_id']} is {outcome.body['status']}{again}.",
        )
        return see_other(url("sites", tenant, "documents", document_id))


__all__ = ["DocumentPages"]
