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


class AttemptOut(msgspec.Struct):
    number: int
    started_at: datetime
    finished_at: datetime | None
    step: str | None
    error: str | None


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


class MediaPolicyOut(msgspec.Struct):
    max_bytes: int
    retention_days: int


class TenantFigures(msgspec.Struct):
    """What an operator sees of a tenant's data: operations not finished yet."""

    unfinished_operations: int


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


class CommandResult(msgspec.Struct):
    """A command's answer: the HTTP status and body; ``replayed`` when an Idempotency-Key repeated it."""

    status_code: int
    body: dict[str, Any]
    replayed: bool = False


__all__ = [
    "AttemptOut",
    "CommandResult",
    "DeliveryOut",
    "DocumentOut",
    "DocumentPage",
    "DocumentRow",
    "MediaOut",
    "MediaPolicyOut",
    "OperationOut",
    "ReleaseContents",
    "ReleaseItem",
    "ResourceOut",
    "SiteSettingsOut",
    "TenantFigures",
    "WebhookOut",
]
