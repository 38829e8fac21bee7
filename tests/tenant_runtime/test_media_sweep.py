"""The sweep of the trash below the engine: proofs, reports, and crashes at every step of a purge."""

from __future__ import annotations

import io
import os
from datetime import timedelta

import pytest
from PIL import Image
from sqlmodel import col, select

from tenant_runtime.actions import documents, fields
from tenant_runtime.actions import media as actions
from tenant_runtime.errors import BadRequest
from tenant_runtime.ids import utcnow
from tenant_runtime.media import sweep
from tenant_runtime.workspace import SYSTEM, AuditEntry, Media, Revision, Workspace


def png() -> bytes:
    out = io.BytesIO()
    Image.frombytes("RGB", (2, 2), os.urandom(12)).save(out, format="PNG")
    return out.getvalue()


def upload(ws: Workspace, name: str = "a.png") -> Media:
    with ws.transaction() as tx:
        return actions.upload_media(tx, ws.store, SYSTEM, name=name, data=png())


def trash(ws: Workspace, *media: Media, days_ago: float = 31) -> None:
    with ws.transaction() as tx:
        for item in media:
            row = actions.delete_media(tx, SYSTEM, item.id)
            row.deleted_at = utcnow() - timedelta(days=days_ago)
            tx.add(row)


def purges(ws: Workspace, media_id: str) -> int:
    with ws.reader() as tx:
        query = select(AuditEntry).where(AuditEntry.action == "media.purge", AuditEntry.object_id == media_id)
        return len(tx.exec(query).all())


def row(ws: Workspace, media_id: str) -> Media | None:
    with ws.reader() as tx:
        return tx.get(Media, media_id)


def test_only_files_past_retention_in_the_trash_are_candidates(workspace: Workspace) -> None:
    old, recent, live = upload(workspace), upload(workspace), upload(workspace)
    trash(workspace, old)
    trash(workspace, recent, days_ago=29)
    assert sweep.expired(workspace) == [old.id]
    assert sweep.expired(workspace, now=utcnow() + timedelta(days=2)) == [old.id, recent.id]
    assert live.id not in sweep.expired(workspace, now=utcnow() + timedelta(days=400))
    with workspace.transaction() as tx:
        actions.set_policy(tx, SYSTEM, retention_days=60)
    assert sweep.expired(workspace) == []


def test_an_unreferenced_file_is_purged_once_and_a_referenced_one_is_kept_and_reported(workspace: Workspace) -> None:
    free, used = upload(workspace), upload(workspace)
    with workspace.transaction() as tx:
        doc = documents.create_document(tx, SYSTEM, slug="p", title="P", body=f"![x](media:{used.id})", kind="page")
    trash(workspace, free, used)

    scanned = sweep.scan(workspace, sweep.expired(workspace))
    assert scanned["free"] == [free.id]
    assert scanned["kept"] == {
        used.id: [
            {"document_id": doc.id, "slug": "p", "version": None, "in_body": True, "fields": [], "default_of": None},
            {"document_id": doc.id, "slug": "p", "version": 1, "in_body": True, "fields": [], "default_of": None},
        ]
    }

    assert sweep.purge(workspace, free.id)["result"] == sweep.PURGED
    assert row(workspace, free.id) is None and not workspace.store.exists(free.key)
    assert sweep.purge(workspace, free.id) == {"media_id": free.id, "result": sweep.PURGED, "key": free.key}
    assert purges(workspace, free.id) == 1

    kept = sweep.purge(workspace, used.id)
    assert kept["result"] == sweep.KEPT and kept["references"][0]["document_id"] == doc.id
    stays = row(workspace, used.id)
    assert stays is not None and stays.status == "deleted" and workspace.store.exists(used.key)


def test_a_reference_that_only_an_old_version_still_holds_keeps_the_file_until_that_version_goes(
    workspace: Workspace,
) -> None:
    media = upload(workspace)
    with workspace.transaction() as tx:
        doc = documents.create_document(tx, SYSTEM, slug="p", title="P", body=f"![x](media:{media.id})", kind="page")
    with workspace.transaction() as tx:
        documents.update_document(tx, SYSTEM, doc.id, expected_version=1, body="nothing embedded")
    trash(workspace, media)
    assert sweep.purge(workspace, media.id)["result"] == sweep.KEPT
    with workspace.transaction() as tx:  # what prune_policies does to a version past its retention
        for revision in tx.exec(select(Revision).where(Revision.document_id == doc.id, col(Revision.version) == 1)):
            tx.delete(revision)
    assert sweep.purge(workspace, media.id)["result"] == sweep.PURGED


def test_a_file_restored_or_back_within_retention_is_skipped(workspace: Workspace) -> None:
    media = upload(workspace)
    trash(workspace, media)
    [candidate] = sweep.expired(workspace)
    with workspace.transaction() as tx:
        row_ = tx.get(Media, candidate)
        assert row_ is not None
        row_.deleted_at = utcnow()  # deleted again just now: its window starts over
        tx.add(row_)
    assert sweep.purge(workspace, candidate)["result"] == sweep.SKIPPED
    assert workspace.store.exists(media.key)


def _media_field(ws: Workspace, name: str = "hero", default: str | None = None) -> None:
    """A custom ``media`` field on posts, added through its migration run to the end."""
    with ws.transaction() as tx:
        _, operation = fields.request_field_change(
            tx, "acme", SYSTEM, kind="post", change="add", field=name, type="media", default=default
        )
    while not fields.check_batch(ws, operation.id)["done"]:
        pass
    while not fields.apply_batch(ws, operation.id)["done"]:
        pass
    fields.finish_migration(ws, operation.id)


def test_a_file_named_only_by_a_custom_media_field_is_kept_and_reported(workspace: Workspace) -> None:
    _media_field(workspace)
    hero = upload(workspace)
    with workspace.transaction() as tx:
        doc = documents.create_document(
            tx, SYSTEM, slug="p", title="P", body="no embeds", kind="post", fields={"hero": hero.id}
        )
    trash(workspace, hero)

    scanned = sweep.scan(workspace, sweep.expired(workspace))
    assert scanned["free"] == []
    assert scanned["kept"][hero.id][0] == {
        "document_id": doc.id,
        "slug": "p",
        "version": None,
        "in_body": False,
        "fields": ["hero"],
        "default_of": None,
    }
    kept = sweep.purge(workspace, hero.id)
    assert kept["result"] == sweep.KEPT and kept["references"][0]["fields"] == ["hero"]
    assert workspace.store.exists(hero.key)

    # The field is cleared: the kept version 1 still names the file, so it stays until that version goes.
    with workspace.transaction() as tx:
        documents.update_document(tx, SYSTEM, doc.id, expected_version=1, fields={"hero": None})
    assert sweep.purge(workspace, hero.id)["references"] == [
        {"document_id": doc.id, "slug": "p", "version": 1, "in_body": False, "fields": ["hero"], "default_of": None}
    ]
    with workspace.transaction() as tx:
        for revision in tx.exec(select(Revision).where(Revision.document_id == doc.id, col(Revision.version) == 1)):
            tx.delete(revision)
    assert sweep.purge(workspace, hero.id)["result"] == sweep.PURGED


def test_a_media_field_cannot_name_a_file_being_swept(workspace: Workspace) -> None:
    _media_field(workspace)
    media = upload(workspace)
    trash(workspace, media)
    assert sweep.begin_purge(workspace, media.id)["result"] == "purging"
    with workspace.transaction() as tx, pytest.raises(BadRequest) as refused:
        documents.create_document(tx, SYSTEM, slug="late", title="L", body="", kind="post", fields={"hero": media.id})
    assert refused.value.code == "media_not_found"
    with workspace.transaction() as tx, pytest.raises(BadRequest) as unknown:
        documents.create_document(
            tx, SYSTEM, slug="late", title="L", body="", kind="post", fields={"hero": "med_" + "0" * 26}
        )
    assert unknown.value.code == "media_not_found"


def test_a_file_a_media_fields_default_names_is_kept_until_the_default_changes(workspace: Workspace) -> None:
    fallback = upload(workspace)
    with workspace.transaction() as tx, pytest.raises(BadRequest) as unknown:
        fields.request_field_change(
            tx, "acme", SYSTEM, kind="post", change="add", field="hero", type="media", default="med_" + "0" * 26
        )
    assert unknown.value.code == "media_not_found"
    _media_field(workspace, default=fallback.id)
    trash(workspace, fallback)

    kept = sweep.purge(workspace, fallback.id)
    assert kept["result"] == sweep.KEPT
    assert kept["references"] == [
        {
            "document_id": None,
            "slug": None,
            "version": None,
            "in_body": False,
            "fields": ["hero"],
            "default_of": "post.hero",
        }
    ]
    with workspace.transaction() as tx:  # the field goes (no document ever had a value)
        _, operation = fields.request_field_change(tx, "acme", SYSTEM, kind="post", change="remove", field="hero")
    while not fields.apply_batch(workspace, operation.id)["done"]:
        pass
    fields.finish_migration(workspace, operation.id)
    assert sweep.purge(workspace, fallback.id)["result"] == sweep.PURGED


@pytest.mark.parametrize("crash_after", ["begin", "delete"])
def test_a_crash_at_any_step_is_finished_by_the_next_attempt_and_deletes_nothing_twice(
    workspace: Workspace, crash_after: str
) -> None:
    media = upload(workspace)
    trash(workspace, media)
    started = sweep.begin_purge(workspace, media.id)
    assert started["result"] == "purging"
    if crash_after == "delete":
        assert workspace.store.delete(started["key"]) is True
    # Meanwhile: the site no longer serves it, nobody can embed it, it cannot be restored.
    with workspace.transaction() as tx, pytest.raises(BadRequest) as refused:
        documents.create_document(tx, SYSTEM, slug="late", title="Late", body=f"![x](media:{media.id})", kind="page")
    assert refused.value.code == "media_not_found"
    # The next run finds it half-done whatever the retention says now, and finishes it.
    with workspace.transaction() as tx:
        actions.set_policy(tx, SYSTEM, retention_days=365)
    assert sweep.expired(workspace) == [media.id]
    assert sweep.purge(workspace, media.id) == {"media_id": media.id, "result": sweep.PURGED, "by_this_run": True}
    assert row(workspace, media.id) is None and not workspace.store.exists(media.key)
    assert sweep.purge(workspace, media.id)["result"] == sweep.PURGED
    assert purges(workspace, media.id) == 1
    assert sweep.expired(workspace) == []


def test_finishing_refuses_a_file_that_was_never_proven_free(workspace: Workspace) -> None:
    media = upload(workspace)
    trash(workspace, media)
    with pytest.raises(RuntimeError, match="not purging"):
        sweep.finish_purge(workspace, media.id)
    assert row(workspace, media.id) is not None


def test_the_sweep_stays_inside_its_tenant(two_tenants: tuple[Workspace, Workspace]) -> None:
    acme, globex = two_tenants
    mine, theirs = upload(acme), upload(globex)
    trash(acme, mine)
    trash(globex, theirs)
    assert sweep.expired(acme) == [mine.id]
    assert sweep.purge(acme, theirs.id)["result"] == sweep.PURGED  # unknown here: nothing to do
    assert globex.store.exists(theirs.key) and row(globex, theirs.id) is not None


def test_the_nightly_chore_queues_one_sweep_per_tenant_and_night_at_two(workspace: Workspace) -> None:
    from datetime import UTC, datetime

    from tenant_runtime.chores import CHORES, EXISTS, QUEUED, fan_out
    from tenant_runtime.workspace import Operation

    chore = CHORES["sweep_media"]
    fire = datetime(2026, 12, 2, 2, 0, tzinfo=UTC)
    assert chore.cron == "0 2 * * *" and chore.latest_fire(fire + timedelta(hours=5)) == fire
    assert (fan_out(workspace, chore, fire, fire), fan_out(workspace, chore, fire, fire)) == (QUEUED, EXISTS)
    with workspace.reader() as tx:
        [operation] = tx.exec(select(Operation).where(Operation.flow_name == "sweep_media")).all()
    assert operation.idempotency_key == "sweep_media:acme:2026-12-02" and operation.status == "scheduled"
    assert operation.parameters["fire_date"] == "2026-12-02" and operation.kind == "media_sweep"
