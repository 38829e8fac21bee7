"""A site's health page: backup, import and restore runs with the failed step and its error, the backups,
the nightly chores, the last good backup's age and its alarm, late runs, dead operations replayed, a backup
started, and a restore shown as a dry run before its confirmation — by role and tenant."""

from __future__ import annotations

import io
import json
import tarfile
from datetime import UTC, datetime, timedelta

from sqlmodel import select

from tenant_runtime.actions import operations as operation_actions
from tenant_runtime.workflows import Carried
from tenant_runtime.workspace.lifecycle_models import Backup, EntityHistory
from tests.dashboard.conftest import Dashboard
from tests.dashboard.test_dashboard import DOC, _flash
from tests.tenant_runtime.lifecycle.helpers import write_backup

S = "/dashboard/sites/acme"


def _age_history(dashboard: Dashboard, hours: float) -> None:
    """Move the site's whole history back in time, as if it had been made ``hours`` ago."""
    with dashboard.factory.open("acme").transaction() as tx:
        for row in tx.exec(select(EntityHistory)):
            row.at = row.at - timedelta(hours=hours)
            tx.add(row)


def _fail_for_good(dashboard: Dashboard, operation_id: str, step: str, code: str, message: str) -> None:
    dashboard.services.handoff.flush()
    with dashboard.factory.open("acme").transaction() as tx:
        operation = operation_actions.get_operation(tx, operation_id)
        assert operation.flow_run_id is not None
        carried = Carried(operation_id=operation.id, workflow=operation.flow_name, fields={})
        operation_actions.claim(tx, carried, flow_run_id=operation.flow_run_id)
        operation_actions.fail(
            tx,
            operation_id,
            step=step,
            error_code=code,
            error_message=message,
            max_retries=5,
            next_attempt_at=None,
            permanent=True,
        )


def test_a_backup_started_and_failed_shows_its_step_and_error_and_is_replayed(dashboard: Dashboard) -> None:
    owner = dashboard.browser(dashboard.tenant("acme"))
    _age_history(dashboard, 30)  # a site older than the alarm's 26 h, never backed up
    dashboard.services.prefect.late["acme"] = (2, 5400.0)  # type: ignore[attr-defined]

    page = owner.get(f"{S}/health")

    assert page.status_code == 200 and 'id="backup-age" data-alarm="yes"' in page.text and "none yet" in page.text
    assert "2 late" in page.text and "1 h 30 min" in page.text
    assert 'data-chore="export_backup"' in page.text and 'data-chore="sweep_media"' in page.text
    unconfirmed = owner.post(f"{S}/health/backup", {"form_key": owner.form_key})
    assert "confirmation_required" in unconfirmed.text and dashboard.operations("acme") == []
    started = owner.post(f"{S}/health/backup", {"form_key": owner.form_key, "confirm": "yes"})
    assert "requested: operation" in _flash(started.text)
    (operation,) = dashboard.operations("acme")
    assert operation.kind == "backup" and f'data-run="{operation.id}"' in started.text

    _fail_for_good(dashboard, operation.id, "copy_objects", "store_unreachable", "the bucket answered 503")
    failed = owner.get(f"{S}/health")

    run = failed.text.split(f'data-run="{operation.id}"')[1].split("</tr>")[0]
    assert 'data-status="dead"' in run and "<code>copy_objects</code>" in run
    assert "store_unreachable" in run and "the bucket answered 503" in run
    assert f'data-dead="{operation.id}"' in failed.text
    replayed = owner.post(f"{S}/operations/{operation.id}/retry", {"form_key": owner.form_key, "back": "health"})
    assert replayed.url.path == f"{S}/health" and "queued again" in _flash(replayed.text)
    assert f'data-dead="{operation.id}"' not in replayed.text


def test_a_restore_shows_its_dry_run_then_needs_the_confirmation(dashboard: Dashboard) -> None:
    token = dashboard.tenant("acme")
    owner = dashboard.browser(token)
    headers = {"Authorization": f"Bearer {token}"}
    created = dashboard.client.post("/api/tenants/acme/documents", json=DOC, headers=headers)
    assert created.status_code == 201, created.text
    _age_history(dashboard, 1)  # the draft as it was an hour ago …
    doc_id = created.json()["id"]
    edited = dashboard.client.put(
        f"/api/tenants/acme/documents/{doc_id}", json={**DOC, "title": "Launch night", "version": 1}, headers=headers
    )
    assert edited.status_code == 200, edited.text  # … and now
    at = (datetime.now(UTC) - timedelta(minutes=10)).strftime("%Y-%m-%dT%H:%M")  # the site is in UTC

    preview = owner.get(f"{S}/health/restore?at={at}")

    assert preview.status_code == 200 and f'data-entity="document:{doc_id}"' in preview.text
    assert "Document “Launch night”" in preview.text
    title = preview.text.split('<th scope="row">title</th>')[1].split("</tr>")[0]
    assert "Launch night" in title.split('class="after"')[0] and "Launch day" in title.split('class="after"')[1]
    assert dashboard.operations("acme") == []  # a dry run writes nothing
    unconfirmed = owner.post(f"{S}/health/restore", {"at": f"{at}:00+00:00", "form_key": owner.form_key})
    assert "confirmation_required" in unconfirmed.text and dashboard.operations("acme") == []

    restored = owner.post(f"{S}/health/restore", {"at": f"{at}:00+00:00", "form_key": owner.form_key, "confirm": "yes"})

    assert "Restore started: operation" in _flash(restored.text) and "/operations/op_" in str(restored.url)
    assert sorted(o.kind for o in dashboard.operations("acme")) == ["restore"]
    future = (datetime.now(UTC) + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")
    refused = owner.get(f"{S}/health/restore?at={future}")
    assert refused.status_code == 400 and "in the future" in refused.text and 'aria-invalid="true"' in refused.text
    assert owner.get(f"{S}/health/restore?at=soon").status_code == 400


def test_an_editor_sees_health_but_no_backup_or_restore_and_another_tenant_sees_nothing(dashboard: Dashboard) -> None:
    dashboard.tenant("acme")
    editor = dashboard.browser(dashboard.tenant("acme", role="editor"))
    page = editor.get(f"{S}/health")
    assert page.status_code == 200 and 'data-alarm="no"' in page.text
    assert 'data-form="backup"' not in page.text and 'data-form="undo-restore"' not in page.text
    denied = editor.post(f"{S}/health/backup", {"form_key": editor.form_key, "confirm": "yes"})
    assert "does not allow site.admin" in _flash(denied.text)
    at = (datetime.now(UTC) - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M")
    assert editor.get(f"{S}/health/restore?at={at}").status_code == 403

    stranger = dashboard.browser(dashboard.tenant("globex"))
    assert stranger.get(f"{S}/health").status_code == 404
    assert stranger.get(f"{S}/health/restore?at={at}").status_code == 404
    for path in ("backup", "restore", "undo-restore"):
        form = {"confirm": "yes", "at": f"{at}:00+00:00"}
        assert stranger.post(f"{S}/health/{path}", form).status_code == 404, path
    assert dashboard.operations("acme") == []


def test_a_good_backup_is_imported_from_the_health_page_after_confirming(dashboard: Dashboard) -> None:
    owner = dashboard.browser(dashboard.tenant("acme"))
    owner.get(f"{S}/health")
    owner.post(f"{S}/health/backup", {"form_key": owner.form_key, "confirm": "yes"})
    (operation,) = dashboard.operations("acme")
    with dashboard.factory.open("acme").transaction() as tx:  # what export_backup leaves when it has written it
        (backup,) = tx.exec(select(Backup))
        backup.status, backup.manifest_sha256, backup.bytes = "succeeded", "ab" * 32, 4096
        backup.snapshot_at = backup.finished_at = datetime.now(UTC)
        tx.add(backup)
        carried = Carried(operation_id=operation.id, workflow=operation.flow_name, fields={})
        dashboard.services.handoff.flush()
        operation_actions.claim(tx, carried, flow_run_id=operation_actions.get_operation(tx, operation.id).flow_run_id)
        operation_actions.finish(tx, operation.id, "succeeded", step="write_manifest")

    page = owner.get(f"{S}/health")

    assert 'data-alarm="no"' in page.text and f"<code>{backup.id}</code>, taken" in page.text
    row = page.text.split(f'data-backup="{backup.id}"')[1].split("</tr>")[0]
    assert (
        "4,096 B" in row
        and 'data-form="import"' in row
        and "hx-trigger" not in page.text.split('id="runs-live"')[1][:80]
    )
    unconfirmed = owner.post(f"{S}/health/import", {"backup_id": backup.id, "form_key": owner.form_key})
    assert "confirmation_required" in unconfirmed.text and [o.kind for o in dashboard.operations("acme")] == ["backup"]

    imported = owner.post(f"{S}/health/import", {"backup_id": backup.id, "form_key": owner.form_key, "confirm": "yes"})

    assert "Import of backup" in _flash(imported.text) and "/operations/op_" in str(imported.url)
    assert sorted(o.kind for o in dashboard.operations("acme")) == ["backup", "import"]
    assert 'hx-trigger="every 3s"' in owner.get(f"{S}/health").text  # an import under way: the runs follow it
    missing = owner.post(f"{S}/health/import", {"backup_id": "nope", "form_key": owner.form_key, "confirm": "yes"})
    assert "not_found" in missing.text or "backup_not_ready" in missing.text


def test_an_owner_downloads_a_written_backup_as_a_tar_and_an_editor_cannot(dashboard: Dashboard) -> None:
    owner = dashboard.browser(dashboard.tenant("acme"))
    owner.get("/dashboard/sites/acme/health")
    owner.post("/dashboard/sites/acme/health/backup", {"confirm": "yes"})
    ws = dashboard.factory.open("acme")
    with ws.reader() as tx:
        (backup,) = tx.exec(select(Backup)).all()
    written = write_backup(ws, backup.id)  # the steps export_backup runs, below the engine

    page = owner.get("/dashboard/sites/acme/health")
    link = f"/dashboard/sites/acme/health/backups/{backup.id}/download"
    assert f'href="{link}"' in page.text
    download = owner.get(link)
    assert download.status_code == 200 and download.headers["content-type"] == "application/x-tar"
    assert "attachment" in download.headers["content-disposition"]
    with tarfile.open(fileobj=io.BytesIO(download.content)) as archive:
        names = archive.getnames()
        manifest = json.loads(archive.extractfile(names[0]).read())  # type: ignore[union-attr]
    assert names[0].endswith("manifest.json") and manifest["tenant"] == "acme"
    assert written["manifest_sha256"] and len(names) > 1

    editor = dashboard.browser(dashboard.tenant("acme", role="editor"))
    assert link not in editor.get("/dashboard/sites/acme/health").text
    assert editor.get(link).status_code == 403
    other = dashboard.browser(dashboard.tenant("globex"))
    assert other.get(link).status_code == 404  # another site's session: as if there were no such site
    assert other.get(link.replace("/acme/", "/globex/")).status_code == 404
