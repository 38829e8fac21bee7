"""migrate_field on the real stack: API → outbox → relay → Prefect run in a real worker process, killed mid-way
(a type change, then a rename, over 5,000 documents)."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pytest
from sqlmodel import select

from tenant_runtime.actions import fields
from tenant_runtime.actions.documents import create_document, update_document
from tenant_runtime.workspace import Actor, Document, FieldDefinition, FieldMigration, Workspace
from tests.fixtures.stack import Pressroom
from tests.fixtures.worker_process import WorkerProcess

pytestmark = pytest.mark.integration
DOCUMENTS = 5000  # the figure: 25 batches of 200 per pass
BAD = (7, 2500, 4999)  # "n/a": cannot become a number


def _define_score(ws: Workspace, tenant: str) -> None:
    """A text field ``score`` on posts, added below the engine (no documents yet: one empty batch)."""
    with ws.transaction() as tx:
        _, operation = fields.request_field_change(
            tx, tenant, Actor.for_role("u-owner", "owner"), kind="post", change="add", field="score", type="text"
        )
    while not fields.apply_batch(ws, operation.id)["done"]:
        pass
    assert fields.finish_migration(ws, operation.id)["switched"]


def _migration(ws: Workspace, migration_id: str) -> FieldMigration:
    with ws.reader() as tx:
        return fields.get_migration(tx, migration_id)


def _definition(ws: Workspace) -> FieldDefinition:
    with ws.reader() as tx:
        found = tx.exec(select(FieldDefinition).where(FieldDefinition.kind == "post")).one()
        tx.expunge(found)
        return found


def _to_number(room: Pressroom, tenant_headers: dict[str, str], api: str) -> str:
    queued = room.api.post(
        f"{api}/fields/migrations",
        json={"kind": "post", "change": "change_type", "field": "score", "type": "number", "confirm": True},
        headers=tenant_headers,
    )
    assert queued.status_code == 202, queued.text
    return str(queued.json()["operation_id"])


def _wait_a_third_converted(ws: Workspace, migration_id: str) -> None:
    deadline = time.monotonic() + 120
    while True:
        running = _migration(ws, migration_id)
        if running.phase == "apply" and running.converted >= DOCUMENTS // 3:
            return
        assert running.phase in ("check", "apply") and time.monotonic() < deadline, running
        time.sleep(0.01)


def test_a_type_change_and_a_rename_over_thousands_of_documents_killed_mid_way_convert_each_once(
    pressroom_fs: Pressroom, tmp_path: Path
) -> None:
    """A type change with unconvertible values fails listing them (definition unchanged); once they are fixed,
    the same change is kill -9'd in the middle of its batches and a fresh worker goes on from the cursor."""
    room = pressroom_fs
    tenant = room.new_tenant("fields")
    ws = room.factory.open(tenant.slug)
    owner = Actor.for_role("u-owner", "owner")
    _define_score(ws, tenant.slug)
    started = time.monotonic()
    with ws.transaction() as tx:  # drafts below the engine: nothing for a worker to deliver
        ids = [
            create_document(
                tx, owner, slug=f"doc-{n:04d}", title=f"Doc {n}", body="", kind="post",
                fields={"score": "n/a" if n in BAD else str(n)},
            ).id
            for n in range(DOCUMENTS)
        ]  # fmt: skip
    seeded = time.monotonic() - started
    api, logs = f"/api/tenants/{tenant.slug}", tmp_path / "workers"

    # 1. Three values cannot convert: the check lists them, nothing is written, the definition stays text.
    first = WorkerProcess(room, [tenant.slug], logs)
    try:
        failed_id = _to_number(room, tenant.headers, api)
        failed = room.wait_operation(tenant, failed_id, ("failed", "succeeded", "dead"), timeout=120)
        assert failed["status"] == "failed", failed
        progress = failed["progress"]
        assert (progress["phase"], progress["total"], progress["checked"]) == ("failed", DOCUMENTS, DOCUMENTS)
        assert progress["unconvertible_count"] == len(BAD)
        assert sorted(u["slug"] for u in progress["unconvertible"]) == [f"doc-{n:04d}" for n in BAD]
        definition = _definition(ws)
        assert (definition.type, definition.status, definition.version) == ("text", "active", 1)
        with ws.reader() as tx:
            assert all(isinstance(d.fields["score"], str) for d in tx.exec(select(Document)))

        # 2. Fixed below the engine, asked again; the worker dies with about a third of the batches done.
        with ws.transaction() as tx:
            for n in BAD:
                update_document(tx, owner, ids[n], expected_version=1, fields={"score": str(n)})
        migration_id = _to_number(room, tenant.headers, api)
        _wait_a_third_converted(ws, migration_id)
        first.kill9()
    finally:
        first.stop()
    at_kill = _migration(ws, migration_id)
    killed_executions = Counter(first.executions(tenant.slug))
    assert at_kill.phase == "apply" and 0 < at_kill.converted < DOCUMENTS, "the run finished before the kill"
    definition = _definition(ws)
    assert (definition.type, definition.status) == ("text", "migrating")  # not switched mid-way
    with ws.reader() as tx:
        values = {d.id: d.fields["score"] for d in tx.exec(select(Document))}
    assert all(isinstance(values[i], int | float) for i in ids if i <= str(at_kill.cursor))  # before the cursor
    assert all(isinstance(values[i], str) for i in ids if i > str(at_kill.cursor))  # after it, untouched

    resumer = WorkerProcess(room, [tenant.slug], logs)
    try:
        done = room.wait_operation(tenant, migration_id, timeout=120)
        assert done["status"] == "succeeded", done
        assert [a["number"] for a in done["attempts"]] == [1, 2]
        total_executions = Counter(resumer.executions(tenant.slug))
    finally:
        resumer.stop()
    # One probe log for both workers: what the fresh worker ran is the difference.
    resumed = total_executions - killed_executions
    remaining = DOCUMENTS - at_kill.converted
    assert resumed["check_batch"] == 0  # every check batch came from Prefect's cache
    assert resumed["apply_batch"] == remaining // 200 + 1  # from the cursor on, the last one finding it done
    assert resumed["finish_migration"] == 1

    final = _migration(ws, migration_id)
    assert (final.phase, final.converted, final.unconvertible_count) == ("done", DOCUMENTS, 0)  # each doc once
    progress = done["progress"]
    assert (progress["total"], progress["done"]) == (DOCUMENTS, DOCUMENTS)  # 100 %
    definition = _definition(ws)
    assert (definition.type, definition.status, definition.version) == ("number", "active", 2)
    with ws.reader() as tx:
        converted = {d.slug: d.fields["score"] for d in tx.exec(select(Document))}
    assert converted == {f"doc-{n:04d}": n for n in range(DOCUMENTS)}

    # 3. A rename of the same field over every document, killed the same way, resumed from its cursor.
    renamer = WorkerProcess(room, [tenant.slug], logs)
    try:
        renamed = room.api.post(
            f"{api}/fields/migrations",
            json={"kind": "post", "change": "rename", "field": "score", "to": "points", "confirm": True},
            headers=tenant.headers,
        )
        assert renamed.status_code == 202, renamed.text
        rename_id = str(renamed.json()["operation_id"])
        _wait_a_third_converted(ws, rename_id)
        renamer.kill9()
    finally:
        renamer.stop()
    before_resume = Counter(renamer.executions(tenant.slug))
    at_rename_kill = _migration(ws, rename_id)
    assert 0 < at_rename_kill.converted < DOCUMENTS, "the rename finished before the kill"
    assert _definition(ws).name == "score"  # not switched mid-way
    resumer = WorkerProcess(room, [tenant.slug], logs)
    try:
        done = room.wait_operation(tenant, rename_id, timeout=120)
        assert done["status"] == "succeeded", done
        assert [a["number"] for a in done["attempts"]] == [1, 2]
        after = Counter(resumer.executions(tenant.slug))
    finally:
        resumer.stop()
    resumed = after - before_resume
    assert resumed["apply_batch"] == (DOCUMENTS - at_rename_kill.converted) // 200 + 1  # from the cursor on
    assert resumed["finish_migration"] == 1
    final = _migration(ws, rename_id)
    assert (final.phase, final.converted) == ("done", DOCUMENTS)  # each document once
    definition = _definition(ws)
    assert (definition.name, definition.type, definition.status) == ("points", "number", "active")
    with ws.reader() as tx:
        moved = {d.slug: d.fields for d in tx.exec(select(Document))}
    assert moved == {f"doc-{n:04d}": {"points": n} for n in range(DOCUMENTS)}
    print(f"seeded {DOCUMENTS} in {seeded:.1f} s; killed at {at_kill.converted}, {at_rename_kill.converted} converted")
