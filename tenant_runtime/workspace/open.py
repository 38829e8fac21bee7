"""Opening a tenant's workspace: the only way code reaches a tenant's data."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import structlog
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.exc import OperationalError
from sqlalchemy.pool import NullPool
from sqlmodel import Session

from tenant_runtime.edge import NullPurger, Purger, TenantCache
from tenant_runtime.errors import NotFound
from tenant_runtime.ids import check_tenant_slug
from tenant_runtime.settings import RuntimeSettings
from tenant_runtime.storage import ObjectStore, TenantStore, build_object_store
from tenant_runtime.workspace.models import WorkspaceModel
from tenant_runtime.workspace.search_schema import ensure_search_schema


@dataclass
class Workspace:
    """A tenant's database, object-store view, cache view and bound logger."""

    tenant: str
    engine: Engine
    store: TenantStore
    cache: TenantCache
    settings: RuntimeSettings
    log: structlog.stdlib.BoundLogger = field(repr=False)

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """One write transaction (BEGIN IMMEDIATE): commit on success, roll back on error."""
        with Session(self.engine, expire_on_commit=False) as session, session.begin():
            yield session

    @contextmanager
    def reader(self) -> Iterator[Session]:
        with Session(self.engine, expire_on_commit=False) as session:
            yield session

    @property
    def site_url(self) -> str:
        return f"{self.settings.site_url}/{self.tenant}"


def _sqlite_engine(path: Path, *, busy_timeout_ms: int, read_only: bool) -> Engine:
    if read_only:
        url = f"sqlite:///file:{path}?mode=ro&uri=true"
    else:
        url = f"sqlite:///{path}"
    # NullPool: a connection per unit of work, so thousands of idle tenants hold no file handles.
    engine = create_engine(url, poolclass=NullPool, connect_args={"check_same_thread": False})

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
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection: object) -> None:
        connection.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")  # type: ignore[attr-defined]

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
        self._lock = threading.Lock()

    def exists(self, tenant: str) -> bool:
        return self.settings.workspace_path(check_tenant_slug(tenant)).exists()

    def create(self, tenant: str) -> Workspace:
        """Create the tenant's database (idempotent) and open it."""
        path = self.settings.workspace_path(check_tenant_slug(tenant))
        path.parent.mkdir(parents=True, exist_ok=True)
        engine = _sqlite_engine(path, busy_timeout_ms=self.settings.sqlite_busy_timeout_ms, read_only=False)
        WorkspaceModel.metadata.create_all(engine)
        ensure_search_schema(engine)
        engine.dispose()
        return self.open(tenant)

    def open(self, tenant: str) -> Workspace:
        """Open an existing workspace; an unknown tenant is NotFound."""
        check_tenant_slug(tenant)
        with self._lock:
            engine = self._engines.get(tenant)
            if engine is None:
                path = self.settings.workspace_path(tenant)
                if not path.exists():
                    raise NotFound(f"Tenant {tenant!r} not found.", details={"tenant": tenant})
                engine = _sqlite_engine(
                    path, busy_timeout_ms=self.settings.sqlite_busy_timeout_ms, read_only=self.read_only
                )
                if not self.read_only:
                    _ensure_schema(engine)
                self._engines[tenant] = engine
        return Workspace(
            tenant=tenant,
            engine=engine,
            store=TenantStore(self.store, tenant),
            cache=TenantCache(self.purger, tenant),
            settings=self.settings,
            log=structlog.get_logger("pressroom.workspace").bind(tenant=tenant),
        )

    def forget(self, tenant: str) -> None:
        with self._lock:
            engine = self._engines.pop(tenant, None)
        if engine is not None:
            engine.dispose()


def _ensure_schema(engine: Engine) -> None:
    """Bring an older workspace up to date: new tables, and new nullable columns of existing ones.

    Workspace changes are additive by rule (a column is added nullable, never
    renamed or dropped), so this is the whole migration story for tenant databases.
    """
    try:
        WorkspaceModel.metadata.create_all(engine)
    except OperationalError as exc:
        # Two processes opening the same old workspace at once: the other one created it first.
        if "already exists" not in str(exc):
            raise
    _add_missing_columns(engine)
    ensure_search_schema(engine)


def _add_missing_columns(engine: Engine) -> None:
    with engine.begin() as connection:
        for table in WorkspaceModel.metadata.sorted_tables:
            present = {row[1] for row in connection.exec_driver_sql(f'PRAGMA table_info("{table.name}")')}
            for column in table.columns:
                if column.name in present:
                    continue
                if not column.nullable:
                    raise RuntimeError(f"workspace column {table.name}.{column.name} must be added as nullable")
                kind = column.type.compile(dialect=engine.dialect)
                try:
                    connection.exec_driver_sql(f'ALTER TABLE "{table.name}" ADD COLUMN "{column.name}" {kind}')
                except OperationalError as exc:
                    if "duplicate column" not in str(exc):  # another process added it first
                        raise
                for index in table.indexes:
                    if [c.name for c in index.columns] == [column.name]:
                        connection.exec_driver_sql(
                            f'CREATE INDEX IF NOT EXISTS "{index.name}" ON "{table.name}" ("{column.name}")')


def _default_purger(settings: RuntimeSettings) -> Purger:
    if settings.purge_url:
        from tenant_runtime.edge import HttpPurger

        return HttpPurger(settings.purge_url, secret=settings.purge_secret)
    return NullPurger()


def create_workspace(tenant: str, settings: RuntimeSettings) -> Workspace:
    return WorkspaceFactory(settings).create(tenant)


def open_workspace(tenant: str, settings: RuntimeSettings) -> Workspace:
    return WorkspaceFactory(settings).open(tenant)


def list_tenants(settings: RuntimeSettings) -> list[str]:
    """Tenants that have a workspace on this runtime's data directory."""
    if not settings.tenants_dir.exists():
        return []
    return sorted(
        path.name
        for path in settings.tenants_dir.iterdir()
        if (path / "workspace.db").exists() and check_tenant_slug_ok(path.name)
    )


def check_tenant_slug_ok(slug: str) -> bool:
    from tenant_runtime.ids import TENANT_SLUG

    return bool(TENANT_SLUG.match(slug))
