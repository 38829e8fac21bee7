"""Run control below the engine: the actions, the claim's gates and the control relay, against the twin."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from sqlmodel import select

from dispatch.operation_sync import OperationSync
from dispatch.prefect_port import RunState
from dispatch.prefect_twin import RecordingPrefect
from dispatch.relay import Relay
from dispatch.settings import DispatchSettings
from tenant_runtime.actions import run_control
from tenant_runtime.actions.documents import create_document
from tenant_runtime.actions.operations import finish
from tenant_runtime.actions.outbox import Coalescing
from tenant_runtime.actions.publishing import publish_document
from tenant_runtime.errors import BadRequest, Conflict, Forbidden
from tenant_runtime.ids import utcnow
from tenant_runtime.queries import attempts_for, get_operation
from tenant_runtime.workflows import Restart, Workflow, spec
from tenant_runtime.workspace import Actor, Operation, OperationWait, Workspace, WorkspaceFactory

OWNER = Actor.for_role("u-owner", "owner")
VIEWER = Actor.for_role("u-viewer", "viewer")


@pytest.fixture
def prefect() -> RecordingPrefect:
    return RecordingPrefect()


@pytest.fixture
def relay(workspace_factory: WorkspaceFactory, prefect: RecordingPrefect) -> Relay:
    return Relay(workspace_factory, prefect, Coalescing())


@pytest.fixture
def sync(workspace_factory: WorkspaceFactory) -> OperationSync:
    return OperationSync(workspace_factory, DispatchSettings())


def _publish(ws: Workspace, slug: str = "news") -> Operation:
    with ws.transaction() as tx:
        document = create_document(tx, OWNER, slug=slug, title=slug.title(), body="Body", kind="post")
        return publish_document(tx, ws.tenant, OWNER, document.id)[1]


def _op(ws: Workspace, operation_id: str) -> Operation:
    with ws.reader() as tx:
        return get_operation(tx, operation_id)


def _do(ws: Workspace, action, *args):  # type: ignore[no-untyped-def]
    with ws.transaction() as tx:
        return action(tx, *args)


def _sent(ws: Workspace, relay: Relay, slug: str = "news") -> Operation:
    operation = _publish(ws, slug)
    asyncio.run(relay.relay_tenant(ws.tenant))
    return _op(ws, operation.id)


def _claimed(ws: Workspace, relay: Relay, sync: OperationSync, prefect: RecordingPrefect) -> Operation:
    operation = _sent(ws, relay)
    assert operation.flow_run_id
    claim = sync.claim(ws.tenant, Workflow.PUBLISH_DOCUMENT, operation.flow_run_id, operation.run_parameters())
    assert claim.claimed == [operation.id]
    prefect.start(operation.flow_run_id)
    return _op(ws, operation.id)


def test_pausing_a_queued_run_suspends_it_before_it_starts_and_resume_sends_it_on(
    workspace: Workspace, relay: Relay, sync: OperationSync, prefect: RecordingPrefect
) -> None:
    operation = _sent(workspace, relay)
    run_id = str(operation.flow_run_id)

    _do(workspace, run_control.pause, OWNER, operation.id)
    assert _op(workspace, operation.id).status == "paused"
    asyncio.run(relay.relay_tenant("acme"))
    assert prefect.called("suspend") == [{"flow_run_id": run_id, "force": True}]
    assert prefect.runs[run_id].state == RunState.PAUSED
    assert _op(workspace, operation.id).control_sent_at is not None
    # A worker that took the run before the suspension landed does not start it.
    assert sync.claim("acme", Workflow.PUBLISH_DOCUMENT, run_id, operation.run_parameters()).held

    _do(workspace, run_control.resume, OWNER, operation.id)
    assert _op(workspace, operation.id).status == "queued"
    asyncio.run(relay.relay_tenant("acme"))
    assert prefect.runs[run_id].state == RunState.SCHEDULED
    assert sync.claim("acme", Workflow.PUBLISH_DOCUMENT, run_id, operation.run_parameters()).claimed == [operation.id]


def test_a_running_run_is_paused_at_its_step_boundary_and_holds_no_slot(
    workspace: Workspace, relay: Relay, sync: OperationSync, prefect: RecordingPrefect
) -> None:
    operation = _sent(workspace, relay)
    run_id = str(operation.flow_run_id)
    sync.claim("acme", Workflow.PUBLISH_DOCUMENT, run_id, operation.run_parameters())

    _do(workspace, run_control.pause, OWNER, operation.id)
    assert _op(workspace, operation.id).status == "delivering"  # it stops at its next step boundary
    asyncio.run(relay.relay_tenant("acme"))  # still Pending in the engine: Prefect refuses; try again
    assert _op(workspace, operation.id).control_sent_at is None
    prefect.start(run_id)
    asyncio.run(relay.relay_tenant("acme"))
    assert prefect.runs[run_id].state == RunState.PAUSED
    assert _op(workspace, operation.id).control_sent_at is not None

    parked = sync.parked("acme", [operation.id])  # the worker caught Pause
    assert (parked.decision, parked.foreign) == ("paused", False)
    paused = _op(workspace, operation.id)
    assert paused.status == "paused"
    with workspace.reader() as tx:
        [attempt] = attempts_for(tx, operation.id)
    assert attempt.finished_at is not None and attempt.error == "paused"


def test_a_pause_from_the_prefect_ui_is_recorded_as_the_engines(
    workspace: Workspace, relay: Relay, sync: OperationSync, prefect: RecordingPrefect
) -> None:
    operation = _claimed(workspace, relay, sync, prefect)
    parked = sync.parked("acme", [operation.id])
    assert (parked.decision, parked.foreign) == ("paused", True)
    assert (_op(workspace, operation.id).status, _op(workspace, operation.id).control_actor) == ("paused", "prefect")


def test_terminate_cancels_a_queued_run_at_once_and_asks_a_running_one_to_stop(
    workspace: Workspace, relay: Relay, sync: OperationSync, prefect: RecordingPrefect
) -> None:
    queued = _sent(workspace, relay, "queued")
    _do(workspace, run_control.terminate, OWNER, queued.id)
    assert _op(workspace, queued.id).status == "cancelled"
    asyncio.run(relay.relay_tenant("acme"))
    assert prefect.runs[str(queued.flow_run_id)].state == RunState.CANCELLED
    with pytest.raises(Conflict) as finished:
        _do(workspace, run_control.terminate, OWNER, queued.id)
    assert finished.value.code == "operation_finished"

    running = _claimed(workspace, relay, sync, prefect)
    _do(workspace, run_control.terminate, OWNER, running.id)
    assert _op(workspace, running.id).status == "delivering"
    asyncio.run(relay.relay_tenant("acme"))
    assert prefect.runs[str(running.flow_run_id)].state == RunState.CANCELLING
    assert sync.cancelled("acme", [running.id], "u-owner", "terminated") == [running.id]
    assert _op(workspace, running.id).status == "cancelled"


def test_a_run_of_a_terminated_operation_ends_cancelled_without_starting(
    workspace: Workspace, relay: Relay, sync: OperationSync
) -> None:
    operation = _sent(workspace, relay)
    _do(workspace, run_control.terminate, OWNER, operation.id)
    claim = sync.claim("acme", Workflow.PUBLISH_DOCUMENT, str(operation.flow_run_id), operation.run_parameters())
    assert claim.cancelled and not claim.claimed


def test_controls_need_the_publish_permission_and_a_state_they_apply_to(workspace: Workspace, relay: Relay) -> None:
    operation = _sent(workspace, relay)
    with pytest.raises(Forbidden):
        _do(workspace, run_control.pause, VIEWER, operation.id)
    with pytest.raises(Conflict):
        _do(workspace, run_control.resume, OWNER, operation.id)  # not paused
    with pytest.raises(Conflict):
        _do(workspace, run_control.restart, OWNER, operation.id, None)  # not settled


def test_restart_from_a_step_is_a_new_run_whose_epochs_rerun_that_step_and_later(
    workspace: Workspace, relay: Relay, sync: OperationSync, prefect: RecordingPrefect
) -> None:
    operation = _claimed(workspace, relay, sync, prefect)
    _do(workspace, finish, operation.id, "succeeded")
    with pytest.raises(BadRequest) as unknown:
        _do(workspace, run_control.restart, OWNER, operation.id, "nope")
    assert unknown.value.code == "unknown_step" and "render_page" in unknown.value.details["steps"]

    _do(workspace, run_control.restart, OWNER, operation.id, "index_search")
    restarted = _op(workspace, operation.id)
    assert (restarted.status, restarted.restarts, restarted.flow_run_id) == ("queued", 1, None)
    assert restarted.idempotency_key == f"publish:{operation.id}:restart-1"
    history = restarted.run_parameters().restart
    assert history == Restart(from_steps=("index_search",))
    steps = spec(Workflow.PUBLISH_DOCUMENT).steps
    assert [history.epoch(step, steps) for step in steps] == [0, 0, 0, 1, 1, 1, 1, 1, 1]
    assert history.then(None).epoch("verify", steps) == 1  # a restart from the top reaches every step

    asyncio.run(relay.relay_tenant("acme"))
    new_run = prefect.run_for(f"publish:{operation.id}:restart-1")
    assert new_run is not None and new_run.id != operation.flow_run_id
    assert new_run.request.parameters.restart == history
    # The old run, if it ever came back, is not this operation's any more.
    assert sync.claim("acme", Workflow.PUBLISH_DOCUMENT, new_run.id, restarted.run_parameters()).claimed


def test_events_are_validated_and_kept_for_a_wait_that_comes_later(workspace: Workspace, relay: Relay) -> None:
    operation = _sent(workspace, relay)
    for bad in ("-x", "has space", "", "é"):
        with pytest.raises(BadRequest) as raised:
            _do(workspace, run_control.send_event, OWNER, operation.id, bad, {})
        assert raised.value.code == "invalid_event"
    with pytest.raises(BadRequest):
        _do(workspace, run_control.send_event, OWNER, operation.id, "approval", "x" * (1024 * 1024))

    _do(workspace, run_control.send_event, OWNER, operation.id, "approval", {"ok": True})
    check = _do(workspace, run_control.check_wait, operation.id, "approve", "approval", 60.0)
    assert (check.status, check.payload) == ("received", {"ok": True})
    # Reached again (the run re-runs after a resume): the same answer, the event consumed once.
    again = _do(workspace, run_control.check_wait, operation.id, "approve", "approval", 60.0)
    assert (again.status, again.event_id) == ("received", check.event_id)


def test_a_waiting_run_is_woken_by_its_event(
    workspace: Workspace, relay: Relay, sync: OperationSync, prefect: RecordingPrefect
) -> None:
    operation = _claimed(workspace, relay, sync, prefect)
    run_id = str(operation.flow_run_id)
    check = _do(workspace, run_control.check_wait, operation.id, "approve", "approval", 3600.0)
    assert (check.status, check.parked) == ("pending", 1)
    asyncio.run(prefect.suspend(run_id))
    assert sync.parked("acme", [operation.id]).decision == "waiting"
    assert _op(workspace, operation.id).status == "waiting"

    _do(workspace, run_control.send_event, OWNER, operation.id, "other", {})  # not the wait's type
    assert _op(workspace, operation.id).status == "waiting"
    _do(workspace, run_control.send_event, OWNER, operation.id, "approval", {"by": "ed"})
    woken = _op(workspace, operation.id)
    assert (woken.status, woken.control) == ("queued", "wake")
    asyncio.run(relay.relay_tenant("acme"))
    assert prefect.runs[run_id].state == RunState.SCHEDULED
    assert _do(workspace, run_control.check_wait, operation.id, "approve", "approval", 3600.0).payload == {"by": "ed"}


def test_an_event_that_arrives_while_the_run_suspends_sends_it_on_at_once(
    workspace: Workspace, relay: Relay, sync: OperationSync, prefect: RecordingPrefect
) -> None:
    operation = _claimed(workspace, relay, sync, prefect)
    assert _do(workspace, run_control.check_wait, operation.id, "approve", "approval", 3600.0).status == "pending"
    # The event lands after the flow found none and before the worker parked the run.
    _do(workspace, run_control.send_event, OWNER, operation.id, "approval", {"late": True})
    assert _op(workspace, operation.id).status == "delivering"
    assert sync.parked("acme", [operation.id]).decision == "resume"
    assert _op(workspace, operation.id).status == "queued"


def test_a_wait_past_its_deadline_is_woken_and_times_out(
    workspace: Workspace, relay: Relay, sync: OperationSync, prefect: RecordingPrefect
) -> None:
    operation = _claimed(workspace, relay, sync, prefect)
    run_id = str(operation.flow_run_id)
    _do(workspace, run_control.check_wait, operation.id, "approve", "approval", 3600.0)
    asyncio.run(prefect.suspend(run_id))
    sync.parked("acme", [operation.id])
    with workspace.transaction() as tx:
        wait = tx.exec(select(OperationWait)).one()
        wait.deadline = utcnow() - timedelta(seconds=1)
        tx.add(wait)

    asyncio.run(relay.relay_tenant("acme"))  # the control relay wakes due waits
    assert _op(workspace, operation.id).status == "queued"
    assert prefect.runs[run_id].state == RunState.SCHEDULED
    assert _do(workspace, run_control.check_wait, operation.id, "approve", "approval", 3600.0).status == "timed_out"
