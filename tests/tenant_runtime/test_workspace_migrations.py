"""Workspace schema migrations: old workspaces upgrade in place, new ones are built by the same chain.

The pre-Alembic workspaces come from ``fixtures/*.sql``, dumps of real
workspaces made by the code before Alembic (see
``fixtures/make_pre_alembic_workspace.py``); every test loads one into a fresh file.
"""

from __future__ import annotations

import multiprocessing
import shutil
import sqlite3
import threading
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Column, MetaData, String
from sqlmodel import select

import tenant_runtime.workspace.delivery_models  # noqa: F401 — registers the delivery tables in the metadata
from tenant_runtime import search
from tenant_runtime.errors import PressroomError
from tenant_runtime.settings import RuntimeSettings
from tenant_runtime.workspace import Operation, WorkspaceFactory, WorkspaceModel, migrations
from tenant_runtime.workspace.migrations import MIGRATIONS_DIR, MigrationResult, head_revision, migrate
from tenant_runtime.workspace.open import (
    TenantMigration,
    _sqlite_engine,
    migrate_workspaces,
    upgrade_workspace,
)
from tenant_runtime.workspace.search_schema import SEARCH_TABLES, create_search_tables
from tests.fixtures.workspaces import sqlite_only

# SQLite workspace files: pre-Alembic dumps, WAL locks, file schemas. PostgreSQL's: test_workspace_postgres.py.
pytestmark = sqlite_only

FIXTURES = Path(__file__).parent / "fixtures"
TODAY = "workspace_pre_alembic.sql"  # the schema of ff71dd0, the last commit before Alembic
NO_BATCH_ID = "workspace_pre_alembic_no_batch_id.sql"  # older: before operation.batch_id existed
TENANT = "legacy"  # the tenant the dumps were made for
SEARCH_WORD = "zeppelin"  # only in the published, indexed post "airships-return"

Rows = dict[str, list[dict[str, Any]]]


def _load(dump: str, path: Path) -> Path:
    """A fresh workspace file holding the dump, as a tenant's data directory would."""
    text = (FIXTURES / dump).read_text(encoding="utf-8")
    assert "alembic_version" not in text  # made by pre-Alembic code, as the tests below assume
    path.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(path)) as db:
        db.executescript(text)
        # Every workspace the old code opened is in WAL mode (it set it on each connection). A
        # journal-mode switch is not covered by the busy timeout, so leaving the file in rollback
        # mode would make concurrent first opens fail on that switch instead of on what is tested.
        db.execute("PRAGMA journal_mode = WAL")
    return path


def _load_tenant(factory: WorkspaceFactory, dump: str, tenant: str = TENANT) -> Path:
    return _load(dump, factory.settings.workspace_path(tenant))


def _rows(path: Path) -> Rows:
    """Every row of every table (FTS5 shadow tables included) as stored, keyed by column name."""
    rows: Rows = {}
    with closing(sqlite3.connect(path)) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        for table in tables:
            cursor = db.execute(f'SELECT * FROM "{table}"')
            names = [d[0] for d in cursor.description]
            rows[table] = sorted((dict(zip(names, row, strict=True)) for row in cursor), key=repr)
    return rows


def _revision(path: Path) -> str | None:
    with closing(sqlite3.connect(path)) as db:
        try:
            return db.execute("SELECT version_num FROM alembic_version").fetchone()[0]
        except sqlite3.OperationalError:
            return None


def _schema_version(path: Path) -> int:
    """SQLite's schema cookie: it changes with every CREATE, ALTER or DROP."""
    with closing(sqlite3.connect(path)) as db:
        return int(db.execute("PRAGMA schema_version").fetchone()[0])


def _sql(path: Path) -> set[tuple[str, str, str]]:
    """Every table, index and trigger as SQLite stores it, whitespace normalised."""
    with closing(sqlite3.connect(path)) as db:
        return {
            (kind, name, " ".join(sql.split()))
            for kind, name, sql in db.execute("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL")
        }


def _structure(path: Path) -> dict[str, Any]:
    """Columns (by name, not position), indexes, unique constraints and foreign keys of every table."""
    structure: dict[str, Any] = {}
    with closing(sqlite3.connect(path)) as db:
        for table, sql in db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall():
            if sql.startswith("CREATE VIRTUAL"):
                structure[table] = " ".join(sql.split())
                continue
            columns = {r[1]: (r[2], r[3], r[4], r[5], r[6]) for r in db.execute(f'PRAGMA table_xinfo("{table}")')}
            indexes = set()
            for _, name, unique, origin, partial in db.execute(f'PRAGMA index_list("{table}")').fetchall():
                cols = tuple(r[2] for r in db.execute(f'PRAGMA index_info("{name}")'))
                # Indexes SQLite makes for UNIQUE / PRIMARY KEY are named by position: compare their columns.
                indexes.add((name if origin == "c" else origin, unique, partial, cols))
            fks = {tuple(r[2:]) for r in db.execute(f'PRAGMA foreign_key_list("{table}")')}
            structure[table] = {"columns": columns, "indexes": indexes, "foreign_keys": fks}
    return structure


def _added_columns(before: Rows, after: Rows) -> dict[str, set[str]]:
    added = {t: set(after[t][0]) - set(before[t][0]) for t in before if before[t] and after.get(t)}
    return {t: columns for t, columns in added.items() if columns}


# Columns a revision fills in for existing rows (0002: each delivery's document, from its operation).
# 0007: every existing operation has had no restart.
BACKFILLED = {
    ("webhook_delivery", "document_id"),
    ("operation", "restarts"),
    ("document", "fields"),
    ("revision", "fields"),
    # 0011: every stored object was rendered with the settings as they are (version 0); the defaults.
    ("rendered_object", "settings_version"),
    ("site_state", "description"),
    ("site_state", "language"),
    ("site_state", "settings_version"),
}


def _assert_rows_kept(before: Rows, after: Rows) -> None:
    """Every table and row is still there with the same values; added columns are NULL unless backfilled."""
    assert set(before) <= set(after)
    for table, rows in before.items():
        assert len(after[table]) == len(rows), table
        columns = set(rows[0]) if rows else set()
        kept = sorted(({k: v for k, v in row.items() if k in columns} for row in after[table]), key=repr)
        assert kept == rows, table
        assert all(
            v is None
            for row in after[table]
            for k, v in row.items()
            if k not in columns and (table, k) not in BACKFILLED
        ), table
    documents = {op["id"]: op["document_id"] or "" for op in after["operation"]}
    assert all(row["document_id"] == documents[row["operation_id"]] for row in after["webhook_delivery"])


@pytest.mark.parametrize("dump", [TODAY, NO_BATCH_ID])
def test_a_pre_alembic_workspace_upgrades_in_place_on_open_without_losing_a_row(
    workspace_factory: WorkspaceFactory, dump: str
) -> None:
    path = _load_tenant(workspace_factory, dump)
    before = _rows(path)
    assert sum(len(rows) for rows in before.values()) > 50 and all(
        before[t]
        for t in (
            "document",
            "revision",
            "operation",
            "attempt",
            "audit_entry",
            "idempotency_record",
            "site_resource",
            "site_resource_revision",
            "webhook_endpoint",
            "webhook_delivery",
            "rendered_object",
            "aggregate_state",
            "site_state",
            "search_document",
            "search_index",
        )
    )

    ws = workspace_factory.open(TENANT)

    after = _rows(path)
    assert _revision(path) == head_revision()
    after.pop("alembic_version")
    _assert_rows_kept(before, after)
    # 0002 adds operation.outcome and webhook_delivery.document_id; the oldest workspaces also gain batch_id.
    # 0004 adds where a spilled version body lives; 0007 the run-control columns of operation.
    control = {"control", "control_actor", "control_requested_at", "control_sent_at", "control_error", "restarts"}
    added = {"operation": {"outcome", *control}, "webhook_delivery": {"document_id"}}
    added["revision"] = {"body_key", "body_sha256", "body_bytes"}
    # 0009 adds custom field values.
    added["revision"].add("fields")
    added["document"] = {"fields"}
    # 0011 adds the site's description and language, and the settings version of the site and of objects.
    added["site_state"] = {"description", "language", "settings_version"}
    added["rendered_object"] = {"settings_version"}
    if dump == NO_BATCH_ID:
        added["operation"].add("batch_id")
    assert _added_columns(before, after) == added
    assert "ix_operation_batch_id" in {name for _, name, _ in _sql(path)}
    # The ORM reads every operation, the new column included, and search still finds the post.
    with ws.reader() as tx:
        assert len(tx.exec(select(Operation)).all()) == len(before["operation"])
    assert [hit.slug for hit in search.search(ws, SEARCH_WORD)] == ["airships-return"]
    assert [hit.slug for hit in search.search(ws, "cafe")] == ["airships-return"]  # today's tokenizer kept

    # A second open (another process: a new factory) finds it current and writes nothing.
    upgraded = (_schema_version(path), _rows(path))
    WorkspaceFactory(workspace_factory.settings, store=workspace_factory.store).open(TENANT)
    assert (_schema_version(path), _rows(path)) == upgraded
    assert not upgrade_workspace(TENANT, workspace_factory.settings).upgraded


def test_a_new_workspace_has_exactly_the_schema_of_an_upgraded_one(workspace_factory: WorkspaceFactory) -> None:
    fresh = workspace_factory.settings.workspace_path("fresh")
    workspace_factory.create("fresh")
    upgraded = _load_tenant(workspace_factory, TODAY)
    older = _load_tenant(workspace_factory, NO_BATCH_ID, tenant="older")
    workspace_factory.open(TENANT)
    workspace_factory.open("older")

    assert _revision(fresh) == head_revision()
    # Same statements, so same tables, columns, types, constraints, indexes and FTS5 tokenizer.
    assert _sql(fresh) == _sql(upgraded)
    # The older one gained operation.batch_id by ALTER TABLE, at the end of the table: same
    # structure, column for column by name, but not the same CREATE TABLE text.
    assert _structure(fresh) == _structure(older)


def _metadata_diff(path: Path, metadata: MetaData = WorkspaceModel.metadata) -> list[Any]:
    engine = _sqlite_engine(path, busy_timeout_ms=1000, read_only=True)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(
                connection,
                opts={
                    # The FTS5 tables and their shadow tables are not models: the next test checks them.
                    "include_name": lambda name, kind, _parent: kind != "table" or not name.startswith(SEARCH_TABLES),
                },
            )
            return compare_metadata(context, metadata)
    finally:
        engine.dispose()


def test_the_models_match_the_migrated_schema(workspace_factory: WorkspaceFactory) -> None:
    workspace_factory.create("fresh")
    _load_tenant(workspace_factory, NO_BATCH_ID)
    workspace_factory.open(TENANT)

    assert _metadata_diff(workspace_factory.settings.workspace_path("fresh")) == []
    assert _metadata_diff(workspace_factory.settings.workspace_path(TENANT)) == []


def test_a_model_change_without_a_revision_is_reported(workspace_factory: WorkspaceFactory) -> None:
    workspace_factory.create("fresh")
    changed = MetaData()
    for table in WorkspaceModel.metadata.sorted_tables:
        table.to_metadata(changed)
    changed.tables["operation"].append_column(Column("priority", String, nullable=True))

    diff = _metadata_diff(workspace_factory.settings.workspace_path("fresh"), changed)

    assert [(d[0], d[2], d[3].name) for d in diff] == [("add_column", "operation", "priority")]


def test_the_search_tables_the_chain_builds_are_the_ones_search_schema_declares(
    workspace_factory: WorkspaceFactory, tmp_path: Path
) -> None:
    workspace_factory.create("fresh")
    declared = tmp_path / "declared.db"
    engine = _sqlite_engine(declared, busy_timeout_ms=1000, read_only=False)
    with engine.begin() as connection:
        create_search_tables(connection)
    engine.dispose()

    def search_tables(path: Path) -> set[tuple[str, str, str]]:
        return {entry for entry in _sql(path) if entry[1].startswith(SEARCH_TABLES)}

    assert search_tables(workspace_factory.settings.workspace_path("fresh")) == search_tables(declared)
    assert {name for _, name, _ in search_tables(declared)} >= set(SEARCH_TABLES)


def test_two_threads_opening_the_same_old_workspace_both_succeed_and_it_migrates_once(
    workspace_factory: WorkspaceFactory,
) -> None:
    path = _load_tenant(workspace_factory, NO_BATCH_ID)
    before = _rows(path)
    barrier = threading.Barrier(2)
    results: list[Any] = []

    def upgrade() -> None:
        barrier.wait()
        try:
            results.append(upgrade_workspace(TENANT, workspace_factory.settings))
        except Exception as exc:
            results.append(exc)

    threads = [threading.Thread(target=upgrade) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert all(isinstance(r, MigrationResult) for r in results), results
    assert sorted(r.upgraded for r in results) == [False, True], results
    assert {r.to_revision for r in results} == {head_revision()}
    after = _rows(path)
    after.pop("alembic_version")
    _assert_rows_kept(before, after)


def test_two_factories_opening_the_same_old_workspace_at_once_both_succeed(
    workspace_factory: WorkspaceFactory,
) -> None:
    _load_tenant(workspace_factory, TODAY)
    barrier = threading.Barrier(2)
    found: list[Any] = []

    def open_and_search() -> None:
        factory = WorkspaceFactory(workspace_factory.settings, store=workspace_factory.store)
        barrier.wait()
        try:
            found.append([hit.slug for hit in search.search(factory.open(TENANT), SEARCH_WORD)])
        except Exception as exc:
            found.append(exc)

    threads = [threading.Thread(target=open_and_search) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert found == [["airships-return"], ["airships-return"]]


def _upgrade_in_child(data_dir: str, barrier: Any, results: Any) -> None:
    barrier.wait()
    result = upgrade_workspace(TENANT, RuntimeSettings(data_dir=Path(data_dir)))
    results.put((result.from_revision, result.to_revision))


def test_two_processes_upgrading_the_same_old_workspace_migrate_it_once(
    workspace_factory: WorkspaceFactory,
) -> None:
    path = _load_tenant(workspace_factory, TODAY)
    before = _rows(path)
    context = multiprocessing.get_context("spawn")  # no fork of a process that holds threads and engines
    barrier, results = context.Barrier(2), context.Queue()
    children = [
        context.Process(target=_upgrade_in_child, args=(str(workspace_factory.settings.data_dir), barrier, results))
        for _ in range(2)
    ]
    for child in children:
        child.start()
    # Spawned children import the test module first: under load that alone can take a minute.
    outcomes = sorted((results.get(timeout=240) for _ in children), key=repr)
    for child in children:
        child.join(timeout=30)

    head = head_revision()
    assert outcomes == sorted([(None, head), (head, head)], key=repr)
    after = _rows(path)
    after.pop("alembic_version")
    _assert_rows_kept(before, after)


def test_migrate_workspaces_upgrades_every_tenant_and_reports_each(workspace_factory: WorkspaceFactory) -> None:
    settings = workspace_factory.settings
    workspace_factory.create("alpha")
    _load_tenant(workspace_factory, TODAY, tenant="bravo")
    _load_tenant(workspace_factory, NO_BATCH_ID, tenant="charlie")
    damaged = settings.workspace_path("delta")
    damaged.parent.mkdir(parents=True)
    damaged.write_bytes(b"this is not a database" * 100)
    reported: list[TenantMigration] = []

    outcomes = migrate_workspaces(settings, progress=reported.append)

    head = head_revision()
    assert reported == outcomes
    assert [(o.tenant, o.result.from_revision if o.result else "-", o.ok) for o in outcomes] == [
        ("alpha", head, True),
        ("bravo", None, True),
        ("charlie", None, True),
        ("delta", "-", False),
    ]
    assert outcomes[3].error is not None and "DatabaseError" in outcomes[3].error
    assert all(_revision(settings.workspace_path(t)) == head for t in ("alpha", "bravo", "charlie"))
    assert [o.result.upgraded for o in migrate_workspaces(settings) if o.result] == [False, False, False]


def test_read_only_opens_never_write(workspace_factory: WorkspaceFactory) -> None:
    path = _load_tenant(workspace_factory, NO_BATCH_ID)
    before = (_schema_version(path), _rows(path))

    reader = WorkspaceFactory(workspace_factory.settings, store=workspace_factory.store, read_only=True).open(TENANT)

    assert [hit.slug for hit in search.search(reader, SEARCH_WORD)] == ["airships-return"]
    assert (_schema_version(path), _rows(path)) == before
    assert _revision(path) is None


def test_opening_a_current_workspace_takes_no_write_lock(workspace_factory: WorkspaceFactory) -> None:
    workspace_factory.create("busy")
    path = workspace_factory.settings.workspace_path("busy")
    with closing(sqlite3.connect(path, isolation_level=None)) as writer:
        writer.execute("BEGIN IMMEDIATE")  # another process in the middle of a write
        started = time.monotonic()
        WorkspaceFactory(workspace_factory.settings, store=workspace_factory.store).open("busy")
        elapsed = time.monotonic() - started
        writer.execute("ROLLBACK")

    assert elapsed < workspace_factory.settings.sqlite_busy_timeout_ms / 1000 / 4


def test_a_failed_upgrade_leaves_the_workspace_as_it_was(workspace_factory: WorkspaceFactory) -> None:
    path = _load_tenant(workspace_factory, TODAY)
    with closing(sqlite3.connect(path)) as db:
        # Not a state old code could make: a table without one of its NOT NULL columns, which the
        # baseline refuses to guess. aggregate_state goes too: the baseline creates it before failing.
        db.executescript("DROP TABLE aggregate_state; ALTER TABLE document DROP COLUMN kind;")
    before = (_schema_version(path), _rows(path))

    with pytest.raises(RuntimeError, match="document lacks the NOT NULL column kind"):
        workspace_factory.open(TENANT)

    assert (_schema_version(path), _rows(path)) == before  # aggregate_state was not left created
    assert _revision(path) is None


def test_a_workspace_from_newer_code_is_refused_and_left_alone(workspace_factory: WorkspaceFactory) -> None:
    path = workspace_factory.settings.workspace_path("ahead")
    workspace_factory.create("ahead")
    workspace_factory.forget("ahead")
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE alembic_version SET version_num = '9999'")
    before = (_schema_version(path), _rows(path))

    with pytest.raises(PressroomError) as raised:
        WorkspaceFactory(workspace_factory.settings, store=workspace_factory.store).open("ahead")

    assert raised.value.code == "workspace_revision_unknown"
    assert (_schema_version(path), _rows(path)) == before


# The next revision will change columns. On SQLite that is op.batch_alter_table, which recreates
# the table; operation is a parent (attempt references it), so this only works with foreign keys
# off during the upgrade. A throwaway revision after head proves the mechanism does that and keeps every row.
_NEXT_REVISION = """
import sqlalchemy as sa
from alembic import op

revision = "next"
down_revision = "{head}"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("operation") as batch:
        batch.alter_column("send_error", type_=sa.String(500), existing_nullable=True)
        batch.add_column(sa.Column("priority", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    raise NotImplementedError
"""


def _chain_with_next_revision(tmp_path: Path) -> ScriptDirectory:
    versions = tmp_path / "chain" / "versions"
    versions.mkdir(parents=True)
    for revision in (MIGRATIONS_DIR / "versions").glob("0*.py"):
        shutil.copy(revision, versions / revision.name)
    (versions / "9999_next.py").write_text(_NEXT_REVISION.replace("{head}", head_revision()), encoding="utf-8")
    return ScriptDirectory(str(tmp_path / "chain"))


@pytest.mark.parametrize("start", ["pre-alembic", "baseline"])
def test_a_batch_alter_revision_recreates_a_parent_table_and_keeps_every_row(
    workspace_factory: WorkspaceFactory, tmp_path: Path, start: str
) -> None:
    path = _load_tenant(workspace_factory, TODAY)
    if start == "baseline":
        workspace_factory.open(TENANT)
        workspace_factory.forget(TENANT)
    before = _rows(path)
    before.pop("alembic_version", None)
    engine = _sqlite_engine(path, busy_timeout_ms=1000, read_only=False)

    result = migrate(engine, script=_chain_with_next_revision(tmp_path))

    engine.dispose()
    assert (result.from_revision, result.to_revision) == (None if start == "pre-alembic" else head_revision(), "next")
    after = _rows(path)
    after.pop("alembic_version")
    # Only the columns that were there before are compared: the real revisions after the baseline add their own.
    for table, rows in before.items():
        columns = set(rows[0]) if rows else set()
        assert [{k: v for k, v in row.items() if k in columns} for row in after[table]] == rows, table
    assert {row["priority"] for row in after["operation"]} == {0}
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]


def test_the_migrations_package_exports_what_it_lists() -> None:
    assert sorted(migrations.__all__) == sorted(set(migrations.__all__))
    assert all(hasattr(migrations, name) for name in migrations.__all__)
