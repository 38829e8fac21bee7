"""Change the media library: upload, soft delete, restore, the tenant's media policy, ask for a sweep.

Each checks, executes and writes its audit row in the caller's transaction.
An upload is checked whole (size against the tenant's limit, type sniffed from
the bytes) before anything is written; its bytes go to ``media/{id}`` in the
tenant's store, and only then is its row added, so a row never names bytes
that are not there.
"""

from __future__ import annotations

import hashlib
import io
import re
from datetime import datetime

from sqlmodel import Session

from tenant_runtime import audit
from tenant_runtime.actions.operations import new_operation, new_operation_id, schedule_system_run
from tenant_runtime.errors import BadRequest, Conflict, PayloadTooLarge
from tenant_runtime.ids import new_id, utcnow
from tenant_runtime.media import library
from tenant_runtime.media.types import sniff
from tenant_runtime.storage import TenantStore
from tenant_runtime.workflows import SweepMediaParameters
from tenant_runtime.workspace.access import Actor
from tenant_runtime.workspace.media_models import ACTIVE, DELETED, Media, MediaPolicy
from tenant_runtime.workspace.models import Operation

MAX_NAME = 200
MAX_RETENTION_DAYS = 3650
MAX_LIMIT_BYTES = 1024 * 1024 * 1024
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f]+")
_SPACES = re.compile(r"\s+")


def clean_name(name: str | None) -> str:
    """The file's own name, without any path, control characters or runs of spaces; ``upload`` if none is left."""
    base = re.split(r"[\\/]", name or "")[-1]
    cleaned = _SPACES.sub(" ", _UNPRINTABLE.sub("", base)).strip()
    return cleaned[:MAX_NAME] or "upload"


def upload_media(tx: Session, store: TenantStore, actor: Actor, *, name: str | None, data: bytes) -> Media:
    """Add a file to the library: nothing is stored unless it fits the tenant's limit and is an allowed type."""
    actor.require("content.edit")
    limit = library.policy(tx).max_bytes
    if len(data) > limit:
        raise PayloadTooLarge(
            f"This site accepts files of at most {limit} bytes.",
            details={"bytes": len(data), "max_bytes": limit},
            code="media_too_large",
        )
    if not data:
        raise BadRequest("The file is empty.", details={"field": "file"}, code="empty_file")
    sniffed = sniff(data)
    media_id = new_id("med")
    key = library.media_key(media_id)
    store.put_stream(key, io.BytesIO(data), content_type=sniffed.content_type)
    media = Media(
        id=media_id,
        name=clean_name(name),
        content_type=sniffed.content_type,
        bytes=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        width=sniffed.width,
        height=sniffed.height,
        key=key,
        created_by=actor.id,
    )
    tx.add(media)
    audit.record(
        tx, "media.upload", actor, "media", media_id, name=media.name, content_type=media.content_type, bytes=len(data)
    )
    return media


def delete_media(tx: Session, actor: Actor, media_id: str) -> Media:
    """Move a file to the trash; its URL keeps working until the sweep removes it. Deleting it again changes nothing."""
    actor.require("content.edit")
    media = library.get_media(tx, media_id)
    if media.status == DELETED:
        return media
    media.status, media.deleted_at, media.deleted_by = DELETED, utcnow(), actor.id
    tx.add(media)
    audit.record(tx, "media.delete", actor, "media", media_id, name=media.name)
    return media


def restore_media(tx: Session, actor: Actor, media_id: str) -> Media:
    """Take a file out of the trash, while its retention window lasts (409 ``media_retention_passed`` after)."""
    actor.require("content.edit")
    media = library.get_media(tx, media_id)
    if media.status == ACTIVE:
        return media
    ends = library.purge_after(media, library.policy(tx).retention_days)
    if ends is not None and ends <= utcnow():
        raise Conflict(
            "This file's retention window has passed; it is waiting to be swept.",
            details={"media_id": media_id, "retention_ended_at": ends.isoformat()},
            code="media_retention_passed",
        )
    media.status, media.deleted_at, media.deleted_by = ACTIVE, None, None
    tx.add(media)
    audit.record(tx, "media.restore", actor, "media", media_id, name=media.name)
    return media


def set_policy(
    tx: Session, actor: Actor, *, max_bytes: int | None = None, retention_days: int | None = None
) -> MediaPolicy:
    """Set the tenant's largest upload and soft-delete retention (the operator's quota)."""
    actor.require("site.admin")
    if max_bytes is not None and not 1 <= max_bytes <= MAX_LIMIT_BYTES:
        raise BadRequest(
            f"max_bytes is 1 to {MAX_LIMIT_BYTES}.", details={"field": "max_bytes"}, code="invalid_media_policy"
        )
    if retention_days is not None and not 0 <= retention_days <= MAX_RETENTION_DAYS:
        raise BadRequest(
            f"retention_days is 0 to {MAX_RETENTION_DAYS}.",
            details={"field": "retention_days"},
            code="invalid_media_policy",
        )
    current = library.policy(tx)
    before = {"max_bytes": current.max_bytes, "retention_days": current.retention_days}
    row = tx.get(MediaPolicy, 1) or MediaPolicy()
    if max_bytes is not None:
        row.max_bytes = max_bytes
    if retention_days is not None:
        row.retention_days = retention_days
    row.updated_at = utcnow()
    tx.add(row)
    audit.record(
        tx,
        "media.policy.set",
        actor,
        "media_policy",
        "1",
        before=before,
        max_bytes=row.max_bytes,
        retention_days=row.retention_days,
    )
    return row


def request_sweep(tx: Session, tenant: str, actor: Actor) -> Operation:
    """Queue the sweep_media flow now (the nightly chore queues the same run)."""
    actor.require("site.admin")
    parameters = SweepMediaParameters(tenant=tenant, operation_id=new_operation_id())
    operation = new_operation(tx, actor, parameters)
    audit.record(tx, "media.sweep", actor, "site", tenant, operation_id=operation.id)
    return operation


def schedule_sweep(tx: Session, tenant: str, due_at: datetime, key: str) -> str:
    """The nightly sweep of this tenant (``tenant_runtime.chores``, 02:00 UTC), due at its slot; keyed by the fire;
    the operation's id."""
    parameters = SweepMediaParameters(tenant=tenant, operation_id=new_operation_id(), fire_date=key.rsplit(":", 1)[-1])
    return schedule_system_run(tx, parameters, due_at, key, "media.sweep", "site", tenant)


__all__ = [
    "clean_name",
    "delete_media",
    "request_sweep",
    "restore_media",
    "schedule_sweep",
    "set_policy",
    "upload_media",
]
