"""GET /metrics: who may scrape, counters that move with commands and relay passes, figures bounded per scrape."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar.testing import TestClient
from prometheus_client.parser import text_string_to_metric_families
from pydantic import SecretStr

from control_plane.app import create_app
from control_plane.container import Services
from control_plane.metrics.figures import FigureSampler
from dispatch.prefect_twin import RecordingPrefect
from dispatch.runtime import TenantFigures
from dispatch.runtime import messages as m
from tenant_runtime.errors import RuntimeUnavailable
from tests.fixtures.http_errors import assert_error
from tests.fixtures.metrics import value
from tests.fixtures.shards import TwoShards
from tests.fixtures.stack import OPERATOR_TOKEN, make_settings

OPERATOR = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}
SCRAPE_TOKEN = "scrape-token-0123456789"


@dataclass
class Plane:
    api: TestClient[Any]
    services: Services
    prefect: RecordingPrefect

    def scrape(self, headers: dict[str, str] = OPERATOR) -> str:
        response = self.api.get("/metrics", headers=headers)
        assert response.status_code == 200, response.text
        assert response.headers["content-type"].startswith("text/plain")
        return response.text

    def member(self, slug: str) -> dict[str, str]:
        created = self.api.post("/ops/tenants", json={"slug": slug, "name": slug.title()}, headers=OPERATOR)
        assert created.status_code == 201, created.text
        token = self.api.post(f"/ops/tenants/{slug}/tokens", json={"role": "owner"}, headers=OPERATOR).json()["token"]
        return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def plane(tmp_path: Path) -> Iterator[Plane]:
    settings = make_settings(tmp_path / "data")
    control = settings.control_plane.model_copy(update={"metrics_token": SecretStr(SCRAPE_TOKEN)})
    settings = type(settings)(runtime=settings.runtime, dispatch=settings.dispatch, control_plane=control)
    prefect = RecordingPrefect()
    services = Services.build(settings, prefect=prefect, relay_prefect=RecordingPrefect())
    with TestClient(create_app(settings, services=services)) as api:
        yield Plane(api, services, prefect)


def test_the_scrape_needs_the_scrape_token_or_an_operator_token(plane: Plane) -> None:
    member = plane.member("acme")
    assert_error(plane.api.get("/metrics"), 401, "unauthorized")
    assert_error(plane.api.get("/metrics", headers={"Authorization": "Bearer not-a-token"}), 401, "unauthorized")
    assert_error(plane.api.get("/metrics", headers=member), 403, "forbidden")
    assert value(plane.scrape({"Authorization": f"Bearer {SCRAPE_TOKEN}"}), "pressroom_tenants", status="active") == 1
    assert value(plane.scrape(OPERATOR), "pressroom_tenants", status="active") == 1


def test_a_publish_moves_the_command_relay_and_operation_figures(plane: Plane) -> None:
    owner = plane.member("acme")
    before = plane.scrape()
    doc = plane.api.post("/api/tenants/acme/documents", json={"slug": "news", "title": "News"}, headers=owner).json()
    refused = plane.api.post(f"/api/tenants/acme/documents/{doc['id']}/publish", json={}, headers=owner)
    assert_error(refused, 400, "confirmation_required")
    published = plane.api.post(
        f"/api/tenants/acme/documents/{doc['id']}/publish", json={"confirm": True}, headers=owner
    )
    assert published.status_code == 202, published.text
    assert plane.services.handoff.flush(10)
    plane.prefect.late["acme"] = (2, 42.5)
    after = plane.scrape()

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert moved("pressroom_commands_total", kind="PublishDocument", result="ok") == 1
    assert moved("pressroom_commands_total", kind="PublishDocument", result="confirmation_required") == 1
    assert moved("pressroom_commands_total", kind="CreateDocument", result="ok") == 1
    assert moved("pressroom_command_seconds_count", kind="PublishDocument") == 2
    assert moved("pressroom_relay_sends_total", result="sent") >= 1  # the hand-off sent the publish's run
    assert moved("pressroom_relay_pass_seconds_count") >= 1
    # The operation is sent, not finished: it counts in the tenant's queue depth and by its status.
    assert value(after, "pressroom_tenant_queue_depth", tenant="acme") == 1
    assert value(after, "pressroom_operations", status="queued") == 1
    assert value(after, "pressroom_tenant_late_runs", tenant="acme") == 2
    assert value(after, "pressroom_tenant_lateness_seconds", tenant="acme") == 42.5
    assert value(after, "pressroom_prefect_up") == 1
    assert value(after, "pressroom_shard_up", shard="default", transport="in_process") == 1
    assert value(after, "pressroom_shard_tenants", shard="default") == 1


def test_with_prefect_down_the_scrape_still_answers(plane: Plane) -> None:
    plane.member("acme")
    plane.prefect.down = True
    scrape = plane.scrape()
    assert value(scrape, "pressroom_prefect_up") == 0
    assert value(scrape, "pressroom_tenants", status="active") == 1


class CountingRuntime:
    """Stands in for the runtime client: figures of any tenant, counted; ``down`` tenants answer 503."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.down: set[str] = set()

    def figures(self, tenant: str, actor: m.ActorRef) -> TenantFigures:
        self.asked.append(tenant)
        if tenant in self.down:
            raise RuntimeUnavailable("down", details={"tenant": tenant})
        return TenantFigures(unfinished_operations=1, by_status={"queued": 1})


def test_a_scrape_asks_a_bounded_number_of_runtimes_the_longest_unasked_first() -> None:
    runtime = CountingRuntime()
    clock = iter(range(100))
    sampler = FigureSampler(runtime, 2, clock=lambda: float(next(clock)))  # type: ignore[arg-type]
    tenants = ["a", "b", "c", "d", "e"]

    for _ in range(3):
        assert sampler.refresh(tenants) == 2
    assert runtime.asked == ["a", "b", "c", "d", "e", "a"]  # every tenant once before any twice
    assert len(sampler.figures()) == 5

    runtime.down = {"b"}
    sampler.refresh(tenants)  # b is due but its runtime is down: its last figures stay
    assert "b" in sampler.figures()
    sampler.refresh(["a", "c"])  # the others are gone: forgotten
    assert set(sampler.figures()) == {"a", "c"}


def test_remote_shards_are_probed_and_each_runtime_serves_its_own_registry(two_shards: TwoShards) -> None:
    two_shards.tenant("acme", "a")
    two_shards.tenant("globex", "b")

    def scrape() -> str:
        response = two_shards.api.get("/metrics", headers=two_shards.operator)
        assert response.status_code == 200, response.text
        return response.text

    both = scrape()
    assert value(both, "pressroom_shard_up", shard="a", transport="http") == 1
    assert value(both, "pressroom_shard_up", shard="b", transport="http") == 1
    assert value(both, "pressroom_shard_tenants", shard="b") == 1
    assert value(both, "pressroom_figures_missing_tenants") == 0  # figures of both came over the wire

    two_shards.b.stop()
    try:
        down = scrape()  # the scrape still answers, and says which runtime did not
        assert value(down, "pressroom_shard_up", shard="b", transport="http") == 0
        assert value(down, "pressroom_shard_up", shard="a", transport="http") == 1
    finally:
        two_shards.b.start()

    # A runtime's own registry (relay, sweep, steps of its process): no credential, like its /healthz.
    own = httpx.get(f"{two_shards.a.url}/metrics", timeout=10)
    assert own.status_code == 200
    assert "pressroom_relay_pass_seconds" in {family.name for family in text_string_to_metric_families(own.text)}
