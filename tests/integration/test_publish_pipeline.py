"""A tenant publishes a page end to end: command → outbox → relay → Prefect → worker → site."""

from __future__ import annotations

import asyncio

import pytest
from prefect.client.orchestration import get_client

from flows.probes import PROBES
from tests.fixtures.stack import Pressroom

pytestmark = pytest.mark.integration


async def _read_run(run_id: str):  # type: ignore[no-untyped-def]
    async with get_client() as client:
        return await client.read_flow_run(run_id)


def test_publish_is_visible_at_once_and_delivered_by_a_tagged_run_on_the_tenant_queue(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    pressroom.start_worker(acme)
    doc = pressroom.create_document(acme, "launch", title="Launch day", body="We are **live**.")

    accepted = pressroom.publish(acme, doc["id"])

    assert accepted["status"] == "queued"
    page = pressroom.site.get(f"/{acme.slug}/launch")
    assert page.status_code == 200 and "<strong>live</strong>" in page.text
    assert page.headers["x-pressroom-source"] == "live"

    operation = pressroom.wait_operation(acme, accepted["operation_id"])
    assert operation["status"] == "succeeded"
    assert [a["number"] for a in operation["attempts"]] == [1]
    run = asyncio.run(_read_run(operation["flow_run_id"]))
    assert run.state is not None and run.state.is_completed()
    assert run.work_queue_name == f"tenant-{acme.slug}"
    assert {f"tenant:{acme.slug}", f"op:{operation['id']}"} <= set(run.tags)
    assert run.idempotency_key == f"publish:{operation['id']}"

    assert pressroom.store.get(f"tenants/{acme.slug}/site/launch/index.html") is not None
    assert f"{acme.slug}:doc:launch" in pressroom.purger.all_tags
    static = pressroom.site.get(f"/{acme.slug}/launch")
    assert static.headers["x-pressroom-source"] == "object"
    home = pressroom.site.get(f"/{acme.slug}/")
    assert "Launch day" in home.text


def test_a_step_that_fails_once_is_retried_alone(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    doc = pressroom.create_document(acme, "flaky")
    # render_home fails on the first attempt and on both in-attempt task retries,
    # so the whole attempt fails; the operation's retry then resumes from there.
    PROBES.fail(acme.slug, "render_home", times=3)
    pressroom.start_worker(acme)

    accepted = pressroom.publish(acme, doc["id"])
    operation = pressroom.wait_operation(acme, accepted["operation_id"])

    assert operation["status"] == "succeeded"
    assert len(operation["attempts"]) == 2
    assert operation["attempts"][0]["step"] == "render_home"
    assert "injected fault" in operation["attempts"][0]["error"]
    # Steps before the failure ran once; the failing one 3 times in attempt 1 and once more in attempt 2.
    assert PROBES.count(acme.slug, "verify") == 1
    assert PROBES.count(acme.slug, "render_page") == 1
    assert PROBES.count(acme.slug, "render_home") == 4
    assert PROBES.count(acme.slug, "purge") == 1
    assert pressroom.store.writes[f"tenants/{acme.slug}/site/flaky/index.html"] == 1


def test_unpublish_takes_the_page_down_before_the_response_returns(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    pressroom.start_worker(acme)
    doc = pressroom.create_document(acme, "gone-soon")
    published = pressroom.publish(acme, doc["id"])
    pressroom.wait_operation(acme, published["operation_id"])
    assert pressroom.site.get(f"/{acme.slug}/gone-soon").status_code == 200

    response = pressroom.api.post(
        f"/api/tenants/{acme.slug}/documents/{doc['id']}/unpublish", json={"confirm": True}, headers=acme.headers
    )

    assert response.status_code == 202
    assert pressroom.site.get(f"/{acme.slug}/gone-soon").status_code == 404
    assert pressroom.store.get(f"tenants/{acme.slug}/site/gone-soon/index.html") is None
    operation = pressroom.wait_operation(acme, response.json()["operation_id"])
    assert operation["status"] == "succeeded"
    assert "Gone-Soon" not in pressroom.site.get(f"/{acme.slug}/").text


def test_seed_example_site_publishes_the_example_documents(pressroom: Pressroom) -> None:
    site = pressroom.new_tenant("example")
    pressroom.start_worker(site)

    seeded = pressroom.api.post(f"/ops/tenants/{site.slug}/seed", headers=pressroom.operator)
    assert seeded.status_code == 202
    assert pressroom.wait_operation(site, seeded.json()["operation_id"])["status"] == "succeeded"

    def all_done() -> list[dict]:  # type: ignore[type-arg]
        return pressroom.api.get(f"/api/tenants/{site.slug}/operations", headers=site.headers).json()

    for op in all_done():
        pressroom.wait_operation(site, op["id"])
    statuses = {op["kind"]: set() for op in all_done()}
    for op in all_done():
        statuses[op["kind"]].add(op["status"])
    assert statuses == {"seed": {"succeeded"}, "publish": {"succeeded"}}
    assert len([op for op in all_done() if op["kind"] == "publish"]) == 5
    home = pressroom.site.get(f"/{site.slug}/")
    assert "Hello, world" in home.text and home.headers["x-pressroom-source"] == "object"


def test_a_permanent_failure_is_dead_at_once_and_retry_resumes_after_the_completed_steps(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    doc = pressroom.create_document(acme, "broken")
    PROBES.fail(acme.slug, "render_home", times=1, permanent=True)
    pressroom.start_worker(acme)

    accepted = pressroom.publish(acme, doc["id"])
    dead = pressroom.wait_operation(acme, accepted["operation_id"])

    assert dead["status"] == "dead"
    assert dead["error"]["code"] == "permanent_failure"
    assert len(dead["attempts"]) == 1 and dead["attempts"][0]["step"] == "render_home"
    assert PROBES.count(acme.slug, "render_home") == 1  # no task retries for a permanent error

    listed = pressroom.api.get("/ops/operations?status=dead", headers=pressroom.operator).json()
    assert accepted["operation_id"] in {op["id"] for op in listed}

    retried = pressroom.api.post(f"/api/tenants/{acme.slug}/operations/{dead['id']}/retry", headers=acme.headers)
    assert retried.status_code == 202
    done = pressroom.wait_operation(acme, dead["id"])

    assert done["status"] == "succeeded"
    assert len(done["attempts"]) == 2
    assert PROBES.count(acme.slug, "verify") == 1
    assert PROBES.count(acme.slug, "render_page") == 1
    assert PROBES.count(acme.slug, "render_home") == 2
    assert done["flow_run_id"] == dead["flow_run_id"]  # the same run, resumed
