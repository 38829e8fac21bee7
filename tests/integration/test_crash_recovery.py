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
        rows = tx.exec(select(AuditEntry).where(AuditEntry.operation_id == op_id,
                                                AuditEntry.action == "operation.succeeded"))
        return len(list(rows))


def _publish_steps(room: Pressroom, tenant: Tenant, tmp_path: Path) -> list[str]:
    """The step sequence of an uninterrupted publish, as the worker process ran it."""
    doc = room.create_document(tenant, "reference")
    worker = WorkerProcess(room, [tenant.slug], tmp_path)
    try:
        op = room.publish(tenant, doc["id"])["operation_id"]
        assert room.wait_operation(tenant, op, timeout=90)["status"] == "succeeded"
    finally:
        worker.stop()
    return worker.executions(tenant.slug)


def test_a_worker_killed_at_any_step_is_resumed_and_every_step_runs_once(pressroom_fs: Pressroom,
                                                                         tmp_path: Path) -> None:
    room = pressroom_fs
    reference = room.new_tenant("crash")
    steps = _publish_steps(room, reference, tmp_path / "reference")
    assert steps[:2] == ["verify", "render_page"] and len(set(steps)) == len(steps)

    for index, step in enumerate(steps):
        tenant = room.new_tenant(f"k{index}")
        logs = tmp_path / f"step-{index}"
        doc = room.create_document(tenant, "story", body=f"killed at {step}")
        op = room.publish(tenant, doc["id"])["operation_id"]

        doomed = WorkerProcess(room, [tenant.slug], logs, park=f"{tenant.slug}:{step}")
        assert doomed.wait_parked() == step
        doomed.kill9()
        assert room.operation(tenant, op)["status"] == "delivering"

        survivor = WorkerProcess(room, [tenant.slug], logs)
        try:
            done = room.wait_operation(tenant, op, timeout=90)
        finally:
            survivor.stop()

        assert done["status"] == "succeeded", (step, done)
        counts = Counter(survivor.executions(tenant.slug))
        # Steps finished before the kill come back from the cache; the killed one runs again once.
        assert counts == Counter({s: (2 if s == step else 1) for s in steps}), (step, counts)
        assert [a["number"] for a in done["attempts"]] == [1, 2]
        assert "worker lost" in (done["attempts"][0]["error"] or "")
        assert _succeeded_audits(room, tenant, op) == 1
        page = room.site.get(f"/{tenant.slug}/story")
        assert page.status_code == 200 and f"killed at {step}" in page.text
        assert page.headers["x-pressroom-source"] in ("object", "cache")
