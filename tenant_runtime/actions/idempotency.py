"""Idempotency keys bound to a hash of the request, stored beside the effect."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from sqlmodel import Session, select

from tenant_runtime.errors import BadRequest, IdempotencyKeyReused
from tenant_runtime.workspace.models import IdempotencyRecord

MAX_KEY_LENGTH = 200


def request_hash(payload: Any) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def check_key(key: str) -> None:
    """1-200 printable characters, or a 400 ``invalid_idempotency_key`` (the control plane's records too)."""
    if not key or len(key) > MAX_KEY_LENGTH or not key.isprintable():
        raise BadRequest(
            f"Idempotency-Key must be 1-{MAX_KEY_LENGTH} printable characters.", code="invalid_idempotency_key"
        )


def check_same_request(key: str, stored_hash: str, digest: str) -> None:
    """The same key with another request is a 409 ``idempotency_key_reused``."""
    if stored_hash != digest:
        raise IdempotencyKeyReused(
            "This Idempotency-Key was used with a different request.", details={"idempotency_key": key}
        )


def lookup(tx: Session, scope: str, key: str, digest: str) -> IdempotencyRecord | None:
    """The first answer for this key, or None; the same key with another payload is a 409."""
    check_key(key)
    record = tx.exec(
        select(IdempotencyRecord).where(IdempotencyRecord.scope == scope, IdempotencyRecord.key == key)
    ).first()
    if record is not None:
        check_same_request(key, record.request_hash, digest)
    return record


def remember(tx: Session, scope: str, key: str, digest: str, status_code: int, response: dict[str, Any]) -> None:
    tx.add(IdempotencyRecord(scope=scope, key=key, request_hash=digest, status_code=status_code, response=response))
