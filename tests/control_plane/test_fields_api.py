"""Custom fields through the tenant API: definitions change through migrate_field; every write is checked."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from control_plane.app import create_app
from control_plane.container import Services
from dispatch.prefect_twin import RecordingPrefect
from tenant_runtime.actions import fields
from tests.fixtures.http_errors import assert_error
from tests.fixtures.stack import OPERATOR_TOKEN, make_settings

OPERATOR = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}
T = "/api/tenants/acme"


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Services:
    settings = make_settings(tmp_path_factory.mktemp("fields") / "data")
    return Services.build(settings, prefect=RecordingPrefect(), relay_prefect=RecordingPrefect())


@pytest.fixture(scope="module")
def api(services: Services) -> Iterator[TestClient[Any]]:
    with TestClient(create_app(services.settings, services=services)) as client:
        yield client


@pytest.fixture(scope="module")
def owner(api: TestClient[Any]) -> dict[str, str]:
    assert api.post("/ops/tenants", json={"slug": "acme", "name": "Acme"}, headers=OPERATOR).status_code == 201
    token = api.post("/ops/tenants/acme/tokens", json={"role": "owner"}, headers=OPERATOR).json()["token"]
    return {"Authorization": f"Bearer {token}"}


def _run(services: Services, migration_id: str) -> dict[str, Any]:
    """What the migrate_field flow's steps do, in order (the flow itself runs in tests/integration)."""
    factory = services.factory
    assert factory is not None
    ws = factory.open("acme")
    while not fields.check_batch(ws, migration_id)["done"]:
        pass
    while not fields.apply_batch(ws, migration_id)["done"]:
        pass
    return fields.finish_migration(ws, migration_id)


def test_a_field_is_added_through_a_migration_and_then_checked_on_writes(
    api: TestClient[Any], owner: dict[str, str], services: Services
) -> None:
    before = api.post(f"{T}/documents", json={"slug": "before", "title": "B", "kind": "post"}, headers=owner).json()
    unconfirmed = api.post(
        f"{T}/fields/migrations",
        json={"kind": "post", "change": "add", "field": "rating", "type": "number"},
        headers=owner,
    )
    queued = api.post(
        f"{T}/fields/migrations",
        json={"kind": "post", "change": "add", "field": "rating", "type": "number", "default": 3, "confirm": True},
        headers=owner,
    )
    assert_error(unconfirmed, 400, "confirmation_required")
    assert queued.status_code == 202, queued.text
    op = queued.json()["operation_id"]
    during = api.get(f"{T}/operations/{op}", headers=owner).json()
    busy = api.post(
        f"{T}/documents", json={"slug": "busy", "title": "B", "kind": "post", "fields": {"rating": 1}}, headers=owner
    )

    assert _run(services, op)["switched"] is True

    after = api.get(f"{T}/operations/{op}", headers=owner).json()
    assert during["workflow"] == "migrate_field" and during["progress"]["phase"] == "apply"
    assert (during["progress"]["total"], during["progress"]["done"]) == (1, 0)
    assert after["progress"]["done"] == 1
    assert_error(busy, 409, "field_migrating")
    assert api.get(f"{T}/documents/{before['id']}", headers=owner).json()["fields"] == {"rating": 3}
    assert [f["name"] for f in api.get(f"{T}/fields?kind=post", headers=owner).json()] == ["rating"]
    bad = api.post(
        f"{T}/documents",
        json={"slug": "bad", "title": "B", "kind": "post", "fields": {"rating": "high", "mood": 1}},
        headers=owner,
    )
    assert_error(bad, 400, "unknown_field")
    assert {e["code"] for e in bad.json()["error"]["details"]["errors"]} == {"invalid_field_value", "unknown_field"}
    good = api.post(
        f"{T}/documents", json={"slug": "good", "title": "G", "kind": "post", "fields": {"rating": 5}}, headers=owner
    )
    assert good.status_code == 201 and good.json()["fields"] == {"rating": 5}


def test_bad_field_changes_are_clear_4xx(api: TestClient[Any], owner: dict[str, str]) -> None:
    viewer_token = api.post("/ops/tenants/acme/tokens", json={"role": "editor"}, headers=OPERATOR).json()["token"]
    editor = {"Authorization": f"Bearer {viewer_token}"}
    change = {"kind": "page", "change": "add", "field": "x", "type": "choice", "confirm": True}

    assert_error(api.post(f"{T}/fields/migrations", json=change, headers=owner), 400, "invalid_field_options")
    assert_error(
        api.post(f"{T}/fields/migrations", json={**change, "type": "colour"}, headers=owner), 400, "invalid_request"
    )
    assert_error(
        api.post(f"{T}/fields/migrations", json={**change, "field": "Bad Name"}, headers=owner),
        400,
        "invalid_field_name",
    )
    assert_error(
        api.post(f"{T}/fields/migrations", json={**change, "change": "rename", "to": "y"}, headers=owner),
        404,
        "not_found",
    )
    assert_error(api.post(f"{T}/fields/migrations", json={**change, "type": "text"}, headers=editor), 403, "forbidden")
    assert_error(api.get(f"{T}/fields/migrations/op_nope", headers=owner), 404, "not_found")


def test_the_cli_lists_fields_and_queues_a_migration(
    services: Services, owner: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from control_plane.cli import app

    monkeypatch.setenv("PRESSROOM_DATA_DIR", str(services.settings.runtime.data_dir))
    monkeypatch.setenv("PRESSROOM_DATABASE_URL", services.settings.control_plane.database_url)
    runner = CliRunner()

    queued = runner.invoke(app, ["fields", "migrate", "acme", "page", "add", "summary", "--type", "text", "--no-wait"])
    listed = runner.invoke(app, ["fields", "list", "acme"])

    assert queued.exit_code == 0, queued.output
    assert "field migration op_" in queued.output
    assert listed.exit_code == 0 and "summary" in listed.output and "migrating" in listed.output
