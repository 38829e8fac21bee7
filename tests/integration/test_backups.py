"""Backups on the real stack: API → outbox → relay → Prefect run on the tenant's queue → backup in its store."""

from __future__ import annotations

import asyncio
import hashlib
import json

import pytest
from prefect.client.orchestration import get_client
from typer.testing import CliRunner

from control_plane.cli import app
from tenant_runtime.lifecycle.files import BackupFiles
from tenant_runtime.lifecycle.verify import verify_backup
from tenant_runtime.storage import TenantStore
from tests.fixtures.stack import Pressroom

pytestmark = pytest.mark.integration


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
