"""A tenant's burst of publishes travels in a few batch runs; every operation still settles on its own."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterTags

from flows.probes import PROBES
from tests.fixtures.stack import Pressroom, Tenant

pytestmark = pytest.mark.integration


async def _runs(tenant: str) -> list[Any]:
    async with get_client() as client:
        return await client.read_flow_runs(
            flow_run_filter=FlowRunFilter(tags=FlowRunFilterTags(all_=[f"tenant:{tenant}"])), limit=200
        )


def _burst(pressroom: Pressroom, tenant: Tenant, count: int) -> list[dict[str, Any]]:
    """Publish ``count`` new posts before any worker runs: the first go at once (as many as the tenant
    may have publish runs in flight), the rest wait to be coalesced."""
    published = []
    for n in range(count):
        doc = pressroom.create_document(tenant, f"post-{n}", title=f"Post {n}")
        published.append({"slug": doc["slug"], **pressroom.publish(tenant, doc["id"])})
    return published


def test_a_burst_is_coalesced_and_a_permanently_failing_document_dies_alone(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    published = _burst(pressroom, acme, 12)
    doomed = published[6]["operation_id"]
    PROBES.fail(acme.slug, "render_page", permanent=True, message="cannot render", item=doomed)
    pressroom.start_worker(acme)

    final = {p["operation_id"]: pressroom.wait_operation(acme, p["operation_id"]) for p in published}

    assert final[doomed]["status"] == "dead"
    assert (
        final[doomed]["error"]["message"] == "cannot render" and final[doomed]["attempts"][-1]["step"] == "render_page"
    )
    assert Counter(op["status"] for op in final.values()) == {"succeeded": 11, "dead": 1}
    runs = asyncio.run(_runs(acme.slug))
    by_op = Counter(tag for run in runs for tag in run.tags if tag.startswith("op:"))
    assert set(by_op) == {f"op:{op}" for op in final} and set(by_op.values()) == {1}  # one run each
    lone = pressroom.settings.dispatch.coalescing.in_flight
    assert len(runs) == lone + 1, [run.name for run in runs]  # lone publishes, then one batch of the rest
    batch = next(run for run in runs if any(tag.startswith("batch:") for tag in run.tags))
    assert batch.state is not None and batch.state.is_completed()
    members = {p["operation_id"] for p in published[lone:]}
    assert {final[op]["flow_run_id"] for op in members} == {str(batch.id)}
    assert {final[op]["batch_id"] for op in members} == {batch.parameters["params"]["operation_id"]}
    for p in published:
        key = f"tenants/{acme.slug}/site/{p['slug']}/index.html"
        assert pressroom.store.writes[key] == (0 if p["operation_id"] == doomed else 1), key
    home = pressroom.site.get(f"/{acme.slug}/")
    assert "Post 11" in home.text and "Post 0" in home.text
    # The dead one can be replayed on its own once the cause is gone.
    replayed = pressroom.api.post(f"/api/tenants/{acme.slug}/operations/{doomed}/retry", headers=acme.headers)
    assert replayed.status_code == 202, replayed.text
    again = pressroom.wait_operation(acme, doomed)
    assert again["status"] == "succeeded" and again["flow_run_id"] != str(batch.id)


def test_a_failed_batch_is_retried_as_one_run_and_redoes_no_finished_step(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    published = _burst(pressroom, acme, 6)
    # The batch's third page fails its try and both task retries: the whole first attempt fails.
    PROBES.fail(acme.slug, "render_page", times=3, item=published[4]["operation_id"])
    pressroom.start_worker(acme)

    final = [pressroom.wait_operation(acme, p["operation_id"]) for p in published]

    assert {op["status"] for op in final} == {"succeeded"}
    # The failing page's batch (which publishes the relay grouped with it depends on when its passes ran: on a
    # loaded machine the first ones can go as a batch of their own, not one run each).
    members = [op for op in final if op["batch_id"] is not None and op["batch_id"] == final[4]["batch_id"]]
    assert len(members) >= 2, [op["batch_id"] for op in final]  # a batch (on a loaded machine, 2+4 or 1+1+4)
    assert len({op["flow_run_id"] for op in members}) == 1  # retried as the same run, never split
    assert all([a["number"] for a in op["attempts"]] == [1, 2] for op in members), [op["attempts"] for op in members]
    others = [op for op in final if op not in members]
    assert all([a["number"] for a in op["attempts"]] == [1] for op in others), [op["attempts"] for op in others]
    # verify finished in the first attempt: the second took it from the cache (one execution per operation).
    assert PROBES.count(acme.slug, "verify") == len(published)
    for p in published:  # and the pages rendered before the failure were not written again
        assert pressroom.store.writes[f"tenants/{acme.slug}/site/{p['slug']}/index.html"] == 1
