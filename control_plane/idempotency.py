"""Idempotency keys of control-plane commands (members and tokens), stored beside their effect.

The same rules as a tenant runtime's (``tenant_runtime.actions.idempotency``): the key is bound to a hash
of the request, a repeat answers the first answer, the same key with another request is a 409. The record
lives in the control-plane database because the effect does, so both commit together or not at all.
"""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, select

from control_plane.db.models import IdempotencyRecord
from tenant_runtime.actions.idempotency import MAX_KEY_LENGTH, request_hash
from tenant_runtime.errors import BadRequest, IdempotencyKeyReused


def lookup(session: Session, scope: str, key: str, digest: str) -> IdempotencyRecord | None:
    """The first answer for this key in ``scope``, or None; the same key with another request is a 409."""
    if not key or len(key) > MAX_KEY_LENGTH or not key.isprintable():
        raise BadRequest(
            f"Idempotency-Key must be 1-{MAX_KEY_LENGTH} printable characters.", code="invalid_idempotency_key"
        )
    record = session.exec(
        select(IdempotencyRecord).where(IdempotencyRecord.scope == scope, IdempotencyRecord.key == key)
    ).first()
    if record is not None and record.request_hash != digest:
        raise IdempotencyKeyReused(
            "This Idempotency-Key was used with a different request.", details={"idempotency_key": key}
        )
    return record


def remember(session: Session, scope: str, key: str, digest: str, status_code: int, response: dict[str, Any]) -> None:
    """Keep the first answer in the effect's own transaction (the caller commits)."""
    session.add(
        IdempotencyRecord(scope=scope, key=key, request_hash=digest, status_code=status_code, response=response)
    )


__all__ = ["lookup", "remember", "request_hash"]
