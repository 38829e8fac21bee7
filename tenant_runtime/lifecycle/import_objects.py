"""After the swap: the backup's objects in place, rendered output rebuilt or reinstated, caches and search.

place_objects      one chunk of the object index: each object streamed to its key, checked on the way
                   (a changed object never lands); into another tenant, rendered output is not copied
render_site        into another tenant: every published page, record and aggregate rendered anew
                   (rendered output names its tenant and address)
finish_import      the rendered objects' rows back (for objects whose bytes are theirs), objects the
                   backup does not have removed, the search index rebuilt, the tenant's cache purged,
                   the staging file gone
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import text
from sqlmodel import select

from tenant_runtime import aggregates, delivery, public_records, queries, search
from tenant_runtime.lifecycle.files import BackupFiles
from tenant_runtime.lifecycle.format import (
    NOT_SITE_PREFIXES,
    BackupInvalid,
    CheckedReader,
    Manifest,
    ObjectEntry,
    lines,
)
from tenant_runtime.lifecycle.sqlite_files import connect
from tenant_runtime.lifecycle.staging import drop_staging, staged_rows, staging_path
from tenant_runtime.workspace import RenderedObject, Workspace

OBJECTS_PER_CHUNK = 500


def object_chunks(manifest: Manifest) -> int:
    return -(-manifest.objects.count // OBJECTS_PER_CHUNK)


def _index(files: BackupFiles, manifest: Manifest, chunk: int | None = None) -> list[ObjectEntry]:
    """The object index, or one chunk of it."""
    source = files.reader(manifest.objects.path)
    if source is None:
        return []
    start = 0 if chunk is None else chunk * OBJECTS_PER_CHUNK
    stop = manifest.objects.count if chunk is None else start + OBJECTS_PER_CHUNK
    entries = []
    try:
        for position, line in enumerate(lines(source)):
            if position >= stop:
                break
            if position >= start:
                entries.append(ObjectEntry.decode(line))
    finally:
        source.close()
    return entries


def _rendered_keys(ws: Workspace, operation_id: str) -> set[str]:
    return {row["key"] for row in staged_rows(ws, operation_id, "rendered_object")}


def place_objects(
    ws: Workspace, files: BackupFiles, manifest: Manifest, operation_id: str, chunk: int, *, rerender: bool
) -> dict[str, int]:
    """Copy one chunk of the backup's objects to their keys (rendered ones too, unless they are rendered anew)."""
    skip = _rendered_keys(ws, operation_id) if rerender else set()
    placed = total = 0
    for entry in _index(files, manifest, chunk):
        if entry.key in skip:
            continue
        source = files.reader(entry.file().path)
        if source is None:
            raise BackupInvalid("An object of the backup is missing.", details={"file": entry.file().path})
        checked = CheckedReader(source, entry.file(), entry.file().path)
        try:
            ws.store.put_stream(entry.key, checked)
        finally:
            checked.close()
        placed += 1
        total += entry.size
    return {"objects": placed, "bytes": total}


def render_site(ws: Workspace, operation_id: str) -> dict[str, int]:
    """Every published document's page and record, and the aggregates, rendered for this tenant."""
    with ws.reader() as tx:
        published = [(d.id, d.published_version) for d, _ in queries.published_listing(tx)]
        generation = queries.site_state(tx).generation
    for document_id, version in published:
        assert version is not None  # published documents have a published version
        delivery.render_document_page(ws, document_id, version, operation_id)
        public_records.write_public_record(ws, document_id, version, operation_id)
    with ws.transaction() as tx:
        for name, data in aggregates.render_aggregates(ws, tx).items():
            spec = aggregates.AGGREGATES[name]
            delivery.store_object(
                ws,
                tx,
                spec.key,
                data,
                document_id=None,
                version=generation,
                operation_id=operation_id,
                tags=(spec.tag,),
                content_type=spec.content_type,
            )
    return {"pages": len(published)}


def finish_import(
    ws: Workspace, files: BackupFiles, manifest: Manifest, operation_id: str, *, rerender: bool
) -> dict[str, Any]:
    """Rendered rows back, leftovers removed, search rebuilt, the tenant's cache purged, staging gone."""
    index = {entry.key: entry.sha256 for entry in _index(files, manifest)}
    reinstated = 0 if rerender else _reinstate_rendered(ws, operation_id, index)
    with ws.reader() as tx:
        rendered = set(tx.exec(select(RenderedObject.key)))
    removed = 0
    for key in ws.store.list(""):
        if not key.startswith(NOT_SITE_PREFIXES) and key not in index and key not in rendered:
            removed += int(ws.store.delete(key))
    indexed = search.rebuild_search_index(ws, True)
    purged = ws.cache.purge("")  # every page of the tenant carries its tenant tag
    drop_staging(ws, operation_id)
    return {"reinstated": reinstated, "removed": removed, "indexed": indexed["indexed"], "purged": purged}


def _reinstate_rendered(ws: Workspace, operation_id: str, index: dict[str, str]) -> int:
    """The staged rendered-object rows whose object is in place with their bytes, in one transaction.

    A page the snapshot's rows describe but whose object was rendered again before the copy (other
    bytes) gets no row: it is rendered live, from the rows, until its next delivery.
    """
    if ws.engine.dialect.name == "postgresql":
        return _reinstate_rendered_postgres(ws, operation_id, index)
    with connect(ws.settings.workspace_path(ws.tenant), busy_timeout_ms=ws.settings.sqlite_busy_timeout_ms) as db:
        db.execute("ATTACH DATABASE ? AS s", (str(staging_path(ws, operation_id)),))
        try:
            db.execute("CREATE TEMP TABLE placed (key TEXT PRIMARY KEY, sha256 TEXT NOT NULL)")
            db.executemany("INSERT INTO temp.placed VALUES (?, ?)", index.items())
            columns = ", ".join(f'"{row[1]}"' for row in db.execute("PRAGMA main.table_info(rendered_object)"))
            db.execute("BEGIN IMMEDIATE")
            cursor = db.execute(
                f"INSERT OR IGNORE INTO main.rendered_object ({columns}) SELECT {columns} FROM s.rendered_object r "
                "WHERE EXISTS (SELECT 1 FROM temp.placed p WHERE p.key = r.key AND p.sha256 = r.sha256)"
            )
            db.execute("COMMIT")
            return int(cursor.rowcount)
        finally:
            db.execute("DETACH DATABASE s")


def _reinstate_rendered_postgres(ws: Workspace, operation_id: str, index: dict[str, str]) -> int:
    rows = [r for r in staged_rows(ws, operation_id, "rendered_object") if index.get(r["key"]) == r["sha256"]]
    if not rows:
        return 0
    with ws.transaction() as tx:
        conn = tx.connection()
        columns = list(rows[0])
        result = conn.execute(
            text(
                f"INSERT INTO rendered_object ({', '.join(columns)}) VALUES ({', '.join(':' + c for c in columns)}) "
                "ON CONFLICT DO NOTHING"
            ),
            rows,
        )
        return int(result.rowcount)


__all__ = ["OBJECTS_PER_CHUNK", "finish_import", "object_chunks", "place_objects", "render_site"]
