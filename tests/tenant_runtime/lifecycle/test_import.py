"""Backup → import below the engine: byte-identical round trip, a clone under another slug, tamper refused,
a staging crash resumed without a duplicate row."""

from __future__ import annotations

import io
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tenant_runtime.actions import documents, fields, media, packages
from tenant_runtime.lifecycle import staging
from tenant_runtime.lifecycle.files import BackupFiles
from tenant_runtime.lifecycle.format import LOG_TABLES, BackupInvalid, is_derived_table
from tenant_runtime.lifecycle.sqlite_files import remove_database, vacuum_into, work_dir
from tenant_runtime.workflows import InstallPackageParameters
from tenant_runtime.workspace import SYSTEM, Workspace
from tests.tenant_runtime.content import publish, republish, unpublish
from tests.tenant_runtime.lifecycle.helpers import back_up, import_backup
from tests.tenant_runtime.package_kit import Publisher


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (6, 4), (200, 40, 40)).save(out, "PNG")
    return out.getvalue()


def site_rows(ws: Workspace) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every site table (not the logs, not derived ones), in key order.

    Read from a snapshot of the workspace (VACUUM INTO on SQLite, the PostgreSQL schema's rows in a SQLite
    file on PostgreSQL): the same values either way, in SQLite's encoding.
    """
    copy = work_dir(ws) / f"rows-{time.time_ns()}.db"
    vacuum_into(ws, copy)
    db = sqlite3.connect(copy)
    try:
        names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {
            name: db.execute(f'SELECT * FROM "{name}" ORDER BY 1').fetchall()
            for name in names
            if not is_derived_table(name) and name not in LOG_TABLES and name != "rendered_object"
        }
    finally:
        db.close()
        remove_database(copy)


def site_objects(ws: Workspace) -> dict[str, bytes | None]:
    return {key: ws.store.get(key) for key in ws.store.list("") if not key.startswith("backups/")}


@pytest.fixture
def backed_up(two_tenants: tuple[Workspace, Workspace]) -> tuple[Workspace, Workspace, dict[str, Any]]:
    acme, globex = two_tenants
    about, _ = publish(acme, "about", kind="page", body="About us")
    publish(acme, "launch", body="We are **live**")
    republish(acme, about.id, body="About us, again")
    acme.store.put("media/logo.png", bytes(range(256)) * 40)
    acme.store.put("site/about/index.html", b"<html>about</html>")
    return acme, globex, back_up(acme)


def test_an_import_of_its_own_backup_gives_back_every_row_and_object(backed_up: Any) -> None:
    acme, _, backup = backed_up
    rows, objects = site_rows(acme), site_objects(acme)
    launch = next(r for r in rows["document"] if "launch" in r)
    unpublish(acme, launch[0])
    publish(acme, "later", body="after the backup")
    acme.store.delete("media/logo.png")
    acme.store.put("media/stray.png", b"not in the backup")

    import_backup(acme, acme.tenant, backup["backup_id"], backup["manifest_sha256"])

    assert site_rows(acme) == rows
    assert site_objects(acme) == objects
    assert not list(staging.work_dir(acme).iterdir())  # no work files left


def test_a_clone_into_another_tenant_keeps_nothing_of_the_first(backed_up: Any) -> None:
    acme, globex, backup = backed_up

    import_backup(globex, acme.tenant, backup["backup_id"], backup["manifest_sha256"])

    cloned = site_rows(globex)
    assert [r[1:] for r in cloned["revision"]] == [r[1:] for r in site_rows(acme)["revision"]]
    assert {r[1] for r in cloned["document"]} == {"about", "launch"}
    assert "acme" not in repr(cloned)
    assert globex.store.get("media/logo.png") == acme.store.get("media/logo.png")
    assert acme.tenant not in repr(globex.store.list(""))


@pytest.mark.parametrize("part", ["tables/document.jsonl", "objects/media/logo.png", "objects.jsonl"])
def test_one_changed_byte_is_refused_naming_the_part_and_nothing_is_written(backed_up: Any, part: str) -> None:
    acme, globex, backup = backed_up
    files = BackupFiles(acme.store, backup["backup_id"])
    data = bytearray(files.store.get(files.key(part)) or b"")
    data[len(data) // 2] ^= 0x01
    files.store.put(files.key(part), bytes(data))
    rows, objects = site_rows(globex), site_objects(globex)

    with pytest.raises(BackupInvalid) as refused:
        import_backup(globex, acme.tenant, backup["backup_id"], backup["manifest_sha256"])

    assert refused.value.code == "backup_invalid"
    assert part in refused.value.message
    assert {m["file"] for m in refused.value.details["mismatches"]} >= {part}
    assert site_rows(globex) == rows and site_objects(globex) == objects
    assert not list(staging.work_dir(globex).glob("import-*"))


def test_a_truncated_table_is_refused(backed_up: Any) -> None:
    acme, globex, backup = backed_up
    files = BackupFiles(acme.store, backup["backup_id"])
    data = files.store.get(files.key("tables/revision.jsonl")) or b""
    files.store.put(files.key("tables/revision.jsonl"), data[: len(data) // 2])

    with pytest.raises(BackupInvalid) as refused:
        import_backup(globex, acme.tenant, backup["backup_id"], backup["manifest_sha256"])

    assert refused.value.details["mismatches"][0]["problem"] == "truncated"


def test_staging_killed_mid_table_resumes_without_a_duplicate_row(
    backed_up: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    acme, globex, backup = backed_up
    monkeypatch.setattr(staging, "BATCH_ROWS", 1)
    commits = {"n": 0}
    real_commit = staging._commit

    def dying_commit(db: Any, insert: str, batch: list[Any], table: str, position: int, *, done: bool) -> None:
        real_commit(db, insert, batch, table, position, done=done)
        commits["n"] += 1
        if commits["n"] == 6:
            raise KeyboardInterrupt("killed")  # what kill -9 leaves: committed batches and the cursor

    monkeypatch.setattr(staging, "_commit", dying_commit)
    with pytest.raises(KeyboardInterrupt):
        import_backup(globex, acme.tenant, backup["backup_id"], backup["manifest_sha256"])
    monkeypatch.setattr(staging, "_commit", real_commit)
    staged: Path = next(staging.work_dir(globex).glob("import-*.db"))
    operation_id = staged.stem.removeprefix("import-")

    from tenant_runtime.lifecycle import imports

    source = imports.Source(acme.tenant, backup["backup_id"], backup["manifest_sha256"])
    imports.stage_import(globex, source, operation_id)
    imports.swap_import(globex, source, operation_id, "test")
    imports.place_import(globex, source, operation_id, 0)
    imports.render_import(globex, operation_id)
    imports.finish_import(globex, source, operation_id)

    cloned = site_rows(globex)
    assert len(cloned["revision"]) == len(site_rows(acme)["revision"])
    assert len(cloned["entity_history"]) == len(site_rows(acme)["entity_history"])


def test_media_fields_versions_and_packages_come_back_with_the_rest(two_tenants: tuple[Workspace, Workspace]) -> None:
    """The content model of the lifecycle issue travels too: an uploaded image (its row and its bytes),
    a custom field's definition and a document's value for it, every revision, and an installed,
    pinned theme package (its row, its key, its stored files)."""
    acme, _ = two_tenants
    publisher = Publisher()
    with acme.transaction() as tx:
        picture = media.upload_media(tx, acme.store, SYSTEM, name="cover.png", data=_png())
        packages.add_key(tx, SYSTEM, publisher.public_key, name="publisher")
        _, migration = fields.request_field_change(
            tx, acme.tenant, SYSTEM, kind="post", change="add", field="subtitle", type="text", default=""
        )
    while not fields.check_batch(acme, migration.id, 50)["done"]:
        pass
    while not fields.apply_batch(acme, migration.id, 50)["done"]:
        pass
    fields.finish_migration(acme, migration.id)
    post, _ = publish(acme, "story", body=f"![cover](media:{picture.id})")
    republish(acme, post.id, body=f"Second take ![cover](media:{picture.id})")
    with acme.transaction() as tx:
        documents.update_document(tx, SYSTEM, post.id, expected_version=2, fields={"subtitle": "Kept"})
        operation, _ = packages.request_install(tx, acme, SYSTEM, publisher.theme(), pin_theme=True)
    params = InstallPackageParameters.model_validate(operation.parameters)
    packages.verify_stored(acme, params)
    packages.stage(acme, params)
    packages.activate(acme, params)
    rows, objects = site_rows(acme), site_objects(acme)
    assert all(rows[table] for table in ("media", "field_definition", "package", "package_key"))
    assert len(rows["revision"]) >= 3
    assert any(key.startswith("media/") for key in objects) and any(key.startswith("packages/") for key in objects)
    backup = back_up(acme)

    # Everything of the kind changes after the backup: the import must put each back.
    with acme.transaction() as tx:
        media.delete_media(tx, SYSTEM, picture.id)
        documents.update_document(tx, SYSTEM, post.id, expected_version=3, fields={"subtitle": "Changed"})
    for key in [k for k in objects if k.startswith(("media/", "packages/"))]:
        acme.store.delete(key)
    assert site_rows(acme) != rows and site_objects(acme) != objects

    import_backup(acme, acme.tenant, backup["backup_id"], backup["manifest_sha256"])

    assert site_rows(acme) == rows
    assert site_objects(acme) == objects
