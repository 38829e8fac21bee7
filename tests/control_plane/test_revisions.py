"""Document revisions through the tenant API: list, read, diff, restore (as a draft, or published)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient
from sqlmodel import col, select
from typer.testing import CliRunner

from control_plane.app import create_app
from control_plane.cli import app
from control_plane.container import Services
from dispatch.prefect_twin import RecordingPrefect
from tenant_runtime.versions import SPILL_THRESHOLD, spill_cold_bodies
from tenant_runtime.workspace import AuditEntry, WorkspaceFactory
from tests.fixtures.http_errors import assert_error
from tests.fixtures.stack import OPERATOR_TOKEN, make_settings

OPERATOR = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}
T = "/api/tenants/acme"


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Services:
    settings = make_settings(tmp_path_factory.mktemp("revisions") / "data")
    return Services.build(settings, prefect=RecordingPrefect(), relay_prefect=RecordingPrefect())


@pytest.fixture(scope="module")
def api(services: Services) -> Iterator[TestClient[Any]]:
    with TestClient(create_app(services.settings, services=services)) as client:
        yield client


def _token(api: TestClient[Any], role: str) -> dict[str, str]:
    token = api.post("/ops/tenants/acme/tokens", json={"role": role}, headers=OPERATOR).json()["token"]
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture(scope="module")
def owner(api: TestClient[Any]) -> dict[str, str]:
    assert api.post("/ops/tenants", json={"slug": "acme", "name": "Acme"}, headers=OPERATOR).status_code == 201
    return _token(api, "owner")


def _factory(services: Services) -> WorkspaceFactory:
    assert services.factory is not None  # the in-process shard's
    return services.factory


def _document(api: TestClient[Any], owner: dict[str, str], slug: str, *bodies: str) -> dict[str, Any]:
    doc = api.post(f"{T}/documents", json={"slug": slug, "title": "First", "body": bodies[0]}, headers=owner).json()
    for n, body in enumerate(bodies[1:], start=2):
        doc = api.put(
            f"{T}/documents/{doc['id']}",
            json={"version": doc["version"], "body": body, "title": f"Take {n}"},
            headers=owner,
        ).json()
    return dict(doc)


def test_revisions_list_newest_first_and_read_one_with_its_body(api: TestClient[Any], owner: dict[str, str]) -> None:
    doc = _document(api, owner, "listed", "one", "two", "three")

    listed = api.get(f"{T}/documents/{doc['id']}/revisions", headers=owner).json()
    one = api.get(f"{T}/documents/{doc['id']}/revisions/1", headers=owner).json()

    assert [r["version"] for r in listed] == [3, 2, 1]
    assert [r["current"] for r in listed] == [True, False, False]
    assert all(r["body"] is None for r in listed) and listed[0]["bytes"] == len("three")
    assert (one["version"], one["title"], one["body"]) == (1, "First", "one")
    assert_error(api.get(f"{T}/documents/{doc['id']}/revisions/9", headers=owner), 404, "not_found")
    assert_error(api.get(f"{T}/documents/doc_nope/revisions", headers=owner), 404, "not_found")


def test_a_diff_is_word_level_and_readable(api: TestClient[Any], owner: dict[str, str]) -> None:
    doc = _document(
        api, owner, "diffed", "The quick brown fox jumps.\nSame line.\n", "The quick red fox leaps.\nSame line.\n"
    )

    diff = api.get(f"{T}/documents/{doc['id']}/revisions/diff?from=1&to=2", headers=owner).json()

    assert diff["body"]["text"] == "The quick [-brown-]{+red+} fox [-jumps-]{+leaps+}.\nSame line.\n"
    assert (diff["body"]["words_inserted"], diff["body"]["words_deleted"]) == (2, 2)
    assert [h["op"] for h in diff["body"]["hunks"]] == ["equal", "replace", "equal", "replace", "equal"]
    assert diff["title"]["text"] == "[-First-]{+Take 2+}"
    assert diff["slug"] is None
    same = api.get(f"{T}/documents/{doc['id']}/revisions/diff?from=2&to=2", headers=owner).json()
    assert same["body"]["changed"] is False
    assert_error(api.get(f"{T}/documents/{doc['id']}/revisions/diff?from=1", headers=owner), 400, "invalid_request")


def test_restore_makes_a_new_draft_version_and_audits_it(
    api: TestClient[Any], owner: dict[str, str], services: Services
) -> None:
    doc = _document(api, owner, "restored", "original words", "rewritten words")

    response = api.post(f"{T}/documents/{doc['id']}/revisions/1/restore", json={}, headers=owner)

    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["restored_from"], body["changed"], body["document"]["version"]) == (1, True, 3)
    assert body["document"]["body"] == "original words" and body["document"]["status"] == "draft"
    versions = api.get(f"{T}/documents/{doc['id']}/revisions", headers=owner).json()
    assert [r["version"] for r in versions] == [3, 2, 1]
    with _factory(services).open("acme").reader() as tx:
        audit = tx.exec(select(AuditEntry).where(AuditEntry.object_id == doc["id"]).order_by(col(AuditEntry.id)))
        actions = [(a.action, a.data.get("restored_from")) for a in audit]
    assert actions == [("content.create", None), ("content.edit", None), ("content.edit", None), ("content.restore", 1)]


def test_restore_and_publish_goes_through_the_publish_path(api: TestClient[Any], owner: dict[str, str]) -> None:
    doc = _document(api, owner, "republished", "good", "bad")

    unconfirmed = api.post(f"{T}/documents/{doc['id']}/revisions/1/restore", json={"publish": True}, headers=owner)
    response = api.post(
        f"{T}/documents/{doc['id']}/revisions/1/restore", json={"publish": True, "confirm": True}, headers=owner
    )

    assert_error(unconfirmed, 400, "confirmation_required")
    assert response.status_code == 202, response.text
    body = response.json()
    assert body["status"] == "queued" and body["operation_id"].startswith("op_")
    assert body["document"]["status"] == "published" and body["document"]["published_version"] == 3
    operation = api.get(f"{T}/operations/{body['operation_id']}", headers=owner).json()
    assert (operation["kind"], operation["document_version"]) == ("publish", 3)


def test_restore_checks_roles_and_the_version_seen(api: TestClient[Any], owner: dict[str, str]) -> None:
    doc = _document(api, owner, "guarded", "a", "b")
    viewer = _token(api, "viewer")

    assert_error(api.post(f"{T}/documents/{doc['id']}/revisions/1/restore", json={}, headers=viewer), 403, "forbidden")
    stale = api.post(f"{T}/documents/{doc['id']}/revisions/1/restore", json={"version": 1}, headers=owner)
    assert_error(stale, 409, "version_conflict")
    assert_error(api.post(f"{T}/documents/{doc['id']}/revisions/7/restore", json={}, headers=owner), 404, "not_found")
    assert_error(
        api.post(f"{T}/documents/{doc['id']}/revisions/1/restore", json={"publsh": True}, headers=owner),
        400,
        "invalid_request",
    )
    assert api.get(f"{T}/documents/{doc['id']}", headers=owner).json()["version"] == 2


def test_a_spilled_old_body_is_read_diffed_and_restored_from_the_store(
    api: TestClient[Any], owner: dict[str, str], services: Services
) -> None:
    big = "word " * (SPILL_THRESHOLD // 4)
    doc = _document(api, owner, "spilled", big, "short now")
    ws = _factory(services).open("acme")
    with ws.transaction() as tx:
        spilled = spill_cold_bodies(tx, ws.store)

    listed = api.get(f"{T}/documents/{doc['id']}/revisions", headers=owner).json()
    one = api.get(f"{T}/documents/{doc['id']}/revisions/1", headers=owner).json()
    diff = api.get(f"{T}/documents/{doc['id']}/revisions/diff?from=1&to=2", headers=owner).json()
    restored = api.post(f"{T}/documents/{doc['id']}/revisions/1/restore", json={}, headers=owner).json()

    assert spilled["spilled"] >= 1
    assert [(r["version"], r["spilled"]) for r in listed] == [(2, False), (1, True)]
    assert listed[1]["bytes"] == len(big)
    assert one["body"] == big and diff["body"]["words_deleted"] == SPILL_THRESHOLD // 4
    assert restored["document"]["body"] == big and restored["document"]["version"] == 3
    # One content-hashed object; the restored version is current, so its body lives inline again.
    assert len(ws.store.list("versions/")) == 1
    after = api.get(f"{T}/documents/{doc['id']}/revisions", headers=owner).json()
    assert [(r["version"], r["spilled"]) for r in after] == [(3, False), (2, False), (1, True)]


def test_the_cli_lists_diffs_and_restores(
    api: TestClient[Any], owner: dict[str, str], services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = services.settings
    monkeypatch.setenv("PRESSROOM_DATA_DIR", str(settings.runtime.data_dir))
    monkeypatch.setenv("PRESSROOM_DATABASE_URL", settings.control_plane.database_url)
    doc = _document(api, owner, "from-shell", "alpha beta", "alpha gamma")
    runner = CliRunner()

    listed = runner.invoke(app, ["revisions", "list", "acme", doc["id"]])
    diffed = runner.invoke(app, ["revisions", "diff", "acme", doc["id"], "1", "2"])
    restored = runner.invoke(app, ["revisions", "restore", "acme", doc["id"], "1"])

    assert listed.exit_code == 0, listed.output
    assert "current" in listed.output and "Take 2" in listed.output
    assert diffed.exit_code == 0, diffed.output
    assert "beta" in diffed.output and "gamma" in diffed.output and "+1 -1 words" in diffed.output
    assert restored.exit_code == 0, restored.output
    assert "version 3 restored from 1" in restored.output
    assert api.get(f"{T}/documents/{doc['id']}", headers=owner).json()["body"] == "alpha beta"

    set_policy = runner.invoke(
        app, ["retention", "set", "acme", "site_resource", "--keep-last", "4", "--keep-days", "2"]
    )
    shown = runner.invoke(app, ["retention", "show", "acme"])
    queued = runner.invoke(app, ["retention", "prune", "acme", "--no-wait"])

    assert set_policy.exit_code == 0, set_policy.output
    assert shown.exit_code == 0 and "site_resource" in shown.output and "default" in shown.output
    assert queued.exit_code == 0 and "prune operation op_" in queued.output


def test_retention_policies_read_set_and_prune_through_the_api(api: TestClient[Any], owner: dict[str, str]) -> None:
    editor = _token(api, "editor")

    before = api.get(f"{T}/retention", headers=owner).json()
    updated = api.put(f"{T}/retention/document", json={"keep_last": 5, "keep_days": 7}, headers=owner)
    unconfirmed = api.post(f"{T}/retention/prune", json={}, headers=owner)
    queued = api.post(f"{T}/retention/prune", json={"confirm": True}, headers=owner)

    assert before["policies"][0] == {"entity_type": "document", "keep_last": 50, "keep_days": 90, "default": True}
    assert updated.status_code == 200, updated.text
    assert updated.json()["policies"][0] == {
        "entity_type": "document",
        "keep_last": 5,
        "keep_days": 7,
        "default": False,
    }
    assert_error(unconfirmed, 400, "confirmation_required")
    assert queued.status_code == 202 and queued.json()["status"] == "queued"
    operation = api.get(f"{T}/operations/{queued.json()['operation_id']}", headers=owner).json()
    assert (operation["kind"], operation["workflow"]) == ("prune", "prune_policies")
    assert_error(
        api.put(f"{T}/retention/document", json={"keep_last": 0, "keep_days": 7}, headers=owner), 400, "invalid_request"
    )
    assert_error(
        api.put(f"{T}/retention/media", json={"keep_last": 3, "keep_days": 7}, headers=owner), 400, "invalid_request"
    )
    assert_error(
        api.put(f"{T}/retention/document", json={"keep_last": 3, "keep_days": 7}, headers=editor), 403, "forbidden"
    )
    assert_error(api.post(f"{T}/retention/prune", json={"confirm": True}, headers=editor), 403, "forbidden")
    assert api.get(f"{T}/retention", headers=owner).json()["policies"][0]["keep_last"] == 5
