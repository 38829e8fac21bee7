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
