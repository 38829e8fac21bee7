"""Spilled version bodies read back whenever a revision row is loaded, so no reader can miss one.

``prune_policies`` moves large bodies of old versions into the tenant's store
(``tenant_runtime.versions.bodies``); the row keeps ``body_key`` and an empty
``body``. Code that reads revisions through the ORM (a point-in-time restore
copying an old version, an export) must still see the text, so a ``load``
listener fills ``body`` from the store of the workspace the session is bound to
(as the committed value: loading never makes the row dirty). A query that only
lists versions passes ``SKIP_BODIES`` to leave them in the store.
"""

from __future__ import annotations

import hashlib
import threading
from typing import Any

from sqlalchemy import Engine, event
from sqlalchemy.orm import QueryContext
from sqlalchemy.orm.attributes import set_committed_value

from tenant_runtime.errors import Permanent
from tenant_runtime.storage import ObjectStore
from tenant_runtime.workspace.models import Revision

# An execution option: ``select(Revision).execution_options(**SKIP_BODIES)`` leaves spilled bodies unread.
SKIP_BODIES = {"pressroom_skip_bodies": True}
_stores: dict[str, ObjectStore] = {}
_lock = threading.Lock()


def _key(engine: Any) -> str:
    # A PostgreSQL workspace engine shares its URL with every tenant of the database: its schema tells them apart.
    return f"{engine.url}#{engine.get_execution_options().get('pressroom_schema', '')}"


def bind_store(engine: Engine, store: ObjectStore) -> None:
    """Spilled bodies of rows loaded through ``engine`` are read from ``store`` (the tenant's view)."""
    with _lock:
        _stores[_key(engine)] = store


def read_spilled(store: ObjectStore, revision: Revision) -> str:
    """The spilled body of ``revision``, checked against its hash."""
    data = store.get(revision.body_key or "")
    if data is None or hashlib.sha256(data).hexdigest() != revision.body_sha256:
        raise Permanent(
            "A version's body is missing from the store or does not match its hash.",
            details={"document_id": revision.document_id, "version": revision.version, "key": revision.body_key},
            code="version_body_missing",
        )
    return data.decode("utf-8")


@event.listens_for(Revision, "load")
def _fill_spilled_body(target: Revision, context: QueryContext) -> None:
    if target.__dict__.get("body_key") is None or context.execution_options.get("pressroom_skip_bodies"):
        return
    bind: Any = context.session.get_bind()
    with _lock:
        store = _stores.get(_key(bind))
    if store is not None:
        set_committed_value(target, "body", read_spilled(store, target))


__all__ = ["SKIP_BODIES", "bind_store", "read_spilled"]
