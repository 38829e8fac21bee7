"""``wait_for_event``: a step that parks its run until an outside event arrives, or its timeout passes.

Called from a flow (not inside a task). The tenant's own database is the record
of the event (``tenant_runtime/actions/run_control.py``): the first time the run
reaches the wait it is recorded with its deadline; an event sent earlier is
consumed at once; otherwise the run suspends itself (``asuspend_flow_run`` with
no engine timeout: Prefect would fail an expired pause, Pressroom times the
wait out itself) and the worker parks it, holding no process or slot. The event
(``POST …/operations/{op}/events``), or the deadline passing, queues the
operation again and dispatch resumes the run; it re-runs from the top with its
completed steps from the cache, reaches the wait again, and takes the event —
or raises ``EventTimedOut``, which the workflow may catch.

Each suspension has its own key (``wait:{name}:{epoch}:{n}``): Prefect lets a key
suspend a run once, so a run resumed without its event (a resume from the
Prefect UI) finds the wait still pending and suspends again under the next key.
"""

from __future__ import annotations

import asyncio
from typing import Any

from prefect.context import FlowRunContext
from prefect.flow_runs import asuspend_flow_run

from flows.caching import restart_epoch
from flows.runtime import workspace
from flows.steps import StepFailed
from tenant_runtime.actions.run_control import WaitCheck, check_event, check_wait
from tenant_runtime.workflows import RUN_PARAMETER, RunParameters, parameters_from_run

EVENT_TIMEOUT = "event_timeout"
WAIT_KEY_PREFIX = "wait:"


class EventTimedOut(StepFailed):
    """The wait's deadline passed without its event: permanent unless the workflow handles it.

    Built like every StepFailed (``step`` is the wait's name, ``code`` is ``event_timeout``),
    so it pickles as one.
    """


async def wait_for_event(name: str, event_type: str, timeout: float) -> Any:
    """The payload of the first ``event_type`` event sent to this run's operation; EventTimedOut after ``timeout`` s."""
    check_event(event_type, None)
    if timeout <= 0:
        raise ValueError(f"timeout must be positive, got {timeout}")
    params = _run_parameters()
    epoch = restart_epoch(name)
    while True:
        check = await asyncio.to_thread(_check, params, name, event_type, timeout, epoch)
        if check.status == "received":
            return check.payload
        if check.status == "timed_out":
            raise EventTimedOut(name, EVENT_TIMEOUT, f"no {event_type} event within {timeout:g} s", True)
        # Raises Pause (the worker parks the run) unless this key already suspended it once.
        await asuspend_flow_run(key=f"{WAIT_KEY_PREFIX}{name}:{epoch}:{check.parked}")


def _run_parameters() -> RunParameters:
    """The current flow run's typed parameters (the engine may hold them as the model or as its JSON)."""
    context = FlowRunContext.get()
    if context is None or context.flow is None or not context.parameters:
        raise RuntimeError("wait_for_event is called from a Pressroom flow")
    params = context.parameters.get(RUN_PARAMETER)
    if isinstance(params, RunParameters):
        return params
    return parameters_from_run(context.flow.name, {RUN_PARAMETER: params})


def _check(params: RunParameters, name: str, event_type: str, timeout: float, epoch: int) -> WaitCheck:
    with workspace(params.tenant).transaction() as tx:
        return check_wait(tx, params.operation_id, name, event_type, timeout, epoch)


__all__ = ["EVENT_TIMEOUT", "WAIT_KEY_PREFIX", "EventTimedOut", "wait_for_event"]
