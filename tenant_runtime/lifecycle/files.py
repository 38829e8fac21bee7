"""One backup's folder in a tenant's store, read and written a part at a time."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from tenant_runtime.ids import check_tenant_slug
from tenant_runtime.lifecycle.format import MANIFEST, BackupInvalid, FileEntry, HashingReader, Manifest, backup_prefix
from tenant_runtime.storage import ObjectStore, Readable, TenantStore
from tenant_runtime.storage.base import copy_stream


class IterReader:
    """A readable over an iterator of byte strings (rows encoded on the fly, streamed to a store)."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks: Iterator[bytes] = iter(chunks)
        self._buffer = b""

    def read(self, size: int = -1, /) -> bytes:
        if size < 0:
            data, self._buffer = self._buffer + b"".join(self._chunks), b""
            return data
        parts, have = [self._buffer], len(self._buffer)
        while have < size:
            chunk = next(self._chunks, None)
            if chunk is None:
                break
            parts.append(chunk)
            have += len(chunk)
        data = b"".join(parts)
        self._buffer = data[size:]
        return data[:size]

    def close(self) -> None:
        self._buffer = b""


class BackupFiles:
    """``backups/{id}/…`` of one tenant: every path is relative to the backup's folder."""

    def __init__(self, store: TenantStore, backup_id: str) -> None:
        self.store = store
        self.backup_id = backup_id
        self.prefix = backup_prefix(backup_id)

    @classmethod
    def of(cls, shared: ObjectStore, tenant: str, backup_id: str) -> BackupFiles:
        """Another tenant's backup (an import from it): a read of that tenant's backup folder only."""
        return cls(TenantStore(shared, check_tenant_slug(tenant)), backup_id)

    def key(self, path: str) -> str:
        return self.prefix + path

    def put_stream(self, path: str, source: Readable) -> FileEntry:
        """Write ``path`` from ``source``, hashing on the way; its entry for the manifest."""
        hashing = HashingReader(source)
        self.store.put_stream(self.key(path), hashing)
        return FileEntry(path=path, bytes=hashing.bytes, sha256=hashing.sha256)

    def put_chunks(self, path: str, chunks: Iterable[bytes]) -> FileEntry:
        return self.put_stream(path, IterReader(chunks))

    def put_local(self, path: str, local: Path) -> FileEntry:
        with local.open("rb") as handle:
            return self.put_stream(path, handle)

    def reader(self, path: str) -> Readable | None:
        return self.store.reader(self.key(path))

    def exists(self, path: str) -> bool:
        return self.store.exists(self.key(path))

    def read_range(self, path: str, offset: int, length: int) -> bytes | None:
        return self.store.read_range(self.key(path), offset, length)

    def download(self, path: str, local: Path) -> FileEntry | None:
        """Copy ``path`` to a local file (hashing it); None when it is missing."""
        source = self.reader(path)
        if source is None:
            return None
        hashing = HashingReader(source)
        try:
            with local.open("wb") as handle:
                copy_stream(hashing, handle)
        finally:
            hashing.close()
        return FileEntry(path=path, bytes=hashing.bytes, sha256=hashing.sha256)

    def read_json(self, path: str) -> Any:
        data = self.store.get(self.key(path))
        return None if data is None else json.loads(data)

    def put_json(self, path: str, value: Any) -> None:
        self.store.put(self.key(path), json.dumps(value, sort_keys=True).encode(), content_type="application/json")

    def manifest(self) -> tuple[Manifest, str]:
        """The manifest and its sha256; a missing or unreadable one is ``BackupInvalid``."""
        data = self.store.get(self.key(MANIFEST))
        if data is None:
            raise BackupInvalid(
                "The backup has no manifest.",
                details={"backup_id": self.backup_id, "file": MANIFEST},
                code="backup_not_found",
            )
        try:
            manifest = Manifest.model_validate_json(data)
        except ValueError as exc:
            raise BackupInvalid(
                "The backup's manifest is not a Pressroom manifest.",
                details={"file": MANIFEST, "error": str(exc)[:500]},
            ) from None
        return manifest, hashlib.sha256(data).hexdigest()

    def delete_prefix(self, path: str) -> int:
        keys = self.store.list(self.key(path))
        for key in keys:
            self.store.delete(key)
        return len(keys)


__all__ = ["BackupFiles", "IterReader"]
