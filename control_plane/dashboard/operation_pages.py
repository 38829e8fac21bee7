"""Operations of one site: status, attempts, errors, the Prefect run, and retry for failed or dead ones."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get, post

from control_plane.auth import Principal
from control_plane.container import Services
from control_plane.dashboard.context import site_for
from control_plane.dashboard.forms import FormData, form_key, new_form_key
from control_plane.dashboard.views import flash_error, notice, page, see_other, url
from control_plane.operations.schemas import OperationStatus
from tenant_runtime.errors import PressroomError
from tenant_runtime.operation_states import DEAD, FAILED, STATUSES, TERMINAL

RETRYABLE = frozenset({FAILED, DEAD})
_LIMIT = 100


class OperationPages(Controller):
    """``/dashboard/sites/{tenant}/operations``."""

    path = "/sites/{tenant:str}/operations"

    @get("/", sync_to_thread=True)
    def operations(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        signed_in: Principal,
        services: Services,
        status: OperationStatus | None = None,
    ) -> Response[str]:
        """Newest first; reload to follow a delivery."""
        rows = services.operations.list(signed_in, tenant, status=status, limit=_LIMIT)
        return page(
            request,
            "operations.html",
            principal=signed_in,
            site=site_for(services, signed_in, tenant),
            rows=rows,
            status_filter=status,
            statuses=STATUSES,
            retryable=RETRYABLE,
            terminal=TERMINAL,
            new_form_key=new_form_key,
        )

    @post("/{operation_id:str}/retry", sync_to_thread=True)
    def retry(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        operation_id: str,
        data: FormData,
        signed_in: Principal,
        services: Services,
    ) -> Response[Any]:
        """Replay a failed or dead operation; completed steps are not redone."""
        try:
            outcome = services.operations.retry(signed_in, tenant, operation_id, idempotency_key=form_key(data))
        except PressroomError as exc:
            flash_error(request, exc)
            return see_other(url("sites", tenant, "operations"))
        notice(request, f"Operation {operation_id} is {outcome.body['status']} again.")
        return see_other(url("sites", tenant, "operations"))


__all__ = ["OperationPages"]
