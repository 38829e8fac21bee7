"""What a tenant runtime answers: the shapes the control plane shows (and, later, the wire format).

Plain msgspec structs, so an out-of-process runtime can send them as JSON and
the control plane can serve them as its response schemas unchanged.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec


class DocumentOut(msgspec.Struct):
    id: str
    slug: str
    title: str
    body: str
    kind: str
    status: str
    version: int
    published_version: int | None
    published_at: datetime | None
    created_at: datetime
    updated_at: datetime
    url: str | None
    fields: dict[str, Any] = msgspec.field(default_factory=dict)  # custom field values


class AttemptOut(msgspec.Struct):
    number: int
    started_at: datetime
    finished_at: datetime | None
    step: str | None
    error: str | None


class StepOut(msgspec.Struct):
    """One step of the operation's run: its declared name joined with Prefect's task runs of it."""

    name: str
    status: str  # pending | running | completed | cached | failed | retrying | skipped
    attempts: int
    error: str | None
    started_at: datetime | None
    duration_ms: int | None


class WaitingOut(msgspec.Struct):
    """Why the operation is not running now, and until when."""

    reason: str  # scheduled | retry | paused | awaiting_event
    until: datetime | None
    event_type: str | None = None
    by: str | None = None


class ControlOut(msgspec.Struct):
    """The last run-control request and whether dispatch has applied it to the run."""

    action: str
    by: str | None
    requested_at: datetime | None
    applied: bool
    error: str | None


class TimelineEntry(msgspec.Struct):
    """One moment of an operation's life, content or engine."""

    at: datetime
    source: str  # content | engine | control
    event: str
    detail: dict[str, Any] = msgspec.field(default_factory=dict)


class OperationRecord(msgspec.Struct):
    """The tenant's own record of an operation, for its timeline."""

    operation_id: str
    flow_run_ids: list[str]
    entries: list[TimelineEntry]


class OperationOut(msgspec.Struct):
    id: str
    kind: str
    status: str
    document_id: str | None
    document_version: int | None
    flow_run_id: str | None
    run_url: str | None
    sent: bool
    send_error: str | None
    retries: int
    scheduled_for: datetime | None
    next_attempt_at: datetime | None
    error: dict[str, Any] | None
    attempts: list[AttemptOut]
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None
    tenant: str | None = None
    # The publish batch whose run carried this operation (None when it travelled alone).
    batch_id: str | None = None
    # The workflow that delivers it, and the title of its document (if it has one that still exists).
    workflow: str | None = None
    document_title: str | None = None
    # What the run that completed it reported (purged surrogate keys, counts …).
    outcome: dict[str, Any] | None = None
    # Run control: why it is not running now, the last control request, restarts so far, and
    # (filled in by dispatch/run_views.py from Prefect's task runs) every step of its run.
    waiting: WaitingOut | None = None
    control: ControlOut | None = None
    restarts: int = 0
    steps: list[StepOut] = msgspec.field(default_factory=list)
    # The flow runs its attempts ran in (a restart is a new run), oldest first.
    flow_run_ids: list[str] = msgspec.field(default_factory=list)
    # How far a long operation is while it runs (a field migration: phase, done of total, unconvertible).
    progress: dict[str, Any] | None = None


class ResourceOut(msgspec.Struct):
    name: str
    version: int
    published_version: int | None
    content: Any
    published_content: Any


class WebhookOut(msgspec.Struct):
    id: str
    url: str
    events: list[str]
    enabled: bool
    created_at: datetime
    secret: str | None = None  # only in the answer to registration


class MediaReferenceOut(msgspec.Struct):
    """A document naming a media file: as it is now (``version`` None) or a version still in retention;
    in its body and/or in the custom fields ``fields`` lists. With ``default_of`` (``kind.field``) and no
    document: a custom field whose default names the file."""

    document_id: str | None
    slug: str | None
    version: int | None
    in_body: bool
    fields: list[str]
    default_of: str | None = None


class MediaOut(msgspec.Struct):
    id: str
    name: str
    url: str  # on the public site; it keeps working until the sweep removes a deleted file
    content_type: str
    bytes: int
    sha256: str
    width: int | None
    height: int | None
    status: str  # active | deleted
    created_at: datetime
    created_by: str
    deleted_at: datetime | None = None
    # When a deleted file's retention ends: restorable until then, swept after.
    purge_after: datetime | None = None
    # Where it is used (the reading of one file only; None in listings): the documents and kept versions
    # naming it, at most ``USED_BY_LIMIT``; ``used_by_more`` says the list was cut there.
    used_by: list[MediaReferenceOut] | None = None
    used_by_more: bool = False


class MediaPolicyOut(msgspec.Struct):
    max_bytes: int
    retention_days: int


class TenantFigures(msgspec.Struct):
    """What an operator sees of a tenant's data: operations not finished yet, and operations by status."""

    unfinished_operations: int
    by_status: dict[str, int] = msgspec.field(default_factory=dict)  # {} from a runtime that predates it


class DocumentRow(msgspec.Struct):
    """A document in a dashboard list, with the scheduled release it is in (if any)."""

    document: DocumentOut
    scheduled_for: datetime | None = None
    scheduled_operation: str | None = None


class DocumentPage(msgspec.Struct):
    items: list[DocumentRow]
    total: int


class DeliveryOut(msgspec.Struct):
    """Where a document stands on the public site.

    ``state``: draft | scheduled | rendering (public through live rendering, its delivery still running) |
    published (the delivery's final purge has landed) | failed | unpublished.
    """

    state: str
    operation: OperationOut | None = None


class ReleaseItem(msgspec.Struct):
    document_id: str
    version: int
    title: str | None  # None: the document no longer exists


class ReleaseContents(msgspec.Struct):
    documents: list[ReleaseItem]
    navigation_version: int | None = None
    redirects_version: int | None = None
    theme: str | None = None


class SiteSettingsOut(msgspec.Struct):
    title: str
    timezone: str
    description: str = ""
    language: str = "en"


class CommandResult(msgspec.Struct):
    """A command's answer: the HTTP status and body; ``replayed`` when an Idempotency-Key repeated it."""

    status_code: int
    body: dict[str, Any]
    replayed: bool = False


__all__ = [
    "AttemptOut",
    "CommandResult",
    "ControlOut",
    "DeliveryOut",
    "DocumentOut",
    "DocumentPage",
    "DocumentRow",
    "MediaOut",
    "MediaPolicyOut",
    "MediaReferenceOut",
    "OperationOut",
    "OperationRecord",
    "ReleaseContents",
    "ReleaseItem",
    "ResourceOut",
    "SiteSettingsOut",
    "StepOut",
    "TenantFigures",
    "TimelineEntry",
    "WaitingOut",
    "WebhookOut",
]
