"""Documents of one site: list, write, edit, and publish or unpublish with an explicit confirmation.

Every write goes through ``services.commands.execute`` with the same action
factories as the tenant API; a refusal (role, version, confirmation, quota,
suspension) comes back as a message on the page, with its error code.
"""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get, post

from control_plane.api.schemas import DocumentOut
from control_plane.dashboard.context import relay_after, site_for
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
from control_plane.services import content
from control_plane.services.auth import Principal
from control_plane.services.commands import Command
from control_plane.services.container import Services
from tenant_runtime import queries
from tenant_runtime.errors import PressroomError
from tenant_runtime.rendering import render_markdown

_BLANK = {"slug": "", "title": "", "body": "", "kind": "post"}
# The confirmation page's wording for each public change.
_CHANGES = {
    "publish": ("Publish", "will be public on the site at once; its delivery runs as an operation."),
    "unpublish": ("Unpublish", "will be taken off the public site at once; listings and feeds follow."),
}


def _document(services: Services, principal: Principal, tenant: str, document_id: str) -> DocumentOut:
    return services.commands.read(  # type: ignore[no-any-return]
        principal, tenant, lambda tx, ws: content.document_out(ws, queries.get_document(tx, document_id)))


def _confirm(request: Request[Any, Any, Any], services: Services, principal: Principal, tenant: str,
             document_id: str, change: str) -> Response[str]:
    doc = _document(services, principal, tenant, document_id)
    verb, effect = _CHANGES[change]
    return page(request, "confirm.html", principal=principal, site=site_for(services, principal, tenant), doc=doc,
                change=change, verb=verb, effect=effect, form_key=new_form_key())


class DocumentPages(Controller):
    """``/dashboard/sites/{tenant}/…``: the site's documents."""

    path = "/sites/{tenant:str}"

    @get("/", sync_to_thread=True)
    def documents(self, request: Request[Any, Any, Any], tenant: str, signed_in: Principal,
             services: Services) -> Response[str]:
        """Every document, most recently edited first."""
        documents = services.commands.read(
            signed_in, tenant,
            lambda tx, ws: [content.document_out(ws, d) for d in queries.list_documents(tx, limit=500)])
        return page(request, "documents.html", principal=signed_in, site=site_for(services, signed_in, tenant),
                    documents=documents)

    @get("/documents/new", sync_to_thread=True)
    def new(self, request: Request[Any, Any, Any], tenant: str, signed_in: Principal,
            services: Services) -> Response[str]:
        """An empty document form."""
        return page(request, "document_form.html", principal=signed_in, site=site_for(services, signed_in, tenant),
                    doc=None, values=_BLANK, form_key=new_form_key(), preview=None)

    @post("/documents", sync_to_thread=True)
    def create(self, request: Request[Any, Any, Any], tenant: str, data: FormData, signed_in: Principal,
               services: Services) -> Response[Any]:
        """Create a draft; on a refusal the form comes back with what was typed."""
        values = document_values(data)
        try:
            payload = to_create(values)
            command = Command(tenant, "content.edit", "documents.create", payload=values,
                              idempotency_key=form_key(data))
            outcome = services.commands.execute(signed_in, command, content.create_document(payload))
        except PressroomError as exc:
            return page(request, "document_form.html", status_code=exc.status, errors=[error_message(exc)],
                        principal=signed_in, site=site_for(services, signed_in, tenant), doc=None, values=values,
                        form_key=new_form_key(), preview=None)
        notice(request, f"Draft “{outcome.body['title']}” created.")
        return see_other(url("sites", tenant, "documents", outcome.body["id"]))

    @get("/documents/{document_id:str}", sync_to_thread=True)
    def edit(self, request: Request[Any, Any, Any], tenant: str, document_id: str, signed_in: Principal,
             services: Services) -> Response[str]:
        """The edit form with a sanitized preview of the saved body."""
        doc = _document(services, signed_in, tenant, document_id)
        values = {"slug": doc.slug, "title": doc.title, "body": doc.body, "kind": doc.kind}
        return page(request, "document_form.html", principal=signed_in, site=site_for(services, signed_in, tenant),
                    doc=doc, values=values, form_key=new_form_key(), preview=render_markdown(doc.body))

    @post("/documents/{document_id:str}", sync_to_thread=True)
    def update(self, request: Request[Any, Any, Any], tenant: str, document_id: str, data: FormData,
               signed_in: Principal, services: Services) -> Response[Any]:
        """Save if the form's version is still current; a conflict keeps the typed text on the page."""
        values, version = document_values(data), number(data, "version")
        try:
            payload = to_update(values, version)
            command = Command(tenant, "content.edit", f"documents.update:{document_id}",
                              payload={**values, "version": version}, idempotency_key=form_key(data))
            outcome = services.commands.execute(signed_in, command, content.update_document(document_id, payload))
        except PressroomError as exc:
            doc = _document(services, signed_in, tenant, document_id)
            return page(request, "document_form.html", status_code=exc.status, errors=[error_message(exc)],
                        principal=signed_in, site=site_for(services, signed_in, tenant), doc=doc, values=values,
                        stale_version=version, form_key=new_form_key(), preview=None)
        notice(request, f"Saved version {outcome.body['version']}.")
        return see_other(url("sites", tenant, "documents", document_id))

    @get("/documents/{document_id:str}/publish", sync_to_thread=True)
    def confirm_publish(self, request: Request[Any, Any, Any], tenant: str, document_id: str,
                        signed_in: Principal, services: Services) -> Response[str]:
        """The explicit confirmation step before publishing."""
        return _confirm(request, services, signed_in, tenant, document_id, "publish")

    @get("/documents/{document_id:str}/unpublish", sync_to_thread=True)
    def confirm_unpublish(self, request: Request[Any, Any, Any], tenant: str, document_id: str,
                          signed_in: Principal, services: Services) -> Response[str]:
        """The explicit confirmation step before unpublishing."""
        return _confirm(request, services, signed_in, tenant, document_id, "unpublish")

    @post("/documents/{document_id:str}/publish", sync_to_thread=True)
    def publish(self, request: Request[Any, Any, Any], tenant: str, document_id: str, data: FormData,
                signed_in: Principal, services: Services) -> Response[Any]:
        """Publish the version the user confirmed (a newer save is a version conflict)."""
        version = number(data, "version")
        command = Command(tenant, "content.publish", f"documents.publish:{document_id}",
                          payload={"confirm": checked(data, "confirm"), "version": version},
                          confirm=checked(data, "confirm"), idempotency_key=form_key(data), quota="publish")
        return self._change(request, services, signed_in, command, content.publish(document_id, version),
                            document_id, "publish")

    @post("/documents/{document_id:str}/unpublish", sync_to_thread=True)
    def unpublish(self, request: Request[Any, Any, Any], tenant: str, document_id: str, data: FormData,
                  signed_in: Principal, services: Services) -> Response[Any]:
        """Take the page down now; its operation refreshes listings and feeds."""
        command = Command(tenant, "content.publish", f"documents.unpublish:{document_id}",
                          payload={"confirm": checked(data, "confirm")}, confirm=checked(data, "confirm"),
                          idempotency_key=form_key(data))
        return self._change(request, services, signed_in, command, content.unpublish(document_id),
                            document_id, "unpublish")

    @staticmethod
    def _change(request: Request[Any, Any, Any], services: Services, principal: Principal, command: Command,
                action: Any, document_id: str, change: str) -> Response[Any]:
        try:
            outcome = services.commands.execute(principal, command, action)
        except PressroomError as exc:
            flash_error(request, exc)
            return see_other(url("sites", command.tenant, "documents", document_id, change))
        again = " (already sent: nothing was repeated)" if outcome.body.get("replayed") else ""
        notice(request, f"{_CHANGES[change][0]} requested: operation {outcome.body['operation_id']} is "
                        f"{outcome.body['status']}{again}.")
        return see_other(url("sites", command.tenant, "operations"),
                         background=relay_after(services, command.tenant, outcome))


__all__ = ["DocumentPages"]
