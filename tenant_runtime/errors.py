"""Pressroom's one error tree.

Every error a user can cause carries a stable ``code``, a message for people,
an HTTP ``status`` and optional ``details``. ``control_plane`` maps the whole
tree to ``{"error": {"code", "message", "details"}}`` in one place.

    PressroomError                      500 internal_error (never for bad input)
    ├── BadRequest                      400 invalid_request
    │   ├── ConfirmationRequired        400 confirmation_required
    │   ├── InvalidSlug                 400 invalid_slug
    │   ├── InvalidObjectKey            400 invalid_object_key
    │   └── InvalidSchedule             400 invalid_schedule
    ├── Unauthorized                    401 unauthorized
    ├── Forbidden                       403 forbidden
    │   └── NotOnShard                  403 tenant_not_on_shard (a runtime asked about another shard's tenant)
    ├── NotFound                        404 not_found
    ├── Conflict                        409 conflict
    │   ├── VersionConflict             409 version_conflict
    │   ├── AlreadyExists               409 already_exists
    │   ├── IdempotencyKeyReused        409 idempotency_key_reused
    │   └── IllegalTransition           409 illegal_transition
    ├── PayloadTooLarge                 413 payload_too_large
    ├── UnsupportedMediaType            415 unsupported_media_type
    ├── TenantSuspended                 423 tenant_suspended
    ├── QuotaExceeded                   429 quota_exceeded
    ├── Unavailable                     503 unavailable
    │   └── RuntimeUnavailable          503 runtime_unavailable (Retry-After: details.retry_after)
    │       └── TenantMoving            503 tenant_moving (Retry-After: details.retry_after)
    └── Permanent                       422 permanent_failure (flows: never retried)
        ├── ClaimRejected               422 claim_rejected
        └── PackageRejected             422 package_invalid (and package_unsigned, package_untrusted,
                                            package_signature_invalid, package_hash_mismatch,
                                            package_unsafe_path, package_too_large, …: a package
                                            refused before anything of it is written)
"""

from __future__ import annotations

from typing import Any


class PressroomError(Exception):
    """Base of every error Pressroom raises on purpose."""

    code = "internal_error"
    status = 500

    def __init__(self, message: str, *, details: dict[str, Any] | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or {}
        if code is not None:
            self.code = code


class BadRequest(PressroomError):
    code = "invalid_request"
    status = 400


class ConfirmationRequired(BadRequest):
    code = "confirmation_required"


class InvalidSlug(BadRequest):
    code = "invalid_slug"


class InvalidObjectKey(BadRequest):
    code = "invalid_object_key"


class InvalidSchedule(BadRequest):
    code = "invalid_schedule"


class Unauthorized(PressroomError):
    code = "unauthorized"
    status = 401


class Forbidden(PressroomError):
    code = "forbidden"
    status = 403


class NotOnShard(Forbidden):
    code = "tenant_not_on_shard"


class NotFound(PressroomError):
    code = "not_found"
    status = 404


class Conflict(PressroomError):
    code = "conflict"
    status = 409


class VersionConflict(Conflict):
    code = "version_conflict"


class AlreadyExists(Conflict):
    code = "already_exists"


class IdempotencyKeyReused(Conflict):
    code = "idempotency_key_reused"


class IllegalTransition(Conflict):
    code = "illegal_transition"


class PayloadTooLarge(PressroomError):
    code = "payload_too_large"
    status = 413


class UnsupportedMediaType(PressroomError):
    code = "unsupported_media_type"
    status = 415


class TenantSuspended(PressroomError):
    code = "tenant_suspended"
    status = 423


class QuotaExceeded(PressroomError):
    code = "quota_exceeded"
    status = 429


class Unavailable(PressroomError):
    code = "unavailable"
    status = 503


class RuntimeUnavailable(Unavailable):
    """The tenant's runtime cannot be reached: nothing was done; ``details["retry_after"]`` says when to retry."""

    code = "runtime_unavailable"

    def __init__(self, message: str, *, details: dict[str, Any] | None = None, code: str | None = None) -> None:
        super().__init__(message, details={"retry_after": 5, **(details or {})}, code=code)


class TenantMoving(RuntimeUnavailable):
    """The tenant is being moved to another shard: commands wait until it has arrived."""

    code = "tenant_moving"


class Permanent(PressroomError):
    """A failure that would only fail again: flows never retry it."""

    code = "permanent_failure"
    status = 422


class ClaimRejected(Permanent):
    code = "claim_rejected"


class PackageRejected(Permanent):
    """A package that must not be installed: bad archive, signature, key, hash, path or contents."""

    code = "package_invalid"


__all__ = [
    "AlreadyExists",
    "BadRequest",
    "ClaimRejected",
    "ConfirmationRequired",
    "Conflict",
    "Forbidden",
    "IdempotencyKeyReused",
    "IllegalTransition",
    "InvalidObjectKey",
    "InvalidSchedule",
    "InvalidSlug",
    "NotFound",
    "NotOnShard",
    "PackageRejected",
    "PayloadTooLarge",
    "Permanent",
    "PressroomError",
    "QuotaExceeded",
    "RuntimeUnavailable",
    "TenantMoving",
    "TenantSuspended",
    "Unauthorized",
    "Unavailable",
    "UnsupportedMediaType",
    "VersionConflict",
]
