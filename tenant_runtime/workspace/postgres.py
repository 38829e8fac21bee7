"""Tenant workspaces on PostgreSQL: one schema per tenant (``ws_{slug}``) in the shard's workspace database.

Why it is shaped this way:

- One engine (one connection pool) per database URL for the whole process, not
  one per tenant: a shard of thousands of tenants must not hold thousands of
  connections. A tenant's engine is that engine with an execution option naming
  its schema; every transaction begins with ``SET LOCAL search_path`` to it
  alone (no ``public``), so the ORM's and the raw SQL's unqualified names
  resolve to the tenant's tables and no other tenant's.
- Writers queue on a per-tenant advisory lock taken as the transaction's first
  statement: the same one-writer-at-a-time a SQLite workspace gets from
  ``BEGIN IMMEDIATE``, which the actions rely on (read, decide, write).
  Readers take no lock and read one REPEATABLE READ snapshot, as a SQLite
  reader reads one WAL snapshot.
- Sessions run in UTC: ``timestamptz`` values read back as UTC, and text in
  the SQLite workspace's DATETIME format (UTC wall time) is read as UTC.
- Server-side prepared statements are off: a plan prepared under one tenant's
  search_path must never be reused under another's.
- PostgreSQL text cannot hold NUL (SQLite's can): a value with one is refused
  before it is sent, as a 400 ``invalid_text``, never a driver error (a 500).
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import make_url

from tenant_runtime.errors import BadRequest
from tenant_runtime.ids import check_tenant_slug

# The execution options a tenant's engine and its readers carry.
SCHEMA_OPTION = "pressroom_schema"
READS_OPTION = "pressroom_reads"
READ_ONLY_OPTION = "pressroom_read_only"
SCHEMA_PREFIX = "ws_"
# The first key of every workspace advisory lock ("PR"): the second is the schema's hash.
_LOCK_CLASS = 0x5052
_SCHEMA = re.compile(r"^[a-z][a-z0-9_]{0,62}\Z")
_lock = threading.Lock()


def schema_name(tenant: str) -> str:
    """The tenant's schema: ``ws_`` and its slug with ``-`` as ``_`` (slugs have no ``_``, so it is one-to-one)."""
    return SCHEMA_PREFIX + check_tenant_slug(tenant).replace("-", "_")


def tenant_of_schema(schema: str) -> str | None:
    """The tenant a ``ws_`` schema belongs to, or None for any other schema."""
    if not schema.startswith(SCHEMA_PREFIX) or "__" in schema:
        return None
    return schema.removeprefix(SCHEMA_PREFIX).replace("_", "-")


def quoted(schema: str) -> str:
    """A schema name checked to be one of ours, quoted for DDL (never user text)."""
    if not _SCHEMA.match(schema):
        raise ValueError(f"not a workspace schema name: {schema!r}")
    return f'"{schema}"'


def driver_url(url: str) -> str:
    """The URL with the psycopg (3) driver, whatever driver it named."""
    parsed = make_url(url)
    return parsed.set(drivername="postgresql+psycopg").render_as_string(hide_password=False)


@functools.cache
def _shared_engine(url: str) -> Engine:
    engine = create_engine(
        driver_url(url),
        pool_size=4,
        max_overflow=12,
        pool_pre_ping=True,
        pool_recycle=1800,
        connect_args={"options": "-c timezone=UTC", "prepare_threshold": None, "application_name": "pressroom-ws"},
    )
    event.listen(engine, "begin", _begin)
    event.listen(engine, "before_cursor_execute", _refuse_nul)
    return engine


def _refuse_nul(
    _conn: Connection, _cursor: Any, _statement: str, parameters: Any, _context: Any, executemany: bool
) -> None:
    for row in parameters if executemany else (parameters,):
        values = row.values() if isinstance(row, Mapping) else (row or ())
        if any(isinstance(value, str) and "\x00" in value for value in values):
            raise BadRequest("Text cannot contain NUL characters.", code="invalid_text")


def _begin(connection: Connection) -> None:
    options = connection.get_execution_options()
    schema = options.get(SCHEMA_OPTION)
    if schema is None:
        return  # the shared engine itself: schema DDL, listings
    path = quoted(schema)
    if options.get(READS_OPTION) or options.get(READ_ONLY_OPTION):
        mode = "READ ONLY" if options.get(READ_ONLY_OPTION) else "READ WRITE"
        connection.exec_driver_sql(
            f"SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, {mode}; SET LOCAL search_path TO {path}"
        )
    else:
        connection.exec_driver_sql(
            f"SET LOCAL search_path TO {path}; SELECT pg_advisory_xact_lock({_LOCK_CLASS}, hashtext('{schema}'))"
        )


def shared_engine(url: str) -> Engine:
    """The process's engine for the workspace database at ``url`` (no schema: for DDL and listings)."""
    with _lock:
        return _shared_engine(url)


def schema_engine(url: str, schema: str, *, read_only: bool = False) -> Engine:
    """An engine whose transactions run in ``schema`` (sharing the database's pool)."""
    quoted(schema)
    options: dict[str, Any] = {SCHEMA_OPTION: schema}
    if read_only:
        options[READ_ONLY_OPTION] = True
    return shared_engine(url).execution_options(**options)


def is_postgres(engine: Engine) -> bool:
    return engine.dialect.name == "postgresql"


def engine_schema(engine: Engine) -> str | None:
    """The schema a workspace engine works in (None: a SQLite engine or the shared one)."""
    value = engine.get_execution_options().get(SCHEMA_OPTION)
    return str(value) if value is not None else None


def schema_exists(url: str, schema: str) -> bool:
    with shared_engine(url).connect() as connection:
        found = connection.execute(text("SELECT 1 FROM pg_namespace WHERE nspname = :s"), {"s": schema}).first()
    return found is not None


def workspace_schemas(url: str) -> list[str]:
    """Every tenant workspace schema of the database (staging and held schemas left out)."""
    with shared_engine(url).connect() as connection:
        rows = connection.execute(
            text("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'ws\\_%' ORDER BY nspname")
        ).all()
    return [str(row[0]) for row in rows if tenant_of_schema(str(row[0])) is not None]


def create_schema(connection: Connection, schema: str) -> None:
    connection.exec_driver_sql(f"CREATE SCHEMA IF NOT EXISTS {quoted(schema)}")


def drop_schema(url: str, schema: str) -> None:
    """Drop a schema and everything in it (a deleted tenant, a staging schema that is done)."""
    with shared_engine(url).begin() as connection:
        connection.exec_driver_sql(f"DROP SCHEMA IF EXISTS {quoted(schema)} CASCADE")


def rename_schema(url: str, source: str, target: str) -> None:
    """Rename ``source`` to ``target`` in one transaction (``target`` must not exist)."""
    with shared_engine(url).begin() as connection:
        connection.exec_driver_sql(f"ALTER SCHEMA {quoted(source)} RENAME TO {quoted(target)}")


__all__ = [
    "READS_OPTION",
    "SCHEMA_OPTION",
    "SCHEMA_PREFIX",
    "create_schema",
    "drop_schema",
    "engine_schema",
    "is_postgres",
    "quoted",
    "rename_schema",
    "schema_engine",
    "schema_exists",
    "schema_name",
    "shared_engine",
    "tenant_of_schema",
    "workspace_schemas",
]
