"""A factory keeps the connections of its most recently used tenants open, and only of those."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError
from sqlalchemy.pool import NullPool, QueuePool

from tenant_runtime.edge import MemoryPurger
from tenant_runtime.settings import RuntimeSettings
from tenant_runtime.storage import MemoryStore
from tenant_runtime.storage.factory import StorageSettings
from tenant_runtime.workspace import WorkspaceFactory
from tests.fixtures.workspaces import sqlite_only

# Warm SQLite connections and SQLite's busy waits; a PostgreSQL shard shares one pool per database and its
# writers queue on the tenant's advisory lock (tests/tenant_runtime/test_workspace_postgres.py).
pytestmark = sqlite_only


def _factory(tmp_path: Path, warm: int) -> WorkspaceFactory:
    settings = RuntimeSettings(
        data_dir=tmp_path,
        storage=StorageSettings(root=tmp_path / "objects"),
        site_url="http://site.test",
        sqlite_warm_tenants=warm,
    )
    return WorkspaceFactory(settings, store=MemoryStore(), purger=MemoryPurger())


def _use(factory: WorkspaceFactory, tenant: str) -> QueuePool:
    ws = factory.open(tenant)
    with ws.transaction() as tx:
        tx.execute(text("SELECT 1"))
    pool = ws.engine.pool
    assert isinstance(pool, QueuePool)
    return pool


def test_the_least_recently_used_tenant_beyond_the_bound_closes_its_connections(tmp_path: Path) -> None:
    factory = _factory(tmp_path, warm=2)
    for tenant in ("acme", "globex", "initech"):
        factory.create(tenant)
    acme = _use(factory, "acme")
    globex = _use(factory, "globex")
    assert acme.checkedin() == 1 and globex.checkedin() == 1  # kept open between units of work
    _use(factory, "acme")  # acme is the most recent again: globex is the one to go
    initech = _use(factory, "initech")
    assert globex.checkedin() == 0
    assert acme.checkedin() == 1 and initech.checkedin() == 1
    assert _use(factory, "globex").checkedin() == 1  # it opens again when it comes back
    assert acme.checkedin() == 0
    factory.close()
    assert globex.checkedin() == 0 and initech.checkedin() == 0


def test_no_warm_tenants_is_a_connection_per_unit_of_work(tmp_path: Path) -> None:
    factory = _factory(tmp_path, warm=0)
    ws = factory.create("acme")
    assert isinstance(ws.engine.pool, NullPool)
    with ws.transaction() as tx:
        tx.execute(text("SELECT 1"))
    assert not Path(f"{factory.settings.workspace_path('acme')}-wal").exists()  # the last close checkpointed it


def test_writers_of_one_tenant_in_one_process_take_turns_without_sqlite_busy_waits(tmp_path: Path) -> None:
    factory = _factory(tmp_path, warm=4)
    factory.create("acme")
    order: list[str] = []
    inside = threading.Event()

    def first() -> None:
        with factory.open("acme").transaction() as tx:
            tx.execute(text("SELECT 1"))
            inside.set()
            time.sleep(0.2)
            order.append("first")

    thread = threading.Thread(target=first)
    thread.start()
    inside.wait(5)
    started = time.monotonic()
    with factory.open("acme").transaction():  # waits for the first writer's commit, then goes at once
        order.append("second")
    waited = time.monotonic() - started
    thread.join()
    assert order == ["first", "second"] and waited < 1.0
    with factory.open("acme").transaction(), factory.open("acme").reader() as reader:
        reader.execute(text("SELECT 1"))  # a reader never waits on a writer


def test_a_writer_that_cannot_get_its_turn_fails_like_a_locked_database(tmp_path: Path) -> None:
    settings = RuntimeSettings(
        data_dir=tmp_path,
        storage=StorageSettings(root=tmp_path / "objects"),
        site_url="http://site.test",
        sqlite_busy_timeout_ms=100,
    )
    factory = WorkspaceFactory(settings, store=MemoryStore(), purger=MemoryPurger())
    factory.create("acme")
    held, done = threading.Event(), threading.Event()

    def holder() -> None:
        with factory.open("acme").transaction():
            held.set()
            done.wait(5)

    thread = threading.Thread(target=holder)
    thread.start()
    held.wait(5)
    with pytest.raises(OperationalError, match="database is locked"), factory.open("acme").transaction():
        pass
    done.set()
    thread.join()


def _checkpointing_factory(tmp_path: Path, interval: float) -> WorkspaceFactory:
    settings = RuntimeSettings(
        data_dir=tmp_path,
        storage=StorageSettings(root=tmp_path / "objects"),
        site_url="http://site.test",
        sqlite_checkpoint_interval_seconds=interval,
    )
    return WorkspaceFactory(settings, store=MemoryStore(), purger=MemoryPurger())


def _write_pages(factory: WorkspaceFactory, tenant: str, commits: int) -> None:
    ws = factory.open(tenant)
    with ws.transaction() as tx:
        tx.execute(text("CREATE TABLE IF NOT EXISTS filler (id INTEGER PRIMARY KEY, body BLOB)"))
    for _ in range(commits):
        with ws.transaction() as tx:  # ~2 pages of rows per commit, as a brief's command does
            tx.execute(text("INSERT INTO filler (body) VALUES (randomblob(7000))"))


def test_no_commit_of_a_warm_tenant_checkpoints_the_wal_the_background_pass_does(tmp_path: Path) -> None:
    factory = _checkpointing_factory(tmp_path, interval=3600)  # the thread never wakes in this test
    factory.create("acme")
    db = factory.settings.workspace_path("acme")
    before = db.stat().st_size
    _write_pages(factory, "acme", 700)  # ~1,400 pages: SQLite's own mark (1,000) would checkpoint in a COMMIT
    wal = Path(f"{db}-wal")
    assert wal.stat().st_size > 1_000 * 4096
    assert db.stat().st_size == before  # no COMMIT copied the WAL into the database
    with factory.open("acme").reader() as reader:
        assert reader.execute(text("PRAGMA wal_autocheckpoint")).scalar_one() == 10_000  # the far bound

    assert factory.checkpointer is not None
    assert factory.checkpointer.run_once() == 1  # the tenant written since the last pass
    assert db.stat().st_size > before + 700 * 7000  # the rows are in the database file now
    assert factory.checkpointer.run_once() == 0  # nothing written since: nothing to do
    factory.close()


def test_the_thread_checkpoints_on_its_interval_and_stops_with_the_factory(tmp_path: Path) -> None:
    factory = _checkpointing_factory(tmp_path, interval=0.05)
    factory.create("acme")
    db = factory.settings.workspace_path("acme")
    before = db.stat().st_size
    _write_pages(factory, "acme", 50)
    checkpointer = factory.checkpointer
    assert checkpointer is not None
    deadline = time.monotonic() + 10
    while db.stat().st_size <= before + 50 * 7000 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert db.stat().st_size > before + 50 * 7000 and checkpointer.checkpoints >= 1
    assert checkpointer.running
    factory.close()
    assert not checkpointer.running
    _write_pages(factory, "acme", 1)  # used again after close: the thread starts again
    assert checkpointer.running
    factory.close()
    assert not checkpointer.running


def test_interval_zero_leaves_the_checkpoints_to_sqlite(tmp_path: Path) -> None:
    factory = _checkpointing_factory(tmp_path, interval=0)
    assert factory.checkpointer is None
    factory.create("acme")
    db = factory.settings.workspace_path("acme")
    before = db.stat().st_size
    _write_pages(factory, "acme", 700)
    assert db.stat().st_size > before  # a COMMIT past 1,000 pages checkpointed, as SQLite does by default
    with factory.open("acme").reader() as reader:
        assert reader.execute(text("PRAGMA wal_autocheckpoint")).scalar_one() == 1000
    factory.close()
