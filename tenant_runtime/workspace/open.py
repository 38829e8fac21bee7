"""Opening a tenant's workspace: the only way code reaches a tenant's data.

A writable open also brings the workspace's schema to the head of the revision
chain (``tenant_runtime.workspace.migrations``): one cheap read when it is
current, one locked upgrade when it is behind. Read-only opens never write.
"""

from __future__ import annotations

import functools
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog
from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine.interfaces import Dialect
from sqlalchemy.exc import OperationalError
from sqlalchemy.pool import NullPool, QueuePool
from sqlmodel import Session

from tenant_runtime.edge import NullPurger, Purger, TenantCache
from tenant_runtime.errors import NotFound
from tenant_runtime.ids import check_tenant_slug
from tenant_runtime.settings import RuntimeSettings
from tenant_runtime.storage import ObjectStore, TenantStore, build_object_store
from tenant_runtime.workspace import postgres
from tenant_runtime.workspace.checkpoints import SAFETY_PAGES, Checkpointer
from tenant_runtime.workspace.migrations import MigrationResult, ensure_current, migrate
from tenant_runtime.workspace.spilled_bodies import bind_store


@dataclass
class Workspace:
    """A tenant's database, object-store view, cache view and bound logger."""

    tenant: str
    engine: Engine
    store: TenantStore
    cache: TenantCache
    settings: RuntimeSettings
    log: structlog.stdlib.BoundLogger = field(repr=False)
    # SQLite: the tenant's writers in this process take turns here before BEGIN IMMEDIATE (one lock per tenant
    # and factory): a thread waiting on it is woken the moment the writer before it commits, where SQLite's
    # busy handler would sleep and poll (1, 2, 5, 10 … 100 ms); other processes still meet SQLite's lock.
    # None on PostgreSQL (row locks, writers go on side by side).
    write_lock: threading.RLock | None = field(default=None, repr=False)
    # Told after each committed write transaction (a warm SQLite tenant's background checkpoints), or None.
    committed: Callable[[], None] | None = field(default=None, repr=False)

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """One write transaction (BEGIN IMMEDIATE): commit on success, roll back on error."""
        turn = self.write_lock
        # As long as SQLite itself would wait, and then the same error (never a deadlock between two tenants).
        if turn is not None and not turn.acquire(timeout=self.settings.sqlite_busy_timeout_ms / 1000):
            raise OperationalError("BEGIN IMMEDIATE", None, sqlite3.OperationalError("database is locked"))
        try:
            with Session(self.engine, expire_on_commit=False) as session, session.begin():
                yield session
        finally:
            if turn is not None:
                turn.release()
        if self.committed is not None:
            self.committed()

    @contextmanager
    def reader(self) -> Iterator[Session]:
        """Reads only: a deferred BEGIN, so a reader never takes (or waits for) the write lock."""
        with Session(self.engine.execution_options(**{_READS: True}), expire_on_commit=False) as session:
            yield session

    @property
    def site_url(self) -> str:
        return f"{self.settings.site_url}/{self.tenant}"


# The execution option ``Workspace.reader`` sets: the connection's transaction only reads.
_READS = postgres.READS_OPTION


class StatementCache(dict[Any, Any]):
    """SQLAlchemy's compiled statements of every workspace engine of the process, at most ``limit`` of them.

    Past the limit the older half is dropped (SQLAlchemy's own per-engine cache, 500 entries, trims the least
    used the same way); a dropped statement is compiled again when next run.
    """

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit
        self._lock = threading.Lock()

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(key, value)
        if len(self) > self.limit:
            with self._lock:
                for old in list(self)[: len(self) - self.limit // 2]:
                    self.pop(old, None)


@functools.cache
def _shared_compilation() -> tuple[Dialect, StatementCache]:
    """One SQLite dialect and one statement cache for every workspace engine of the process.

    SQLAlchemy caches a compiled statement per (dialect, statement); every tenant runs the same statements,
    so with a dialect and a cache per tenant's engine each would compile them all again (and keep its own
    copy): the nightly fan-out's first fire paid ~7 compiles per tenant. Shared, the first tenant's compile
    serves them all. The dialect is initialized once here (SQLite's is the same library for every file).
    """
    source = create_engine("sqlite://", poolclass=NullPool)
    with source.connect():
        pass  # initializes the dialect (SQLite version, capabilities)
    return source.dialect, StatementCache(limit=2000)


# Connections a warm tenant keeps open between units of work (more are opened while more threads use it at
# once, and closed again when they are done).
WARM_CONNECTIONS = 4


def _sqlite_engine(
    path: Path, *, busy_timeout_ms: int, read_only: bool, warm: bool = False, background_checkpoints: bool = False
) -> Engine:
    url = f"sqlite:///file:{path}?mode=ro&uri=true" if read_only else f"sqlite:///{path}"
    dialect, statements = _shared_compilation()
    # The shared cache through the public execution option (no cache of the engine's own: query_cache_size=0);
    # the dialect that keys it set on the engine (the one it made is only used to initialize connections).
    options: dict[str, Any] = {
        "connect_args": {"check_same_thread": False},
        "query_cache_size": 0,
        "execution_options": {"compiled_cache": statements},
    }
    if warm:
        # A warm tenant keeps its connections: closing the last connection of a WAL database checkpoints the
        # WAL into the database file (an fsync) and deletes it, and opening one sets the PRAGMAs again; per
        # unit of work that was half of a brief's accept (benchmarks/analysis.md). The factory bounds how many
        # tenants stay warm (``WorkspaceFactory._keep_warm``), so thousands of idle tenants hold no files.
        engine = create_engine(url, poolclass=QueuePool, pool_size=WARM_CONNECTIONS, max_overflow=-1, **options)
    else:
        # NullPool: a connection per unit of work, so thousands of idle tenants hold no file handles.
        engine = create_engine(url, poolclass=NullPool, **options)
    engine.dialect = dialect

    @event.listens_for(engine, "connect")
    def _configure(dbapi_connection: sqlite3.Connection, _record: object) -> None:
        # Take transaction control from pysqlite so writers BEGIN IMMEDIATE (no lock upgrades).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        cursor.execute("PRAGMA foreign_keys = ON")
        if not read_only:
            cursor.execute("PRAGMA journal_mode = WAL")
            cursor.execute("PRAGMA synchronous = NORMAL")
            if background_checkpoints:
                # The factory's Checkpointer keeps the WAL short; this mark is only the bound if it falls behind.
                cursor.execute(f"PRAGMA wal_autocheckpoint = {SAFETY_PAGES}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection: Connection) -> None:
        # Writers take the write lock up front (no lock upgrade, so no deadlock between two writers);
        # readers (``Workspace.reader``) only need a snapshot, which WAL gives without blocking writers.
        reads = read_only or connection.get_execution_options().get(_READS, False)
        connection.exec_driver_sql("BEGIN" if reads else "BEGIN IMMEDIATE")

    return engine


class WorkspaceFactory:
    """Opens workspaces for one process; holds one object store and one purger for all tenants."""

    def __init__(
        self,
        settings: RuntimeSettings,
        *,
        store: ObjectStore | None = None,
        purger: Purger | None = None,
        read_only: bool = False,
    ) -> None:
        self.settings = settings
        self.store = store if store is not None else build_object_store(settings.storage)
        self.purger: Purger = purger if purger is not None else _default_purger(settings)
        self.read_only = read_only
        self._engines: dict[str, Engine] = {}
        self._warm: OrderedDict[str, Engine] = OrderedDict()  # tenants with open connections, most recent last
        self._write_locks: dict[str, threading.RLock] = {}
        self._lock = threading.Lock()
        # WAL checkpoints off the request path: only where connections stay open between units of work.
        self.checkpointer: Checkpointer | None = None
        if self._background_checkpoints:
            self.checkpointer = Checkpointer(settings.sqlite_checkpoint_interval_seconds, self._warm_engine)

    @property
    def _background_checkpoints(self) -> bool:
        s = self.settings
        return (
            not self.read_only
            and not s.postgres_workspaces
            and s.sqlite_warm_tenants > 0
            and s.sqlite_checkpoint_interval_seconds > 0
        )

    def _warm_engine(self, tenant: str) -> Engine | None:
        with self._lock:
            return self._warm.get(tenant)

    def exists(self, tenant: str) -> bool:
        return workspace_exists(self.settings, tenant)

    def create(self, tenant: str) -> Workspace:
        """Create the tenant's database (its schema, on PostgreSQL) by running the revision chain
        (idempotent) and open it."""
        if self.read_only:
            raise RuntimeError("a read-only factory cannot create workspaces")
        path = self.settings.workspace_path(check_tenant_slug(tenant))
        path.parent.mkdir(parents=True, exist_ok=True)
        engine = self._engine(tenant)
        try:
            migrate(engine)
        finally:
            release_engine(engine)
        return self.open(tenant)

    def open(self, tenant: str) -> Workspace:
        """Open an existing workspace, upgrading its schema if it is behind; an unknown tenant is NotFound."""
        check_tenant_slug(tenant)
        with self._lock:
            engine = self._engines.get(tenant)
        if engine is None:
            engine = self._load(tenant)
        write_lock = None
        if not self.settings.postgres_workspaces:
            self._keep_warm(tenant, engine)
            with self._lock:
                write_lock = self._write_locks.setdefault(tenant, threading.RLock())
        store = TenantStore(self.store, tenant)
        bind_store(engine, store)
        return Workspace(
            tenant=tenant,
            engine=engine,
            store=store,
            cache=TenantCache(self.purger, tenant),
            settings=self.settings,
            log=structlog.get_logger("pressroom.workspace").bind(tenant=tenant),
            write_lock=write_lock,
            committed=functools.partial(self.checkpointer.written, tenant) if self.checkpointer else None,
        )

    def _load(self, tenant: str) -> Engine:
        if not workspace_exists(self.settings, tenant):
            raise NotFound(f"Tenant {tenant!r} not found.", details={"tenant": tenant})
        engine = self._engine(tenant)
        if not self.read_only:
            try:
                # Outside the factory lock: an upgrade waiting on another process's write lock
                # must not hold up opening the other tenants.
                _ensure_current(tenant, engine)
            except BaseException:
                release_engine(engine)
                raise
        with self._lock:
            cached = self._engines.setdefault(tenant, engine)
        if cached is not engine:  # another thread opened it meanwhile
            release_engine(engine)
        return cached

    def _engine(self, tenant: str) -> Engine:
        if self.settings.postgres_workspaces:
            return workspace_engine(self.settings, tenant, read_only=self.read_only)
        return _sqlite_engine(
            self.settings.workspace_path(check_tenant_slug(tenant)),
            busy_timeout_ms=self.settings.sqlite_busy_timeout_ms,
            read_only=self.read_only,
            warm=self.settings.sqlite_warm_tenants > 0,
            background_checkpoints=self._background_checkpoints,
        )

    def _keep_warm(self, tenant: str, engine: Engine) -> None:
        """Mark ``tenant`` most recently used; close the connections of the least recent beyond the bound."""
        bound = self.settings.sqlite_warm_tenants
        if bound <= 0:
            return
        with self._lock:
            self._warm[tenant] = engine
            self._warm.move_to_end(tenant)
            cold = [self._warm.popitem(last=False)[1] for _ in range(len(self._warm) - bound)]
        for other in cold:
            # Its idle connections close now (a connection in use closes when it is returned); the engine
            # stays cached and opens connections again when the tenant comes back.
            other.pool.dispose()

    def forget(self, tenant: str) -> None:
        with self._lock:
            engine = self._engines.pop(tenant, None)
            self._warm.pop(tenant, None)
        if engine is not None:
            release_engine(engine)

    def close(self) -> None:
        """Close every SQLite connection this factory keeps open (its engines open new ones if used again)."""
        if self.checkpointer is not None:
            self.checkpointer.stop()  # closing the connections checkpoints what it had left
        with self._lock:
            warm = list(self._warm.values())
            self._warm.clear()
        for engine in warm:
            engine.pool.dispose()


def workspace_engine(settings: RuntimeSettings, tenant: str, *, read_only: bool = False, warm: bool = False) -> Engine:
    """The engine of one tenant's workspace on the shard's backend (the file, or its schema); ``warm``: a
    SQLite engine keeps its connections open between units of work (a factory's, bounded by the factory)."""
    if settings.postgres_workspaces:
        return postgres.schema_engine(workspace_url(settings), postgres.schema_name(tenant), read_only=read_only)
    path = settings.workspace_path(check_tenant_slug(tenant))
    return _sqlite_engine(path, busy_timeout_ms=settings.sqlite_busy_timeout_ms, read_only=read_only, warm=warm)


def workspace_url(settings: RuntimeSettings) -> str:
    """The shard's workspace database URL (PostgreSQL only)."""
    if settings.workspace_database_url is None:
        raise RuntimeError("this runtime keeps its workspaces in SQLite files")
    return settings.workspace_database_url.get_secret_value()


def workspace_exists(settings: RuntimeSettings, tenant: str) -> bool:
    """Whether the tenant has a workspace on this runtime (its file, or its schema)."""
    if settings.postgres_workspaces:
        return postgres.schema_exists(workspace_url(settings), postgres.schema_name(tenant))
    return settings.workspace_path(check_tenant_slug(tenant)).exists()


def release_engine(engine: Engine) -> None:
    """Close a workspace engine's connections: a SQLite engine's own; never the shared PostgreSQL pool."""
    if not postgres.is_postgres(engine):
        engine.dispose()


def _ensure_current(tenant: str, engine: Engine) -> MigrationResult:
    result = ensure_current(engine)
    if result.upgraded:
        structlog.get_logger("pressroom.workspace").info(
            "workspace.migrated", tenant=tenant, from_revision=result.from_revision, to_revision=result.to_revision
        )
    return result


def _default_purger(settings: RuntimeSettings) -> Purger:
    if settings.purge_url:
        from tenant_runtime.edge import HttpPurger

        return HttpPurger(settings.purge_url, secret=settings.purge_secret.get_secret_value())
    return NullPurger()


def list_tenants(settings: RuntimeSettings) -> list[str]:
    """Tenants that have a workspace on this runtime (files under its data directory, or schemas)."""
    if settings.postgres_workspaces:
        schemas = postgres.workspace_schemas(workspace_url(settings))
        return sorted(t for s in schemas if (t := postgres.tenant_of_schema(s)) and check_tenant_slug_ok(t))
    if not settings.tenants_dir.exists():
        return []
    return sorted(
        path.name
        for path in settings.tenants_dir.iterdir()
        if (path / "workspace.db").exists() and check_tenant_slug_ok(path.name)
    )


def upgrade_workspace(tenant: str, settings: RuntimeSettings) -> MigrationResult:
    """Bring one tenant's workspace to head now; a cheap read if it is there already."""
    if not workspace_exists(settings, check_tenant_slug(tenant)):
        raise NotFound(f"Tenant {tenant!r} not found.", details={"tenant": tenant})
    # An engine of its own, not a factory's: no object store or purger is needed to migrate.
    engine = workspace_engine(settings, tenant)
    try:
        return _ensure_current(tenant, engine)
    finally:
        release_engine(engine)


@dataclass(frozen=True)
class TenantMigration:
    """What ``migrate_workspaces`` did to one tenant: its result, or the error that stopped it."""

    tenant: str
    result: MigrationResult | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def migrate_workspaces(
    settings: RuntimeSettings, progress: Callable[[TenantMigration], None] | None = None
) -> list[TenantMigration]:
    """Bring every tenant workspace under the data directory to head, reporting each as it is done.

    A tenant that fails is reported and skipped, so one damaged workspace does
    not keep the others behind; the caller decides the exit status from ``ok``.
    Opening a workspace upgrades it too, so this only moves the work (and its
    failures) from the first open to a deploy step.
    """
    outcomes = []
    for tenant in list_tenants(settings):
        try:
            outcome = TenantMigration(tenant, upgrade_workspace(tenant, settings))
        except Exception as exc:
            outcome = TenantMigration(tenant, None, f"{type(exc).__name__}: {exc}")
        outcomes.append(outcome)
        if progress is not None:
            progress(outcome)
    return outcomes


def check_tenant_slug_ok(slug: str) -> bool:
    from tenant_runtime.ids import TENANT_SLUG

    return bool(TENANT_SLUG.match(slug))
