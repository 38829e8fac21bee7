"""What the control plane asks a tenant runtime: queries and commands, as plain data.

Plain msgspec structs (tagged, so a union of them decodes) rather than
callables, so the same requests can travel to a runtime in another process.
A command travels inside ``Command``: who asks (``ActorRef``), the idempotency
scope and key, and the quota that applies; the runtime runs the idempotency
check, the quota, the tenant-runtime action and its audit row in one
transaction, then hands what it committed to the relay.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec


class Message(msgspec.Struct, frozen=True, tag=True, forbid_unknown_fields=True):
    """Base of every request to a tenant runtime."""


class ActorRef(msgspec.Struct, frozen=True):
    """The principal behind a request, as the tenant's audit log names it, and its role there."""

    id: str
    role: str


class Quota(msgspec.Struct, frozen=True):
    """At most ``limit`` operations of ``kinds`` per hour."""

    kinds: tuple[str, ...]
    limit: int


# --- queries --------------------------------------------------------------------------------------


class ListDocuments(Message, frozen=True):
    status: str | None = None
    kind: str | None = None
    limit: int = 100
    offset: int = 0


class GetDocument(Message, frozen=True):
    document_id: str


class ListOperations(Message, frozen=True):
    status: str | None = None
    limit: int = 100
    offset: int = 0
    kinds: tuple[str, ...] = ()  # only these kinds of operation (empty: every kind)
    q: str = ""  # search: an operation id (or its start), a kind, or a document's id, title or slug


class GetOperation(Message, frozen=True):
    operation_id: str


class GetSiteResource(Message, frozen=True):
    name: str


class ListWebhooks(Message, frozen=True):
    pass


class GetFigures(Message, frozen=True):
    """Operator figures of the tenant (unfinished operations, operations by status)."""


# --- commands -------------------------------------------------------------------------------------


class CreateDocument(Message, frozen=True):
    slug: str
    title: str
    body: str = ""
    kind: str = "page"
    fields: dict[str, Any] | None = None  # custom field values, checked against the kind's definitions


class UpdateDocument(Message, frozen=True):
    document_id: str
    version: int
    slug: str | None = None
    title: str | None = None
    body: str | None = None
    kind: str | None = None
    fields: dict[str, Any] | None = None  # merged into the document's values; a null removes one


class PublishDocument(Message, frozen=True):
    document_id: str
    version: int | None = None  # the version the user saw; another one is a version conflict


class UnpublishDocument(Message, frozen=True):
    document_id: str


class CreateRelease(Message, frozen=True):
    documents: tuple[tuple[str, int], ...] = ()
    navigation_version: int | None = None
    redirects_version: int | None = None
    theme: str | None = None
    publish_at: datetime | None = None
    # A scheduled release that waits for an approval event (its type) for up to this many seconds.
    approval_event: str | None = None
    approval_timeout_seconds: float | None = None


class RescheduleRelease(Message, frozen=True):
    operation_id: str
    publish_at: datetime


class UpdateSiteResource(Message, frozen=True):
    name: str
    version: int
    content: Any = None


class RegisterWebhook(Message, frozen=True):
    url: str
    events: tuple[str, ...] = ("after_publish",)
    secret: str | None = None


class SetWebhookEnabled(Message, frozen=True):
    endpoint_id: str
    enabled: bool


class RebuildSearch(Message, frozen=True):
    force: bool = False


class SeedSite(Message, frozen=True):
    pass


class RetryOperation(Message, frozen=True):
    operation_id: str


class CancelOperation(Message, frozen=True):
    operation_id: str


class ListMedia(Message, frozen=True):
    q: str | None = None
    state: str = "active"  # active | deleted | all
    limit: int = 100
    offset: int = 0


class GetMedia(Message, frozen=True):
    media_id: str


class GetMediaPolicy(Message, frozen=True):
    pass


class UploadMedia(Message, frozen=True):
    """A file to add to the library: its bytes travel whole (the control plane caps the request's size)."""

    name: str | None
    data: bytes


class DeleteMedia(Message, frozen=True):
    media_id: str


class RestoreMedia(Message, frozen=True):
    media_id: str


class SetMediaPolicy(Message, frozen=True):
    max_bytes: int | None = None
    retention_days: int | None = None


# --- packages (dispatch/runtime/packages.py) ------------------------------------------------------


class ListPackages(Message, frozen=True):
    include_uninstalled: bool = False


class ListPackageKeys(Message, frozen=True):
    pass


class InstallPackage(Message, frozen=True):
    archive: bytes  # the package archive (base64 on the wire)
    pin_theme: bool = False
    options: dict[str, Any] = msgspec.field(default_factory=dict)


class RollbackPackage(Message, frozen=True):
    name: str
    version: str | None = None


class UninstallPackage(Message, frozen=True):
    name: str


class AddPackageKey(Message, frozen=True):
    public_key: str
    name: str = ""
    expires_at: datetime | None = None


class RevokePackageKey(Message, frozen=True):
    key_id: str


class ExpirePackageKey(Message, frozen=True):
    key_id: str
    at: datetime


class PauseOperation(Message, frozen=True):
    operation_id: str


class ResumeOperation(Message, frozen=True):
    operation_id: str


class TerminateOperation(Message, frozen=True):
    operation_id: str


class RestartOperation(Message, frozen=True):
    operation_id: str
    from_step: str | None = None  # None: from the top


class SendOperationEvent(Message, frozen=True):
    operation_id: str
    event_type: str  # ``type`` names the message itself (the tag field)
    payload: Any = None


class GetOperationRecord(Message, frozen=True):
    """The operation's own record for its timeline: audit entries, attempts, waits and events."""

    operation_id: str


class SweepMedia(Message, frozen=True):
    """Queue the sweep_media flow now."""


class CreateWorkspace(Message, frozen=True):
    """Create the tenant's workspace (idempotent) titled ``title``: the operator's tenant creation."""

    title: str


class SetServiceStatus(Message, frozen=True):
    """Record the tenant's status on its runtime (``active | suspended | deleted``): the operator's suspend or
    resume, so the nightly fan-out skips a tenant that is not active."""

    status: str


class FindDocuments(Message, frozen=True):
    """One page of documents for the dashboard: title/slug search, status (draft, published, changed,
    scheduled) and kind filters, with the total that match."""

    q: str = ""
    status: str | None = None
    kind: str | None = None
    limit: int = 50
    offset: int = 0


class GetDocumentDelivery(Message, frozen=True):
    """Where a document stands on the public site: its newest operation and whether it has landed."""

    document_id: str


class GetSiteSettings(Message, frozen=True):
    pass


class GetReleaseContents(Message, frozen=True):
    """What a release operation publishes: document versions (with titles), resource versions, theme."""

    operation_id: str


class ConfigureSite(Message, frozen=True):
    title: str | None = None
    timezone: str | None = None
    description: str | None = None
    language: str | None = None


class Command(msgspec.Struct, frozen=True):
    """A command with what the runtime needs to run it exactly once and within quota."""

    actor: ActorRef
    scope: str  # the route it came from, e.g. "documents.publish:doc_x"; part of the idempotency scope
    message: Message
    idempotency_key: str | None = None
    quota: Quota | None = None


Query = (
    ListDocuments
    | GetDocument
    | ListOperations
    | GetOperation
    | GetSiteResource
    | ListWebhooks
    | GetFigures
    | ListMedia
    | GetMedia
    | GetMediaPolicy
    | GetOperationRecord
)

__all__ = [
    "ActorRef",
    "AddPackageKey",
    "CancelOperation",
    "Command",
    "ConfigureSite",
    "CreateDocument",
    "CreateRelease",
    "CreateWorkspace",
    "DeleteMedia",
    "ExpirePackageKey",
    "FindDocuments",
    "GetDocument",
    "GetDocumentDelivery",
    "GetFigures",
    "GetMedia",
    "GetMediaPolicy",
    "GetOperation",
    "GetOperationRecord",
    "GetReleaseContents",
    "GetSiteResource",
    "GetSiteSettings",
    "InstallPackage",
    "ListDocuments",
    "ListMedia",
    "ListOperations",
    "ListPackageKeys",
    "ListPackages",
    "ListWebhooks",
    "Message",
    "PauseOperation",
    "PublishDocument",
    "Query",
    "Quota",
    "RebuildSearch",
    "RegisterWebhook",
    "RescheduleRelease",
    "RestartOperation",
    "RestoreMedia",
    "ResumeOperation",
    "RetryOperation",
    "RevokePackageKey",
    "RollbackPackage",
    "SeedSite",
    "SendOperationEvent",
    "SetMediaPolicy",
    "SetServiceStatus",
    "SetWebhookEnabled",
    "SweepMedia",
    "TerminateOperation",
    "UninstallPackage",
    "UnpublishDocument",
    "UpdateDocument",
    "UpdateSiteResource",
    "UploadMedia",
]
