"""Backups on the real stack: API → outbox → relay → Prefect run on the tenant's queue → backup in its store."""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest
from prefect.client.orchestration import get_client
from sqlmodel import select
from typer.testing import CliRunner

from control_plane.cli import app
from tenant_runtime.actions.documents import create_document
from tenant_runtime.lifecycle.files import BackupFiles
from tenant_runtime.lifecycle.verify import verify_backup
from tenant_runtime.storage import TenantStore
from tenant_runtime.workspace import Actor, AuditEntry, Document, Revision
from tests.fixtures.stack import Pressroom, Tenant
from tests.fixtures.worker_process import WorkerProcess

pytestmark = pytest.mark.integration
IMPORT_STEPS = ("verify_backup", "stage_tables", "swap_in", "place_objects", "render_site", "finish_import")


async def _read_run(run_id: str):  # type: ignore[no-untyped-def]
    async with get_client() as client:
        return await client.read_flow_run(run_id)


def test_a_backup_asked_for_by_api_is_written_by_a_run_and_listed_with_its_manifest(
    pressroom: Pressroom, monkeypatch: pytest.MonkeyPatch
) -> None:
    acme = pressroom.new_tenant("acme")
    pressroom.start_worker(acme)
    doc = pressroom.create_document(acme, "hello", body="Hello **world**")
    pressroom.wait_operation(acme, pressroom.publish(acme, doc["id"])["operation_id"])
    path = f"/api/tenants/{acme.slug}/backups"

    refused = pressroom.api.post(path, json={}, headers=acme.headers)
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "confirmation_required"
    editor = pressroom.token(acme, "editor")
    assert pressroom.api.post(path, json={"confirm": True}, headers=editor).status_code == 403

    accepted = pressroom.api.post(path, json={"confirm": True}, headers=acme.headers)
    assert accepted.status_code == 202, accepted.text
    backup_id = accepted.json()["backup_id"]
    listed = pressroom.api.get(path, headers=acme.headers).json()
    assert listed[0]["id"] == backup_id and listed[0]["status"] in ("queued", "running", "succeeded")

    operation = pressroom.wait_operation(acme, accepted.json()["operation_id"])
    assert operation["status"] == "succeeded", operation
    run = asyncio.run(_read_run(operation["flow_run_id"]))
    assert run.work_queue_name == f"tenant-{acme.slug}"
    assert run.idempotency_key == f"backup:{operation['id']}"

    [backup] = pressroom.api.get(path, headers=acme.headers).json()
    assert backup["status"] == "succeeded" and backup["bytes"] > 0 and backup["id"] == backup_id
    files = BackupFiles(TenantStore(pressroom.store, acme.slug), backup_id)
    raw = files.store.get(files.key("manifest.json"))
    assert raw is not None and hashlib.sha256(raw).hexdigest() == backup["manifest_sha256"]
    manifest = json.loads(raw)
    assert manifest["tenant"] == acme.slug and manifest["format"] == "pressroom-backup"
    tables = {t["name"]: t["rows"] for t in manifest["tables"]}
    assert tables["document"] == 1 and tables["revision"] == 1
    # Every object under the tenant's prefix (the rendered page among them), none of its backups.
    index = [json.loads(line) for line in (files.store.get(files.key("objects.jsonl")) or b"").splitlines()]
    keys = {entry["key"] for entry in index}
    assert "site/hello/index.html" in keys and not any(k.startswith("backups/") for k in keys)
    assert verify_backup(files, expected_sha256=backup["manifest_sha256"])["objects"] == len(index)
    assert not files.store.list(files.key("parts/"))  # work files gone
    one = pressroom.api.get(f"{path}/{backup_id}", headers=acme.headers)
    assert one.status_code == 200 and one.json()["manifest_sha256"] == backup["manifest_sha256"]
    other = pressroom.new_tenant("other")
    assert pressroom.api.get(f"/api/tenants/{other.slug}/backups/{backup_id}", headers=other.headers).status_code == 404

    # The operator CLI lists the same catalog, and asks for a backup through the same command.
    for name, value in (
        ("PRESSROOM_DATA_DIR", str(pressroom.settings.runtime.data_dir)),
        ("PRESSROOM_DATABASE_URL", pressroom.settings.control_plane.database_url),
        ("PRESSROOM_SITE_URL", pressroom.settings.runtime.site_url),
    ):
        monkeypatch.setenv(name, value)
    runner = CliRunner()
    listed_cli = runner.invoke(app, ["backups", "list", acme.slug, "--json"])
    assert listed_cli.exit_code == 0, listed_cli.output
    assert json.loads(listed_cli.output)[0]["manifest_sha256"] == backup["manifest_sha256"]
    created = runner.invoke(app, ["backups", "create", acme.slug, "--no-wait"])
    assert created.exit_code == 0, created.output
    assert len(pressroom.api.get(path, headers=acme.headers).json()) == 2


def _public(pressroom: Pressroom, tenant: str, paths: list[str]) -> dict[str, bytes]:
    pages = {}
    for path in paths:
        response = pressroom.site.get(f"/{tenant}{path}")
        assert response.status_code == 200, (path, response.status_code)
        pages[path] = response.content
    return pages


def _tenant(pressroom: Pressroom, prefix: str, name: str) -> Tenant:
    """A tenant whose site title does not spell its slug (a clone keeps the title, and must lose the slug)."""
    slug = f"{prefix}-{secrets.token_hex(4)}"
    created = pressroom.api.post("/ops/tenants", json={"slug": slug, "name": name}, headers=pressroom.operator)
    assert created.status_code == 201, created.text
    token = pressroom.api.post(f"/ops/tenants/{slug}/tokens", json={"role": "owner"}, headers=pressroom.operator)
    pressroom.tenants.append(slug)
    return Tenant(slug, token.json()["token"])


def test_backup_then_import_gives_back_every_public_url_byte_identical_and_clones_under_a_new_slug(
    pressroom: Pressroom,
) -> None:
    acme = _tenant(pressroom, "acme", "Newsroom")
    pressroom.start_worker()
    about = pressroom.create_document(acme, "about", kind="page", body="About **us**")
    launch = pressroom.create_document(acme, "launch", body="We are live")
    for doc in (about, launch):
        pressroom.wait_operation(acme, pressroom.publish(acme, doc["id"])["operation_id"])
    paths = ["/", "/about", "/launch", "/feed.xml", "/sitemap.xml"]
    before = _public(pressroom, acme.slug, paths)
    api = f"/api/tenants/{acme.slug}"
    backup_op = pressroom.api.post(f"{api}/backups", json={"confirm": True}, headers=acme.headers).json()
    assert pressroom.wait_operation(acme, backup_op["operation_id"])["status"] == "succeeded"

    # The site moves on: a page edited and published again, a post taken down.
    edit = pressroom.api.put(
        f"{api}/documents/{about['id']}", json={"body": "Changed", "version": about["version"]}, headers=acme.headers
    )
    assert edit.status_code == 200, edit.text
    pressroom.wait_operation(acme, pressroom.publish(acme, about["id"])["operation_id"])
    down = pressroom.api.post(f"{api}/documents/{launch['id']}/unpublish", json={"confirm": True}, headers=acme.headers)
    pressroom.wait_operation(acme, down.json()["operation_id"])
    assert pressroom.site.get(f"/{acme.slug}/launch").status_code == 404

    ref = {"tenant": acme.slug, "id": backup_op["backup_id"]}
    refused = pressroom.api.post(f"{api}/imports", json={"backup": ref}, headers=acme.headers)
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "confirmation_required"
    imported = pressroom.api.post(f"{api}/imports", json={"backup": ref, "confirm": True}, headers=acme.headers)
    assert imported.status_code == 202, imported.text
    assert pressroom.wait_operation(acme, imported.json()["operation_id"])["status"] == "succeeded"
    assert _public(pressroom, acme.slug, paths) == before

    # Into a second tenant (operators only): the same site under its slug, nothing of the first left.
    globex = _tenant(pressroom, "globex", "Another site")
    pressroom.start_worker(globex)
    member = pressroom.api.post(
        f"/api/tenants/{globex.slug}/imports", json={"backup": ref, "confirm": True}, headers=globex.headers
    )
    assert member.status_code == 404
    clone = pressroom.api.post(
        f"/api/tenants/{globex.slug}/imports", json={"backup": ref, "confirm": True}, headers=pressroom.operator
    )
    assert clone.status_code == 202, clone.text
    assert pressroom.wait_operation(globex, clone.json()["operation_id"])["status"] == "succeeded"
    cloned = _public(pressroom, globex.slug, paths)
    assert cloned["/about"] == before["/about"].replace(acme.slug.encode(), globex.slug.encode())
    assert all(acme.slug.encode() not in page for page in cloned.values())
    assert not [k for k in pressroom.store.list(f"tenants/{globex.slug}/") if acme.slug in k]


def test_restore_to_t_shows_its_dry_run_republishes_the_site_of_t_and_undo_brings_it_back(
    pressroom: Pressroom,
) -> None:
    acme = pressroom.new_tenant("acme")
    pressroom.start_worker(acme)
    api = f"/api/tenants/{acme.slug}"
    about = pressroom.create_document(acme, "about", kind="page", body="The first words")
    pressroom.wait_operation(acme, pressroom.publish(acme, about["id"])["operation_id"])
    at = datetime.now(UTC).isoformat()
    edit = pressroom.api.put(
        f"{api}/documents/{about['id']}", json={"body": "The second words", "version": 1}, headers=acme.headers
    )
    assert edit.status_code == 200, edit.text
    pressroom.wait_operation(acme, pressroom.publish(acme, about["id"])["operation_id"])
    before = pressroom.site.get(f"/{acme.slug}/about").content
    assert b"second words" in before

    dry = pressroom.api.post(f"{api}/restores", json={"at": at}, headers=acme.headers)
    assert dry.status_code == 200, dry.text
    [change] = dry.json()["changes"]
    assert change["id"] == about["id"] and change["before"]["version"] == 2 and change["after"]["version"] == 1
    unconfirmed = pressroom.api.post(f"{api}/restores", json={"at": at, "dry_run": False}, headers=acme.headers)
    assert unconfirmed.status_code == 400
    naive = pressroom.api.post(f"{api}/restores", json={"at": "2026-01-01T00:00:00"}, headers=acme.headers)
    assert naive.status_code == 400 and naive.json()["error"]["details"]["field"] == "at"

    restored = pressroom.api.post(
        f"{api}/restores", json={"at": at, "dry_run": False, "confirm": True}, headers=acme.headers
    )
    assert restored.status_code == 202, restored.text
    assert pressroom.wait_operation(acme, restored.json()["operation_id"])["status"] == "succeeded"
    assert b"first words" in pressroom.site.get(f"/{acme.slug}/about").content
    snapshot = next(
        b for b in pressroom.api.get(f"{api}/backups", headers=acme.headers).json() if b["reason"] == "restore"
    )
    assert snapshot["id"] == restored.json()["snapshot_id"] and snapshot["status"] == "succeeded"

    undo = pressroom.api.post(f"{api}/restores/undo", json={"confirm": True}, headers=acme.headers)
    assert undo.status_code == 202, undo.text
    assert pressroom.wait_operation(acme, undo.json()["operation_id"])["status"] == "succeeded"
    assert pressroom.site.get(f"/{acme.slug}/about").content == before
    again = pressroom.api.post(f"{api}/restores/undo", json={"confirm": True}, headers=acme.headers)
    assert again.status_code == 409 and again.json()["error"]["code"] == "already_undone"


@pytest.mark.slow
def test_a_worker_killed_mid_backup_and_mid_import_resumes_each_with_no_duplicate_and_no_step_redone(
    pressroom_fs: Pressroom, tmp_path: Path
) -> None:
    """kill -9 of a real worker process in the backup's object copy, then in the import's object placement (after
    its swap): the next worker finishes each run from Prefect's cache; only the killed step runs again."""
    room = pressroom_fs
    tenant = room.new_tenant("crash")
    ws = room.factory.open(tenant.slug)
    owner = Actor.for_role("u-owner", "owner")
    with ws.transaction() as tx:  # drafts only: nothing for a worker to deliver but the backup and the import
        for n in range(20):
            create_document(tx, owner, slug=f"doc-{n}", title=f"Doc {n}", body=f"Body {n}", kind="post")
    keys = [f"media/object-{n:04d}" for n in range(40)]  # one chunk to copy, one to place
    for key in keys:
        ws.store.put(key, key.encode())
    api, logs = f"/api/tenants/{tenant.slug}", tmp_path / "workers"

    backup = room.api.post(f"{api}/backups", json={"confirm": True}, headers=tenant.headers).json()
    _kill_parked(
        WorkerProcess(room, [tenant.slug], logs, park={tenant.slug: "copy_objects"}), tenant.slug, "copy_objects"
    )
    resumer = WorkerProcess(room, [tenant.slug], logs, park={tenant.slug: "place_objects"})
    try:
        done = room.wait_operation(tenant, backup["operation_id"], timeout=90)
        assert done["status"] == "succeeded", done
        assert [a["number"] for a in done["attempts"]] == [1, 2]
        assert Counter(resumer.executions(tenant.slug)) == {
            "take_snapshot": 1, "dump_tables": 1, "freeze_objects": 1,
            "copy_objects": 2,  # killed, then once more
            "write_manifest": 1, "finish_backup": 1,
        }  # fmt: skip
        files = BackupFiles(TenantStore(room.store, tenant.slug), backup["backup_id"])
        index = [json.loads(line)["key"] for line in (files.store.get(files.key("objects.jsonl")) or b"").splitlines()]
        assert sorted(index) == keys  # each object once
        assert len(files.store.list(files.key("objects/"))) == len(keys)
        [listed] = room.api.get(f"{api}/backups", headers=tenant.headers).json()
        manifest_sha256 = listed["manifest_sha256"]
        summary = verify_backup(files, expected_sha256=manifest_sha256)
        assert summary["objects"] == len(keys)

        # The site moves on, then the backup is imported over it; the worker dies after the swap.
        with ws.transaction() as tx:
            create_document(tx, owner, slug="after", title="After", body="not in the backup", kind="post")
        ws.store.put("media/after", b"not in the backup")
        ref = {"tenant": tenant.slug, "id": backup["backup_id"]}
        imported = room.api.post(f"{api}/imports", json={"backup": ref, "confirm": True}, headers=tenant.headers)
        assert imported.status_code == 202, imported.text
        _kill_parked(resumer, tenant.slug, "place_objects")
    finally:
        resumer.stop()
    last = WorkerProcess(room, [tenant.slug], logs)
    try:
        done = room.wait_operation(tenant, imported.json()["operation_id"], timeout=90)
        assert done["status"] == "succeeded", done
        # One probe log for the three workers: the import's steps, killed run and resumed run together.
        steps = Counter(step for step in last.executions(tenant.slug) if step in IMPORT_STEPS)
    finally:
        last.stop()
    assert steps == {"verify_backup": 1, "stage_tables": 1, "swap_in": 1, "place_objects": 2, "finish_import": 1}
    manifest = json.loads(files.store.get(files.key("manifest.json")) or b"{}")
    rows = {t["name"]: t["rows"] for t in manifest["tables"]}
    with ws.reader() as tx:
        assert len(list(tx.exec(select(Document)))) == rows["document"] == 20  # the later draft gone, none twice
        assert len(list(tx.exec(select(Revision)))) == rows["revision"]
        swaps = tx.exec(select(AuditEntry).where(AuditEntry.action == "site.import")).all()
        assert [s.operation_id for s in swaps] == [done["id"]]  # swapped in once
    site = sorted(k for k in ws.store.list("") if not k.startswith("backups/"))
    assert site == keys  # every object once, the later one removed


def _kill_parked(worker: WorkerProcess, tenant: str, step: str) -> None:
    try:
        assert worker.wait_parked([tenant]) == {tenant: step}
        worker.kill9()
    finally:
        worker.stop()
