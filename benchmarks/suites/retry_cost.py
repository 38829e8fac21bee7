"""retry_cost: how many step executions a publish costs when one step fails, against the ideal.

Runs in this process: a ``RuntimeWorker`` on this event loop (as the test
fixture's WorkerThread does) executes the runs, so ``flows.probes.PROBES``
can inject faults and count executions. The stack's worker subprocess is
stopped for the duration (it would otherwise take the runs).

A clean publish first gives the flow's steps in order; the faults then hit
the 7th (the issue's "step 7 of 8"). Ideal = one execution per step plus one
per injected failure: a step that completed is never executed again. The
issue's exact shape (8 steps, step 7 fails once, ideal 9) also runs on bare
Prefect flows, with Prefect's defaults and with persisted results plus a
per-run cache key.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from typing import Any

from benchmarks import noop_flows
from benchmarks.runner import Bench
from benchmarks.stats import target

CASES = [
    # name, injected failures, permanent, what happens
    ("transient_once", 1, False, "fails once; the task's own retry succeeds in the same attempt"),
    ("attempt_fails", 3, False, "fails on the try and both task retries; the operation's retry resumes the same run"),
    ("permanent_then_replay", 1, True, "permanent failure → dead; an explicit retry replays it"),
]
FAIL_AT = 7  # the shape: step 7 of 8 fails


async def _case(
    bench: Bench, tenant: Any, name: str, step: str | None, times: int, permanent: bool, clean_steps: int
) -> dict[str, Any]:
    from flows.probes import PROBES

    PROBES.reset()
    if step is not None:
        PROBES.fail(tenant.slug, step, times=times, permanent=permanent)
    doc = await bench.api.create_document(tenant, f"retry-{name.replace('_', '-')}-{secrets.token_hex(3)}")
    published = await bench.api.publish(tenant, doc["id"])
    row = await bench.outbox.wait_final(tenant.slug, published.operation_id, timeout=120)
    if permanent:
        if row.status != "dead":
            raise RuntimeError(f"{name}: expected dead after a permanent failure, got {row.status}")
        await bench.api.retry(tenant, published.operation_id)
        await asyncio.sleep(0.2)
        row = await bench.outbox.wait_final(tenant.slug, published.operation_id, timeout=120)
    operation = await bench.api.operation(tenant, published.operation_id)
    # Counter keeps insertion order: after a reset, that is the order the steps first ran in.
    executions = {s: n for (t, s), n in PROBES.executions.items() if t == tenant.slug}
    total = sum(executions.values())
    failures = times if step is not None else 0
    ideal = (clean_steps or len(executions)) + failures
    return {
        "case": name,
        "failing_step": step,
        "status": row.status,
        "executions": executions,
        "total": total,
        "ideal": ideal,
        "steps": len(executions),
        "injected_failures": failures,
        "attempts": len(operation["attempts"]),
        "redone_completed_steps": total - ideal,
    }


async def _bare(shape: int, fail_at: int, cached: bool) -> dict[str, Any]:
    run_key = f"bare-{secrets.token_hex(4)}"
    noop_flows.arm(run_key, f"s{fail_at}", 1)
    flow = noop_flows.retry_cached if cached else noop_flows.retry_default
    await flow(run_key, shape)
    counts = {k.split(":", 1)[1]: n for k, n in noop_flows.EXECUTIONS.items() if k.startswith(run_key + ":")}
    total = sum(counts.values())
    return {
        "case": f"bare prefect, {shape} steps, step {fail_at} fails once, flow retries=1, "
        f"{'persisted results + cache key per run/step' if cached else 'defaults'}",
        "executions": counts,
        "total": total,
        "ideal": shape + 1,
        "redone_completed_steps": total - shape - 1,
    }


async def run(bench: Bench) -> dict[str, Any]:
    from tenant_runtime.logs import configure_logging

    configure_logging("WARNING")
    # Injected faults are expected here: keep Prefect's tracebacks for them out of the harness output.
    quiet = {name: logging.getLogger(name).level for name in ("prefect.flow_runs", "prefect.task_runs")}
    for name in quiet:
        logging.getLogger(name).setLevel(logging.CRITICAL)
    try:
        return await _run(bench)
    finally:
        for name, level in quiet.items():
            logging.getLogger(name).setLevel(level)


async def _run(bench: Bench) -> dict[str, Any]:
    from dispatch.prefect_gateway import PrefectGateway
    from dispatch.settings import DispatchSettings
    from dispatch.worker import RuntimeWorker
    from flows import runtime
    from flows.probes import PROBES
    from tenant_runtime.settings import RuntimeSettings
    from tenant_runtime.workspace import WorkspaceFactory

    tenant, _ = await bench.warm_tenant("retry", docs=0)
    bench.stop_worker()
    factory = WorkspaceFactory(RuntimeSettings.from_env())
    runtime.configure(factory)
    # Short operation backoff so the attempt-level retry shows up in seconds, not minutes.
    settings = DispatchSettings.from_env().model_copy(
        update={"poll_interval": 0.1, "retry_base_seconds": 0.5, "retry_cap_seconds": 2.0, "sweep_interval": 1.0}
    )
    stop = asyncio.Event()
    cases: list[dict[str, Any]] = []
    async with PrefectGateway(settings) as gateway:
        worker = RuntimeWorker(settings, factory, gateway, tenants=frozenset({tenant.slug}))
        running = asyncio.create_task(worker.run(stop))
        try:
            clean = await _case(bench, tenant, "clean", None, 0, False, 0)
            cases.append(clean)
            order = list(clean["executions"])
            step = order[min(FAIL_AT, len(order)) - 1]
            bench.log(f"  clean publish: {clean['total']} executions over {len(order)} steps; failing {step!r}")
            for name, times, permanent, _ in CASES:
                cases.append(await _case(bench, tenant, name, step, times, permanent, clean["steps"]))
                bench.log(f"  {name}: {cases[-1]['total']} executions (ideal {cases[-1]['ideal']})")
        finally:
            stop.set()
            await asyncio.wait_for(running, timeout=60)
            PROBES.reset()
            await bench.start_worker()

    bare = [await _bare(8, 7, cached=False), await _bare(8, 7, cached=True), await _bare(4, 3, cached=False)]
    for case in bare:
        bench.log(f"  {case['case']}: {case['total']} executions (ideal {case['ideal']})")
    worst = max(max(0, c["redone_completed_steps"]) for c in cases)
    primary = cases[2]  # the step fails through its attempt; the operation's retry resumes the run
    return {
        "settings": {
            "flow": "publish_document",
            "worker": "RuntimeWorker in the harness process",
            "operation_backoff_s": 0.5,
            "fail_at_step": FAIL_AT,
            "cases": {name: why for name, _, _, why in CASES},
        },
        "cases": cases,
        "bare_prefect": bare,
        "ratios": {"executions_over_ideal": primary["total"] / primary["ideal"]},
        "headline": {
            "metric": "step executions / ideal (step fails through an attempt, then retried)",
            "value": primary["total"] / primary["ideal"],
            "pressroom": primary["total"],
            "baseline": primary["ideal"],
            "unit": "executions",
        },
        "targets": [
            target("no completed step executed again (executions == ideal, every case)", worst, "==", 0, "extra"),
        ],
        "notes": [
            f"ideal = the steps a clean publish executes ({cases[0]['steps']}) + injected failures; the "
            "issue's shape (8 steps, step 7 fails once, ideal 9) is also run on bare Prefect flows"
        ],
    }
