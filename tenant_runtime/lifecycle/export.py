"""Writing a backup, one idempotent step at a time (the ``export_backup`` flow's tasks call these).

    take_snapshot     VACUUM INTO a local file while writers go on, upload it as workspace.db
    dump_tables       every table of that snapshot as ordered JSONL (so every table is as of one moment)
    freeze_objects    the list of the tenant's objects, fixed once so a resumed copy sees the same list
    copy_objects      one chunk of that list, object by object, store to store, hashed on the way
    write_manifest    the object index and the manifest (format, tenant, times, source, every checksum)
    finish_backup     the catalog row says succeeded; work files go

Each step reads what the previous ones left in the backup's folder (``parts/``)
or on local disk, never state of its own, so a run killed at any step is
resumed by running the rest again; memory stays flat (rows and objects stream).
"""

from __future__ import annotations

import hashlib
import math
import sqlite3
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

from tenant_runtime.ids import as_utc, utcnow
from tenant_runtime.lifecycle.catalog import SUCCEEDED, get_backup
from tenant_runtime.lifecycle.files import BackupFiles
from tenant_runtime.lifecycle.format import (
    MANIFEST,
    NOT_SITE_PREFIXES,
    OBJECT_INDEX,
    SNAPSHOT,
    BackupInvalid,
    FileEntry,
    HashingReader,
    Manifest,
    ObjectEntry,
    ObjectIndex,
    Source,
    TableEntry,
    lines,
    object_path,
    table_path,
)
from tenant_runtime.lifecycle.sqlite_files import (
    connect,
    history_mark,
    remove_database,
    schema_revision,
    table_lines,
    tables_in_order,
    vacuum_into,
    work_dir,
)
from tenant_runtime.workspace import Workspace

OBJECTS_PER_CHUNK = 500
_SNAPSHOT_PART = "parts/snapshot.json"
_KEYS_PART = "parts/keys.txt"


def _part(chunk: int) -> str:
    return f"parts/objects-{chunk:06d}.jsonl"


def _local(ws: Workspace, backup_id: str) -> Path:
    return work_dir(ws) / f"backup-{backup_id}.db"


def pressroom_version() -> str:
    try:
        return metadata.version("pressroom")
    except metadata.PackageNotFoundError:
        return "unknown"


def take_snapshot(ws: Workspace, backup_id: str) -> dict[str, Any]:
    """The snapshot, once: a rerun after it was recorded returns what was recorded."""
    files = BackupFiles(ws.store, backup_id)
    done = files.read_json(_SNAPSHOT_PART)
    if done is not None:
        return dict(done)
    with ws.reader() as tx:
        get_backup(tx, backup_id)  # the catalog row comes first (the command made it)
    local = _local(ws, backup_id)
    snapshot_at = utcnow()
    vacuum_into(ws, local)
    with connect(local, read_only=True) as db:
        revision, mark = schema_revision(db), history_mark(db)
    entry = files.put_local(SNAPSHOT, local)
    with ws.transaction() as tx:
        backup = get_backup(tx, backup_id)
        backup.status, backup.snapshot_at = "running", snapshot_at
        backup.schema_revision, backup.history_mark = revision, mark
        tx.add(backup)
    facts = {
        "snapshot": entry.model_dump(),
        "snapshot_at": snapshot_at.isoformat(),
        "schema_revision": revision,
        "history_mark": mark,
    }
    files.put_json(_SNAPSHOT_PART, facts)  # last: a step killed before this takes a new snapshot
    return facts


def _snapshot_file(ws: Workspace, files: BackupFiles) -> tuple[Path, dict[str, Any]]:
    """The local copy of the recorded snapshot (fetched again if this host lost it or it differs)."""
    facts = files.read_json(_SNAPSHOT_PART)
    if facts is None:
        raise BackupInvalid("The backup has no snapshot yet.", details={"backup_id": files.backup_id})
    expected = FileEntry.model_validate(facts["snapshot"])
    local = _local(ws, files.backup_id)
    if local.exists() and _sha256(local) == expected.sha256:
        return local, facts
    remove_database(local)
    fetched = files.download(SNAPSHOT, local)
    if fetched is None or fetched.sha256 != expected.sha256:
        raise BackupInvalid("The backup's snapshot does not match what was recorded.", details={"file": SNAPSHOT})
    return local, facts


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _counting(rows: Iterator[bytes], counter: list[int]) -> Iterator[bytes]:
    for row in rows:
        counter[0] += 1
        yield row


def dump_tables(ws: Workspace, backup_id: str) -> list[dict[str, Any]]:
    """Every table of the snapshot as JSONL, parents first; their entries for the manifest."""
    files = BackupFiles(ws.store, backup_id)
    local, _ = _snapshot_file(ws, files)
    entries = []
    with connect(local, read_only=True) as db:
        for table in tables_in_order(db):
            rows = [0]
            entry = files.put_chunks(table_path(table.name), _counting(table_lines(db, table), rows))
            entries.append(TableEntry(name=table.name, rows=rows[0], columns=table.columns, **entry.model_dump()))
    return [e.model_dump() for e in entries]


def freeze_objects(ws: Workspace, backup_id: str) -> dict[str, int]:
    """The keys to copy (every object of the tenant but its backups), written once; how many, in how many chunks."""
    files = BackupFiles(ws.store, backup_id)
    listed = files.store.get(files.key(_KEYS_PART))
    if listed is None:
        keys = [key for key in ws.store.list("") if not key.startswith(NOT_SITE_PREFIXES)]
        listed = "".join(f"{key}\n" for key in keys).encode()
        files.store.put(files.key(_KEYS_PART), listed, content_type="text/plain")
    count = listed.count(b"\n")
    return {"objects": count, "chunks": math.ceil(count / OBJECTS_PER_CHUNK)}


def copy_objects(ws: Workspace, backup_id: str, chunk: int) -> dict[str, int]:
    """Copy one chunk of the frozen list into the backup, hashing each object as it streams."""
    files = BackupFiles(ws.store, backup_id)
    listed = files.store.get(files.key(_KEYS_PART)) or b""
    keys = listed.decode().splitlines()[chunk * OBJECTS_PER_CHUNK : (chunk + 1) * OBJECTS_PER_CHUNK]
    index: list[bytes] = []
    total = missing = 0
    for key in keys:
        source = ws.store.reader(key)
        if source is None:  # deleted since the list was made (an unpublish): not part of the site any more
            missing += 1
            continue
        hashing = HashingReader(source)
        try:
            files.store.put_stream(files.key(object_path(key)), hashing)
        finally:
            hashing.close()
        index.append(ObjectEntry(key, hashing.bytes, hashing.sha256).encode())
        total += hashing.bytes
    files.store.put(files.key(_part(chunk)), b"".join(index), content_type="application/jsonl")
    return {"objects": len(index), "bytes": total, "missing": missing}


def write_manifest(ws: Workspace, backup_id: str, tables: list[dict[str, Any]], chunks: int) -> dict[str, Any]:
    """The object index (the chunks' parts, in order) and the manifest over everything; its sha256."""
    files = BackupFiles(ws.store, backup_id)
    _, facts = _snapshot_file(ws, files)
    counts = {"objects": 0, "bytes": 0}

    def index_lines() -> Iterator[bytes]:
        for chunk in range(chunks):
            source = files.reader(_part(chunk))
            if source is None:
                raise BackupInvalid("A chunk of the object copy is missing.", details={"chunk": chunk})
            try:
                for line in lines(source):
                    entry = ObjectEntry.decode(line)
                    counts["objects"] += 1
                    counts["bytes"] += entry.size
                    yield line
            finally:
                source.close()

    index = files.put_chunks(OBJECT_INDEX, index_lines())
    with ws.reader() as tx:
        created_at = as_utc(get_backup(tx, backup_id).created_at)
    manifest = Manifest(
        tenant=ws.tenant,
        site_url=ws.site_url,
        backup_id=backup_id,
        created_at=created_at,
        snapshot_at=facts["snapshot_at"],
        source=Source(
            pressroom=pressroom_version(), schema_revision=facts["schema_revision"], sqlite=sqlite3.sqlite_version
        ),
        history_mark=facts["history_mark"],
        snapshot=FileEntry.model_validate(facts["snapshot"]),
        tables=tuple(TableEntry.model_validate(t) for t in tables),
        objects=ObjectIndex(count=counts["objects"], total_bytes=counts["bytes"], **index.model_dump()),
    )
    data = manifest.encode()
    files.store.put(files.key(MANIFEST), data, content_type="application/json")
    size = len(data) + sum(f.bytes for f in manifest.files()) + counts["bytes"]
    return {
        "manifest_sha256": hashlib.sha256(data).hexdigest(),
        "bytes": size,
        "tables": len(manifest.tables),
        "objects": counts["objects"],
    }


def finish_backup(ws: Workspace, backup_id: str, written: dict[str, Any]) -> dict[str, Any]:
    """The catalog row says succeeded (with size and digest); the work files go."""
    with ws.transaction() as tx:
        backup = get_backup(tx, backup_id)
        if backup.status != SUCCEEDED:
            backup.status, backup.finished_at = SUCCEEDED, utcnow()
            backup.bytes, backup.manifest_sha256 = written["bytes"], written["manifest_sha256"]
            backup.tables, backup.objects = written["tables"], written["objects"]
            tx.add(backup)
    files = BackupFiles(ws.store, backup_id)
    files.delete_prefix("parts/")
    remove_database(_local(ws, backup_id))
    return {"backup_id": backup_id, **written}


__all__ = [
    "OBJECTS_PER_CHUNK",
    "copy_objects",
    "dump_tables",
    "finish_backup",
    "freeze_objects",
    "pressroom_version",
    "take_snapshot",
    "write_manifest",
]
