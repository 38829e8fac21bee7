"""The sweep of the trash: hard-delete files soft-deleted past retention that nothing references.

Each file goes through three idempotent steps, so a crash anywhere leaves a
state the next attempt (or the next night's run) finishes, never a reference
to bytes that are gone and never a second deletion:

1. ``begin_purge``: in ONE write transaction (the workspace's write lock, so no
   document write can interleave), re-check that the file is still deleted and
   past retention and that the reference scan finds nothing, then mark it
   ``purging``. From then on the site no longer serves it, it cannot be
   restored, and a document body that names it is refused (``check_embeds``).
   A file that is still referenced stays in the trash and is reported.
2. ``store.delete(media/{id})``: removing a missing key is a no-op.
3. ``finish_purge``: delete the row and write the ``media.purge`` audit entry,
   once (a row already gone means an earlier attempt finished it).

Files found ``purging`` (an attempt that died between 1 and 3) are picked up
again by ``expired`` and go straight to 2 and 3: their scan already proved them
free, and nothing could point at them since.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlmodel import and_, col, or_, select

from tenant_runtime import audit
from tenant_runtime.ids import as_utc, utcnow
from tenant_runtime.media import library
from tenant_runtime.media.references import references_to
from tenant_runtime.workspace import SYSTEM, Workspace
from tenant_runtime.workspace.media_models import DELETED, PURGING, Media

# What one run looks at, at most; the rest waits for the next run (the result stays small).
DEFAULT_BATCH = 500
# References reported per kept file.
REPORTED_REFERENCES = 5

PURGED = "purged"
KEPT = "kept"
SKIPPED = "skipped"  # restored meanwhile, or no longer past retention (the policy changed)


def expired(ws: Workspace, *, now: datetime | None = None, limit: int = DEFAULT_BATCH) -> list[str]:
    """Ids of files past retention in the trash, and of files an earlier sweep left ``purging``; oldest first."""
    now = now or utcnow()
    with ws.reader() as tx:
        cutoff = now - timedelta(days=library.policy(tx).retention_days)
        query = (
            select(Media.id)
            .where(
                or_(
                    Media.status == PURGING,
                    and_(Media.status == DELETED, col(Media.deleted_at) <= cutoff),
                )
            )
            .order_by(col(Media.deleted_at), col(Media.id))
            .limit(limit)
        )
        return list(tx.exec(query).all())


def scan(ws: Workspace, media_ids: list[str]) -> dict[str, Any]:
    """The reference scan over every kept document version: which files are free, which are kept and why."""
    with ws.reader() as tx:
        found = references_to(tx, ws.store, media_ids, limit=REPORTED_REFERENCES)
    return {
        "free": [media_id for media_id in media_ids if not found[media_id]],
        "kept": {media_id: [r.as_dict() for r in refs] for media_id, refs in found.items() if refs},
    }


def begin_purge(ws: Workspace, media_id: str, *, now: datetime | None = None) -> dict[str, Any]:
    """Step 1: prove the file free under the write lock and mark it ``purging``; or say why it stays."""
    now = now or utcnow()
    with ws.transaction() as tx:
        media = tx.get(Media, media_id)
        if media is None:
            return {"media_id": media_id, "result": PURGED, "key": library.media_key(media_id)}
        if media.status == PURGING:
            return {"media_id": media_id, "result": PURGING, "key": media.key}
        ends = library.purge_after(media, library.policy(tx).retention_days)
        if media.status != DELETED or ends is None or ends > now:
            return {"media_id": media_id, "result": SKIPPED, "status": media.status}
        refs = references_to(tx, ws.store, [media_id], limit=REPORTED_REFERENCES)[media_id]
        if refs:
            return {"media_id": media_id, "result": KEPT, "references": [r.as_dict() for r in refs]}
        media.status, media.purge_started_at = PURGING, now
        tx.add(media)
        return {"media_id": media_id, "result": PURGING, "key": media.key}


def finish_purge(ws: Workspace, media_id: str, *, operation_id: str | None = None) -> bool:
    """Step 3: drop the row of a file whose bytes are gone, with its audit entry; False if already done."""
    with ws.transaction() as tx:
        media = tx.get(Media, media_id)
        if media is None:
            return False
        if media.status != PURGING:  # never a file that was not proven free first
            raise RuntimeError(f"media {media_id} is {media.status}, not purging")
        deleted_at = as_utc(media.deleted_at).isoformat() if media.deleted_at else None
        audit.record(
            tx,
            "media.purge",
            SYSTEM,
            "media",
            media_id,
            operation_id=operation_id,
            name=media.name,
            bytes=media.bytes,
            sha256=media.sha256,
            deleted_at=deleted_at,
        )
        tx.delete(media)
        return True


def purge(
    ws: Workspace, media_id: str, *, operation_id: str | None = None, now: datetime | None = None
) -> dict[str, Any]:
    """All three steps for one file; what became of it (``purged``, ``kept`` with its references, ``skipped``)."""
    started = begin_purge(ws, media_id, now=now)
    if started["result"] != PURGING:
        return started
    ws.store.delete(started["key"])
    finished = finish_purge(ws, media_id, operation_id=operation_id)
    return {"media_id": media_id, "result": PURGED, "by_this_run": finished}


__all__ = ["DEFAULT_BATCH", "KEPT", "PURGED", "SKIPPED", "begin_purge", "expired", "finish_purge", "purge", "scan"]
