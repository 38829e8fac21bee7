"""The outbox relay against the recording twin of Prefect: typed runs, exactly once, nothing lost."""

from __future__ import annotations

import asyncio

from dispatch.prefect_twin import RecordingPrefect
from dispatch.relay import Relay
from tenant_runtime.actions.documents import create_document
from tenant_runtime.actions.operations import claim, fail
from tenant_runtime.actions.outbox import Coalescing
from tenant_runtime.actions.publishing import publish_document
from tenant_runtime.ids import utcnow
from tenant_runtime.queries import get_operation
from tenant_runtime.workflows import Carried, Workflow, run_parameters
from tenant_runtime.workspace import Actor, Operation, Workspace, WorkspaceFactory
from tests.fixtures.metrics import this_process, value

OWNER = Actor.for_role("u-owner", "owner")


def _publish(ws: Workspace, slug: str) -> Operation:
    with ws.transaction() as tx:
        document = create_document(tx, OWNER, slug=slug, title=slug.title(), body="Body", kind="post")
        return publish_document(tx, ws.tenant, OWNER, document.id)[1]


def _operation(ws: Workspace, operation_id: str) -> Operation:
    with ws.reader() as tx:
        return get_operation(tx, operation_id)


def _relay(factory: WorkspaceFactory, prefect: RecordingPrefect) -> Relay:
    return Relay(factory, prefect, Coalescing())


def test_a_committed_publish_becomes_one_typed_run_on_its_tenants_queue(
    workspace_factory: WorkspaceFactory, workspace: Workspace
) -> None:
    prefect = RecordingPrefect()
    relay = _relay(workspace_factory, prefect)
    operation = _publish(workspace, "news")

    assert asyncio.run(relay.relay_tenant("acme")) == 1
    assert asyncio.run(relay.relay_tenant("acme")) == 0  # sent once: nothing more to send

    [call] = prefect.called("create_run")
    request = call["request"]
    assert request.workflow == Workflow.PUBLISH_DOCUMENT and request.idempotency_key == f"publish:{operation.id}"
    assert request.parameters == operation.run_parameters()
    assert request.run_parameters == run_parameters(operation.run_parameters())
    assert set(request.tags) == {"tenant:acme", f"op:{operation.id}", "kind:publish"}
    sent = _operation(workspace, operation.id)
    assert sent.sent_at is not None and sent.flow_run_id == prefect.run_for(request.idempotency_key).id  # type: ignore[union-attr]
    assert prefect.queues["tenant-acme"].exists


def test_while_prefect_is_down_the_operation_stays_unsent_and_goes_later(
    workspace_factory: WorkspaceFactory, workspace: Workspace
) -> None:
    prefect = RecordingPrefect(down=True)
    relay = _relay(workspace_factory, prefect)
    operation = _publish(workspace, "news")

    assert asyncio.run(relay.relay_tenant("acme")) == 0
    waiting = _operation(workspace, operation.id)
    assert waiting.sent_at is None and waiting.flow_run_id is None and "unreachable" in (waiting.send_error or "")

    prefect.down = False
    assert asyncio.run(relay.relay_tenant("acme")) == 1
    assert _operation(workspace, operation.id).send_error is None
    assert len(prefect.runs) == 1


def test_a_key_prefect_holds_with_other_parameters_is_never_adopted(
    workspace_factory: WorkspaceFactory, workspace: Workspace
) -> None:
    prefect = RecordingPrefect()
    relay = _relay(workspace_factory, prefect)
    operation = _publish(workspace, "news")
    asyncio.run(relay.relay_tenant("acme"))
    run = prefect.run_for(f"publish:{operation.id}")
    assert run is not None
    run.parameters = {"params": {**run.parameters["params"], "version": 9}}  # someone else's run under this key
    with workspace.transaction() as tx:
        get_operation(tx, operation.id).sent_at = None
        get_operation(tx, operation.id).flow_run_id = None

    assert asyncio.run(relay.relay_tenant("acme")) == 0
    assert "bound to other parameters" in (_operation(workspace, operation.id).send_error or "")


def test_a_retry_sets_the_same_run_back_to_scheduled_instead_of_creating_one(
    workspace_factory: WorkspaceFactory, workspace: Workspace
) -> None:
    prefect = RecordingPrefect()
    relay = _relay(workspace_factory, prefect)
    operation = _publish(workspace, "news")
    asyncio.run(relay.relay_tenant("acme"))
    run_id = _operation(workspace, operation.id).flow_run_id
    assert run_id is not None
    with workspace.transaction() as tx:
        claim(tx, Carried(operation_id=operation.id, workflow=operation.flow_name, fields={}), flow_run_id=run_id)
        fail(
            tx,
            operation.id,
            step="render_page",
            error_code="TimeoutError",
            error_message="slow",
            max_retries=5,
            next_attempt_at=utcnow(),
        )

    assert asyncio.run(relay.relay_tenant("acme")) == 1

    assert len(prefect.called("create_run")) == 1
    [rescheduled] = prefect.called("reschedule")
    assert rescheduled["flow_run_id"] == run_id


def test_relay_passes_and_sends_are_counted_in_the_scrape(
    workspace_factory: WorkspaceFactory, workspace: Workspace
) -> None:
    prefect = RecordingPrefect(down=True)
    relay = _relay(workspace_factory, prefect)
    _publish(workspace, "news")
    before = this_process()

    asyncio.run(relay.relay_tenant("acme"))  # Prefect down: the send fails, the row stays unsent
    prefect.down = False
    asyncio.run(relay.relay_tenant("acme"))
    after = this_process()

    assert (
        value(after, "pressroom_relay_sends_total", result="failed")
        - value(before, "pressroom_relay_sends_total", result="failed")
        == 1
    )
    assert (
        value(after, "pressroom_relay_sends_total", result="sent")
        - value(before, "pressroom_relay_sends_total", result="sent")
        == 1
    )
    assert value(after, "pressroom_relay_pass_seconds_count") - value(before, "pressroom_relay_pass_seconds_count") == 2
