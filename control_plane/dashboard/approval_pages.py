"""The approvals inbox: runs waiting on an editor (a lane's approve step, a scheduled release's approval),
each approved or rejected in place with a confirmation — the decision is the operation's event, sent through
the same command as ``POST /api/tenants/{t}/operations/{op}/events``."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Request, Response, get, post
from litestar.params import Parameter

from control_plane.auth import Principal
from control_plane.container import Services
from control_plane.dashboard.commands import command_redirect
from control_plane.dashboard.context import site_for
from control_plane.dashboard.forms import FormData, checked, form_key, new_form_key, text
from control_plane.dashboard.paging import window
from control_plane.dashboard.views import flash_error, page, see_other, url
from tenant_runtime.errors import BadRequest

PAGE = 50
MAX_REASON = 500


def decision_payload(decision: str, reason: str) -> dict[str, Any]:
    """The event's payload both kinds of wait read: ``approved`` true, or false with the editor's reason."""
    if decision == "approve":
        return {"approved": True}
    return {"approved": False, "reason": reason.strip()[:MAX_REASON] or "Rejected in the dashboard."}


class ApprovalPages(Controller):
    """``/dashboard/sites/{tenant}/approvals``."""

    path = "/sites/{tenant:str}/approvals"

    @get("/", sync_to_thread=True)
    def inbox(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        signed_in: Principal,
        services: Services,
        page_number: Annotated[int, Parameter(query="page", ge=1, le=100_000)] = 1,
    ) -> Response[str]:
        """The runs waiting on an editor, the longest waiting first."""
        rows = services.lanes.approvals(signed_in, tenant, limit=PAGE + 1, offset=(page_number - 1) * PAGE)
        shown, previous, following = window(rows, page_number, PAGE)
        return page(
            request,
            "approvals.html",
            principal=signed_in,
            site=site_for(services, signed_in, tenant),
            settings=services.site.settings(signed_in, tenant),
            rows=shown,
            previous=previous,
            next=following,
            new_form_key=new_form_key,
            max_reason=MAX_REASON,
        )

    @post("/{operation_id:str}", sync_to_thread=True)
    def decide(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        operation_id: str,
        data: FormData,
        signed_in: Principal,
        services: Services,
    ) -> Response[Any]:
        """Approve (the run goes on to publish) or reject (it ends failed, the article stays a draft); confirmed."""
        decision = text(data, "decision")
        inbox = url("sites", tenant, "approvals")
        if decision not in ("approve", "reject"):
            flash_error(request, BadRequest("Approve or reject.", details={"decision": decision}))
            return see_other(inbox)
        payload = decision_payload(decision, text(data, "reason"))
        says = (
            f"Approved: operation {operation_id} goes on to publish."
            if decision == "approve"
            else f"Rejected: operation {operation_id} ends without publishing; the article stays a draft."
        )
        return command_redirect(
            request,
            inbox,
            lambda: services.operations.send_event(
                signed_in,
                tenant,
                operation_id,
                text(data, "type") or "approval",
                payload,
                confirm=checked(data, "confirm"),
                idempotency_key=form_key(data),
            ),
            lambda _: says,
        )


__all__ = ["ApprovalPages", "decision_payload"]
