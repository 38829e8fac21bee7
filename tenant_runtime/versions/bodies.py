"""Where a document version's body lives: inline in its revision row, or spilled into the tenant's store.

A body over ``SPILL_THRESHOLD`` bytes of a version that is *cold* (neither the
document's current nor its published version, and no unfinished operation
addresses it) moves to ``versions/{sha256}`` in the tenant's prefix: a
content-hash key, so a body shared by several versions (a restore copies one)
is one object. Delivery only ever reads current or published versions, so it
always finds the body inline; everything else reads it through
``revision_body``. Store writes and deletes of ``versions/`` keys happen while
the workspace's write lock is held, so a spill and a spillover delete never
cross (tenant_runtime.actions.retention).
"""

from __future__ import annotations

import hashlib

from sqlmodel import Session, col, select

from tenant_runtime.storage import ObjectStore
from tenant_runtime.versions.pins import pinned_document_versions
from tenant_runtime.workspace.models import Revision
from tenant_runtime.workspace.spilled_bodies import SKIP_BODIES, read_spilled
from tenant_runtime.workspace.version_models import SpilloverPending

SPILL_PREFIX = "versions/"
SPILL_THRESHOLD = 16 * 1024  # bytes of UTF-8 body
SPILL_BATCH = 500  # bodies spilled per prune run at most (each one a store write under the write lock)


def body_key(data: bytes) -> tuple[str, str]:
    digest = hashlib.sha256(data).hexdigest()
    return f"{SPILL_PREFIX}{digest}", digest


def revision_body(store: ObjectStore, revision: Revision) -> str:
    """The version's body, read back from the store when it was spilled (checked against its hash).

    A row loaded through a workspace has it already (``workspace/spilled_bodies.py``)."""
    if revision.body_key is None or revision.body:
        return revision.body
    return read_spilled(store, revision)


def spill_cold_bodies(tx: Session, store: ObjectStore, *, threshold: int = SPILL_THRESHOLD) -> dict[str, int]:
    """Move large bodies of cold versions into the store; inside the caller's write transaction."""
    pinned = pinned_document_versions(tx)
    candidates = tx.exec(
        select(Revision)
        .where(col(Revision.body_key).is_(None))
        .where(col(Revision.body) != "")
        .order_by(col(Revision.id))
        .execution_options(**SKIP_BODIES)
    )
    spilled = skipped = bytes_moved = 0
    for revision in candidates:
        data = revision.body.encode("utf-8")
        if len(data) <= threshold or (revision.document_id, revision.version) in pinned:
            continue
        if spilled >= SPILL_BATCH:
            skipped += 1
            continue
        key, digest = body_key(data)
        if not store.exists(key):
            store.put(key, data, content_type="text/markdown; charset=utf-8")
        revision.body, revision.body_key, revision.body_sha256, revision.body_bytes = "", key, digest, len(data)
        tx.add(revision)
        # The key is referenced again: a delete recorded by an earlier prune must not remove it.
        pending = tx.get(SpilloverPending, key)
        if pending is not None:
            tx.delete(pending)
        spilled += 1
        bytes_moved += len(data)
    return {"spilled": spilled, "spilled_bytes": bytes_moved, "left_for_next_run": skipped}


__all__ = ["SPILL_BATCH", "SPILL_PREFIX", "SPILL_THRESHOLD", "body_key", "revision_body", "spill_cold_bodies"]
