"""Backups over HTTP, without Prefect: importing another tenant's backup as a member of both, and downloads."""

from __future__ import annotations

import hashlib
import io
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from litestar.exceptions import LitestarException
from litestar.testing import TestClient
from sqlmodel import select
from typer.testing import CliRunner

from control_plane.app import create_app
from control_plane.cli import app
from control_plane.container import Services
from dispatch.prefect_twin import RecordingPrefect
from tenant_runtime.lifecycle.download import BLOCK, open_download
from tenant_runtime.lifecycle.format import BackupInvalid
from tenant_runtime.storage import MemoryStore
from tenant_runtime.storage.base import CHUNK_BYTES
from tenant_runtime.workspace import AuditEntry, Operation, WorkspaceFactory
from tests.fixtures.stack import OPERATOR_TOKEN, make_settings
from tests.tenant_runtime.content import publish
from tests.tenant_runtime.lifecycle.helpers import back_up

OPERATOR = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}


@dataclass
class Room:
    api: TestClient[Any]
    services: Services
    factory: WorkspaceFactory
    store: MemoryStore

    def tenant(self, slug: str) -> dict[str, str]:
        """The tenant and its owner's token."""
        assert self.api.post("/ops/tenants", json={"slug": slug, "name": slug}, headers=OPERATOR).status_code == 201
        return self.token(slug, "owner")

    def token(self, slug: str, role: str) -> dict[str, str]:
        token = self.api.post(f"/ops/tenants/{slug}/tokens", json={"role": role}, headers=OPERATOR).json()["token"]
        return {"Authorization": f"Bearer {token}"}

    def invite(self, slug: str, owner: dict[str, str], email: str, role: str) -> dict[str, str]:
        """Invite the person with ``email`` to ``slug`` (the same user everywhere their email is known); their
        token for ``slug``."""
        invited = self.api.post(
            f"/api/tenants/{slug}/members", json={"name": email, "role": role, "email": email}, headers=owner
        )
        assert invited.status_code == 201, invited.text
        return {"Authorization": f"Bearer {invited.json()['token']['token']}"}

    def audit(self, slug: str, action: str) -> list[AuditEntry]:
        with self.factory.open(slug).reader() as tx:
            return list(tx.exec(select(AuditEntry).where(AuditEntry.action == action)))

    def imports(self, slug: str) -> list[Operation]:
        with self.factory.open(slug).reader() as tx:
            return list(tx.exec(select(Operation).where(Operation.kind == "import")))


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Room]:
    settings = make_settings(tmp_path_factory.mktemp("backups-api") / "data")
    store = MemoryStore()
    factory = WorkspaceFactory(settings.runtime, store=store)
    services = Services.build(settings, factory=factory, prefect=RecordingPrefect(), relay_prefect=RecordingPrefect())
    with TestClient(create_app(settings, services=services)) as api:
        yield Room(api, services, factory, store)


def _backup(room: Room, slug: str) -> dict[str, Any]:
    ws = room.factory.open(slug)
    publish(ws, "about")
    return back_up(ws)


def test_a_member_with_site_admin_on_both_tenants_imports_the_others_backup_pinned_to_its_manifest(room: Room) -> None:
    source_owner, target_owner = room.tenant("src-a"), room.tenant("dst-a")
    owner = room.invite("dst-a", target_owner, "pat@example.com", "owner")
    room.invite("src-a", source_owner, "pat@example.com", "owner")  # the same person owns both sites
    written = _backup(room, "src-a")
    ref = {"tenant": "src-a", "id": written["backup_id"]}

    unconfirmed = room.api.post("/api/tenants/dst-a/imports", json={"backup": ref}, headers=owner)
    assert unconfirmed.status_code == 400 and unconfirmed.json()["error"]["code"] == "confirmation_required"
    assert room.audit("src-a", "backup.share") == []  # nothing written on the source before the confirmation

    accepted = room.api.post("/api/tenants/dst-a/imports", json={"backup": ref, "confirm": True}, headers=owner)
    assert accepted.status_code == 202, accepted.text
    assert accepted.json()["backup"] == {**ref, "manifest_sha256": written["manifest_sha256"]}
    [operation] = room.imports("dst-a")
    assert operation.id == accepted.json()["operation_id"]
    assert operation.parameters["source_tenant"] == "src-a"
    assert operation.parameters["manifest_sha256"] == written["manifest_sha256"]
    # The source's own record that the backup left, by the same user (not by an operator).
    [share] = room.audit("src-a", "backup.share")
    [request] = room.audit("dst-a", "site.import.request")
    assert share.actor == request.actor and not share.actor.startswith("operator:")
    assert share.data["to_tenant"] == "dst-a"


def test_a_member_lacking_site_admin_on_the_source_gets_the_404_of_a_tenant_that_does_not_exist(room: Room) -> None:
    source_owner, target_owner = room.tenant("src-b"), room.tenant("dst-b")
    owner = room.invite("dst-b", target_owner, "sam@example.com", "owner")
    written = _backup(room, "src-b")
    ref = {"tenant": "src-b", "id": written["backup_id"]}
    path = "/api/tenants/dst-b/imports"

    stranger = room.api.post(path, json={"backup": ref, "confirm": True}, headers=owner)
    room.invite("src-b", source_owner, "sam@example.com", "editor")  # a member of the source, no site.admin
    editor = room.api.post(path, json={"backup": ref, "confirm": True}, headers=owner)
    missing = room.api.post(path, json={"backup": {"tenant": "no-such", "id": "x"}, "confirm": True}, headers=owner)
    for response in (stranger, editor, missing):
        assert response.status_code == 404, response.text
    # The same answer (only the slug asked for differs): nothing says the source or its backup exists.
    assert stranger.json() == editor.json()
    assert stranger.json()["error"]["code"] == missing.json()["error"]["code"]
    assert stranger.json()["error"]["details"] == {"tenant": "src-b"}
    # An editor of the target is refused by the target (403) before the source is looked at.
    editor_here = room.token("dst-b", "editor")
    assert room.api.post(path, json={"backup": ref, "confirm": True}, headers=editor_here).status_code == 403
    assert room.audit("src-b", "backup.share") == [] and room.imports("dst-b") == []


def test_a_backup_downloads_as_one_tar_of_its_folder_streamed_and_checked_part_by_part(room: Room) -> None:
    owner = room.tenant("dl-a")
    ws = room.factory.open("dl-a")
    publish(ws, "about")
    ws.store.put("media/logo", b"\x89PNG not really")
    written = back_up(ws)
    backup_id = written["backup_id"]
    path = f"/api/tenants/dl-a/backups/{backup_id}/download"
    prefix = f"tenants/dl-a/backups/{backup_id}/"

    response = room.api.get(path, headers=owner)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/x-tar"
    assert response.headers["content-disposition"] == f'attachment; filename="dl-a-{backup_id}.tar"'
    with tarfile.open(fileobj=io.BytesIO(response.content)) as archive:
        members = {m.name: archive.extractfile(m).read() for m in archive.getmembers()}  # type: ignore[union-attr]
    root = f"dl-a-{backup_id}/"
    names = list(members)
    assert names[0] == root + "manifest.json"
    assert hashlib.sha256(members[names[0]]).hexdigest() == written["manifest_sha256"]
    # Byte for byte the backup's folder (nothing else of the tenant's store, nothing left out).
    stored = {key.removeprefix(prefix): room.store.get(key) for key in room.store.list(prefix)}
    assert {name.removeprefix(root): data for name, data in members.items()} == stored
    assert members[root + "objects/media/logo"] == b"\x89PNG not really"

    assert room.api.get(path, headers=room.token("dl-a", "editor")).status_code == 403
    other = room.tenant("dl-b")
    assert room.api.get(path.replace("/dl-a/", "/dl-b/"), headers=other).status_code == 404
    assert room.api.get(path, headers=other).status_code == 404
    missing = room.api.get("/api/tenants/dl-a/backups/nope/download", headers=owner)
    assert missing.status_code == 404
    queued = room.api.post("/api/tenants/dl-a/backups", json={"confirm": True}, headers=owner).json()["backup_id"]
    unwritten = room.api.get(f"/api/tenants/dl-a/backups/{queued}/download", headers=owner)
    assert unwritten.status_code == 404 and unwritten.json()["error"]["code"] == "backup_not_ready"


def test_a_changed_part_ends_the_download_early_and_a_changed_manifest_refuses_it(room: Room) -> None:
    owner = room.tenant("dl-c")
    ws = room.factory.open("dl-c")
    publish(ws, "about")
    written = back_up(ws)
    prefix = f"tenants/dl-c/backups/{written['backup_id']}/"
    path = f"/api/tenants/dl-c/backups/{written['backup_id']}/download"
    table = f"{prefix}tables/document.jsonl"
    original = room.store.get(table)
    assert original is not None
    room.store.put(table, original.replace(b"about", b"abxut"))  # one byte, same size

    # The stream stops at the changed part (after its header and bytes, before anything follows it).
    found = open_download(room.store, "dl-c", written["backup_id"], written["manifest_sha256"])
    with pytest.raises(BackupInvalid) as stopped:
        b"".join(found.chunks())
    assert stopped.value.details["mismatches"][0]["file"] == "tables/document.jsonl"
    with pytest.raises(LitestarException):  # over HTTP the response is cut short: no whole archive with wrong bytes
        room.api.get(path, headers=owner)

    room.store.put(table, original)
    manifest = room.store.get(f"{prefix}manifest.json")
    assert manifest is not None
    room.store.put(f"{prefix}manifest.json", manifest + b" ")
    refused = room.api.get(path, headers=owner)
    assert refused.status_code == 422 and refused.json()["error"]["code"] == "backup_invalid"


def test_a_download_streams_in_chunks_and_never_holds_the_backup(room: Room) -> None:
    """Below the HTTP edge: every chunk the archive yields is at most one read of the store (1 MiB)."""
    room.tenant("dl-d")
    ws = room.factory.open("dl-d")
    for n in range(3):
        ws.store.put(f"media/big-{n}", bytes([n]) * (3 * CHUNK_BYTES + 7))
    written = back_up(ws)
    found = open_download(room.store, "dl-d", written["backup_id"], written["manifest_sha256"])
    sizes = [len(chunk) for chunk in found.chunks()]
    assert max(sizes) <= CHUNK_BYTES and sum(sizes) > 9 * CHUNK_BYTES and sum(sizes) % BLOCK == 0


def test_the_cli_writes_the_download_to_a_file_and_leaves_none_when_a_part_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = make_settings(tmp_path / "data")
    factory = WorkspaceFactory(settings.runtime)  # the filesystem store under the data dir, as the CLI opens it
    services = Services.build(settings, factory=factory, prefect=RecordingPrefect(), relay_prefect=RecordingPrefect())
    with TestClient(create_app(settings, services=services)) as api:
        assert api.post("/ops/tenants", json={"slug": "cli-a", "name": "CLI"}, headers=OPERATOR).status_code == 201
    ws = factory.open("cli-a")
    publish(ws, "about")
    written = back_up(ws)
    for name, value in (
        ("PRESSROOM_DATA_DIR", str(settings.runtime.data_dir)),
        ("PRESSROOM_DATABASE_URL", settings.control_plane.database_url),
        ("PRESSROOM_SITE_URL", settings.runtime.site_url),
    ):
        monkeypatch.setenv(name, value)
    out = tmp_path / "site.tar"

    done = CliRunner().invoke(app, ["backups", "download", "cli-a", written["backup_id"], "--out", str(out)])

    assert done.exit_code == 0, done.output
    with tarfile.open(out) as archive:
        manifest = archive.extractfile(f"cli-a-{written['backup_id']}/manifest.json")
        assert manifest is not None and hashlib.sha256(manifest.read()).hexdigest() == written["manifest_sha256"]
    table = f"tenants/cli-a/backups/{written['backup_id']}/tables/document.jsonl"
    original = factory.store.get(table)
    assert original is not None
    factory.store.put(table, original.replace(b"about", b"abxut"))
    refused = tmp_path / "changed.tar"
    failed = CliRunner().invoke(app, ["backups", "download", "cli-a", written["backup_id"], "--out", str(refused)])
    assert failed.exit_code == 1 and "does not match its manifest" in failed.output
    assert not refused.exists() and not list(tmp_path.glob(".*.partial"))
