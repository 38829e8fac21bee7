"""sweep_media on the real stack: upload → embed → publish → trash (the page keeps working) → the sweep keeps
the file while a kept version references it, and deletes it after that reference goes."""

from __future__ import annotations

import io
import json
import os

import pytest
from PIL import Image
from sqlmodel import select
from typer.testing import CliRunner

from control_plane.cli import app
from tenant_runtime.workspace import AuditEntry, Revision
from tests.fixtures.http_errors import assert_error
from tests.fixtures.stack import Pressroom

pytestmark = pytest.mark.integration


def _png() -> bytes:
    out = io.BytesIO()
    Image.frombytes("RGB", (4, 3), os.urandom(36)).save(out, format="PNG")
    return out.getvalue()


def test_the_sweep_keeps_what_a_kept_version_embeds_and_deletes_the_rest_once(
    pressroom: Pressroom, monkeypatch: pytest.MonkeyPatch
) -> None:
    acme = pressroom.new_tenant("acme")
    api, site, base = pressroom.api, pressroom.site, f"/api/tenants/{acme.slug}"
    policy = api.put(f"/ops/tenants/{acme.slug}/media-policy", json={"retention_days": 0}, headers=pressroom.operator)
    assert policy.status_code == 200
    used, unused = (
        api.post(f"{base}/media", files={"file": (name, _png())}, headers=acme.headers).json()
        for name in ("used.png", "unused.png")
    )
    doc = pressroom.create_document(acme, "gallery", body=f"![logo](media:{used['id']})")
    pressroom.start_worker(acme)
    pressroom.wait_operation(acme, pressroom.publish(acme, doc["id"])["operation_id"])
    for media in (used, unused):
        assert api.delete(f"{base}/media/{media['id']}", headers=acme.headers).status_code == 200
    page = site.get(f"/{acme.slug}/gallery")
    assert page.status_code == 200 and used["url"] in page.text
    assert site.get(f"/{acme.slug}/media/{used['id']}").status_code == 200  # trashed, still served

    assert_error(api.post(f"{base}/media/sweep", json={}, headers=acme.headers), 400, "confirmation_required")
    first = api.post(f"{base}/media/sweep", json={"confirm": True}, headers=acme.headers)
    assert first.status_code == 202, first.text
    swept = pressroom.wait_operation(acme, first.json()["operation_id"])
    assert swept["status"] == "succeeded" and swept["kind"] == "media_sweep"
    outcome = swept["outcome"]
    assert outcome["purged"] == [unused["id"]] and outcome["candidates"] == 2
    assert [k["media_id"] for k in outcome["kept"]] == [used["id"]]
    assert {r["slug"] for r in outcome["kept"][0]["references"]} == {"gallery"}
    assert site.get(f"/{acme.slug}/media/{unused['id']}").status_code == 404
    assert pressroom.store.get(f"tenants/{acme.slug}/media/{unused['id']}") is None
    assert any(tag.endswith(f"media:{unused['id']}") for tag in pressroom.purger.all_tags)
    assert site.get(f"/{acme.slug}/media/{used['id']}").status_code == 200

    # The reference goes: the document no longer embeds it and its old versions are pruned.
    edited = api.put(
        f"{base}/documents/{doc['id']}", json={"body": "No pictures.", "version": doc["version"]}, headers=acme.headers
    )
    assert edited.status_code == 200, edited.text
    ws = pressroom.factory.open(acme.slug)
    with ws.transaction() as tx:
        for revision in tx.exec(select(Revision).where(Revision.document_id == doc["id"], Revision.version == 1)):
            tx.delete(revision)
    # The second sweep from the shell, as an operator would run it.
    monkeypatch.setenv("PRESSROOM_DATA_DIR", str(pressroom.settings.runtime.data_dir))
    monkeypatch.setenv("PRESSROOM_DATABASE_URL", str(pressroom.settings.control_plane.database_url))
    monkeypatch.setenv("PRESSROOM_SITE_URL", pressroom.settings.runtime.site_url)
    runner = CliRunner()
    trash = runner.invoke(app, ["media", "list", acme.slug, "--status", "deleted", "--json"])
    assert trash.exit_code == 0, trash.output
    assert [m["id"] for m in json.loads(trash.output)] == [used["id"]]
    second = runner.invoke(app, ["media", "sweep", acme.slug, "--timeout", "120"])
    assert second.exit_code == 0, second.output
    assert f"purged: {used['id']}" in second.output
    assert site.get(f"/{acme.slug}/media/{used['id']}").status_code == 404

    third = api.post(f"{base}/media/sweep", json={"confirm": True}, headers=acme.headers).json()
    again = pressroom.wait_operation(acme, third["operation_id"])["outcome"]
    assert (again["candidates"], again["purged"], again["kept"]) == (0, [], [])
    with ws.reader() as tx:
        audits = tx.exec(select(AuditEntry.object_id).where(AuditEntry.action == "media.purge")).all()
    assert sorted(audits) == sorted([used["id"], unused["id"]])
