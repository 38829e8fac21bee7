"""The operator API: an operator guard in front of every endpoint, and every operator write audited."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from control_plane.app import create_app
from control_plane.container import Services
from dispatch.prefect_twin import RecordingPrefect
from tenant_runtime.settings import RuntimeSettings
from tenant_runtime.workspace.service import service_status
from tests.fixtures.http_errors import assert_error
from tests.fixtures.stack import OPERATOR_TOKEN, make_settings

OPERATOR = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}


@dataclass
class Ops:
    api: TestClient[Any]
    prefect: RecordingPrefect
    runtime: RuntimeSettings

    def audit(self, **query: str) -> list[dict[str, Any]]:
        response = self.api.get("/ops/audit", params=query, headers=OPERATOR)
        assert response.status_code == 200, response.text
        return list(response.json())


@pytest.fixture
def ops(tmp_path: Path) -> Iterator[Ops]:
    settings = make_settings(tmp_path / "data")
    prefect = RecordingPrefect()
    services = Services.build(settings, prefect=prefect, relay_prefect=RecordingPrefect())
    with TestClient(create_app(settings, services=services)) as api:
        yield Ops(api, prefect, settings.runtime)


def _member(ops: Ops, slug: str, role: str = "owner") -> dict[str, str]:
    assert ops.api.post("/ops/tenants", json={"slug": slug, "name": slug.title()}, headers=OPERATOR).status_code == 201
    token = ops.api.post(f"/ops/tenants/{slug}/tokens", json={"role": role}, headers=OPERATOR).json()["token"]
    return {"Authorization": f"Bearer {token}"}


def test_every_operator_endpoint_refuses_members_and_anonymous_callers(ops: Ops) -> None:
    member = _member(ops, "acme")
    paths = [route.path for route in ops.api.app.routes if route.path.startswith("/ops")]
    assert len(paths) >= 8
    for path in paths:
        url = path.replace("{slug:str}", "acme")
        for method in ("GET", "POST", "PATCH"):
            if method not in ops.api.app.route_handler_method_map.get(path, {}):
                continue
            assert_error(ops.api.request(method, url, headers=member), 403, "forbidden", label=f"{method} {url}")
            assert_error(ops.api.request(method, url), 401, "unauthorized", label=f"{method} {url}")
    assert [e["action"] for e in ops.audit()] == ["token.issue", "tenant.create"]  # nothing refused was written


def test_operator_writes_are_audited_with_dotted_names_and_readable_by_filter(ops: Ops) -> None:
    _member(ops, "acme")
    ops.api.patch("/ops/tenants/acme/quota", json={"publishes_per_hour": 5}, headers=OPERATOR)
    ops.api.post("/ops/tenants/acme/suspend", headers=OPERATOR)
    assert service_status(ops.runtime, "acme") == "suspended"  # the runtime knows (the nightly fan-out asks it)
    ops.api.post("/ops/tenants/acme/resume", headers=OPERATOR)
    assert service_status(ops.runtime, "acme") == "active"

    audit = ops.audit()
    assert [e["action"] for e in audit] == [
        "tenant.resume",
        "tenant.suspend",
        "tenant.quota.set",
        "token.issue",
        "tenant.create",
    ]
    assert {e["actor"] for e in audit} == {f"operator:{_operator_token_id(ops)}"}
    assert all(e["tenant"] == "acme" for e in audit)
    quota = next(e for e in audit if e["action"] == "tenant.quota.set")
    assert quota["data"] == {"publishes_per_hour": 5, "before": 600}
    token = next(e for e in audit if e["action"] == "token.issue")
    assert token["data"] == {"role": "owner"} and token["object_type"] == "api_token"  # never the token itself
    assert [e["action"] for e in ops.audit(action="tenant.suspend")] == ["tenant.suspend"]
    assert ops.audit(tenant="other") == []
    # The suspension paused the tenant's queue before the status flipped, and the resume unpaused it.
    assert [call["paused"] for call in ops.prefect.called("ensure_queue")][-2:] == [True, False]


def test_a_suspension_prefect_cannot_apply_changes_and_audits_nothing(ops: Ops) -> None:
    _member(ops, "acme")
    ops.prefect.down = True

    assert_error(ops.api.post("/ops/tenants/acme/suspend", headers=OPERATOR), 503, "unavailable")

    assert ops.api.get("/ops/tenants/acme", headers=OPERATOR).json()["status"] == "active"
    assert service_status(ops.runtime, "acme") == "active"
    assert "tenant.suspend" not in [e["action"] for e in ops.audit()]


def test_bad_audit_filters_are_400s(ops: Ops) -> None:
    assert_error(ops.api.get("/ops/audit?action=Not%20Dotted", headers=OPERATOR), 400, "invalid_request")
    assert_error(ops.api.get("/ops/audit?limit=0", headers=OPERATOR), 400, "invalid_request")


def _operator_token_id(ops: Ops) -> str:
    services: Services = ops.api.app.state.services
    return services.tokens.resolve(OPERATOR["Authorization"]).token_id


def test_a_tenants_detail_shows_its_last_good_backup_age_alarm_and_chore_lateness(ops: Ops) -> None:
    owner = _member(ops, "backed")
    detail = ops.api.get("/ops/tenants/backed", headers=OPERATOR)
    assert detail.status_code == 200, detail.text
    backups = detail.json()["backups"]
    assert backups["last_good_backup"] is None and backups["alarm"] is False  # a new site: nothing due yet
    assert backups["alarm_after_seconds"] == 26 * 3600
    assert backups["chores"]["export_backup"]["cron"] == "0 3 * * *"
    # The owner's own backup shows in the list at once (its run is the relay's; here Prefect is a twin).
    queued = ops.api.post("/api/tenants/backed/backups", json={"confirm": True}, headers=owner)
    assert queued.status_code == 202, queued.text
    listed = ops.api.get("/api/tenants/backed/backups", headers=owner).json()
    assert [b["id"] for b in listed] == [queued.json()["backup_id"]] and listed[0]["status"] == "queued"


def test_the_tenant_list_pages_by_cursor_in_slug_order_and_refuses_a_bad_cursor(ops: Ops) -> None:
    slugs = [f"page-{i:02d}" for i in range(7)]
    for slug in reversed(slugs):  # created out of order: the pages still go by slug
        assert ops.api.post("/ops/tenants", json={"slug": slug, "name": slug}, headers=OPERATOR).status_code == 201
    seen: list[str] = []
    url: str | None = "/ops/tenants?limit=3"
    pages = 0
    while url is not None:
        response = ops.api.get(url, headers=OPERATOR)
        assert response.status_code == 200, response.text
        rows = response.json()
        assert len(rows) <= 3 and all(row["shard"] for row in rows)
        seen += [row["slug"] for row in rows]
        link = response.headers.get("link")
        url = link[1 : link.index(">")] if link else None
        assert (url is None) == (len(rows) < 3)
        pages += 1
    assert seen == slugs and pages == 3  # 3 + 3 + 1, each tenant once
    full = ops.api.get("/ops/tenants?limit=7", headers=OPERATOR)
    assert [r["slug"] for r in full.json()] == slugs and "cursor=page-06" in full.headers["link"]
    assert ops.api.get("/ops/tenants?limit=7&cursor=page-06", headers=OPERATOR).json() == []  # past the end
    assert [r["slug"] for r in ops.api.get("/ops/tenants", headers=OPERATOR).json()] == slugs  # default page
    for bad in ("Not A Slug", "x", "page_01"):
        assert_error(ops.api.get("/ops/tenants", params={"cursor": bad}, headers=OPERATOR), 400, "invalid_request")
    assert_error(ops.api.get("/ops/tenants?limit=0", headers=OPERATOR), 400, "invalid_request")
    assert_error(ops.api.get("/ops/tenants?limit=1001", headers=OPERATOR), 400, "invalid_request")
