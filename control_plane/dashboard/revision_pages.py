"""A document's revisions: every version, a readable word-level diff of any two, and restore one (as a
new draft version, or published through the ordinary publish with its confirmation)."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get, post

from control_plane.auth import Principal
from control_plane.container import Services
from control_plane.dashboard.context import site_for
from control_plane.dashboard.forms import FormData, checked, form_key, new_form_key, number, text
from control_plane.dashboard.views import flash_error, notice, page, see_other, url
from tenant_runtime.errors import PressroomError

LIMIT = 100


class RevisionPages(Controller):
    """``/dashboard/sites/{tenant}/documents/{id}/revisions``."""

    path = "/sites/{tenant:str}/documents/{document_id:str}/revisions"

    @get("/", sync_to_thread=True)
    def revisions(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        document_id: str,
        signed_in: Principal,
        services: Services,
        from_version: int | None = None,
        to_version: int | None = None,
    ) -> Response[str]:
        """Versions newest first; with ``from_version`` and ``to_version``, their diff above the list."""
        doc = services.documents.get(signed_in, tenant, document_id)
        rows = services.revisions.list(signed_in, tenant, document_id, limit=LIMIT)
        diff = None
        if from_version is not None and to_version is not None:
            diff = services.revisions.diff(signed_in, tenant, document_id, from_version, to_version)
        elif len(rows) >= 2:  # by default: what the newest version changed
            from_version, to_version = rows[1].version, rows[0].version
            diff = services.revisions.diff(signed_in, tenant, document_id, from_version, to_version)
        return page(
            request,
            "revisions.html",
            principal=signed_in,
            site=site_for(services, signed_in, tenant),
            settings=services.site.settings(signed_in, tenant),
            doc=doc,
            rows=rows,
            diff=diff,
            from_version=from_version,
            to_version=to_version,
            form_key=new_form_key(),
        )

    @post("/{version:int}/restore", sync_to_thread=True)
    def restore(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        document_id: str,
        version: int,
        data: FormData,
        signed_in: Principal,
        services: Services,
    ) -> Response[Any]:
        """Restore ``version`` as a new version; published at once only with ``publish`` and the confirmation."""
        publish = text(data, "publish") == "yes"
        try:
            outcome = services.revisions.restore(
                signed_in,
                tenant,
                document_id,
                version,
                publish=publish,
                confirm=checked(data, "confirm"),
                expected_version=number(data, "expected_version"),
                idempotency_key=form_key(data),
            )
        except PressroomError as exc:
            flash_error(request, exc)
            return see_other(url("sites", tenant, "documents", document_id, "revisions"))
        document = outcome.body.get("document") or {}
        new_version = document.get("version")
        if publish:
            notice(
                request,
                f"Version {version} restored as version {new_version} and published: operation "
                f"{outcome.body.get('operation_id')} is {outcome.body.get('status')}.",
            )
        else:
            notice(request, f"Version {version} restored as draft version {new_version}.")
        return see_other(url("sites", tenant, "documents", document_id))


__all__ = ["RevisionPages"]
