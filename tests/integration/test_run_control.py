"""Run control end to end on the real stack: pause/resume mid-run, terminate (API and Prefect cancel),
restart from a step, and a release's approval event sent early, on time, and never."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from dispatch.prefect_gateway import PrefectGateway
from dispatch.prefect_port import RunState
from flows.probes import PROBES
from tests.fixtures.stack import Pressroom, Tenant

pytestmark = [pytest.mark.integration]

CONFIRM = {"confirm": True}
DELIVERY = ("verify", "render_page", "public_record", "index_search", "render_home", "purge")


def _until(check: Callable[[], bool], timeout: float = 30, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _control(room: Pressroom, tenant: Tenant, operation_id: str, action: str, body: Any = None) -> dict[str, Any]:
    response = room.api.post(
        f"/api/tenants/{tenant.slug}/operations/{operation_id}/{action}",
        json=CONFIRM if body is None else body,
        headers=tenant.headers,
    )
    assert response.status_code == 202, response.text
    return dict(response.json())


def _counts(tenant: Tenant) -> dict[str, int]:
    return {step: PROBES.count(tenant.slug, step) for step in DELIVERY}


def test_pause_mid_run_stops_at_the_next_step_and_resume_redoes_nothing(pressroom: Pressroom) -> None:
    tenant = pressroom.new_tenant("pause")
    pressroom.start_worker(tenant)
    release = PROBES.park(tenant.slug, "render_page")
    doc = pressroom.create_document(tenant, "paused-story")
    operation_id = pressroom.publish(tenant, doc["id"])["operation_id"]
    _until(lambda: PROBES.count(tenant.slug, "render_page") == 1, what="render_page to start")

    _control(pressroom, tenant, operation_id, "pause")
    _until(lambda: pressroom.operation(tenant, operation_id)["control"]["applied"], what="the suspend")
    release.set()  # render_page finishes; the run stops before public_record
    paused = pressroom.wait_operation(tenant, operation_id, ("paused",))
    assert paused["waiting"]["reason"] == "paused"
    assert PROBES.count(tenant.slug, "public_record") == 0
    steps = {s["name"]: s for s in paused["steps"]}
    assert steps["verify"]["status"] == "completed" and steps["render_page"]["status"] == "completed"
    assert steps["public_record"]["status"] == "pending"

    _control(pressroom, tenant, operation_id, "resume")
    done = pressroom.wait_operation(tenant, operation_id)
    assert done["status"] == "succeeded"
    # Completed steps came back from the cache: each ran once.
    assert _counts(tenant) == dict.fromkeys(DELIVERY, 1)
    assert {s["name"]: s["status"] for s in done["steps"]}["render_page"] in ("completed", "cached")
    events = [
        e["event"]
        for e in pressroom.api.get(
            f"/api/tenants/{tenant.slug}/operations/{operation_id}/timeline", headers=tenant.headers
        ).json()["entries"]
    ]
    assert events.index("operation.pause") < events.index("operation.resume") < events.index("operation.succeeded")
    assert "run_suspended" in events and "claimed" in events


def test_terminate_a_running_operation_from_the_api_and_from_a_prefect_cancel(pressroom: Pressroom) -> None:
    tenant = pressroom.new_tenant("stop")
    pressroom.start_worker(tenant)
    release = PROBES.park(tenant.slug, "render_page")
    try:
        first = pressroom.publish(tenant, pressroom.create_document(tenant, "first")["id"])["operation_id"]
        _until(lambda: PROBES.count(tenant.slug, "render_page") == 1, what="render_page to start")
        _control(pressroom, tenant, first, "terminate")
        ended = pressroom.wait_operation(tenant, first, ("cancelled",))
        run = asyncio.run(_read_run(pressroom, ended["flow_run_id"]))
        assert run is not None and run.state_type == "CANCELLED"

        second = pressroom.publish(tenant, pressroom.create_document(tenant, "second")["id"])["operation_id"]
        _until(lambda: PROBES.count(tenant.slug, "render_page") == 2, what="the second render_page")
        run_id = pressroom.operation(tenant, second)["flow_run_id"]
        # What the Prefect UI's Cancel does: propose Cancelling.
        assert asyncio.run(_set_state(pressroom, run_id, RunState.CANCELLING))
        assert pressroom.wait_operation(tenant, second, ("cancelled",))["status"] == "cancelled"
        final = asyncio.run(_read_run(pressroom, run_id))
        assert final is not None and final.state_type == "CANCELLED"
    finally:
        release.set()
    assert PROBES.count(tenant.slug, "public_record") == 0


def test_restart_from_a_step_reruns_exactly_that_step_and_the_later_ones(pressroom: Pressroom) -> None:
    tenant = pressroom.new_tenant("restart")
    pressroom.start_worker(tenant)
    operation_id = pressroom.publish(tenant, pressroom.create_document(tenant, "again")["id"])["operation_id"]
    assert pressroom.wait_operation(tenant, operation_id)["status"] == "succeeded"
    before = _counts(tenant)
    assert before == dict.fromkeys(DELIVERY, 1)

    _control(pressroom, tenant, operation_id, "restart", {"from_step": "index_search", "confirm": True})
    done = pressroom.wait_operation(tenant, operation_id)
    assert done["status"] == "succeeded" and done["restarts"] == 1 and len(done["flow_run_ids"]) == 2
    after = _counts(tenant)
    assert {s: after[s] - before[s] for s in DELIVERY} == {
        "verify": 0,
        "render_page": 0,
        "public_record": 0,
        "index_search": 1,
        "render_home": 1,
        "purge": 1,
    }
    # Prefect records task-run states from their events, a moment after the run itself is final.
    deadline = time.monotonic() + 30
    while (steps := {s["name"]: s["status"] for s in done["steps"]})["index_search"] == "running":
        assert time.monotonic() < deadline, steps
        time.sleep(0.2)
        done = pressroom.operation(tenant, operation_id)
    assert steps["verify"] == "cached" and steps["index_search"] == "completed"


def _approval_release(room: Pressroom, tenant: Tenant, slug: str, timeout: float) -> str:
    doc = room.create_document(tenant, slug)
    response = room.api.post(
        f"/api/tenants/{tenant.slug}/releases",
        json={
            "documents": [{"id": doc["id"], "version": doc["version"]}],
            "publish_at": (datetime.now(UTC) + timedelta(seconds=1)).isoformat(),
            "approval": {"timeout_seconds": timeout},
            "confirm": True,
        },
        headers=tenant.headers,
    )
    assert response.status_code == 202, response.text
    return str(response.json()["operation_id"])


def _approve(room: Pressroom, tenant: Tenant, operation_id: str, payload: Any = None) -> None:
    response = room.api.post(
        f"/api/tenants/{tenant.slug}/operations/{operation_id}/events",
        json={"type": "approval", "payload": payload or {"approved": True}},
        headers=tenant.headers,
    )
    assert response.status_code == 202, response.text


def test_an_approval_sent_early_on_time_or_never(pressroom: Pressroom) -> None:
    tenant = pressroom.new_tenant("approve")
    pressroom.start_worker(tenant)

    early = _approval_release(pressroom, tenant, "early", timeout=60)
    _approve(pressroom, tenant, early)  # before the run has even started: kept until the wait
    assert pressroom.wait_operation(tenant, early)["status"] == "succeeded"

    on_time = _approval_release(pressroom, tenant, "on-time", timeout=60)
    waiting = pressroom.wait_operation(tenant, on_time, ("waiting",))
    assert waiting["waiting"]["reason"] == "awaiting_event" and waiting["waiting"]["event_type"] == "approval"
    run = asyncio.run(_read_run(pressroom, waiting["flow_run_id"]))
    assert run is not None and run.state_type == "PAUSED"  # parked: no process, no slot
    _approve(pressroom, tenant, on_time)
    assert pressroom.wait_operation(tenant, on_time)["status"] == "succeeded"

    never = _approval_release(pressroom, tenant, "never", timeout=1.5)
    failed = pressroom.wait_operation(tenant, never, ("failed", "dead", "succeeded"), timeout=60)
    assert failed["status"] == "failed" and failed["error"]["code"] == "event_timeout"
    doc_status = {
        d["slug"]: d["status"]
        for d in pressroom.api.get(f"/api/tenants/{tenant.slug}/documents", headers=tenant.headers).json()
    }
    assert doc_status == {"early": "published", "on-time": "published", "never": "draft"}


async def _read_run(room: Pressroom, run_id: str) -> Any:
    async with PrefectGateway(room.settings.dispatch) as gateway:
        return await gateway.read_run(run_id)


async def _set_state(room: Pressroom, run_id: str, state: RunState) -> bool:
    async with PrefectGateway(room.settings.dispatch) as gateway:
        return await gateway.set_state(run_id, state)
