"""A PostgreSQL workspace handed between shards: as one SQLite workspace file, like a SQLite one.

A shard move carries a tenant's workspace as a SQLite file (``dispatch/runtime/shard.py``).
On a shard whose workspaces are on PostgreSQL the same steps act on the tenant's schema:

- ``hold``: the schema's rows as of one moment into the hand-over file, then the schema
  renamed to ``wsh_{slug}`` (out of service: no ``ws_`` schema, so not listed or opened);
- ``unhold`` (the move was called off): the held schema renamed back;
- ``release`` (the move is done): the held schema dropped;
- ``install`` (the target): the file's rows into a staging schema ``wsi_{slug}`` built by
  the revision chain at the file's revision, then, in one transaction, any ``ws_{slug}``
  (an earlier install) dropped and the staging schema renamed to it.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import text

from tenant_runtime.lifecycle.pg_copy import copy_to_sqlite, replace_from_sqlite
from tenant_runtime.lifecycle.sqlite_files import connect, schema_revision
from tenant_runtime.settings import RuntimeSettings
from tenant_runtime.workspace import postgres
from tenant_runtime.workspace.migrations import migrate
from tenant_runtime.workspace.open import workspace_engine, workspace_url

HELD_PREFIX = "wsh_"
INSTALL_PREFIX = "wsi_"


def held_schema(tenant: str) -> str:
    return HELD_PREFIX + postgres.schema_name(tenant).removeprefix(postgres.SCHEMA_PREFIX)


def _install_schema(tenant: str) -> str:
    return INSTALL_PREFIX + postgres.schema_name(tenant).removeprefix(postgres.SCHEMA_PREFIX)


def hold(settings: RuntimeSettings, tenant: str, snapshot: Path) -> None:
    """Write the tenant's rows into ``snapshot`` and take its schema out of service."""
    url = workspace_url(settings)
    engine = workspace_engine(settings, tenant)
    with engine.begin() as conn:  # the writer lock: nothing commits between the copy and the rename
        copy_to_sqlite(conn, snapshot, busy_timeout_ms=settings.sqlite_busy_timeout_ms)
    postgres.drop_schema(url, held_schema(tenant))
    postgres.rename_schema(url, postgres.schema_name(tenant), held_schema(tenant))


def is_held(settings: RuntimeSettings, tenant: str) -> bool:
    return postgres.schema_exists(workspace_url(settings), held_schema(tenant))


def unhold(settings: RuntimeSettings, tenant: str) -> None:
    if is_held(settings, tenant):
        postgres.rename_schema(workspace_url(settings), held_schema(tenant), postgres.schema_name(tenant))


def release(settings: RuntimeSettings, tenant: str) -> None:
    postgres.drop_schema(workspace_url(settings), held_schema(tenant))


def install(settings: RuntimeSettings, tenant: str, snapshot: Path) -> None:
    """The tenant's workspace from a SQLite workspace file, replacing any it had here."""
    url = workspace_url(settings)
    with connect(snapshot, read_only=True) as db:
        revision = schema_revision(db)
    staging, live = _install_schema(tenant), postgres.schema_name(tenant)
    postgres.drop_schema(url, staging)
    engine = postgres.schema_engine(url, staging)
    migrate(engine, to=revision)
    with engine.begin() as conn:
        replace_from_sqlite(conn, snapshot, busy_timeout_ms=settings.sqlite_busy_timeout_ms)
        conn.execute(text("DELETE FROM search_index"))
        conn.execute(text("DELETE FROM search_document"))
    with postgres.shared_engine(url).begin() as conn:
        conn.exec_driver_sql(f"DROP SCHEMA IF EXISTS {postgres.quoted(live)} CASCADE")
        conn.exec_driver_sql(f"ALTER SCHEMA {postgres.quoted(staging)} RENAME TO {postgres.quoted(live)}")


__all__ = ["HELD_PREFIX", "INSTALL_PREFIX", "held_schema", "hold", "install", "is_held", "release", "unhold"]
