"""Briefs end to end on a real Prefect server: a lane's durable flow turns a brief into a published article."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prefect.client.orchestration import get_client
from sqlmodel import select

from flows.lanes import runtime as lane_runtime
from flows.probes import PROBES
from tenant_runtime.lanes import BACKBONE
from tenant_runtime.lanes.providers import OfflineProvider
from tenant_runtime.lanes.reference import RESEARCH_GRAPH
from tenant_runtime.lanes.settings import LaneSettings
from tenant_runtime.workspace import AuditEntry, CostEntry, Document, Lane
from tests.fixtures.source_server import SourceServer
from tests.fixtures.stack import Pressroom, Tenant
from tests.fixtures.worker_process import WorkerProcess

pytestmark = pytest.mark.integration


@pytest.fixture
def provider() -> Iterator[OfflineProvider]:
    """The offline provider at a notional 1000 µ$ a call; sources on 127.0.0.1 allowed, as an operator would."""
    provider = OfflineProvider(micros_per_call=1000)
    settings = LaneSettings(lanes_ground_allow_private=True, lanes_offline_micros_per_call=1000)
    lane_runtime.configure(settings, provider=provider)
    try:
        yield provider
    finally:
        lane_runtime.configure()


async def _read_run(run_id: str) -> Any:
    async with get_client() as client:
        return await client.read_flow_run(run_id)


def _post_brief(room: Pressroom, tenant: Tenant, **fields: Any) -> dict[str, Any]:
    response = room.api.post(f"/api/tenants/{tenant.slug}/briefs", json=fields, headers=tenant.headers)
    assert response.status_code == 202, response.text
    return dict(response.json())


def _ledger(room: Pressroom, tenant: Tenant) -> list[tuple[str, str, int]]:
    with room.factory.open(tenant.slug).reader() as tx:
        return [(e.brief_id, e.step, e.cost_micros) for e in tx.exec(select(CostEntry))]


def test_a_brief_becomes_a_published_article_through_its_lanes_tagged_run(
    pressroom: Pressroom, provider: OfflineProvider, source_server: SourceServer
) -> None:
    source_server.pages["/report"] = "<html><title>Quarterly report</title><body>Revenue doubled.</body></html>"
    acme = pressroom.new_tenant("acme")
    pressroom.start_worker(acme)

    accepted = _post_brief(
        pressroom,
        acme,
        brief_id="news-2026-12-01-1",
        lane="news",
        title="Revenue doubles",
        sources=[source_server.url("/report")],
        notes="Revenue doubled this quarter.\nThe team grew too.",
    )
    operation = pressroom.wait_operation(acme, accepted["operation_id"])

    assert operation["status"] == "succeeded", operation
    assert operation["outcome"]["steps"] == list(BACKBONE)
    run = asyncio.run(_read_run(operation["flow_run_id"]))
    assert run.idempotency_key == "brief:news-2026-12-01-1"
    assert {"lane:news", f"tenant:{acme.slug}", f"op:{operation['id']}"} <= set(run.tags)
    assert run.name == f"article {acme.slug}/news: news-2026-12-01-1"
    page = pressroom.site.get(f"/{acme.slug}/revenue-doubles")
    assert page.status_code == 200 and "Revenue doubled this quarter." in page.text
    assert "Quarterly report" in page.text  # the grounded source's title, cited
    assert "revenue-doubles" in pressroom.site.get(f"/{acme.slug}/search", params={"q": "revenue"}).text
    assert "Revenue doubles" in pressroom.site.get(f"/{acme.slug}/feed.xml").text
    assert pressroom.store.get(f"tenants/{acme.slug}/{operation['outcome']['cover']}").startswith(b"\x89PNG")
    assert source_server.fetches["/report"] == 1
    assert provider.calls == 1
    assert _ledger(pressroom, acme) == [("news-2026-12-01-1", "generate", 1000)]

    # The same brief again: the same operation, nothing new created.
    again = pressroom.api.post(
        f"/api/tenants/{acme.slug}/briefs",
        json={
            "brief_id": "news-2026-12-01-1",
            "lane": "news",
            "title": "Revenue doubles",
            "sources": [source_server.url("/report")],
            "notes": "Revenue doubled this quarter.\nThe team grew too.",
        },
        headers=acme.headers,
    )
    assert again.status_code == 200 and again.json() == {
        "status": "already queued",
        "operation_id": operation["id"],
        "brief_id": "news-2026-12-01-1",
    }
    with pressroom.factory.open(acme.slug).reader() as tx:
        assert len(list(tx.exec(select(Document)))) == 1


def test_a_retry_after_step_seven_fails_never_pays_again(pressroom: Pressroom, provider: OfflineProvider) -> None:
    acme = pressroom.new_tenant("acme")
    # cover (step 7 of 8) fails on the first attempt and both in-attempt task retries: the attempt fails,
    # and the operation's retry resumes from the cache.
    PROBES.fail(acme.slug, "cover", times=3)
    pressroom.start_worker(acme)

    accepted = _post_brief(pressroom, acme, brief_id="dev-1", lane="dev", title="A faster build", notes="It is fast.")
    operation = pressroom.wait_operation(acme, accepted["operation_id"])

    assert operation["status"] == "succeeded", operation
    assert [a["step"] for a in operation["attempts"]][:1] == ["cover"] and len(operation["attempts"]) == 2
    assert provider.calls == 1
    assert _ledger(pressroom, acme) == [("dev-1", "generate", 1000)]
    assert PROBES.count(acme.slug, "generate") == 1 and PROBES.count(acme.slug, "persist") == 1
    assert PROBES.count(acme.slug, "cover") == 4
    assert pressroom.site.get(f"/{acme.slug}/a-faster-build").status_code == 200


def test_a_budget_stops_the_run_before_the_call_that_would_cross_it(
    pressroom: Pressroom, provider: OfflineProvider
) -> None:
    acme = pressroom.new_tenant("acme")
    with pressroom.factory.open(acme.slug).transaction() as tx:
        lane = tx.get(Lane, "marketing")
        assert lane is not None
        lane.budget_micros = 999
        tx.add(lane)
    pressroom.start_worker(acme)

    accepted = _post_brief(pressroom, acme, brief_id="mk-1", lane="marketing", title="Buy now", notes="Good.")
    operation = pressroom.wait_operation(acme, accepted["operation_id"], statuses=("failed", "dead", "succeeded"))

    assert operation["status"] == "failed", operation
    assert operation["error"]["code"] == "budget_exceeded" and operation["next_attempt_at"] is None
    assert operation["attempts"][0]["step"] == "generate"
    assert provider.calls == 0 and _ledger(pressroom, acme) == []
    assert pressroom.site.get(f"/{acme.slug}/buy-now").status_code == 404
    with pressroom.factory.open(acme.slug).reader() as tx:
        assert list(tx.exec(select(Document))) == []


def test_the_research_lane_runs_its_own_graph_with_a_second_grounding_round(
    pressroom: Pressroom, provider: OfflineProvider, source_server: SourceServer
) -> None:
    source_server.pages["/paper"] = (
        f'<html><title>The paper</title><body><a href="{source_server.url("/data")}">data</a></body></html>'
    )
    source_server.pages["/data"] = "<html><title>The data</title><body>Numbers.</body></html>"
    acme = pressroom.new_tenant("acme")
    graph = [dict(node) for node in RESEARCH_GRAPH]
    installed = pressroom.api.post(
        f"/api/tenants/{acme.slug}/lanes",
        json={"name": "research", "graph": graph, "source": "research@1.0.0"},
        headers=acme.headers,
    )
    assert installed.status_code == 201, installed.text
    pressroom.start_worker(acme)

    accepted = _post_brief(
        pressroom,
        acme,
        brief_id="r-1",
        lane="research",
        title="What the paper shows",
        sources=[source_server.url("/paper")],
    )
    operation = pressroom.wait_operation(acme, accepted["operation_id"])

    assert operation["status"] == "succeeded", operation
    assert operation["outcome"]["steps"] == [n["id"] for n in RESEARCH_GRAPH]
    assert source_server.fetches["/paper"] == 1 and source_server.fetches["/data"] == 1  # the second round
    assert PROBES.count(acme.slug, "fact_check") == 1 and PROBES.count(acme.slug, "ground") == 2
    run = asyncio.run(_read_run(operation["flow_run_id"]))
    assert "lane:research" in run.tags
    page = pressroom.site.get(f"/{acme.slug}/what-the-paper-shows")
    assert page.status_code == 200 and "The data" in page.text


def _decide(room: Pressroom, tenant: Tenant, operation_id: str, approved: bool) -> None:
    response = room.api.post(
        f"/api/tenants/{tenant.slug}/operations/{operation_id}/events",
        json={"type": "approval", "payload": {"approved": approved}},
        headers=tenant.headers,
    )
    assert response.status_code == 202, response.text


def test_an_approval_lane_waits_then_publishes_on_approve_and_stays_draft_on_reject(
    pressroom: Pressroom, provider: OfflineProvider
) -> None:
    acme = pressroom.new_tenant("acme")
    required = pressroom.api.put(
        f"/api/tenants/{acme.slug}/lanes/founders/approval", json={"required": True}, headers=acme.headers
    )
    assert required.status_code == 200 and required.json()["graph"][-2:] == ["approve", "publish"]
    pressroom.start_worker(acme)

    yes = _post_brief(pressroom, acme, brief_id="f-yes", lane="founders", title="We shipped", notes="Yes.")
    waiting = pressroom.wait_operation(acme, yes["operation_id"], ("waiting",))
    assert waiting["waiting"]["event_type"] == "approval"
    assert pressroom.site.get(f"/{acme.slug}/we-shipped").status_code == 404  # a draft until approved
    _decide(pressroom, acme, yes["operation_id"], True)
    assert pressroom.wait_operation(acme, yes["operation_id"])["status"] == "succeeded"
    assert pressroom.site.get(f"/{acme.slug}/we-shipped").status_code == 200

    no = _post_brief(pressroom, acme, brief_id="f-no", lane="founders", title="We failed", notes="No.")
    pressroom.wait_operation(acme, no["operation_id"], ("waiting",))
    _decide(pressroom, acme, no["operation_id"], False)
    rejected = pressroom.wait_operation(acme, no["operation_id"], ("failed", "dead", "succeeded"))
    assert rejected["status"] == "failed" and rejected["error"]["code"] == "approval_rejected"
    assert pressroom.site.get(f"/{acme.slug}/we-failed").status_code == 404
    assert provider.calls == 2  # the resumed runs took generate from the cache


def _audits(room: Pressroom, tenant: Tenant, op_id: str, action: str) -> int:
    with room.factory.open(tenant.slug).reader() as tx:
        rows = tx.exec(select(AuditEntry).where(AuditEntry.operation_id == op_id, AuditEntry.action == action))
        return len(list(rows))


def _kill_brief(room: Pressroom, tenant: Tenant, source_server: SourceServer) -> str:
    """A news brief citing a page of its own (so its fetches are counted per tenant); its operation id."""
    source_server.pages[f"/{tenant.slug}"] = f"<html><title>Source of {tenant.slug}</title><body>Facts.</body></html>"
    accepted = _post_brief(
        room,
        tenant,
        brief_id=f"kill-{tenant.slug}",
        lane="news",
        title="Killed and resumed",
        sources=[source_server.url(f"/{tenant.slug}")],
        notes=f"Written for {tenant.slug}.",
    )
    return str(accepted["operation_id"])


@pytest.mark.slow
def test_a_worker_killed_at_any_backbone_step_resumes_and_pays_and_publishes_once(
    pressroom_fs: Pressroom, source_server: SourceServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kill -9 of the worker process in each backbone step (and in the last step of the delivery its
    publish node runs), in two worker processes: the resumed run publishes the article once, takes every
    finished step from the cache, fetches its source once, and the ledger holds one charge for generate
    (a step parks before its body, so a run killed in generate had not called the provider yet)."""
    room = pressroom_fs
    # The worker processes read their lane settings from the environment: loopback sources, a priced call.
    monkeypatch.setenv("PRESSROOM_LANES_GROUND_ALLOW_PRIVATE", "true")
    monkeypatch.setenv("PRESSROOM_LANES_OFFLINE_MICROS_PER_CALL", "1000")

    # The steps of an uninterrupted run, in order, from an in-process worker (one process start fewer).
    lane_runtime.configure(LaneSettings(lanes_ground_allow_private=True, lanes_offline_micros_per_call=1000))
    try:
        reference = room.new_tenant("ref")
        room.start_worker(reference)
        done = room.wait_operation(reference, _kill_brief(room, reference, source_server), timeout=90)
        assert done["status"] == "succeeded", done
        room.stop_workers()
    finally:
        lane_runtime.configure()
    executions = Counter({step: n for (tenant, step), n in PROBES.executions.items() if tenant == reference.slug})
    ran = list(executions)  # a Counter keeps the order steps first ran in
    assert [s for s in ran if s in BACKBONE] == [s for s in BACKBONE if s != "publish"]
    # The publish node is make_public, then the one delivery pipeline, whose every step test_crash_recovery
    # kills already; here: every step up to make_public, and the run's last step (all the rest cached).
    assert ran.index("make_public") > ran.index("cover")
    steps = [*ran[: ran.index("make_public") + 1], ran[-1]]

    # One tenant per step, all in one worker process, each run parked in its own step; one kill -9.
    logs = tmp_path / "killed"
    tenants = [room.new_tenant(f"k{index}") for index in range(len(steps))]
    killed = [
        (tenant, _kill_brief(room, tenant, source_server), step) for tenant, step in zip(tenants, steps, strict=True)
    ]
    slugs = [tenant.slug for tenant in tenants]
    parks = {tenant.slug: step for tenant, _, step in killed}
    worker = WorkerProcess(room, slugs, logs, park=parks, concurrency=len(killed) + 2)
    try:
        assert worker.wait_parked(slugs) == parks
        worker.kill9()
    finally:
        worker.stop()
    for tenant, op, step in killed:
        assert room.operation(tenant, op)["status"] == "delivering", (step, room.operation(tenant, op))

    worker = WorkerProcess(room, slugs, logs, concurrency=len(killed) + 2)
    try:
        for tenant, op, step in killed:
            done = room.wait_operation(tenant, op, timeout=90)
            assert done["status"] == "succeeded", (step, done)
            assert done["outcome"]["steps"] == list(BACKBONE), step
            # Finished steps came from the cache; the killed one ran again, once.
            expected = executions.copy()
            expected[step] += 1
            assert Counter(worker.executions(tenant.slug)) == expected, step
            assert [a["number"] for a in done["attempts"]] == [1, 2], step
            assert "worker lost" in (done["attempts"][0]["error"] or ""), step
            # Paid once, fetched once, published once.
            assert _ledger(room, tenant) == [(f"kill-{tenant.slug}", "generate", 1000)], step
            assert source_server.fetches[f"/{tenant.slug}"] == 1, step
            assert _audits(room, tenant, op, "content.publish") == 1, step
            assert _audits(room, tenant, op, "operation.succeeded") == 1, step
            with room.factory.open(tenant.slug).reader() as tx:
                assert len(list(tx.exec(select(Document)))) == 1, step
            page = room.site.get(f"/{tenant.slug}/killed-and-resumed")
            assert page.status_code == 200 and f"Written for {tenant.slug}." in page.text, step
    finally:
        worker.stop()
