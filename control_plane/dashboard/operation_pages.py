"""Operations of one site: the list, and a page per operation with its events, its steps, its Prefect run,
and retry (failed or dead), cancel and reschedule (scheduled), pause, resume, terminate, restart (from a
step) and events for a waiting run — each through the same services as the API."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

from litestar import Controller, Request, Response, get, post
from litestar.params import Parameter

from control_plane.auth import Principal
from control_plane.container import Services
from control_plane.dashboard.commands import command_redirect
from control_plane.dashboard.context import site_for
from control_plane.dashboard.forms import FormData, checked, form_key, new_form_key, text
from control_plane.dashboard.local_time import bounds, parse_local, to_input
from control_plane.dashboard.paging import window
from control_plane.dashboard.views import error_message, notice, page, see_other, url
from control_plane.operations.schemas import OperationStatus
from control_plane.releases.schemas import Reschedule
from dispatch.runtime import OperationOut
from tenant_runtime.errors import InvalidSchedule, PressroomError
from tenant_runtime.operation_states import DEAD, DELIVERING, FAILED, PAUSED, QUEUED, SCHEDULED, STATUSES, TERMINAL
from tenant_runtime.operation_states import settled as is_settled
from tenant_runtime.workflows import WORKFLOWS, Workflow

RETRYABLE = frozenset({FAILED, DEAD})
PAGE = 50
CONTROLS = {"pause": "paused", "resume": "resumed", "terminate": "terminated"}


def controls_of(op: OperationOut) -> dict[str, Any]:
    """What run control the page offers for ``op``: pause, resume, terminate, restart (with its steps)."""
    settled = is_settled(op.status, op.next_attempt_at)
    try:
        steps = WORKFLOWS[Workflow(op.workflow or "")].steps
    except (KeyError, ValueError):
        steps = ()
    return {
        "pause": op.status in (QUEUED, DELIVERING) and not (op.control and op.control.action == "pause"),
        "resume": op.status == PAUSED,
        "terminate": not settled,
        "restart": settled,
        "steps": steps,
        "event": op.status not in TERMINAL and not settled,
    }


def actions_key(op: OperationOut, controls: dict[str, Any]) -> str:
    """What the page's actions offer, in a word: its poll gets them again only when this changes."""
    offered = sorted(name for name, on in controls.items() if on is True)
    return ".".join([op.status, *offered])


def poll_seconds(status: str) -> int | None:
    """How often an open operation page looks again: every second while it runs, every few while it is
    paused (someone may resume it), every 15 s while scheduled (it may fire), never once it has ended."""
    if status in TERMINAL:
        return None
    return {SCHEDULED: 15, PAUSED: 5}.get(status, 1)


def events(op: OperationOut) -> list[dict[str, Any]]:
    """The operation's timeline, oldest first: created, scheduled, each attempt's start and end, finished."""
    found: list[dict[str, Any]] = [{"at": op.created_at, "what": "created", "detail": f"{op.kind} ({op.workflow})"}]
    if op.scheduled_for is not None:
        found.append({"at": op.scheduled_for, "what": "scheduled for", "detail": ""})
    for attempt in op.attempts:
        found.append({"at": attempt.started_at, "what": f"attempt {attempt.number} started", "detail": ""})
        if attempt.finished_at is not None:
            took = (attempt.finished_at - attempt.started_at).total_seconds()
            outcome = f"failed at {attempt.step or 'a step'}: {attempt.error}" if attempt.error else "finished"
            detail = f"{outcome} after {took:.1f} s" + (f" (last step {attempt.step})" if attempt.step else "")
            found.append({"at": attempt.finished_at, "what": f"attempt {attempt.number} ended", "detail": detail})
    if op.next_attempt_at is not None and op.status == FAILED:
        found.append({"at": op.next_attempt_at, "what": "next attempt", "detail": "automatic retry"})
    if op.finished_at is not None:
        found.append({"at": op.finished_at, "what": op.status, "detail": ""})
    found.sort(key=lambda event: event["at"])
    return found


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
        q: str = "",
        page_number: Annotated[int, Parameter(query="page", ge=1, le=100_000)] = 1,
    ) -> Response[str]:
        """Newest first, a page at a time, searched on the server (an operation id or its start, a kind, a
        document's id, title or slug); the page follows unfinished operations by itself."""
        q = q.strip()[:200]
        rows = services.operations.list(
            signed_in, tenant, status=status, q=q, limit=PAGE + 1, offset=(page_number - 1) * PAGE
        )
        shown, previous, following = window(rows, page_number, PAGE, {"q": q, "status": status or ""})
        return page(
            request,
            "operations.html",
            principal=signed_in,
            site=site_for(services, signed_in, tenant),
            settings=services.site.settings(signed_in, tenant),
            rows=shown,
            status_filter=status,
            q=q,
            statuses=STATUSES,
            retryable=RETRYABLE,
            terminal=TERMINAL,
            live=any(op.status not in TERMINAL and op.status != SCHEDULED for op in shown),
            previous=previous,
            next=following,
            new_form_key=new_form_key,
        )

    @get("/{operation_id:str}")
    async def operation(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        operation_id: str,
        signed_in: Principal,
        services: Services,
        actions: Annotated[str | None, Parameter(max_length=200)] = None,
    ) -> Response[str]:
        """One operation: its facts, its steps (from Prefect's task runs), its events, its run in the Prefect
        UI, and what can be done with it. The page's poll sends the actions it shows (``actions``): they are
        left out of the answer while unchanged."""
        described = await services.operations.describe(signed_in, tenant, operation_id)
        polled = actions if request.headers.get("HX-Request") == "true" else None
        return await asyncio.to_thread(
            self._detail, request, services, signed_in, tenant, operation_id, op=described, polled=polled
        )

    @post("/{operation_id:str}/control", sync_to_thread=True)
    def control(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        operation_id: str,
        data: FormData,
        signed_in: Principal,
        services: Services,
    ) -> Response[Any]:
        """Pause, resume or terminate the operation's run (confirmed by the form's checkbox)."""
        action = text(data, "action")
        target = url("sites", tenant, "operations", operation_id)
        if action not in CONTROLS:
            return self._detail(
                request,
                services,
                signed_in,
                tenant,
                operation_id,
                errors=[{"level": "error", "code": "invalid_request", "message": "Pause, resume or terminate."}],
                status=400,
            )
        return command_redirect(
            request,
            target,
            lambda: services.operations.control(
                signed_in,
                tenant,
                operation_id,
                action,
                confirm=checked(data, "confirm"),
                idempotency_key=form_key(data),
            ),
            lambda outcome: f"Operation {operation_id}: {action} asked, it is {outcome.body['status']}.",
        )

    @post("/{operation_id:str}/restart", sync_to_thread=True)
    def restart(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        operation_id: str,
        data: FormData,
        signed_in: Principal,
        services: Services,
    ) -> Response[Any]:
        """Run a settled operation again, from the top or from the chosen step."""
        from_step = text(data, "from_step") or None
        target = url("sites", tenant, "operations", operation_id)
        where = f"from {from_step}" if from_step else "from the top"
        return command_redirect(
            request,
            target,
            lambda: services.operations.restart(
                signed_in,
                tenant,
                operation_id,
                from_step=from_step,
                confirm=checked(data, "confirm"),
                idempotency_key=form_key(data),
            ),
            lambda outcome: f"Operation {operation_id} restarts {where} (restart {outcome.body['restart']}).",
        )

    @post("/{operation_id:str}/event", sync_to_thread=True)
    def event(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        operation_id: str,
        data: FormData,
        signed_in: Principal,
        services: Services,
    ) -> Response[Any]:
        """Send the event a waiting run waits for (an approval, …), with an optional JSON payload."""
        raw = text(data, "payload").strip()
        target = url("sites", tenant, "operations", operation_id)
        try:
            payload = json.loads(raw) if raw else None
        except json.JSONDecodeError as exc:
            return self._detail(
                request,
                services,
                signed_in,
                tenant,
                operation_id,
                errors=[{"level": "error", "code": "invalid_event", "message": f"The payload is not JSON: {exc.msg}."}],
                status=400,
            )
        return command_redirect(
            request,
            target,
            lambda: services.operations.send_event(
                signed_in, tenant, operation_id, text(data, "type"), payload, idempotency_key=form_key(data)
            ),
            lambda _: f"Event {text(data, 'type')} sent to operation {operation_id}.",
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
        """Replay a failed or dead operation; completed steps are not redone (back to the page it came from)."""
        pages = {"operation": ("operations", operation_id), "health": ("health",)}
        target = url("sites", tenant, *pages.get(text(data, "back"), ("operations",)))
        return command_redirect(
            request,
            target,
            lambda: services.operations.retry(signed_in, tenant, operation_id, idempotency_key=form_key(data)),
            lambda outcome: f"Operation {operation_id} is {outcome.body['status']} again.",
        )

    @post("/{operation_id:str}/cancel", sync_to_thread=True)
    def cancel(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        operation_id: str,
        data: FormData,
        signed_in: Principal,
        services: Services,
    ) -> Response[Any]:
        """Cancel a scheduled operation: nothing it would publish changes; its run wakes and ends as a no-op."""
        return command_redirect(
            request,
            url("sites", tenant, "operations", operation_id),
            lambda: services.operations.cancel(signed_in, tenant, operation_id, idempotency_key=form_key(data)),
            lambda _: f"Operation {operation_id} is cancelled: nothing it would have published changes.",
        )

    @post("/{operation_id:str}/reschedule", sync_to_thread=True)
    def reschedule(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        operation_id: str,
        data: FormData,
        signed_in: Principal,
        services: Services,
    ) -> Response[Any]:
        """Move a scheduled release to another time (a new operation; this one is cancelled)."""
        at = text(data, "at")
        settings = services.site.settings(signed_in, tenant)
        try:
            when = parse_local(at, settings.timezone)
            outcome = services.releases.reschedule(
                signed_in,
                tenant,
                operation_id,
                Reschedule(publish_at=when, confirm=checked(data, "confirm")),
                idempotency_key=form_key(data),
            )
        except InvalidSchedule as exc:
            return self._detail(request, services, signed_in, tenant, operation_id, at=at, field_error=exc.message)
        except PressroomError as exc:
            return self._detail(
                request,
                services,
                signed_in,
                tenant,
                operation_id,
                at=at,
                errors=[error_message(exc)],
                status=exc.status,
            )
        new_id = outcome.body["operation_id"]
        notice(request, f"Rescheduled: operation {new_id} replaces {operation_id}.")
        return see_other(url("sites", tenant, "operations", new_id))

    @staticmethod
    def _detail(
        request: Request[Any, Any, Any],
        services: Services,
        principal: Principal,
        tenant: str,
        operation_id: str,
        *,
        at: str | None = None,
        field_error: str | None = None,
        errors: list[dict[str, Any]] | None = None,
        status: int | None = None,
        op: OperationOut | None = None,
        polled: str | None = None,
    ) -> Response[str]:
        op = op or services.operations.get(principal, tenant, operation_id)
        controls = controls_of(op)
        key = actions_key(op, controls)
        settings = services.site.settings(principal, tenant)
        release = (
            services.operations.release_contents(principal, tenant, operation_id) if op.kind == "release" else None
        )
        earliest, latest = bounds(settings.timezone)
        default_at = to_input(op.scheduled_for, settings.timezone) if op.scheduled_for is not None else ""
        return page(
            request,
            "operation.html",
            status_code=status or (400 if field_error else 200),
            errors=errors,
            principal=principal,
            site=site_for(services, principal, tenant),
            settings=settings,
            op=op,
            release=release,
            events=events(op),
            retryable=RETRYABLE,
            terminal=TERMINAL,
            controls=controls,
            actions_key=key,
            show_actions=polled != key,
            poll=poll_seconds(op.status),
            at=default_at if at is None else at,
            field_error=field_error,
            earliest=earliest,
            latest=latest,
            form_key=new_form_key(),
        )


__all__ = ["OperationPages", "actions_key", "events", "poll_seconds"]
