"""Rows written as plain values (the nightly fan-out's hot path) and the statement cache every workspace shares."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlmodel import select

from tenant_runtime.actions.operations import operation_row, operation_values
from tenant_runtime.workflows import ExportBackupParameters
from tenant_runtime.workspace import AuditEntry, ChoreRun, Document, Operation, Workspace, WorkspaceFactory
from tenant_runtime.workspace.access import SYSTEM
from tenant_runtime.workspace.open import StatementCache
from tenant_runtime.workspace.rows import insert_values, row_values
from tests.fixtures.workspaces import sqlite_only

DUE = datetime(2026, 12, 1, 3, 12, tzinfo=UTC)


def test_row_values_fill_in_the_models_defaults_and_refuse_unknown_or_missing_columns() -> None:
    entry = row_values(AuditEntry, action="a.b", actor="system", object_type="site", object_id="acme")
    assert "id" not in entry and entry["data"] == {} and entry["operation_id"] is None  # the database numbers it
    assert isinstance(entry["created_at"], datetime)  # the default factory ran
    assert row_values(AuditEntry, action="a", actor="s", object_type="t", object_id="i")["data"] is not entry["data"]
    with pytest.raises(TypeError, match="no column colour"):
        row_values(AuditEntry, action="a", actor="s", object_type="t", object_id="i", colour="red")
    with pytest.raises(TypeError, match="needs a value for decision"):
        row_values(ChoreRun, chore="export_backup", fire_date="2026-12-01", fired_at=DUE)


def test_an_operation_inserted_as_values_reads_back_like_one_the_orm_added(workspace: Workspace) -> None:
    def parameters(operation_id: str) -> ExportBackupParameters:
        return ExportBackupParameters(tenant=workspace.tenant, operation_id=operation_id, backup_id="b", reason="x")

    with workspace.transaction() as tx:
        tx.add(operation_row(SYSTEM, parameters("op_orm"), scheduled_for=DUE))
        insert_values(tx, Operation, operation_values(SYSTEM, parameters("op_core"), scheduled_for=DUE))
        keyed = operation_values(SYSTEM, parameters("op_keyed"), scheduled_for=DUE, idempotency_key="chore:key")
        insert_values(tx, Operation, keyed)
    with workspace.reader() as tx:
        rows = {o.id: o for o in tx.exec(select(Operation))}
    skip = {"id", "idempotency_key", "parameters", "created_at", "updated_at"}
    orm, core = (rows[k].model_dump(exclude=skip) for k in ("op_orm", "op_core"))
    assert orm == core and core["status"] == "scheduled" and core["restarts"] == 0
    assert rows["op_core"].parameters == {**rows["op_orm"].parameters, "operation_id": "op_core"}
    assert rows["op_keyed"].idempotency_key == "chore:key"


def test_versioned_rows_are_refused_as_values(workspace: Workspace) -> None:
    with workspace.transaction() as tx, pytest.raises(TypeError, match="versioned"):
        insert_values(tx, Document, row_values(Document, slug="a", title="A"))


@sqlite_only  # a PostgreSQL shard's workspaces share one engine already
def test_every_workspace_engine_shares_one_statement_cache_through_its_execution_options(
    workspace_factory: WorkspaceFactory,
) -> None:
    acme, globex = workspace_factory.create("acme"), workspace_factory.create("globex")
    cache = acme.engine.get_execution_options()["compiled_cache"]
    assert isinstance(cache, StatementCache) and globex.engine.get_execution_options()["compiled_cache"] is cache
    assert acme.engine.dialect is globex.engine.dialect  # the cache is keyed by the dialect too
    query = select(AuditEntry).where(AuditEntry.action == "fan.out.test")
    with acme.reader() as tx:
        list(tx.exec(query))
    size = len(cache)
    with globex.reader() as tx:
        list(tx.exec(query))  # compiled for acme: served from the cache, nothing added
    assert len(cache) == size


def test_the_statement_cache_drops_its_older_half_past_its_limit() -> None:
    cache = StatementCache(limit=10)
    for n in range(11):
        cache[n] = f"compiled {n}"
    assert len(cache) == 5 and sorted(cache) == [6, 7, 8, 9, 10]
