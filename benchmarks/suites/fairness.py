"""fairness: tenant A floods its queue, then tenant B publishes one page.

B's latency (queued → succeeded) is measured with A idle, then with A's
backlog in the queue, then with A idle again; ratio = loaded p50 / unloaded
p50. Each of B's runs is split into queue wait (Scheduled → Pending: did the
worker pick B before A's older runs?) and the rest (CPU shared with A's runs
in flight). A loaded sample that exceeds the timeout counts as the timeout.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from benchmarks import prefect_side
from benchmarks.runner import Bench
from benchmarks.stats import ms, ratio, summarize, target

FLOOD_CLIENTS = 8


async def _b_sample(bench: Bench, tenant: Any, doc: dict[str, Any], timeout: float) -> dict[str, Any]:
    published = await bench.api.publish(tenant, doc["id"])
    try:
        row = await bench.outbox.wait_final(tenant.slug, published.operation_id, timeout=timeout)
    except TimeoutError:
        return {"latency_s": timeout, "timed_out": True, "operation_id": published.operation_id}
    out: dict[str, Any] = {"latency_s": row.latency, "timed_out": False, "status": row.status}
    if row.flow_run_id:
        times = await prefect_side.state_times(bench.prefect, row.flow_run_id)
        if "PENDING" in times and "SCHEDULED" in times:
            out["queue_wait_s"] = (times["PENDING"] - times["SCHEDULED"]).total_seconds()
    return out


async def run(bench: Bench) -> dict[str, Any]:
    p = bench.profile
    await bench.ready_worker()
    a, a_docs = await bench.warm_tenant("faira", docs=10)
    b, [b_doc] = await bench.warm_tenant("fairb")
    samples: dict[str, list[dict[str, Any]]] = {"unloaded": [], "loaded": []}

    for _ in range(p.fairness_samples):
        samples["unloaded"].append(await _b_sample(bench, b, b_doc, timeout=60))

    bench.log(f"  tenant A enqueues {p.fairness_flood} publishes ({FLOOD_CLIENTS} clients)")
    t0 = time.monotonic()
    counter = iter(range(p.fairness_flood))

    async def flooder() -> None:
        for i in counter:
            await bench.api.publish(a, a_docs[i % len(a_docs)]["id"])

    await asyncio.gather(*(flooder() for _ in range(FLOOD_CLIENTS)))
    flood_ack_s = time.monotonic() - t0
    # The flood is in Pressroom's hands once acked: A's first runs are delivering, the rest wait in
    # A's outbox to be coalesced (tenant_runtime/actions/outbox.py) rather than in its Prefect queue.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        counts, unsent = await asyncio.to_thread(bench.outbox.status_counts, [a.slug])
        if counts.get("delivering", 0):
            break
        await asyncio.sleep(0.1)
    flood_sent_s = time.monotonic() - t0 - flood_ack_s
    bench.log(
        f"  flood acked in {flood_ack_s:.1f} s, A delivering {flood_sent_s:.1f} s later; "
        f"A: {dict(counts)} (queued ones wait in its outbox to be coalesced), {unsent} grouped, not yet sent"
    )

    a_backlog: list[int] = []
    for _ in range(p.fairness_samples):
        counts, _ = await asyncio.to_thread(bench.outbox.status_counts, [a.slug])
        a_backlog.append(counts.get("queued", 0) + counts.get("delivering", 0))
        samples["loaded"].append(await _b_sample(bench, b, b_doc, timeout=p.fairness_timeout))
        bench.log(f"  B loaded: {samples['loaded'][-1]} (A outstanding {a_backlog[-1]})")

    # Park A: its leftover runs would load every later suite.
    await prefect_side.pause_tenant_queues(bench.prefect, [a.slug])
    deleted = await prefect_side.delete_scheduled_of_tags(bench.stack.prefect_api_url, [f"tenant:{a.slug}"])
    # A's runs already in flight (≤ the worker's concurrency) finish before B is "unloaded" again.
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        counts, _ = await asyncio.to_thread(bench.outbox.status_counts, [a.slug])
        if counts.get("delivering", 0) == 0:
            break
        await asyncio.sleep(0.5)
    for _ in range(p.fairness_samples):
        samples["unloaded"].append(await _b_sample(bench, b, b_doc, timeout=60))

    unloaded = summarize(ms([s["latency_s"] for s in samples["unloaded"]]))
    loaded = summarize(ms([s["latency_s"] for s in samples["loaded"]]))
    waits = {k: summarize(ms([s["queue_wait_s"] for s in v if "queue_wait_s" in s])) for k, v in samples.items()}
    value = ratio(loaded["p50"], unloaded["p50"])
    return {
        "settings": {
            "flood": p.fairness_flood,
            "flood_clients": FLOOD_CLIENTS,
            "samples_each": p.fairness_samples,
            "timeout_s": p.fairness_timeout,
            "worker": "defaults (concurrency 8, poll 0.5 s)",
        },
        "samples": samples,
        "summary_ms": {"unloaded": unloaded, "loaded": loaded},
        "queue_wait_ms": waits,
        "flood": {
            "ack_s": flood_ack_s,
            "delivering_after_s": flood_sent_s,
            "a_outstanding_at_samples": a_backlog,
            "timed_out": sum(1 for s in samples["loaded"] if s["timed_out"]),
            "a_runs_deleted_after": deleted,
        },
        "ratios": {"loaded_over_unloaded_p50": value},
        "headline": {
            "metric": "B's latency with A's flood / with A idle (p50)",
            "value": value,
            "pressroom": loaded["p50"],
            "baseline": unloaded["p50"],
            "unit": "ms",
        },
        "targets": [target("B loaded p50 ≤ 1.5× unloaded", value, "<=", 1.5, "×")],
    }
