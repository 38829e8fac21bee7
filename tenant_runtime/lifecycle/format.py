"""The backup format: where each file lives, the manifest, table rows as JSONL, streaming checksums.

A backup is a folder of the tenant's store, ``backups/{id}/``, not one archive:
its parts are written and verified one at a time (a killed backup resumes at
the part it was writing; an S3 store copies objects without a local archive),
and a download streams them as one tar (``tenant_runtime.lifecycle.download``).

    backups/{id}/manifest.json         format, tenant, times, source version, and the checksum of every part
    backups/{id}/workspace.db          the consistent snapshot (VACUUM INTO), as SQLite opens it
    backups/{id}/tables/{table}.jsonl  every row of each table, ordered by primary key, one JSON object a line
    backups/{id}/objects.jsonl         the object index: key, size and sha256 of every object, a line each
    backups/{id}/objects/{key}         each object of the tenant, byte for byte

The object index is its own file (its sha256 is in the manifest) so neither
writing nor verifying a site with a million objects holds them all in memory.
Tables are listed parents before children, the order an import inserts them.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tenant_runtime.errors import Permanent
from tenant_runtime.storage import Readable

FORMAT = "pressroom-backup"
FORMAT_VERSION = 1
BACKUPS_PREFIX = "backups/"
MANIFEST = "manifest.json"
SNAPSHOT = "workspace.db"
OBJECT_INDEX = "objects.jsonl"
# Not part of the site: the backups themselves (never backed up, never replaced by an import).
NOT_SITE_PREFIXES = (BACKUPS_PREFIX,)
# Derived tables: the search index is rebuilt from the documents, alembic_version is the manifest's revision.
DERIVED_TABLES = ("alembic_version", "search_document", "search_index")

# Tables the site's state lives in, replaced whole by an import; every other table is a log the
# tenant keeps (its own rows win), with the backup's rows it lacks added.
LOG_TABLES = ("operation", "attempt", "audit_entry", "idempotency_record", "backup", "chore_run")


def backup_prefix(backup_id: str) -> str:
    return f"{BACKUPS_PREFIX}{backup_id}/"


def table_path(table: str) -> str:
    return f"tables/{table}.jsonl"


def object_path(key: str) -> str:
    return f"objects/{key}"


def is_derived_table(name: str) -> bool:
    return name.startswith("sqlite_") or any(name == t or name.startswith(f"{t}_") for t in DERIVED_TABLES)


class FileEntry(BaseModel):
    """One part of a backup: where it is, how big, its sha256."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    bytes: int = Field(ge=0)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class TableEntry(FileEntry):
    name: str
    rows: int = Field(ge=0)
    columns: tuple[str, ...]


class ObjectIndex(FileEntry):
    count: int = Field(ge=0)
    total_bytes: int = Field(ge=0)


class Source(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    pressroom: str
    schema_revision: str
    sqlite: str


class Manifest(BaseModel):
    """What a backup holds and the checksum of each part; its own sha256 names the backup."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    format: str = FORMAT
    format_version: int = FORMAT_VERSION
    tenant: str
    site_url: str  # the tenant's public address when it was taken (an import elsewhere rewrites it)
    backup_id: str
    created_at: datetime
    snapshot_at: datetime
    source: Source
    history_mark: int | None
    snapshot: FileEntry
    tables: tuple[TableEntry, ...]
    objects: ObjectIndex

    def encode(self) -> bytes:
        """Canonical bytes (sorted keys), so the digest of a manifest is a stable name for its backup."""
        return (json.dumps(self.model_dump(mode="json"), sort_keys=True, indent=2) + "\n").encode()

    def files(self) -> Iterator[FileEntry]:
        """Every part the manifest vouches for directly (objects come from the object index)."""
        yield self.snapshot
        yield from self.tables
        yield self.objects


class BackupInvalid(Permanent):
    """The backup is not what its manifest says (tampered, truncated, missing) or not a backup at all."""

    code = "backup_invalid"


# --- rows as JSON lines ------------------------------------------------------------------------------

_BLOB = "$base64"


def encode_row(columns: tuple[str, ...], values: tuple[Any, ...]) -> bytes:
    """One row as stored by SQLite: a JSON object in column order, blobs as ``{"$base64": …}``."""
    row = {
        c: ({_BLOB: base64.b64encode(v).decode()} if isinstance(v, bytes) else v)
        for c, v in zip(columns, values, strict=True)
    }
    return json.dumps(row, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def decode_row(line: bytes) -> dict[str, Any]:
    row = json.loads(line)
    if not isinstance(row, dict):
        raise ValueError("a table row is a JSON object")
    return {c: (base64.b64decode(v[_BLOB]) if isinstance(v, dict) and set(v) == {_BLOB} else v) for c, v in row.items()}


# --- streaming checksums -----------------------------------------------------------------------------


class HashingReader:
    """Reads through to ``source``, counting and hashing what passes (a copy checks itself on the way)."""

    def __init__(self, source: Readable) -> None:
        self.source = source
        self.digest = hashlib.sha256()
        self.bytes = 0

    def read(self, size: int = -1, /) -> bytes:
        chunk = self.source.read(size)
        self.digest.update(chunk)
        self.bytes += len(chunk)
        return chunk

    def close(self) -> None:
        self.source.close()

    @property
    def sha256(self) -> str:
        return self.digest.hexdigest()


class CheckedReader(HashingReader):
    """A ``HashingReader`` that fails at the end of the stream unless it was exactly ``expected``: a
    streaming write through it (``put_stream``) then never lands (nothing shows under the key)."""

    def __init__(self, source: Readable, expected: FileEntry, label: str) -> None:
        super().__init__(source)
        self.expected = expected
        self.label = label

    def read(self, size: int = -1, /) -> bytes:
        chunk = super().read(size)
        if not chunk or size < 0:
            check_file(self.label, self.expected, self.bytes, self.sha256)
        return chunk


def check_file(label: str, expected: FileEntry, size: int, sha256: str) -> None:
    if size != expected.bytes or sha256 != expected.sha256:
        raise BackupInvalid(
            f"The backup's {label} does not match its manifest.",
            details={"mismatches": [mismatch(label, expected, size, sha256)]},
        )


def mismatch(label: str, expected: FileEntry, size: int | None, sha256: str | None) -> dict[str, Any]:
    return {
        "file": label,
        "expected_bytes": expected.bytes,
        "bytes": size,
        "expected_sha256": expected.sha256,
        "sha256": sha256,
        "problem": "missing" if size is None else "truncated" if size < expected.bytes else "changed",
    }


def lines(source: Readable, chunk: int = 1 << 20) -> Iterator[bytes]:
    """The lines of a stream (each with its newline), read a chunk at a time."""
    pending = b""
    while data := source.read(chunk):
        pending += data
        *complete, pending = pending.split(b"\n")
        for line in complete:
            yield line + b"\n"
    if pending:
        yield pending


@dataclass(frozen=True)
class ObjectEntry:
    key: str
    size: int
    sha256: str

    def encode(self) -> bytes:
        return (
            json.dumps({"key": self.key, "size": self.size, "sha256": self.sha256}, separators=(",", ":")).encode()
            + b"\n"
        )

    @classmethod
    def decode(cls, line: bytes) -> ObjectEntry:
        raw = json.loads(line)
        return cls(key=str(raw["key"]), size=int(raw["size"]), sha256=str(raw["sha256"]))

    def file(self) -> FileEntry:
        return FileEntry(path=object_path(self.key), bytes=self.size, sha256=self.sha256)


__all__ = [
    "BACKUPS_PREFIX",
    "DERIVED_TABLES",
    "FORMAT",
    "FORMAT_VERSION",
    "LOG_TABLES",
    "MANIFEST",
    "NOT_SITE_PREFIXES",
    "OBJECT_INDEX",
    "SNAPSHOT",
    "BackupInvalid",
    "CheckedReader",
    "FileEntry",
    "HashingReader",
    "Manifest",
    "ObjectEntry",
    "ObjectIndex",
    "Source",
    "TableEntry",
    "backup_prefix",
    "check_file",
    "decode_row",
    "encode_row",
    "is_derived_table",
    "lines",
    "mismatch",
    "object_path",
    "table_path",
]
