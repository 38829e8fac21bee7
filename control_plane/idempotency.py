"""Idempotency keys of control-plane commands (members and tokens), stored beside their effect.

The same rules as a tenant runtime's (``tenant_runtime.actions.idempotency``): the key is bound to a hash
of the request, a repeat answers the first answer, the same key with another request is a 409. The record
lives in the control-plane database because the effect does, so both commit together or not at all.
"""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, select

from control_plane.db.models import IdempotencyRecord
from tenant_runtime.actions.idempotency import check_key, check_same_request, request_hash


def lookup(session: Session, scope: str, key: str, digest: str) -> IdempotencyRecord | None:
    """The first answer for this key in ``scope``, or None; the same key with another request is a 409."""
    check_key(key)
    record = session.exec(
        select(IdempotencyRecord).where(IdempotencyRecord.scope == scope, IdempotencyRecord.key == key)
    ).first()
    if record is not None:
        check_same_request(key, record.request_hash, digest)
    return record


def remember(session: Session, scope: str, key: str, digest: str, status_code: int, response: dict[str, Any]) -> None:
    """Keep the first answer in the effect's own transaction (the caller commits)."""
    session.add(
        IdempotencyRecord(scope=scope, key=key, request_hash=digest, status_code=status_code, response=response)
    )


__all__ = ["lookup", "remember", "request_hash"]
