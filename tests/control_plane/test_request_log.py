"""Every API request logs one JSON line with its request id and tenant; lines logged during it carry them too."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from control_plane.app import create_app
from control_plane.container import Services
from dispatch.prefect_twin import RecordingPrefect
from tests.fixtures.logs import JsonLogs
from tests.fixtures.stack import OPERATOR_TOKEN, make_settings

OPERATOR = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}


@pytest.fixture
def api(tmp_path: Path) -> Iterator[TestClient[Any]]:
    settings = make_settings(tmp_path / "data")
    services = Services.build(settings, prefect=RecordingPrefect(), relay_prefect=RecordingPrefect())
    with TestClient(create_app(settings, services=services)) as client:
        yield client


def test_a_tenant_request_logs_a_json_line_with_its_request_id_and_tenant(
    api: TestClient[Any], json_logs: JsonLogs
) -> None:
    assert api.post("/ops/tenants", json={"slug": "acme", "name": "Acme"}, headers=OPERATOR).status_code == 201
    token = api.post("/ops/tenants/acme/tokens", json={"role": "owner"}, headers=OPERATOR).json()["token"]
    owner = {"Authorization": f"Bearer {token}"}

    response = api.post(
        "/api/tenants/acme/documents",
        json={"slug": "news", "title": "News"},
        headers={**owner, "X-Request-ID": "req-from-the-caller"},
    )
    assert response.status_code == 201 and response.headers["x-request-id"] == "req-from-the-caller"
    [served] = [line for line in json_logs.events("request.served") if line["request_id"] == "req-from-the-caller"]
    assert served["tenant"] == "acme" and served["status"] == 201 and served["method"] == "POST"
    assert served["path"] == "/api/tenants/acme/documents" and served["level"] == "info" and "timestamp" in served

    # A refusal is logged with its status; an id of our own when the caller's is missing or not tame.
    other = api.get("/api/tenants/acme/documents/doc_missing", headers={**owner, "X-Request-ID": "a b\nforged"})
    assert other.status_code == 404
    refused = json_logs.events("request.served")[-1]
    assert refused["status"] == 404 and refused["tenant"] == "acme"
    assert refused["request_id"] == other.headers["x-request-id"] and len(refused["request_id"]) == 32


def test_an_operator_request_about_a_tenant_names_it(api: TestClient[Any], json_logs: JsonLogs) -> None:
    assert api.post("/ops/tenants", json={"slug": "acme", "name": "Acme"}, headers=OPERATOR).status_code == 201
    assert api.post("/ops/tenants/acme/suspend", headers=OPERATOR).status_code == 200
    served = json_logs.events("request.served")[-1]
    assert served["tenant"] == "acme" and served["path"] == "/ops/tenants/acme/suspend"
    created = json_logs.events("request.served")[0]
    assert "tenant" not in created  # POST /ops/tenants names no tenant in its path
