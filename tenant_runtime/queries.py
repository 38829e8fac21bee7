"""Read queries over one workspace. Missing rows are NotFound, never None surprises."""

from __future__ import annotations

from typing import Any

from sqlalchemy import String, cast
from sqlmodel import Session, and_, col, func, or_, select

from tenant_runtime.errors import BadRequest, NotFound
from tenant_runtime.operation_states import DELIVERING, FAILED, PAUSED, QUEUED, SCHEDULED, STATUSES, WAITING
from tenant_runtime.workflows import AGGREGATE_WORKFLOWS
from tenant_runtime.workspace.delivery_models import AggregateState, WebhookDelivery, WebhookEndpoint
from tenant_runtime.workspace.models import Attempt, Document, Operation, RenderedObject, Revision, SiteState


def get_document(tx: Session, document_id: str) -> Document:
    document = tx.get(Document, document_id)
    if document is None:
        raise NotFound("Document not found.", details={"document_id": document_id})
    return document


def list_documents(
    tx: Session, *, status: str | None = None, kind: str | None = None, limit: int = 100, offset: int = 0
) -> list[Document]:
    query = select(Document).order_by(col(Document.updated_at).desc(), col(Document.id).desc())
    if status is not None:
        query = query.where(Document.status == status)
    if kind is not None:
        query = query.where(Document.kind == kind)
    return list(tx.exec(query.offset(offset).limit(limit)))


def get_revision(tx: Session, document_id: str, version: int) -> Revision:
    revision = tx.exec(select(Revision).where(Revision.document_id == document_id, Revision.version == version)).first()
    if revision is None:
        raise NotFound("Revision not found.", details={"document_id": document_id, "version": version})
    return revision


def published_by_slug(tx: Session, slug: str) -> tuple[Document, Revision] | None:
    """The document published under ``slug`` and the revision that is public, if any."""
    document = tx.exec(select(Document).where(Document.slug == slug, Document.status == "published")).first()
    if document is None or document.published_version is None:
        return None
    return document, get_revision(tx, document.id, document.published_version)


def published_listing(tx: Session) -> list[tuple[Document, Revision]]:
    """Every published document with its public revision, newest first."""
    rows = tx.exec(
        select(Document, Revision)
        .join(
            Revision,
            and_(
                col(Revision.document_id) == col(Document.id), col(Revision.version) == col(Document.published_version)
            ),
        )
        .where(Document.status == "published")
        .order_by(col(Document.published_at).desc(), col(Document.id))
    )
    return [(document, revision) for document, revision in rows]


def get_operation(tx: Session, operation_id: str) -> Operation:
    operation = tx.get(Operation, operation_id)
    if operation is None:
        raise NotFound("Operation not found.", details={"operation_id": operation_id})
    return operation


def list_operations(
    tx: Session,
    *,
    status: str | None = None,
    limit: int = 100,
    offset: int = 0,
    kinds: tuple[str, ...] = (),
    q: str = "",
) -> list[Operation]:
    """A page of operations, newest first; ``q`` matches an operation id (or its start), a kind, a document's
    id, or a document whose title or slug contains it."""
    query = select(Operation).order_by(col(Operation.created_at).desc(), col(Operation.id).desc())
    q = q.strip()[:200]
    if q:
        # SQLAlchemy's autoescape: q's % and _ match themselves.
        documents = select(Document.id).where(
            or_(col(Document.title).icontains(q, autoescape=True), col(Document.slug).icontains(q, autoescape=True))
        )
        query = query.where(
            or_(
                col(Operation.id).startswith(q, autoescape=True),
                Operation.kind == q,
                Operation.document_id == q,
                col(Operation.document_id).in_(documents),
            )
        )
    if kinds:
        query = query.where(col(Operation.kind).in_(kinds))
    if status is not None:
        if status not in STATUSES:
            raise BadRequest("Unknown operation status.", details={"status": status, "allowed": list(STATUSES)})
        query = query.where(Operation.status == status)
    return list(tx.exec(query.offset(offset).limit(limit)))


def _unsent() -> Any:
    """Outbox entries whose flow run has not been created (or, for a retry, rescheduled) yet."""
    return col(Operation.sent_at).is_(None) & col(Operation.status).in_([QUEUED, SCHEDULED, FAILED])


def unsent_operations(tx: Session, limit: int = 100) -> list[Operation]:
    """Outbox entries whose flow run has not been created yet."""
    return list(tx.exec(select(Operation).where(_unsent()).order_by(col(Operation.created_at)).limit(limit)))


def _control_unsent() -> Any:
    """A run-control request (pause, resume, terminate, wake) not applied to its run yet."""
    return col(Operation.control).is_not(None) & col(Operation.control_sent_at).is_(None)


def has_pending_delivery(tx: Session) -> bool:
    """Anything unsent (in the outbox, or a control request), being delivered, or waiting on a deadline:
    the sweeper must look again."""
    sent_idle = (
        (col(Operation.status) == QUEUED) & col(Operation.sent_at).is_not(None) & col(Operation.scheduled_for).is_(None)
    )  # sent and due: normally claimed within a poll; until then the sweeper checks its run is still Scheduled
    busy = _unsent() | _control_unsent() | sent_idle | col(Operation.status).in_([DELIVERING, WAITING, PAUSED])
    return tx.exec(select(Operation.id).where(busy).limit(1)).first() is not None


def has_controls(tx: Session) -> bool:
    """Any control request to apply, or a wait that may have come due."""
    busy = _control_unsent() | (Operation.status == WAITING)
    return tx.exec(select(Operation.id).where(busy).limit(1)).first() is not None


def has_unsent(tx: Session) -> bool:
    return tx.exec(select(Operation.id).where(_unsent()).limit(1)).first() is not None


def attempts_for(tx: Session, operation_id: str) -> list[Attempt]:
    return list(tx.exec(select(Attempt).where(Attempt.operation_id == operation_id).order_by(col(Attempt.number))))


def attempts_of(tx: Session, operation_ids: list[str]) -> list[Attempt]:
    """The attempts of several operations, by operation and number (one query for a page of operations)."""
    if not operation_ids:
        return []
    query = select(Attempt).where(col(Attempt.operation_id).in_(operation_ids))
    return list(tx.exec(query.order_by(col(Attempt.operation_id), col(Attempt.number))))


def document_titles(tx: Session, document_ids: set[str]) -> dict[str, str | None]:
    """``{id: title}`` of these documents; a deleted one maps to None."""
    found: dict[str, str | None] = dict.fromkeys(document_ids)
    if document_ids:
        rows = tx.exec(select(Document.id, Document.title).where(col(Document.id).in_(sorted(document_ids))))
        found.update({document_id: title for document_id, title in rows})
    return found


def rendered(tx: Session, key: str) -> RenderedObject | None:
    return tx.get(RenderedObject, key)


def site_state(tx: Session) -> SiteState:
    return tx.get(SiteState, 1) or SiteState()


# --- delivery pipeline: plugin webhooks and debounced aggregates ---------------------------------

_WILL_RUN = (QUEUED, DELIVERING)


def get_webhook_endpoint(tx: Session, endpoint_id: str) -> WebhookEndpoint:
    endpoint = tx.get(WebhookEndpoint, endpoint_id)
    if endpoint is None:
        raise NotFound("Webhook endpoint not found.", details={"endpoint_id": endpoint_id})
    return endpoint


def webhook_endpoints(tx: Session, *, event: str | None = None, enabled_only: bool = False) -> list[WebhookEndpoint]:
    """Registered endpoints in registration order, optionally only enabled ones subscribed to ``event``."""
    query = select(WebhookEndpoint).order_by(col(WebhookEndpoint.created_at), col(WebhookEndpoint.id))
    if enabled_only:
        query = query.where(col(WebhookEndpoint.enabled).is_(True))
    endpoints = list(tx.exec(query))
    return [e for e in endpoints if event is None or event in e.events]


def delivered_endpoint_ids(tx: Session, operation_id: str, event: str, document_id: str) -> set[str]:
    """Endpoints that already acknowledged ``event`` for this document of this operation."""
    rows = tx.exec(
        select(WebhookDelivery.endpoint_id).where(
            WebhookDelivery.operation_id == operation_id,
            WebhookDelivery.event == event,
            WebhookDelivery.document_id == document_id,
        )
    )
    return set(rows)


def aggregate_state(tx: Session) -> AggregateState:
    return tx.get(AggregateState, 1) or AggregateState()


def pending_aggregate_operation(tx: Session, generation: int, exclude_id: str) -> Operation | None:
    """An operation of at least ``generation`` that has yet to run its aggregates step, if any.

    Its step cannot have run already: it would have left the aggregates at
    ``generation`` or later, and the caller only asks when they are older.
    """
    candidates = tx.exec(
        select(Operation).where(
            col(Operation.flow_name).in_(AGGREGATE_WORKFLOWS),
            col(Operation.id) != exclude_id,
            # the other members of the batch that is asking run their aggregates step in it
            col(Operation.batch_id).is_(None) | (col(Operation.batch_id) != exclude_id),
            or_(
                col(Operation.status).in_(_WILL_RUN),
                and_(col(Operation.status) == FAILED, col(Operation.next_attempt_at).is_not(None)),
            ),
        )
    )
    for operation in candidates:
        if getattr(operation.run_parameters(), "generation", 0) >= generation:
            return operation
    return None


# --- the dashboard's lists: server-side search, filters and pages ---------------------------------

DOCUMENT_FILTERS = ("draft", "published", "changed", "scheduled")


def scheduled_documents(tx: Session) -> dict[str, tuple[str, Any]]:
    """Documents in a scheduled release: ``{document_id: (operation_id, scheduled_for)}``, the soonest first."""
    found: dict[str, tuple[str, Any]] = {}
    # Every list of documents asks this, so it reads three columns of the scheduled operations whose
    # parameters name documents at all (the text test is a cheap pre-filter; the loop decides).
    rows = tx.exec(
        select(Operation.id, Operation.scheduled_for, Operation.parameters)
        .where(Operation.status == SCHEDULED, cast(Operation.parameters, String).like('%"documents"%'))
        .order_by(col(Operation.scheduled_for).desc())
    )
    for operation_id, scheduled_for, parameters in rows:  # latest first, so the soonest schedule of a document wins
        for item in parameters.get("documents") or ():
            if isinstance(item, dict) and isinstance(item.get("document_id"), str):
                found[item["document_id"]] = (operation_id, scheduled_for)
    return found


def find_documents(
    tx: Session,
    *,
    q: str = "",
    state: str | None = None,
    kind: str | None = None,
    scheduled: set[str] | None = None,
    limit: int = 50,
    offset: int = 0,
) -> tuple[list[Document], int]:
    """One page of documents whose title or slug contains ``q``, in ``state``, most recently edited first;
    with the number of all that match."""
    if state is not None and state not in DOCUMENT_FILTERS:
        raise BadRequest("Unknown document status.", details={"status": state, "allowed": list(DOCUMENT_FILTERS)})
    conditions: list[Any] = []
    if q:
        conditions.append(
            or_(col(Document.title).icontains(q, autoescape=True), col(Document.slug).icontains(q, autoescape=True))
        )
    if kind is not None:
        conditions.append(Document.kind == kind)
    if state in ("draft", "published"):
        conditions.append(Document.status == state)
    elif state == "changed":
        conditions.append(Document.status == "published")
        conditions.append(col(Document.published_version) != col(Document.version))
    elif state == "scheduled":
        conditions.append(col(Document.id).in_(sorted(scheduled or ())))
    total = tx.exec(select(func.count()).select_from(Document).where(*conditions)).one()
    # Newest first, ties by id, both descending: ix_document_updated read backwards, no sort.
    query = select(Document).where(*conditions).order_by(col(Document.updated_at).desc(), col(Document.id).desc())
    return list(tx.exec(query.offset(offset).limit(limit))), int(total)


def count_operations(tx: Session, *, status: str | None = None) -> int:
    query = select(func.count()).select_from(Operation)
    if status is not None:
        query = query.where(Operation.status == status)
    return int(tx.exec(query).one())


def latest_operation_for_document(tx: Session, document_id: str) -> Operation | None:
    """The newest operation that delivers or withdraws ``document_id`` (alone, in a batch or in a release)."""
    own = tx.exec(
        select(Operation)
        .where(Operation.document_id == document_id)
        .order_by(col(Operation.created_at).desc(), col(Operation.id).desc())
        .limit(1)
    ).first()
    needle = f'%"{document_id}"%'
    release = tx.exec(
        select(Operation)
        .where(Operation.kind == "release", cast(Operation.parameters, String).like(needle))
        .order_by(col(Operation.created_at).desc(), col(Operation.id).desc())
        .limit(1)
    ).first()
    candidates = [op for op in (own, release) if op is not None]
    return max(candidates, key=lambda op: (op.created_at, op.id)) if candidates else None
