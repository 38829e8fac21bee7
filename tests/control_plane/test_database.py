"""The control-plane database on SQLite and PostgreSQL: migrations, tenants, tokens, commands."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from litestar.testing import TestClient

from control_plane.app import create_app
from control_plane.container import Services
from control_plane.db import ControlPlaneModel, make_engine, upgrade
from tests.fixtures.stack import OPERATOR_TOKEN, make_settings

pytestmark = pytest.mark.integration


def test_migrations_build_exactly_the_models_schema(control_plane_database: str) -> None:
    upgrade(control_plane_database)
    upgrade(control_plane_database)  # idempotent
    engine = make_engine(control_plane_database)
    with engine.connect() as connection:
        diff = compare_metadata(MigrationContext.configure(connection), ControlPlaneModel.metadata)
    engine.dispose()
    assert diff == []


def test_tenants_tokens_and_a_publish_work_on_each_database(control_plane_database: str, tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "data", database_url=control_plane_database)
    services = Services.build(settings)
    operator = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}
    with TestClient(create_app(settings, services=services)) as api:
        assert api.post("/ops/tenants", json={"slug": "acme", "name": "Acme"}, headers=operator).status_code == 201
        duplicate = api.post("/ops/tenants", json={"slug": "acme", "name": "Acme"}, headers=operator)
        assert duplicate.status_code == 409 and duplicate.json()["error"]["code"] == "already_exists"
        token = api.post("/ops/tenants/acme/tokens", json={"role": "editor"}, headers=operator).json()["token"]
        member = {"Authorization": f"Bearer {token}"}
        doc = api.post("/api/tenants/acme/documents", json={"slug": "hi", "title": "Hi"}, headers=member).json()
        published = api.post(f"/api/tenants/acme/documents/{doc['id']}/publish", json={"confirm": True}, headers=member)
        listed = api.get("/ops/tenants", headers=operator).json()
        forbidden = api.get("/ops/tenants", headers=member)
        bad_token = api.get("/api/tenants/acme/documents", headers={"Authorization": "Bearer nope"})
        # Members and tokens (their queries, the tenant-row lock of the last-owner guard, the audit merge).
        owner_token = api.post("/ops/tenants/acme/tokens", json={"role": "owner"}, headers=operator).json()["token"]
        owner = {"Authorization": f"Bearer {owner_token}"}
        invited = api.post("/api/tenants/acme/members", json={"name": "Ann", "role": "viewer"}, headers=owner)
        members = api.get("/api/tenants/acme/members", headers=owner).json()
        me = next(m["id"] for m in members if m["role"] == "owner")
        last_owner = api.patch(f"/api/tenants/acme/members/{me}", json={"role": "viewer"}, headers=owner)
        revoked = api.post(
            f"/api/tenants/acme/tokens/{invited.json()['token']['id']}/revoke", json={"confirm": True}, headers=owner
        )
        audit = api.get("/api/tenants/acme/audit", params={"action": "token.revoke"}, headers=owner).json()

    assert published.status_code == 202
    assert invited.status_code == 201 and members[0]["role"] == "owner" and len(members) == 3
    assert last_owner.status_code == 409 and last_owner.json()["error"]["code"] == "last_owner"
    assert revoked.status_code == 200 and revoked.json()["revoked_at"] is not None
    assert [e["action"] for e in audit] == ["token.revoke"]
    assert [t["slug"] for t in listed] == ["acme"]
    assert forbidden.status_code == 403
    assert bad_token.status_code == 401 and bad_token.json()["error"]["code"] == "unauthorized"
    # Tokens are stored hashed: the plain token appears nowhere in the database.
    engine = make_engine(control_plane_database)
    with engine.connect() as connection:
        hashes = [row[0] for row in connection.exec_driver_sql("SELECT token_hash FROM api_token")]
    engine.dispose()
    assert token not in hashes and all(len(h) == 64 for h in hashes)
