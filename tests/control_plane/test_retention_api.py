"""Per-tenant retention: the audited operator action behind PATCH /ops/tenants/{slug}/retention, what the
prune makes of it, and the control plane's background pruner (against the recording twin of Prefect)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from control_plane.app import create_app
from control_plane.container import Services
from control_plane.tenants.pruner import RunPruner
from dispatch.prefect_port import RunRequest
from dispatch.prefect_twin import RecordingPrefect
from tenant_runtime.ids import utcnow
from tenant_runtime.workflows import SeedExampleSiteParameters, Workflow
from tests.fixtures.http_errors import assert_error
from tests.fixtures.stack import OPERATOR_TOKEN, make_settings

OPERATOR = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}


@dataclass
class Ops:
    api: TestClient[Any]
    prefect: RecordingPrefect
    services: Services

    def tenant(self, slug: str) -> dict[str, Any]:
        response = self.api.get(f"/ops/tenants/{slug}", headers=OPERATOR)
        assert response.status_code == 200, response.text
        return dict(response.json())

    def set_retention(self, slug: str, **days: Any) -> Any:
        return self.api.patch(f"/ops/tenants/{slug}/retention", json=days, headers=OPERATOR)


def _ops(tmp_path: Path, **dispatch: Any) -> Iterator[Ops]:
    settings = make_settings(tmp_path / "data", **dispatch)
    prefect = RecordingPrefect()
    services = Services.build(settings, prefect=prefect, relay_prefect=RecordingPrefect())
    with TestClient(create_app(settings, services=services)) as api:
        for slug in ("acme", "globex"):
            assert api.post("/ops/tenants", json={"slug": slug, "name": slug}, headers=OPERATOR).status_code == 201
        yield Ops(api, prefect, services)


@pytest.fixture
def ops(tmp_path: Path) -> Iterator[Ops]:
    yield from _ops(tmp_path, retention_prune_seconds=0)


def test_an_operator_sets_a_tenants_retention_and_the_tenant_shows_it(ops: Ops) -> None:
    assert ops.tenant("acme")["retention"] == {
        "succeeded_days": 7,
        "failed_days": 30,
        "cancelled_days": 30,
        "overrides": {},
    }

    set_ = ops.set_retention("acme", succeeded_days=2, cancelled_days=90)
    partial = ops.set_retention("acme", failed_days=45)  # a field left out keeps its value
    reset = ops.set_retention("acme", cancelled_days=None)  # null: back to the default

    assert set_.status_code == 200, set_.text
    assert set_.json()["retention"]["overrides"] == {"succeeded_days": 2, "cancelled_days": 90}
    assert partial.json()["retention"]["overrides"] == {"succeeded_days": 2, "cancelled_days": 90, "failed_days": 45}
    assert (
        ops.tenant("acme")["retention"]
        == reset.json()["retention"]
        == {
            "succeeded_days": 2,
            "failed_days": 45,
            "cancelled_days": 30,
            "overrides": {"succeeded_days": 2, "failed_days": 45},
        }
    )
    assert ops.tenant("globex")["retention"]["overrides"] == {}
    audit = ops.api.get("/ops/audit?action=tenant.retention.set", headers=OPERATOR).json()
    assert [e["data"]["retention"]["cancelled_days"] for e in audit] == [None, 90, 90]
    first = audit[-1]
    assert first["tenant"] == "acme" and first["actor"].startswith("operator:")
    assert first["data"]["before"] == {"succeeded_days": None, "failed_days": None, "cancelled_days": None}


@pytest.mark.parametrize(
    "body",
    [{}, {"succeeded_days": 0}, {"failed_days": 3651}, {"cancelled_days": "7"}, {"succeeded_days": 1.5}, {"days": 3}],
)
def test_bad_retention_is_a_400_and_changes_nothing(ops: Ops, body: dict[str, Any]) -> None:
    response = ops.api.patch("/ops/tenants/acme/retention", json=body, headers=OPERATOR)

    assert response.status_code == 400, response.text
    assert ops.tenant("acme")["retention"]["overrides"] == {}
    assert ops.api.get("/ops/audit?action=tenant.retention.set", headers=OPERATOR).json() == []


def test_a_missing_tenants_retention_is_not_found(ops: Ops) -> None:
    assert_error(ops.set_retention("nobody", succeeded_days=3), 404, "not_found")


def test_the_openapi_document_describes_the_retention_body(ops: Ops) -> None:
    schema = ops.api.get("/schema/openapi.json").json()
    body = schema["components"]["schemas"]["RetentionUpdate"]
    assert set(body["properties"]) == {"succeeded_days", "failed_days", "cancelled_days"}
    assert body.get("required", []) == [] and body["additionalProperties"] is False


def _finished(prefect: RecordingPrefect, tenant: str, age_days: float) -> str:
    n = len(prefect.runs)
    request = RunRequest(
        tenant=tenant,
        workflow=Workflow.SEED_EXAMPLE_SITE,
        parameters=SeedExampleSiteParameters(tenant=tenant, operation_id=f"op_{n}"),
        idempotency_key=f"seed:{tenant}:{n}",
        tags=(f"tenant:{tenant}",),
        scheduled_time=utcnow(),
    )
    run_id = asyncio.run(prefect.create_run(request)).id
    prefect.finish(run_id, "COMPLETED", utcnow() - timedelta(days=age_days))
    return run_id


def test_the_prune_applies_each_tenants_override_from_the_database(ops: Ops) -> None:
    ops.set_retention("acme", succeeded_days=1)
    acme = _finished(ops.prefect, "acme", 2)
    globex = _finished(ops.prefect, "globex", 2)

    dry = asyncio.run(ops.services.tenants.prune_runs(dry_run=True))
    report = asyncio.run(ops.services.tenants.prune_runs())

    assert dry.deleted == 1 and dry.by_tenant == {"acme": 1}
    assert report.deleted == 1 and acme not in ops.prefect.runs and globex in ops.prefect.runs
    later = asyncio.run(ops.services.tenants.prune_runs(now=utcnow() + timedelta(days=6)))
    assert later.deleted == 1 and globex not in ops.prefect.runs


def test_the_app_prunes_in_the_background_until_it_stops(tmp_path: Path) -> None:
    lifespan = _ops(tmp_path, retention_prune_seconds=0.2)
    ops = next(lifespan)
    old = _finished(ops.prefect, "acme", 8)
    deadline = time.monotonic() + 10
    while old in ops.prefect.runs and time.monotonic() < deadline:
        time.sleep(0.05)
    assert old not in ops.prefect.runs, "the background pruner never ran"

    with pytest.raises(StopIteration):
        next(lifespan)  # the app shuts down: its pruner stops with it
    queries = len(ops.prefect.called("finished_runs"))
    time.sleep(0.5)
    assert len(ops.prefect.called("finished_runs")) == queries


def test_a_pass_that_fails_is_logged_and_the_next_one_runs(ops: Ops) -> None:
    async def scenario() -> int:
        ops.prefect.down = True
        pruner = RunPruner(ops.services.tenants, 0.05, first_delay=0).start()
        await asyncio.sleep(0.3)
        ops.prefect.down = False
        await asyncio.sleep(0.3)
        await pruner.stop()
        return pruner.passes

    old = _finished(ops.prefect, "globex", 8)
    assert asyncio.run(scenario()) >= 3
    assert old not in ops.prefect.runs
    assert RunPruner(ops.services.tenants, 0).start()._task is None  # 0: never starts
