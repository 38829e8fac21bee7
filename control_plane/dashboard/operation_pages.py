"""Operations of one site: status, attempts, errors, the Prefect run, and retry for failed or dead ones."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get, post
from sqlmodel import Session

from control_plane.api.schemas import OperationOut, OperationStatus
from control_plane.dashboard.context import relay_after, site_for
from control_plane.dashboard.forms import FormData, form_key, new_form_key
from control_plane.dashboard.views import flash_error, notice, page, see_other, url
from control_plane.services import content
from control_plane.services.auth import Principal
from control_plane.services.commands import Command
from control_plane.services.container import Services
from dispatch.settings import DispatchSettings
from tenant_runtime import queries
from tenant_runtime.errors import NotFound, PressroomError
from tenant_runtime.operation_states import DEAD, FAILED, STATUSES, TERMINAL
from tenant_runtime.workspace import Workspace

RETRYABLE = frozenset({FAILED, DEAD})
_LIMIT = 100


def _rows(tx: Session, dispatch: DispatchSettings, status: str | None) -> list[tuple[OperationOut, str | None]]:
    """The newest operations, each with the title of its document (if it still exists)."""
    titles: dict[str, str | None] = {}
    rows = []
    for operation in queries.list_operations(tx, status=status, limit=_LIMIT):
        document_id = operation.document_id
        if document_id is not None and document_id not in titles:
            try:
                titles[document_id] = queries.get_document(tx, document_id).title
            except NotFound:
                titles[document_id] = None
        rows.append((content.operation_out(tx, operation, dispatch), titles.get(document_id or "")))
    return rows


class OperationPages(Controller):
    """``/dashboard/sites/{tenant}/operations``."""

    path = "/sites/{tenant:str}/operations"

    @get("/", sync_to_thread=True)
    def operations(self, request: Request[Any, Any, Any], tenant: str, signed_in: Principal, services: Services,
                   status: OperationStatus | None = None) -> Response[str]:
        """Newest first; reload to follow a delivery."""
        dispatch = services.settings.dispatch

        def read(tx: Session, ws: Workspace) -> list[tuple[OperationOut, str | None]]:
            return _rows(tx, dispatch, status)

        rows = services.commands.read(signed_in, tenant, read)
        return page(request, "operations.html", principal=signed_in, site=site_for(services, signed_in, tenant),
                    rows=rows, status_filter=status, statuses=STATUSES, retryable=RETRYABLE, terminal=TERMINAL,
                    new_form_key=new_form_key)

    @post("/{operation_id:str}/retry", sync_to_thread=True)
    def retry(self, request: Request[Any, Any, Any], tenant: str, operation_id: str, data: FormData,
              signed_in: Principal, services: Services) -> Response[Any]:
        """Replay a failed or dead operation; completed steps are not redone."""
        command = Command(tenant, "content.publish", f"operations.retry:{operation_id}",
                          idempotency_key=form_key(data))
        try:
            outcome = services.commands.execute(signed_in, command, content.retry(operation_id))
        except PressroomError as exc:
            flash_error(request, exc)
            return see_other(url("sites", tenant, "operations"))
        notice(request, f"Operation {operation_id} is {outcome.body['status']} again.")
        return see_other(url("sites", tenant, "operations"), background=relay_after(services, tenant, outcome))


__all__ = ["OperationPages"]
