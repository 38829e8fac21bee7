"""The control relay: applies operations' run-control requests to their Prefect runs.

``tenant_runtime/actions/run_control.py`` records each request on the operation
(``control``, ``control_sent_at`` NULL) in the command's transaction; this relay,
run after the outbox relay on every pass, applies them:

pause      a queued operation's run is suspended before it starts (forced); a running one is
           suspended unforced (Prefect accepts that from Running only: a run still Pending is
           tried again on the next pass), and stops at its next step boundary, where the worker
           parks it (``dispatch/worker.py``)
resume     the suspended run goes back to Scheduled; it re-runs with its completed steps cached
terminate  a run that is not running is set Cancelled; a running one Cancelling, which the
           worker honours (as it does a cancel from the Prefect UI)
wake       a waiting run whose event arrived (or whose deadline passed) is resumed

It also queues the waiting operations whose deadline has passed (a wake), so their
runs find the wait timed out. A request is marked applied only if it is still the
operation's latest, so a newer request is never lost to an older one's success.
"""

from __future__ import annotations

import asyncio

import structlog

from dispatch.prefect_port import PrefectPort, RunState
from tenant_runtime import queries
from tenant_runtime.actions import run_control
from tenant_runtime.operation_states import CANCELLED, DELIVERING, PAUSED, QUEUED
from tenant_runtime.workspace import Workspace
from tenant_runtime.workspace.models import Operation

log = structlog.get_logger("pressroom.control")


class ControlRelay:
    def __init__(self, prefect: PrefectPort) -> None:
        self.prefect = prefect

    async def relay_controls(self, ws: Workspace) -> int:
        """Apply every pending control request of the tenant; how many were applied."""
        requests = await asyncio.to_thread(_pending, ws)
        applied = 0
        for operation in requests:
            bound = log.bind(
                tenant=ws.tenant, operation_id=operation.id, run_id=operation.flow_run_id, control=operation.control
            )
            try:
                done = await self._apply(operation)
            except Exception as exc:  # Prefect is down: the request stays pending for the next pass
                bound.warning("control.apply_failed", error=str(exc) or type(exc).__name__)
                await asyncio.to_thread(_mark, ws, operation, str(exc) or type(exc).__name__)
                break
            if done:
                await asyncio.to_thread(_mark, ws, operation, None)
                bound.info("control.applied", status=operation.status)
                applied += 1
        return applied

    async def _apply(self, operation: Operation) -> bool:
        """Apply one request to its run; False: not possible yet (try again on the next pass)."""
        run_id = operation.flow_run_id
        if run_id is None:
            return True
        control = operation.control
        if control == run_control.PAUSE:
            if operation.status == PAUSED:
                await self.prefect.suspend(run_id, force=True)  # not started: it must not start
                return True
            if operation.status == DELIVERING:
                # Only a Running run stops at a step boundary; a Pending one is about to be Running.
                if await self.prefect.suspend(run_id):
                    return True
                states = await self.prefect.run_states([run_id])
                return states.get(run_id) in (None, "PAUSED", "COMPLETED", "FAILED", "CANCELLED", "CRASHED")
            return True
        if control in (run_control.RESUME, run_control.WAKE):
            if operation.status == QUEUED:
                await self.prefect.resume(run_id)
            return True
        if control == run_control.TERMINATE:
            if operation.status == CANCELLED:
                await self.prefect.set_state(run_id, RunState.CANCELLED, message="terminated", force=True)
            elif operation.status == DELIVERING:
                await self.prefect.set_state(run_id, RunState.CANCELLING, message="terminate asked", force=True)
            return True
        return True


def _pending(ws: Workspace) -> list[Operation]:
    with ws.reader() as tx:
        if not queries.has_controls(tx):
            return []
        due = bool(run_control.due_deadlines(tx))
    if due:
        with ws.transaction() as tx:
            run_control.due_waits(tx)
    with ws.reader() as tx:
        return run_control.unsent_controls(tx)


def _mark(ws: Workspace, operation: Operation, error: str | None) -> None:
    with ws.transaction() as tx:
        run_control.mark_control_sent(tx, operation.id, operation.control_requested_at, error)


__all__ = ["ControlRelay"]
