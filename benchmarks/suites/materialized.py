"""materialized: operation queued → succeeded, against (a) Prefect's process worker, (b) the floor.

One sample is a triple, run one after another in a rotating order:
- Pressroom: edit + publish through the API on a tenant the runtime worker
  serves; latency = the operation's own ``created_at`` → ``finished_at``
  (command commit, relay, pickup, claim, flow, settle).
- Process worker: the same publish on another tenant whose Pressroom queue is
  paused, then the same ``publish_document`` run, same parameters, created in
  a separate pool served by ``prefect worker start --type process``; latency
  = the run's ``created`` → ``end_time`` (less than Pressroom's span: no
  command, no relay, no settle).
- Floor: an in-process call of a bare async flow with as many no-op tasks as
  the publish flow has steps.
"""

from __future__ import annotations

import secrets
import time
from typing import Any
from uuid import UUID

from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

from benchmarks import prefect_side
from benchmarks.noop_flows import floor_flow
from benchmarks.pressroom_api import Tenant
from benchmarks.runner import Bench
from benchmarks.stats import ms, ratio, summarize, target
from tenant_runtime.ids import utcnow

PROCESS_LIMIT = 4
POLL_SECONDS = 0.5  # the process worker polls as often as the runtime worker does


class _Doc:
    def __init__(self, tenant: Tenant, doc: dict[str, Any]) -> None:
        self.tenant, self.id, self.version = tenant, doc["id"], doc["version"]

    async def edit_and_publish(self, bench: Bench) -> Any:
        updated = await bench.api.update_document(self.tenant, self.id, self.version, f"Body {secrets.token_hex(6)}.")
        self.version = updated["version"]
        return await bench.api.publish(self.tenant, self.id)


async def _pressroom(bench: Bench, doc: _Doc) -> tuple[float, dict[str, float]]:
    published = await doc.edit_and_publish(bench)
    row = await bench.outbox.wait_final(doc.tenant.slug, published.operation_id, timeout=120)
    if row.status != "succeeded" or row.latency is None:
        raise RuntimeError(f"Pressroom publish ended {row.status}")
    times = await prefect_side.state_times(bench.prefect, row.flow_run_id)
    created = row.created_at
    phases = {
        "relay_s": (row.sent_at - created).total_seconds() if row.sent_at else None,
        "pickup_s": (times["PENDING"] - times["SCHEDULED"]).total_seconds()
        if "PENDING" in times and "SCHEDULED" in times
        else None,
        "flow_s": (times["COMPLETED"] - times["RUNNING"]).total_seconds()
        if "COMPLETED" in times and "RUNNING" in times
        else None,
    }
    return row.latency, {k: v for k, v in phases.items() if v is not None} | {"flow_run_id": row.flow_run_id}


async def _process(bench: Bench, doc: _Doc) -> float:
    published = await doc.edit_and_publish(bench)
    row = await bench.outbox.wait_final(
        doc.tenant.slug, published.operation_id, timeout=30, statuses=frozenset({"queued"})
    )
    run_id, _ = await prefect_side.create_scheduled(
        bench.prefect,
        bench.deployments.process_publish,
        queue="default",
        parameters={"params": row.parameters},
        when=utcnow(),
        tags=["bench:process", f"tenant:{doc.tenant.slug}"],
    )
    run = await prefect_side.wait_run_final(bench.prefect, run_id, timeout=180)
    if run.state is None or not run.state.is_completed() or run.end_time is None:
        raise RuntimeError(
            f"process-worker run {run_id} ended {run.state.name if run.state else '?'}; "
            f"see {bench.stack.logs}/process-worker-{prefect_side.PROCESS_POOL}.log"
        )
    return (run.end_time - run.created).total_seconds()


async def _floor(steps: int) -> float:
    t0 = time.monotonic()
    await floor_flow(steps)
    return time.monotonic() - t0


async def _step_count(bench: Bench, flow_run_id: str) -> int:
    task_runs = await bench.prefect.read_task_runs(
        flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[UUID(flow_run_id)]))
    )
    return len(task_runs)


async def run(bench: Bench) -> dict[str, Any]:
    await bench.ready_worker()
    ptenant, [pdoc] = await bench.warm_tenant("matp")
    btenant, [bdoc] = await bench.warm_tenant("matb")
    await prefect_side.pause_tenant_queues(bench.prefect, [btenant.slug])
    await prefect_side.ensure_queue(bench.prefect, prefect_side.PROCESS_POOL, "default", paused=False)
    pressroom_doc, process_doc = _Doc(ptenant, pdoc), _Doc(btenant, bdoc)
    bench.stack.start_process_worker(prefect_side.PROCESS_POOL, limit=PROCESS_LIMIT, query_seconds=POLL_SECONDS)
    try:
        # Warm-up, discarded: first imports, first connections, the process worker's start-up.
        _, first = await _pressroom(bench, pressroom_doc)
        steps = await _step_count(bench, first["flow_run_id"])
        await _process(bench, process_doc)
        await _floor(steps)

        samples: dict[str, list[float]] = {"pressroom": [], "process_worker": [], "floor": []}
        phases: list[dict[str, Any]] = []
        order = ["pressroom", "process_worker", "floor"]
        for i in range(bench.profile.materialized_samples):
            for side in order[i % 3 :] + order[: i % 3]:
                if side == "pressroom":
                    latency, phase = await _pressroom(bench, pressroom_doc)
                    phases.append(phase)
                elif side == "process_worker":
                    latency = await _process(bench, process_doc)
                else:
                    latency = await _floor(steps)
                samples[side].append(latency)
            bench.log(f"  sample {i}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in samples.items()))
    finally:
        bench.stack.stop_child(f"process-worker-{prefect_side.PROCESS_POOL}")

    summary = {k: summarize(ms(v)) for k, v in samples.items()}
    pr, pw, fl = summary["pressroom"]["p50"], summary["process_worker"]["p50"], summary["floor"]["p50"]
    phase_summary = {k: summarize(ms([p[k] for p in phases if k in p])) for k in ("relay_s", "pickup_s", "flow_s")}
    return {
        "settings": {
            "samples": bench.profile.materialized_samples,
            "flow": "publish_document",
            "steps": steps,
            "runtime_worker": "defaults (concurrency 8, poll 0.5 s)",
            "process_worker": f"--limit {PROCESS_LIMIT}, query/prefetch {POLL_SECONDS} s",
        },
        "samples_ms": {k: ms(v) for k, v in samples.items()},
        "summary_ms": summary,
        "pressroom_phases_ms": phase_summary,
        "ratios": {"pressroom_over_floor_p50": ratio(pr, fl), "pressroom_over_process_worker_p50": ratio(pr, pw)},
        "headline": {
            "metric": "queued→succeeded p50 / in-process floor p50",
            "value": ratio(pr, fl),
            "pressroom": pr,
            "baseline": fl,
            "unit": "ms",
            "second": {"metric": "/ process worker p50", "value": ratio(pr, pw), "baseline": pw},
        },
        "targets": [
            target("p50 ≤ 1.5× the in-process floor", ratio(pr, fl), "<=", 1.5, "×"),
            target("p50 ≤ 0.1× the process worker", ratio(pr, pw), "<=", 0.1, "×"),
        ],
    }
