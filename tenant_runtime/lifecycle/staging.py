"""Staging an import: the backup's rows into a new workspace file, resumable, then checked whole.

The staging workspace (``work/import-{operation}.db``) is built by the revision
chain at the backup's own revision, filled table by table, parents before
children (foreign keys on, so a wrong order fails), and upgraded to head by the
same chain an old workspace takes. Rows go in batches, each batch committed
with the cursor that says how far its table is (``import_progress``): a rerun
after a crash, even ``kill -9`` mid-batch, resumes after the last committed
batch, never inserting a row twice. Each table's bytes are hashed again as they
stream in, so a file changed since the verification fails the import here.

What does not come across: the source's work in flight (queued, delivering or
retrying operations and their attempts: their runs belong to where the backup
was made), and when the backup is another tenant's, its backup catalog, chore
runs and idempotency records (they describe the source's files and clients);
its webhooks come across disabled, so a clone never calls the original's
integrations. Everything that names the source tenant is rewritten.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tenant_runtime.lifecycle.files import BackupFiles
from tenant_runtime.lifecycle.format import BackupInvalid, CheckedReader, Manifest, TableEntry, decode_row, lines
from tenant_runtime.lifecycle.rewrite import TenantRewrite
from tenant_runtime.lifecycle.sqlite_files import connect, remove_database, tables_in_order, work_dir
from tenant_runtime.operation_states import SCHEDULED, settled
from tenant_runtime.workspace import Workspace
from tenant_runtime.workspace.migrations import migrate
from tenant_runtime.workspace.open import _sqlite_engine

BATCH_ROWS = 1000
# Describe where the backup was made, not the site: left out when the backup is another tenant's.
SOURCE_ONLY_TABLES = ("backup", "chore_run", "idempotency_record")
_STAGED = "*staged*"  # the progress row that says every table is in
_PROGRESS = (
    "CREATE TABLE IF NOT EXISTS import_progress (name TEXT PRIMARY KEY, rows INTEGER NOT NULL, done INTEGER NOT NULL)"
)


def staging_path(ws: Workspace, operation_id: str) -> Path:
    return work_dir(ws) / f"import-{operation_id}.db"


def _engine(ws: Workspace, path: Path) -> Any:
    return _sqlite_engine(path, busy_timeout_ms=ws.settings.sqlite_busy_timeout_ms, read_only=False)


def _migrate(ws: Workspace, path: Path, to: str | None) -> None:
    engine = _engine(ws, path)
    try:
        migrate(engine, to=to)
    finally:
        engine.dispose()


class _Rows:
    """What of a table's rows goes into the staging workspace, and how."""

    def __init__(self, entry: TableEntry, rewrite: TenantRewrite | None, kept_operations: set[str]) -> None:
        self.entry = entry
        self.rewrite = rewrite
        self.kept_operations = kept_operations

    def keep(self, row: dict[str, Any]) -> dict[str, Any] | None:
        name = self.entry.name
        if self.rewrite is not None and name in SOURCE_ONLY_TABLES:
            return None
        if name == "operation" and not (row["status"] == SCHEDULED or settled(row["status"], row["next_attempt_at"])):
            return None  # in flight where the backup was made
        if name == "attempt" and row["operation_id"] not in self.kept_operations:
            return None
        if self.rewrite is not None:
            row = self.rewrite.row(row)
            if name == "webhook_endpoint":
                row["enabled"] = 0
        return row


def stage_tables(
    ws: Workspace, files: BackupFiles, manifest: Manifest, operation_id: str, rewrite: TenantRewrite | None
) -> dict[str, Any]:
    """Fill (or go on filling) the staging workspace; per table, the rows it holds, then check it whole.

    A backup found changed while it streams in fails the import (permanently) and its staging file goes.
    """
    path = staging_path(ws, operation_id)
    try:
        if not path.exists():
            _migrate(ws, path, manifest.source.schema_revision)
            _empty(ws, path)
        with connect(path, busy_timeout_ms=ws.settings.sqlite_busy_timeout_ms) as db:
            db.execute(_PROGRESS)
            progress = {name: (rows, bool(done)) for name, rows, done in db.execute("SELECT * FROM import_progress")}
            for entry in manifest.tables if _STAGED not in progress else ():
                rows, done = progress.get(entry.name, (0, False))
                if not done:
                    kept = {r[0] for r in db.execute("SELECT id FROM operation")} if entry.name == "attempt" else set()
                    _stage_table(db, files, entry, rows, _Rows(entry, rewrite, kept))
            _commit(db, "", [], _STAGED, 0, done=True)
            counts = {
                t.name: int(db.execute(f'SELECT count(*) FROM "{t.name}"').fetchone()[0]) for t in manifest.tables
            }
        _migrate(ws, path, None)
        _check_whole(ws, path)
    except BackupInvalid:
        drop_staging(ws, operation_id)
        raise
    left_out = {t.name: t.rows - counts[t.name] for t in manifest.tables if t.rows != counts[t.name]}
    return {"rows": counts, "left_out": left_out}


def _empty(ws: Workspace, path: Path) -> None:
    """Drop the rows the revision chain seeds (the site row, revision 0003's history backfill): the
    backup's rows replace them, under their own ids."""
    with connect(path, busy_timeout_ms=ws.settings.sqlite_busy_timeout_ms) as db:
        db.execute("BEGIN IMMEDIATE")
        for table in reversed(tables_in_order(db)):
            db.execute(f'DELETE FROM "{table.name}"')
        db.execute("COMMIT")


def _stage_table(db: Any, files: BackupFiles, entry: TableEntry, resume_at: int, rows: _Rows) -> None:
    source = files.reader(entry.path)
    if source is None:
        raise BackupInvalid("A table of the backup is missing.", details={"file": entry.path})
    checked = CheckedReader(source, entry, entry.path)
    columns = ", ".join(f'"{c}"' for c in entry.columns)
    insert = f'INSERT INTO "{entry.name}" ({columns}) VALUES ({", ".join("?" for _ in entry.columns)})'
    try:
        position, batch = 0, []
        for position, line in enumerate(lines(checked), start=1):
            if position <= resume_at:
                continue  # committed by an earlier attempt
            row = decode_row(line)
            if tuple(row) != entry.columns:
                raise BackupInvalid(
                    "A table row does not have the table's columns.", details={"file": entry.path, "line": position}
                )
            kept = rows.keep(row)
            if kept is not None:
                batch.append(tuple(kept.values()))
            if position % BATCH_ROWS == 0:
                _commit(db, insert, batch, entry.name, position, done=False)
                batch = []
        # The checked reader has now read to the end: the table's bytes matched the manifest.
        if max(position, resume_at) != entry.rows:
            raise BackupInvalid(
                "A table of the backup has another number of rows than its manifest says.", details={"file": entry.path}
            )
        _commit(db, insert, batch, entry.name, entry.rows, done=True)
    finally:
        checked.close()


def _commit(db: Any, insert: str, batch: list[tuple[Any, ...]], table: str, position: int, *, done: bool) -> None:
    db.execute("BEGIN IMMEDIATE")
    try:
        if batch:
            db.executemany(insert, batch)
        db.execute(
            "INSERT INTO import_progress (name, rows, done) VALUES (?, ?, ?) "
            "ON CONFLICT (name) DO UPDATE SET rows = excluded.rows, done = excluded.done",
            (table, position, int(done)),
        )
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def _check_whole(ws: Workspace, path: Path) -> None:
    """SQLite's integrity check and every foreign key, on the staged workspace at head."""
    with connect(path, busy_timeout_ms=ws.settings.sqlite_busy_timeout_ms) as db:
        integrity = [row[0] for row in db.execute("PRAGMA integrity_check")]
        broken = list(db.execute("PRAGMA foreign_key_check"))
    if integrity != ["ok"] or broken:
        raise BackupInvalid(
            "The staged workspace failed its integrity check; nothing was imported.",
            details={"integrity": integrity[:10], "foreign_keys": [list(r) for r in broken[:10]]},
        )


def drop_staging(ws: Workspace, operation_id: str) -> None:
    remove_database(staging_path(ws, operation_id))


def staged_rows(ws: Workspace, operation_id: str, table: str) -> Iterator[dict[str, Any]]:
    """Rows of a staged table (for what follows the swap: the rendered objects' rows)."""
    with connect(staging_path(ws, operation_id), read_only=True) as db:
        cursor = db.execute(f'SELECT * FROM "{table}"')
        names = [d[0] for d in cursor.description]
        for values in cursor:
            yield dict(zip(names, values, strict=True))


__all__ = ["BATCH_ROWS", "SOURCE_ONLY_TABLES", "drop_staging", "stage_tables", "staged_rows", "staging_path"]
