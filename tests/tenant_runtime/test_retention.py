"""prune_policies' steps below the engine: exactly the policy's versions stay, pins always stay,
spillover is deleted best-effort and what fails is retried by the next run."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlmodel import col, select

from tenant_runtime.actions import retention
from tenant_runtime.actions.documents import create_document, update_document
from tenant_runtime.actions.releases import ReleaseSpec, create_release
from tenant_runtime.errors import BadRequest, Forbidden
from tenant_runtime.ids import utcnow
from tenant_runtime.storage import MemoryStore
from tenant_runtime.versions import SPILL_THRESHOLD
from tenant_runtime.workspace import SYSTEM, Actor, Backup, Document, Revision, SpilloverPending, Workspace

BIG = "lorem ipsum " * (SPILL_THRESHOLD // 10)


def _document(ws: Workspace, slug: str, versions: int, *, body: str = "v", days_old: int = 100) -> str:
    """A document with ``versions`` versions, each ``days_old`` days old, with bodies ``{body}{n}``."""
    with ws.transaction() as tx:
        doc = create_document(tx, SYSTEM, slug=slug, title="T", body=f"{body}1", kind="page")
        for n in range(2, versions + 1):
            update_document(tx, SYSTEM, doc.id, expected_version=n - 1, body=f"{body}{n}")
        tx.flush()
        for revision in tx.exec(select(Revision).where(Revision.document_id == doc.id)):
            revision.created_at = utcnow() - timedelta(days=days_old, minutes=100 - revision.version)
            tx.add(revision)
        return doc.id


def _versions(ws: Workspace, document_id: str) -> list[int]:
    with ws.reader() as tx:
        rows = tx.exec(
            select(Revision.version).where(Revision.document_id == document_id).order_by(col(Revision.version))
        )
        return list(rows)


def test_prune_keeps_exactly_the_last_n_and_the_pins(workspace: Workspace) -> None:
    doc = _document(workspace, "many", 12)
    young = _document(workspace, "young", 6, days_old=1)
    with workspace.transaction() as tx:
        retention.set_policy(tx, SYSTEM, "document", keep_last=3, keep_days=30)
        tx.add(Backup(id="bak_old", status="succeeded", snapshot_at=utcnow() - timedelta(days=100, minutes=95)))
    with workspace.transaction() as tx:
        document = tx.get(Document, doc)
        assert document is not None
        document.status, document.published_version = "published", 2
        tx.add(document)
        create_release(tx, "acme", SYSTEM, ReleaseSpec(documents=((doc, 12),)), publish_at=utcnow() + timedelta(days=2))

    facts = retention.prune_versions(workspace, "op_prune")

    # last 3 (10, 11, 12), published (2), the backup's restore point (5: newest by then), scheduled (12)
    assert _versions(workspace, doc) == [2, 5, 10, 11, 12]
    assert _versions(workspace, young) == [1, 2, 3, 4, 5, 6]  # younger than 30 days
    assert facts["documents_pruned"] == 7
    assert retention.prune_versions(workspace, "op_again")["documents_pruned"] == 0  # nothing twice


def test_freed_spillover_is_deleted_and_a_failed_delete_waits_for_the_next_run(workspace: Workspace) -> None:
    store = workspace.store.store
    assert isinstance(store, MemoryStore)
    doc = _document(workspace, "bulky", 4, body=BIG)
    with workspace.transaction() as tx:
        retention.set_policy(tx, SYSTEM, "document", keep_last=1, keep_days=0)

    spilled = retention.spill_bodies(workspace)
    pruned = retention.prune_versions(workspace, "op_1")
    store.fail_next(1)
    first = retention.delete_spillover(workspace)
    second = retention.delete_spillover(workspace)

    assert spilled["spilled"] == 3 and pruned["documents_pruned"] == 3 and pruned["spillover_recorded"] == 3
    assert first["spillover_deleted"] == 2 and len(first["spillover_failed"]) == 1
    assert "ConnectionError" in first["spillover_failed"][0]["error"] and first["spillover_left"] == 1
    assert second == {"spillover_deleted": 1, "spillover_failed": [], "spillover_left": 0}
    assert workspace.store.list("versions/") == [] and _versions(workspace, doc) == [4]
    with workspace.reader() as tx:
        assert tx.exec(select(SpilloverPending)).all() == []


def test_a_body_shared_with_a_kept_version_is_not_deleted(workspace: Workspace) -> None:
    with workspace.transaction() as tx:
        doc = create_document(tx, SYSTEM, slug="shared", title="T", body=BIG, kind="page")
        update_document(tx, SYSTEM, doc.id, expected_version=1, body="small")
        update_document(tx, SYSTEM, doc.id, expected_version=2, body=BIG + " ")
        update_document(tx, SYSTEM, doc.id, expected_version=3, body="tiny")
        other = create_document(tx, SYSTEM, slug="twin", title="T", body=BIG, kind="page")
        update_document(tx, SYSTEM, other.id, expected_version=1, body="x")
    retention.spill_bodies(workspace)
    with workspace.transaction() as tx:
        for revision in tx.exec(select(Revision).where(Revision.document_id == doc.id)):
            revision.created_at = utcnow() - timedelta(days=400)
            tx.add(revision)
        retention.set_policy(tx, SYSTEM, "document", keep_last=1, keep_days=30)

    pruned = retention.prune_versions(workspace, "op_1")
    retention.delete_spillover(workspace)

    assert (pruned["documents_pruned"], pruned["spillover_recorded"]) == (3, 1)
    # the twin's version 1 holds the same body under the same content-hash key: it stays readable
    assert len(workspace.store.list("versions/")) == 1
    assert _versions(workspace, other.id) == [1, 2]


def test_policies_are_checked_and_need_site_admin(workspace: Workspace) -> None:
    editor = Actor.for_role("tok_e", "editor")
    with workspace.transaction() as tx:
        with pytest.raises(Forbidden):
            retention.set_policy(tx, editor, "document", keep_last=5, keep_days=1)
        with pytest.raises(BadRequest) as zero:
            retention.set_policy(tx, SYSTEM, "document", keep_last=0, keep_days=1)
        with pytest.raises(BadRequest) as unknown:
            retention.set_policy(tx, SYSTEM, "media", keep_last=5, keep_days=1)
        state = retention.retention_state(tx)
    assert (zero.value.code, unknown.value.code) == ("invalid_retention_policy", "unknown_entity_type")
    assert state["policies"][0] == {"entity_type": "document", "keep_last": 50, "keep_days": 90, "default": True}


def test_the_nightly_chore_queues_one_prune_per_tenant_and_night(workspace: Workspace) -> None:
    from datetime import UTC, datetime

    from tenant_runtime.chores import CHORES, EXISTS, QUEUED, fan_out
    from tenant_runtime.workspace import Operation

    prune = CHORES["prune_policies"]
    fire = datetime(2026, 12, 2, 4, 0, tzinfo=UTC)

    first = fan_out(workspace, prune, fire, fire)
    again = fan_out(workspace, prune, fire, fire + timedelta(minutes=1))

    assert (first, again) == (QUEUED, EXISTS)
    assert prune.cron == "0 4 * * *"
    with workspace.reader() as tx:
        [operation] = tx.exec(select(Operation).where(Operation.flow_name == "prune_policies")).all()
    assert operation.idempotency_key == "prune_policies:acme:2026-12-02"
    assert operation.status == "scheduled" and operation.parameters["fire_date"] == "2026-12-02"


def test_a_spilled_body_is_read_back_by_any_orm_reader(workspace: Workspace) -> None:
    doc = _document(workspace, "readable", 2, body=BIG)
    assert retention.spill_bodies(workspace)["spilled"] == 1

    with workspace.reader() as tx:
        old = tx.exec(select(Revision).where(Revision.document_id == doc, Revision.version == 1)).one()
        raw = tx.connection().exec_driver_sql("SELECT body, body_key FROM revision WHERE version = 1").one()

    # a restore copying version 1 (tenant_runtime.lifecycle.restore) sees its text, not the empty column
    assert old.body == f"{BIG}1" and old.body_key is not None
    assert raw[0] == "" and raw[1] == old.body_key
