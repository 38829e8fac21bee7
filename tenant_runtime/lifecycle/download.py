"""A backup downloaded as one tar, streamed from the tenant's store a chunk at a time.

One archive, not the manifest plus a link per object: a backup of a real site
has thousands of objects, and a list of links would make every client write
its own fetch loop with retries and ordering; the local filesystem store has no
URLs to hand out at all, and S3 presigned links would expose the bucket's
layout and expire while a large list is still being fetched. A tar needs no
index up front (each member's header carries its size, which the manifest
already knows), so it streams: the manifest first, then the snapshot, every
table, the object index and every object, in the manifest's order, each read
``CHUNK_BYTES`` at a time, so memory stays flat whatever the site's size. The
archive unpacks into the backup's own folder layout (``{tenant}-{id}/…``,
``tenant_runtime.lifecycle.format``), so what was downloaded can be checked
with the manifest's checksums offline, or put back into a store.

Every part is checked against the manifest as it streams (``CheckedReader``):
the manifest is checked before the first byte is sent (a changed one is refused
with a proper error), and a part found changed or truncated mid-stream ends the
stream early — the client holds a truncated tar, which ``tar`` rejects — rather
than an archive with wrong bytes in it.
"""

from __future__ import annotations

import hashlib
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass

from tenant_runtime.lifecycle.files import BackupFiles
from tenant_runtime.lifecycle.format import (
    MANIFEST,
    BackupInvalid,
    CheckedReader,
    FileEntry,
    Manifest,
    ObjectEntry,
    lines,
)
from tenant_runtime.lifecycle.verify import check_manifest
from tenant_runtime.storage import ObjectStore
from tenant_runtime.storage.base import CHUNK_BYTES

BLOCK = 512  # a tar block: headers and padding come in these


@dataclass(frozen=True)
class Download:
    """One backup ready to stream: its archive's name and its bytes, chunk by chunk."""

    files: BackupFiles
    manifest: Manifest
    manifest_bytes: bytes

    @property
    def root(self) -> str:
        return f"{self.manifest.tenant}-{self.manifest.backup_id}"

    @property
    def filename(self) -> str:
        return f"{self.root}.tar"

    @property
    def manifest_sha256(self) -> str:
        return hashlib.sha256(self.manifest_bytes).hexdigest()

    def chunks(self) -> Iterator[bytes]:
        """The tar: the manifest, then every part the manifest vouches for, then every object of the index."""
        yield self._header(MANIFEST, len(self.manifest_bytes))
        yield self.manifest_bytes
        yield _padding(len(self.manifest_bytes))
        for part in self.manifest.files():
            yield from self._part(part)
        for entry in self._objects():
            yield from self._part(entry.file())
        yield b"\0" * (2 * BLOCK)  # the end of the archive

    def _objects(self) -> Iterator[ObjectEntry]:
        source = self.files.reader(self.manifest.objects.path)
        if source is None:
            raise BackupInvalid("The backup's object index is missing.", details={"file": self.manifest.objects.path})
        try:
            for line in lines(source):
                yield ObjectEntry.decode(line)
        finally:
            source.close()

    def _part(self, entry: FileEntry) -> Iterator[bytes]:
        source = self.files.reader(entry.path)
        if source is None:
            raise BackupInvalid("A part of the backup is missing.", details={"file": entry.path})
        checked = CheckedReader(source, entry, entry.path)
        try:
            yield self._header(entry.path, entry.bytes)
            # The read that finds the end is where the checked reader compares size and sha256 (raising if not).
            while chunk := checked.read(CHUNK_BYTES):
                yield chunk
            yield _padding(entry.bytes)
        finally:
            checked.close()

    def _header(self, path: str, size: int) -> bytes:
        info = tarfile.TarInfo(f"{self.root}/{path}")
        info.size, info.mode = size, 0o644
        info.mtime = int(self.manifest.snapshot_at.timestamp())
        return info.tobuf(tarfile.PAX_FORMAT, encoding="utf-8", errors="strict")


def _padding(size: int) -> bytes:
    return b"\0" * (-size % BLOCK)


def open_download(store: ObjectStore, tenant: str, backup_id: str, manifest_sha256: str) -> Download:
    """The backup ``backup_id`` of ``tenant`` ready to stream, once its manifest is the one its catalog names."""
    files = BackupFiles.of(store, tenant, backup_id)
    manifest = check_manifest(files, manifest_sha256)
    data = files.store.get(files.key(MANIFEST))
    if data is None or hashlib.sha256(data).hexdigest() != manifest_sha256:  # changed between the check and now
        raise BackupInvalid("The backup's manifest changed while it was opened.", details={"file": MANIFEST})
    return Download(files, manifest, data)


__all__ = ["BLOCK", "Download", "open_download"]
