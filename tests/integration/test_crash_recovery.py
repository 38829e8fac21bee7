"""kill -9 the runtime worker while step k runs, for every step: nothing lost, nothing done twice."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from sqlmodel import select

from tenant_runtime.workspace import AuditEntry
from tests.fixtures.stack import Pressroom, Tenant
from tests.fixtures.worker_process import WorkerProcess

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _succeeded_audits(room: Pressroom, tenant: Tenant, op_id: str) -> int:
    with room.factory.open(tenant.slug).reader() as tx:
        rows = tx.exec(
            select(AuditEntry).where(AuditEntry.operation_id == op_id, AuditEntry.action == "operation.succeeded")
        )
        return len(list(rows))


def _deliver(room: Pressroom, tenant: Tenant, kind: str, body: str) -> str:
    """Start a publish (one document), a coalesced publish (two, one batch run), a release (two) or an
    unpublish (of a page published first by an in-process worker, so only the unpublish is the process's).

    Returns the operation id (of the first member, for a batch).
    """
    doc = room.create_document(tenant, "story", body=body)
    if kind == "publish":
        return str(room.publish(tenant, doc["id"])["operation_id"])
    if kind == "unpublish":
        worker = room.start_worker(tenant)
        try:
            published = room.publish(tenant, doc["id"])["operation_id"]
            assert room.wait_operation(tenant, published)["status"] == "succeeded"
        finally:
            room.workers.remove(worker)
            worker.stop()
        response = room.api.post(
            f"/api/tenants/{tenant.slug}/documents/{doc['id']}/unpublish",
            json={"confirm": True},
            headers=tenant.headers,
        )
        assert response.status_code == 202, response.text
        return str(response.json()["operation_id"])
    other = room.create_document(tenant, "sidebar", kind="page", body="second page of the release")
    if kind == "batch":
        # Queued while no relay runs, the two publishes wait in the outbox together; the worker's
        # first sweep then groups them into one publish_batch run.
        with room.no_relay():
            first = str(room.publish(tenant, doc["id"])["operation_id"])
            room.publish(tenant, other["id"])
        return first
    response = room.api.post(
        f"/api/tenants/{tenant.slug}/releases",
        headers=tenant.headers,
        json={"documents": [{"id": doc["id"], "version": 1}, {"id": other["id"], "version": 1}], "confirm": True},
    )
    assert response.status_code == 202, response.text
    return str(response.json()["operation_id"])


def _reference_steps(room: Pressroom, kind: str, tmp_path: Path) -> list[str]:
    """The step sequence of an uninterrupted delivery, as the worker process ran it."""
    tenant = room.new_tenant("ref")
    worker = WorkerProcess(room, [tenant.slug], tmp_path)
    try:
        op = _deliver(room, tenant, kind, "reference")
        assert room.wait_operation(tenant, op, timeout=90)["status"] == "succeeded"
    finally:
        worker.stop()
    return worker.executions(tenant.slug)


@pytest.mark.parametrize("kind", ["publish", "batch", "release", "unpublish"])
def test_a_worker_killed_at_any_step_is_resumed_and_every_step_runs_once(
    pressroom_fs: Pressroom, tmp_path: Path, kind: str
) -> None:
    room = pressroom_fs
    executions = _reference_steps(room, kind, tmp_path / "reference")
    steps = list(dict.fromkeys(executions))  # a release runs per-document steps once per document
    assert len(steps) >= 6

    # One tenant per step, all delivered by one worker process, each run parked in its own step:
    # one kill -9 then interrupts every step at once, and one fresh worker resumes them all. A step
    # of one tenant's run knows nothing of the others', so this is the step-by-step chain of kills
    # in three worker starts instead of one per step.
    logs = tmp_path / "killed"
    tenants = [room.new_tenant(f"k{index}") for index in range(len(steps))]
    killed = [
        (tenant, _deliver(room, tenant, kind, f"killed at {step}"), step)
        for tenant, step in zip(tenants, steps, strict=True)
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
        for run in killed:
            _assert_resumed(room, worker, run, executions)
    finally:
        worker.stop()


def _assert_resumed(
    room: Pressroom, worker: WorkerProcess, killed: tuple[Tenant, str, str], executions: list[str]
) -> None:
    tenant, op, step = killed
    done = room.wait_operation(tenant, op, timeout=90)
    assert done["status"] == "succeeded", (step, done)
    counts = Counter(worker.executions(tenant.slug))
    # Steps finished before the kill come back from the cache; the killed one runs again once.
    expected = Counter(executions)
    expected[step] += 1
    assert counts == expected, (step, counts)
    assert [a["number"] for a in done["attempts"]] == [1, 2]
    assert "worker lost" in (done["attempts"][0]["error"] or "")
    if done["batch_id"]:
        assert room.operation(tenant, op)["flow_run_id"] == done["flow_run_id"]
    assert _succeeded_audits(room, tenant, op) == 1
    page = room.site.get(f"/{tenant.slug}/story")
    if done["kind"] == "unpublish":
        assert page.status_code == 404 and f"killed at {step}" not in room.site.get(f"/{tenant.slug}/").text
        assert room.site.get(f"/api/public/{tenant.slug}/content/story").status_code == 404
        return
    assert page.status_code == 200 and f"killed at {step}" in page.text
    assert page.headers["x-pressroom-source"] in ("object", "cache")
