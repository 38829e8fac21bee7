"""The object-store seam: one small protocol and the key rules every adapter enforces.

Keys are ``/``-separated paths of safe segments. They are validated before any
adapter touches a disk or a bucket, so a hostile key (``../other``, ``/etc``,
``%2e%2e``) is a 400 ``invalid_object_key`` and never a path.

Besides whole-object ``put``/``get``, every adapter streams: ``reader`` opens an
object to read it in chunks, ``put_stream`` writes one from a readable (nothing
is visible under the key until the whole stream is in), ``read_range`` reads a
slice. Backups and downloads go through these, so their memory stays flat
whatever the object's size.
"""

from __future__ import annotations

import re
from typing import BinaryIO, Protocol, runtime_checkable

from tenant_runtime.errors import InvalidObjectKey

MAX_KEY_LENGTH = 512
KEY_SEGMENT = re.compile(r"[A-Za-z0-9._~@+=-]+")
# Only a short head of the key goes into error details: keys come from users and may be huge.
_DETAIL_CHARS = 100
# How much a streaming copy holds in memory at once.
CHUNK_BYTES = 1 << 20


@runtime_checkable
class Readable(Protocol):
    """A binary stream being read: a file, an S3 body, a ``BytesIO``."""

    def read(self, size: int = -1, /) -> bytes: ...

    def close(self) -> None: ...


@runtime_checkable
class ObjectStore(Protocol):
    """Bytes under string keys; every method is synchronous and validates the key first."""

    def put(self, key: str, data: bytes, *, content_type: str = "application/octet-stream") -> None: ...

    def get(self, key: str) -> bytes | None: ...

    def delete(self, key: str) -> bool: ...

    def exists(self, key: str) -> bool: ...

    def list(self, prefix: str = "") -> list[str]: ...

    def reader(self, key: str) -> Readable | None:
        """The object opened for reading in chunks (the caller closes it), or ``None`` when missing."""

    def put_stream(self, key: str, source: Readable, *, content_type: str = "application/octet-stream") -> None:
        """Store everything ``source`` yields under ``key``; the key holds the old object until it is all in."""

    def read_range(self, key: str, offset: int, length: int) -> bytes | None:
        """At most ``length`` bytes from ``offset`` (fewer at the end), or ``None`` when the key is missing."""


def _reject(key: object, reason: str, message: str) -> InvalidObjectKey:
    shown = key[:_DETAIL_CHARS] if isinstance(key, str) else None
    return InvalidObjectKey(message, details={"key": shown, "reason": reason})


def validate_key(key: str) -> str:
    """Return ``key`` unchanged if it is a safe object key, else raise ``InvalidObjectKey``."""
    if not isinstance(key, str):
        raise _reject(key, "not_a_string", "An object key must be a string.")
    if not key:
        raise _reject(key, "empty", "An object key must not be empty.")
    if len(key) > MAX_KEY_LENGTH:
        raise _reject(key, "too_long", f"An object key must be at most {MAX_KEY_LENGTH} characters.")
    if key.startswith("/"):
        raise _reject(key, "absolute", "An object key must not start with '/'.")
    if "\\" in key:
        raise _reject(key, "backslash", "An object key must not contain '\\'.")
    if any(ord(char) < 32 or ord(char) == 127 for char in key):
        raise _reject(key, "control_character", "An object key must not contain NUL or control characters.")
    for segment in key.split("/"):
        if segment in ("", ".", ".."):
            raise _reject(key, "bad_segment", "An object key must not contain empty, '.' or '..' segments.")
        if not KEY_SEGMENT.fullmatch(segment):
            raise _reject(
                key,
                "bad_character",
                "Object key segments may only use letters, digits and '.', '_', '~', '@', '+', '=', '-'.",
            )
    return key


def check_range(offset: int, length: int) -> None:
    """A slice of an object starts at 0 or later and is never negative."""
    if offset < 0 or length < 0:
        raise ValueError("offset and length are never negative")


def copy_stream(source: Readable, target: BinaryIO) -> int:
    """Copy ``source`` into ``target`` one chunk at a time; the bytes copied."""
    copied = 0
    while chunk := source.read(CHUNK_BYTES):
        target.write(chunk)
        copied += len(chunk)
    return copied


def validate_prefix(prefix: str) -> str:
    """Return a listing prefix unchanged if it is empty or a valid key with an optional trailing '/'."""
    if prefix == "":
        return prefix
    validate_key(prefix.removesuffix("/"))
    return prefix


__all__ = [
    "CHUNK_BYTES",
    "KEY_SEGMENT",
    "MAX_KEY_LENGTH",
    "ObjectStore",
    "Readable",
    "check_range",
    "copy_stream",
    "validate_key",
    "validate_prefix",
]
