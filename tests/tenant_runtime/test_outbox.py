"""The outbox plan: which runs the relay creates, and how a tenant's publishes are coalesced."""

from __future__ import annotations

from datetime import timedelta

from tenant_runtime.actions import operations as operation_actions
from tenant_runtime.actions.documents import create_document
from tenant_runtime.actions.outbox import Coalescing, Send, may_group, plan_sends
from tenant_runtime.actions.publishing import publish_document, unpublish_document
from tenant_runtime.ids import utcnow
from tenant_runtime.queries import get_operation
from tenant_runtime.workflows import Carried, PublishBatchParameters
from tenant_runtime.workspace import Actor, Operation, Workspace

OWNER = Actor.for_role("u-owner", "owner")
POLICY = Coalescing(in_flight=2, batch_max=3, hold_seconds=60)


def _publish(ws: Workspace, slug: str) -> Operation:
    with ws.transaction() as tx:
        doc = create_document(tx, OWNER, slug=slug, title=slug.title(), body="Body", kind="post")
        return publish_document(tx, ws.tenant, OWNER, doc.id)[1]


def _plan(ws: Workspace, policy: Coalescing = POLICY) -> list[Send]:
    with ws.transaction() as tx:
        return plan_sends(tx, ws.tenant, policy)


def _sent(ws: Workspace, send: Send, run_id: str) -> None:
    with ws.transaction() as tx:
        for op in send.operations:
            operation_actions.mark_sent(tx, op.id, run_id)


def _finish(ws: Workspace, send: Send, run_id: str) -> None:
    with ws.transaction() as tx:
        for op in send.operations:
            operation_actions.claim(
                tx, Carried(operation_id=op.id, workflow=op.flow_name, fields={}), flow_run_id=run_id
            )
            operation_actions.finish(tx, op.id, "succeeded")


def test_a_lone_publish_travels_in_its_own_publish_document_run(workspace: Workspace) -> None:
    op = _publish(workspace, "solo")

    [send] = _plan(workspace)

    assert send.workflow == "publish_document" and send.batch_id is None
    assert send.idempotency_key == f"publish:{op.id}" and send.parameters == op.run_parameters()
    with workspace.reader() as tx:
        assert get_operation(tx, op.id).batch_id == op.id  # grouped before the run exists


def test_publishes_wait_while_the_tenant_has_runs_in_flight_then_go_as_one_batch(workspace: Workspace) -> None:
    first, _ = _plan_and_send_two(workspace)
    waiting = [_publish(workspace, f"p{n}") for n in range(3)]

    assert _plan(workspace) == []  # two publish runs in flight: the new ones wait in the outbox

    _finish(workspace, first, "run-1")
    [batch] = _plan(workspace)
    assert batch.workflow == "publish_batch" and batch.batch_id and batch.batch_id.startswith("bat_")
    assert [op.id for op in batch.operations] == [op.id for op in waiting]
    assert batch.idempotency_key == f"batch:{batch.batch_id}"
    assert isinstance(batch.parameters, PublishBatchParameters)
    assert [(m.operation_id, m.document_id, m.version) for m in batch.parameters.members] == [
        (op.id, op.document_id, op.document_version) for op in waiting
    ]
    assert batch.parameters.operation_id == batch.batch_id
    assert batch.parameters.generation == max(op.parameters["generation"] for op in waiting)

    # A relay that died before marking the rows sent plans the very same run again.
    [again] = _plan(workspace)
    assert again.batch_id == batch.batch_id and again.parameters == batch.parameters


def test_a_batch_holds_at_most_batch_max_documents(workspace: Workspace) -> None:
    publishes = [_publish(workspace, f"p{n}") for n in range(5)]

    sends = _plan(workspace)

    assert [len(s.operations) for s in sends] == [3, 2]
    assert [op.id for s in sends for op in s.operations] == [op.id for op in publishes]


def test_a_publish_that_waited_past_the_hold_goes_even_while_runs_are_busy(workspace: Workspace) -> None:
    _plan_and_send_two(workspace)
    late = _publish(workspace, "late")
    assert _plan(workspace) == []
    with workspace.transaction() as tx:
        get_operation(tx, late.id).created_at = utcnow() - timedelta(seconds=61)

    [send] = _plan(workspace)

    assert [op.id for op in send.operations] == [late.id]


def test_other_kinds_are_never_held_or_batched(workspace: Workspace) -> None:
    first, _ = _plan_and_send_two(workspace)
    with workspace.transaction() as tx:
        unpublished = unpublish_document(tx, workspace.tenant, OWNER, first.operations[0].document_id)[1]
    held = _publish(workspace, "third")

    sends = _plan(workspace)

    assert [(s.workflow, s.operations[0].id) for s in sends] == [("unpublish_document", unpublished.id)]
    with workspace.reader() as tx:
        assert get_operation(tx, held.id).batch_id is None


def test_a_failed_batch_is_rescheduled_once_and_a_replayed_member_goes_alone(workspace: Workspace) -> None:
    members = [_publish(workspace, f"p{n}") for n in range(3)]
    [batch] = _plan(workspace)
    _sent(workspace, batch, "run-b")
    with workspace.transaction() as tx:
        for op in members:
            operation_actions.claim(
                tx, Carried(operation_id=op.id, workflow=op.flow_name, fields={}), flow_run_id="run-b"
            )
            operation_actions.fail(
                tx,
                op.id,
                step="render_page",
                error_code="TimeoutError",
                error_message="slow",
                max_retries=5,
                next_attempt_at=utcnow(),
            )

    [retry] = _plan(workspace)
    assert retry.flow_run_id == "run-b" and len(retry.operations) == 3  # one reschedule for the whole batch

    _sent(workspace, retry, "run-b")
    with workspace.transaction() as tx:
        for op in members:
            operation_actions.claim(
                tx, Carried(operation_id=op.id, workflow=op.flow_name, fields={}), flow_run_id="run-b"
            )
        operation_actions.finish(tx, members[0].id, "succeeded")
        operation_actions.finish(tx, members[1].id, "succeeded")
        operation_actions.fail(
            tx,
            members[2].id,
            step="render_page",
            error_code="bad",
            error_message="bad",
            max_retries=5,
            next_attempt_at=None,
            permanent=True,
        )
        operation_actions.requeue(tx, OWNER, members[2].id)

    [replay] = _plan(workspace)
    assert replay.workflow == "publish_document" and replay.flow_run_id is None
    assert replay.idempotency_key == f"publish:{members[2].id}"


def _plan_and_send_two(ws: Workspace) -> tuple[Send, Send]:
    """Two lone publishes, each sent in its own run: the tenant's publish runs in flight are full."""
    sends: list[Send] = []
    for n in range(2):
        _publish(ws, f"busy{n}")
        [send] = _plan(ws)
        _sent(ws, send, f"run-{n + 1}")
        sends.append(send)
    return sends[0], sends[1]


def test_may_group_reads_whether_grouping_would_do_anything(workspace: Workspace) -> None:
    _plan_and_send_two(workspace)
    late = _publish(workspace, "late")
    with workspace.reader() as tx:
        assert not may_group(tx, POLICY)  # the tenant's runs are busy: nothing to write
    with workspace.transaction() as tx:
        get_operation(tx, late.id).created_at = utcnow() - timedelta(seconds=61)
    with workspace.reader() as tx:
        assert may_group(tx, POLICY)  # overdue: grouping goes ahead anyway
