"""Documents of one site: list, write, edit, and publish or unpublish with an explicit confirmation.

Every write calls the same document service as the tenant API (it builds the
command; the page passes the principal, the form's idempotency key and the
confirmation); a refusal (role, version, confirmation, quota, suspension) comes
back as a message on the page, with its error code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from litestar import Controller, Request, Response, get, post

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
    to_create,
    to_update,
)
from control_plane.dashboard.views import error_message, flash_error, notice, page, see_other, url
from dispatch.runtime import CommandResult, DocumentOut
from tenant_runtime.errors import PressroomError
from tenant_runtime.rendering import render_markdown

_BLANK = {"slug": "", "title": "", "body": "", "kind": "post"}
# The confirmation page's wording for each public change.
_CHANGES = {
    "publish": ("Publish", "will be public on the site at once; its delivery runs as an operation."),
    "unpublish": ("Unpublish", "will be taken off the public site at once; listings and feeds follow."),
}


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
    verb, effect = _CHANGES[change]
    return page(
        request,
        "confirm.html",
        principal=principal,
        site=site_for(services, principal, tenant),
        doc=doc,
        change=change,
        verb=verb,
        effect=effect,
        form_key=new_form_key(),
    )


class DocumentPages(Controller):
    """``/dashboard/sites/{tenant}/…``: the site's documents."""

    path = "/sites/{tenant:str}"

    @get("/", sync_to_thread=True)
    def documents(
        self, request: Request[Any, Any, Any], tenant: str, signed_in: Principal, services: Services
    ) -> Response[str]:
        """Every document, most recently edited first."""
        documents = services.documents.list(signed_in, tenant, limit=500)
        return page(
            request,
            "documents.html",
            principal=signed_in,
            site=site_for(services, signed_in, tenant),
            documents=documents,
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
            preview=render_markdown(doc.body),
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
            f"{_CHANGES[change][0]} requested: operation {outcome.body['operation_id']} is "
            f"{outcome.body['status']}{again}.",
        )
        return see_other(url("sites", tenant, "operations"))


__all__ = ["DocumentPages"]
