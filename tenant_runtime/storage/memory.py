"""``MemoryStore``: the in-memory twin of the object store for unit tests."""

from __future__ import annotations

import io
import threading
from collections import Counter

from tenant_runtime.storage.base import Readable, check_range, validate_key, validate_prefix


class MemoryStore:
    """A dict behind a lock that records every write and delete, with optional injected faults."""

    def __init__(self) -> None:
        self._objects: dict[str, tuple[bytes, str]] = {}
        self._lock = threading.Lock()
        # Calls that reached the store, per key: tests assert a side effect happened exactly once.
        self.writes: Counter[str] = Counter()
        self.deletes: Counter[str] = Counter()
        self._faults_left = 0
        self._fault: Exception | None = None

    def fail_next(self, n: int, exc: Exception | None = None) -> None:
        """Make the next ``n`` put/get/delete calls raise ``exc`` (default ``ConnectionError("injected")``)."""
        if n < 0:
            raise ValueError("n must be >= 0")
        with self._lock:
            self._faults_left = n
            self._fault = exc

    def _maybe_fail(self) -> None:
        # Called with the lock held, after key validation: a bad key is still a 400, never a fault.
        if self._faults_left > 0:
            self._faults_left -= 1
            raise self._fault if self._fault is not None else ConnectionError("injected")

    def put(self, key: str, data: bytes, *, content_type: str = "application/octet-stream") -> None:
        """Store ``data`` under ``key``, replacing any previous object."""
        validate_key(key)
        with self._lock:
            self._maybe_fail()
            self._objects[key] = (bytes(data), content_type)
            self.writes[key] += 1

    def get(self, key: str) -> bytes | None:
        """The bytes under ``key``, or ``None`` when missing."""
        validate_key(key)
        with self._lock:
            self._maybe_fail()
            found = self._objects.get(key)
        return None if found is None else found[0]

    def put_stream(self, key: str, source: Readable, *, content_type: str = "application/octet-stream") -> None:
        """Read ``source`` to its end, then store it as one object (a put)."""
        validate_key(key)
        chunks = []
        while chunk := source.read(1 << 16):
            chunks.append(chunk)
        self.put(key, b"".join(chunks), content_type=content_type)

    def reader(self, key: str) -> Readable | None:
        """The object as a ``BytesIO``, or ``None`` when missing."""
        data = self.get(key)
        return None if data is None else io.BytesIO(data)

    def read_range(self, key: str, offset: int, length: int) -> bytes | None:
        """A slice of the object, or ``None`` when missing."""
        check_range(offset, length)
        data = self.get(key)
        return None if data is None else data[offset : offset + length]

    def delete(self, key: str) -> bool:
        """Remove ``key``; True if an object was there."""
        validate_key(key)
        with self._lock:
            self._maybe_fail()
            self.deletes[key] += 1
            return self._objects.pop(key, None) is not None

    def exists(self, key: str) -> bool:
        """Whether an object is stored under ``key``."""
        validate_key(key)
        with self._lock:
            return key in self._objects

    def list(self, prefix: str = "") -> list[str]:
        """Sorted keys starting with ``prefix``."""
        validate_prefix(prefix)
        with self._lock:
            return sorted(key for key in self._objects if key.startswith(prefix))

    def content_type(self, key: str) -> str | None:
        """The content type ``key`` was stored with, or ``None`` when missing."""
        validate_key(key)
        with self._lock:
            found = self._objects.get(key)
        return None if found is None else found[1]


__all__ = ["MemoryStore"]
