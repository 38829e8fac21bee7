"""What the relay sends next: a tenant's unsent operations, grouped into the runs they travel in.

Publishes are coalesced. While a tenant has ``in_flight`` publish runs that
have not finished, new publishes wait in the outbox; when one finishes (the
worker relays the tenant after every run) or the oldest has waited
``hold_seconds``, what waits goes as one ``publish_batch`` run of up to
``batch_max`` documents. A lone publish still travels as its own
``publish_document`` run. So a quiet tenant's publish starts at once, and a
tenant publishing a thousand documents asks the orchestrator for a handful of
runs, not a thousand, while other tenants' runs pass between them.

The grouping (``batch_id``) is written before any run is created, so a relay
that dies between the two, or two relays racing, create the same run again
(idempotency key ``batch:{id}``), never a second one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlmodel import Session, col, func, select

from tenant_runtime import queries
from tenant_runtime.ids import as_utc, new_id, utcnow
from tenant_runtime.operation_states import PAUSED, QUEUED, TERMINAL, WAITING
from tenant_runtime.workflows import (
    DeliveryItem,
    PublishBatchParameters,
    PublishDocumentParameters,
    RunParameters,
    Workflow,
    spec,
)
from tenant_runtime.workspace.models import Operation

BATCH_PREFIX = "bat_"
BATCH_KEY_PREFIX = "batch"
COALESCED_KIND = spec(Workflow.PUBLISH_DOCUMENT).kind


@dataclass(frozen=True)
class Coalescing:
    in_flight: int = 1  # unfinished publish runs per tenant before new publishes wait
    batch_max: int = 50  # documents per publish_batch run
    hold_seconds: float = 60.0  # the longest a publish waits for a run to finish


@dataclass
class Send:
    """One flow run to create (or, for a retry, to set back to Scheduled) and the operations it carries."""

    operations: list[Operation]
    parameters: RunParameters | None = None  # None: the run exists and is only rescheduled
    batch_id: str | None = None  # set for a publish_batch run

    @property
    def flow_run_id(self) -> str | None:
        return self.operations[0].flow_run_id

    @property
    def workflow(self) -> Workflow:
        return Workflow.PUBLISH_BATCH if self.batch_id else Workflow(self.operations[0].flow_name)

    @property
    def idempotency_key(self) -> str:
        return f"{BATCH_KEY_PREFIX}:{self.batch_id}" if self.batch_id else self.operations[0].idempotency_key

    @property
    def when(self) -> datetime:
        """Retries wait for the latest backoff of their members; new runs for their schedule."""
        times = [as_utc(op.next_attempt_at) for op in self.operations if op.next_attempt_at]
        if self.flow_run_id is not None:
            return max(times, default=utcnow())
        first = self.operations[0]
        return as_utc(first.scheduled_for) if first.scheduled_for else utcnow()


def is_batch(batch_id: str | None) -> bool:
    return bool(batch_id) and str(batch_id).startswith(BATCH_PREFIX)


def batch_parameters(tenant: str, batch_id: str, members: list[Operation]) -> PublishBatchParameters:
    """The run parameters of a batch, derived from its members alone (so every relay derives the same)."""
    publishes = [op.run_parameters() for op in members]
    return PublishBatchParameters(
        tenant=tenant,
        operation_id=batch_id,
        members=tuple(
            DeliveryItem(operation_id=p.operation_id, document_id=p.document_id, version=p.version)
            for p in publishes
            if isinstance(p, PublishDocumentParameters)
        ),
        generation=max(p.generation for p in publishes if isinstance(p, PublishDocumentParameters)),
    )


def batch_members(tx: Session, batch_id: str) -> list[Operation]:
    return list(
        tx.exec(
            select(Operation)
            .where(Operation.batch_id == batch_id)
            .order_by(col(Operation.created_at), col(Operation.id))
        )
    )


def busy_publish_runs(tx: Session) -> int:
    """Publish runs of this tenant that exist (or are about to) and have not finished."""
    return int(
        tx.exec(
            select(func.count(func.distinct(Operation.batch_id))).where(
                Operation.kind == COALESCED_KIND,
                col(Operation.batch_id).is_not(None),
                # a paused or waiting run holds no slot: publishes behind it go on
                col(Operation.status).not_in(sorted({*TERMINAL, PAUSED, WAITING})),
            )
        ).one()
    )


def _waiting_publishes(tx: Session, limit: int) -> list[Operation]:
    return list(
        tx.exec(
            select(Operation)
            .where(
                Operation.kind == COALESCED_KIND,
                col(Operation.batch_id).is_(None),
                col(Operation.flow_run_id).is_(None),
                col(Operation.sent_at).is_(None),
                col(Operation.scheduled_for).is_(None),
                Operation.status == QUEUED,
            )
            .order_by(col(Operation.created_at), col(Operation.id))
            .limit(limit)
        )
    )


def _overdue(operation: Operation, policy: Coalescing) -> bool:
    return utcnow() - as_utc(operation.created_at) >= timedelta(seconds=policy.hold_seconds)


def may_group(tx: Session, policy: Coalescing) -> bool:
    """Would ``group_waiting_publishes`` group anything now? A read, so the common case (publishes
    waiting behind a busy run) takes no write lock on the tenant's database."""
    oldest = _waiting_publishes(tx, 1)
    return bool(oldest) and (_overdue(oldest[0], policy) or busy_publish_runs(tx) < policy.in_flight)


def group_waiting_publishes(tx: Session, policy: Coalescing) -> int:
    """Put waiting publishes into send groups while the tenant has room; returns how many groups."""
    busy = busy_publish_runs(tx)
    waiting = _waiting_publishes(tx, policy.batch_max * max(1, policy.in_flight))
    groups = 0
    while waiting:
        if busy >= policy.in_flight and not _overdue(waiting[0], policy):
            break
        group, waiting = waiting[: policy.batch_max], waiting[policy.batch_max :]
        batch_id = group[0].id if len(group) == 1 else new_id("bat")
        for operation in group:
            operation.batch_id = batch_id
            tx.add(operation)
        busy += 1
        groups += 1
    return groups


def plan_sends(tx: Session, tenant: str, policy: Coalescing, limit: int = 200) -> list[Send]:
    """Group what is waiting, then list every run to create or reschedule, in outbox order."""
    group_waiting_publishes(tx, policy)
    return list_sends(tx, tenant, limit)


def list_sends(tx: Session, tenant: str, limit: int = 200) -> list[Send]:
    """Every run to create or reschedule for what is unsent and grouped, in outbox order (a read)."""
    sends: list[Send] = []
    by_run: dict[str, Send] = {}
    batches: set[str] = set()
    for operation in queries.unsent_operations(tx, limit=limit):
        if operation.kind == COALESCED_KIND and operation.batch_id is None and operation.flow_run_id is None:
            continue  # waiting for the tenant's publish runs to finish
        if operation.flow_run_id is not None:
            send = by_run.get(operation.flow_run_id)
            if send is None:
                send = by_run[operation.flow_run_id] = Send([])
                sends.append(send)
            send.operations.append(operation)
        elif is_batch(operation.batch_id):
            if operation.batch_id in batches:
                continue
            batches.add(str(operation.batch_id))
            members = batch_members(tx, str(operation.batch_id))
            sends.append(
                Send(members, batch_parameters(tenant, str(operation.batch_id), members), batch_id=operation.batch_id)
            )
        else:
            sends.append(Send([operation], operation.run_parameters()))
    return sends


def detach_from_batch(operation: Operation) -> None:
    """An explicit replay of a batch member travels alone, in a run of its own."""
    if is_batch(operation.batch_id):
        operation.batch_id = None
        operation.flow_run_id = None
