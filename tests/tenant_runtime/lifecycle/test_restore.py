"""Restore to T below the engine: the dry run names each change and writes nothing; the restore puts every
document back as new versions; undoing it (an import of its snapshot) gives the exact state back."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tenant_runtime.actions.backups import request_restore, undo_last_restore
from tenant_runtime.errors import BadRequest
from tenant_runtime.ids import utcnow
from tenant_runtime.lifecycle import export, imports
from tenant_runtime.lifecycle.restore import apply_restore, plan_restore
from tenant_runtime.workspace import Document, Workspace
from tests.tenant_runtime.content import publish, republish
from tests.tenant_runtime.lifecycle.helpers import OWNER
from tests.tenant_runtime.lifecycle.test_import import site_objects, site_rows


def _write_snapshot(ws: Workspace, snapshot_id: str) -> dict[str, Any]:
    export.take_snapshot(ws, snapshot_id)
    tables = export.dump_tables(ws, snapshot_id)
    frozen = export.freeze_objects(ws, snapshot_id)
    for chunk in range(frozen["chunks"]):
        export.copy_objects(ws, snapshot_id, chunk)
    return export.finish_backup(ws, snapshot_id, export.write_manifest(ws, snapshot_id, tables, frozen["chunks"]))


def _documents(ws: Workspace) -> dict[str, tuple[str, str, int | None]]:
    with ws.reader() as tx:
        return {d.slug: (d.status, d.body, d.published_version) for d in tx.query(Document).all()}


def test_restore_to_t_then_undo_gives_back_the_exact_state(workspace: Workspace) -> None:
    about, _ = publish(workspace, "about", body="first words")
    time.sleep(0.01)
    at = utcnow()
    time.sleep(0.01)
    republish(workspace, about.id, body="second words")
    publish(workspace, "later", body="after T")
    before_rows, before_objects = site_rows(workspace), site_objects(workspace)

    with workspace.reader() as tx:
        plan = plan_restore(tx, at)
    later = next(d.id for d in _rows_docs(workspace) if d.slug == "later")
    assert {c["id"] for c in plan.changes} == {about.id, later}
    change = next(c for c in plan.changes if c["id"] == about.id)
    assert (change["before"]["version"], change["after"]["version"]) == (2, 1)
    assert site_rows(workspace) == before_rows  # the dry run wrote nothing

    with workspace.transaction() as tx:
        operation, snapshot = request_restore(tx, workspace.tenant, OWNER, at)
        operation_id, snapshot_id = operation.id, snapshot.id
    written = _write_snapshot(workspace, snapshot_id)
    with workspace.transaction() as tx:
        applied = apply_restore(tx, "test", operation_id, at, snapshot_id, workspace.store)
    with workspace.transaction() as tx:
        again = apply_restore(tx, "test", operation_id, at, snapshot_id, workspace.store)
    assert again == applied  # a rerun applies nothing twice
    documents = _documents(workspace)
    assert documents["about"][:2] == ("published", "first words")
    assert documents["later"][0] == "draft"  # created after T: off the site, kept
    assert applied.withdrawals and applied.items
    _settle(workspace, operation_id)

    with workspace.transaction() as tx:
        undo = undo_last_restore(tx, workspace.tenant, OWNER)
        undo_id = undo.id
    source = imports.Source(workspace.tenant, snapshot_id, written["manifest_sha256"])
    verified = imports.verify_import(workspace, source)
    imports.stage_import(workspace, source, undo_id)
    imports.swap_import(workspace, source, undo_id, "test")
    for chunk in range(verified["chunks"]):
        imports.place_import(workspace, source, undo_id, chunk)
    imports.finish_import(workspace, source, undo_id)

    assert site_rows(workspace) == before_rows
    assert site_objects(workspace) == before_objects


def _rows_docs(ws: Workspace) -> list[Document]:
    with ws.reader() as tx:
        return list(tx.query(Document).all())


def _settle(ws: Workspace, operation_id: str) -> None:
    """What the worker does when the restore's run succeeds (undo takes only finished restores)."""
    from tenant_runtime.actions import operations
    from tenant_runtime.workflows import Carried

    with ws.transaction() as tx:
        op = operations.get_operation(tx, operation_id)
        operations.claim(
            tx,
            Carried(operation_id=operation_id, workflow=op.flow_name, fields=dict(op.parameters)),
            flow_run_id="run-1",
        )
    with ws.transaction() as tx:
        operations.finish(tx, operation_id, "succeeded")


def test_a_restore_point_needs_an_offset_and_the_history_to_cover_it(workspace: Workspace) -> None:
    with workspace.transaction() as tx, pytest.raises(BadRequest) as naive:
        request_restore(tx, workspace.tenant, OWNER, utcnow().replace(tzinfo=None))
    assert naive.value.details["field"] == "at"
    with workspace.transaction() as tx, pytest.raises(BadRequest) as early:
        request_restore(tx, workspace.tenant, OWNER, utcnow().replace(year=2000))
    assert early.value.code == "restore_point_unavailable"


def test_restore_to_t_puts_the_site_settings_of_t_back_and_stored_pages_stop_being_current(
    workspace: Workspace,
) -> None:
    from tenant_runtime.actions.site import configure_site
    from tenant_runtime.workspace import SiteState

    with workspace.transaction() as tx:
        configure_site(tx, OWNER, title="Old Times", description="Then.", language="de")
    publish(workspace, "about", body="words")
    time.sleep(0.01)
    at = utcnow()
    time.sleep(0.01)
    with workspace.transaction() as tx:
        state, _ = configure_site(tx, OWNER, title="New Times", description="Now.", language="fr")
        version = state.settings_version

    with workspace.reader() as tx:
        plan = plan_restore(tx, at)
    site = next(c for c in plan.changes if c["entity"] == "site")
    assert (site["before"]["title"], site["after"]["title"]) == ("New Times", "Old Times")
    assert (site["before"]["language"], site["after"]["language"]) == ("fr", "de")
    assert site["after"]["description"] == "Then." and site["after"]["timezone"] == "UTC"

    with workspace.transaction() as tx:
        operation, snapshot = request_restore(tx, workspace.tenant, OWNER, at)
        operation_id, snapshot_id = operation.id, snapshot.id
    _write_snapshot(workspace, snapshot_id)
    with workspace.transaction() as tx:
        applied = apply_restore(tx, "test", operation_id, at, snapshot_id, workspace.store)
    assert applied.items  # the site's settings are on every page: every published page is delivered again
    with workspace.reader() as tx:
        restored = tx.get(SiteState, 1)
        assert restored is not None
        assert (restored.title, restored.description, restored.language) == ("Old Times", "Then.", "de")
        assert restored.settings_version == version + 1
