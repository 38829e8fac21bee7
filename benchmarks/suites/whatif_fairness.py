"""whatif_fairness (opt-in): fairness again, with a concurrency limit on every tenant's queue.

Prefect's pool query orders due runs by time across all queues and returns
at most 200 (``PREFECT_SERVER_API_DEFAULT_LIMIT``), so behind a flood older
than 200 runs a newcomer's run is not even in the worker's answer; a queue
concurrency limit caps each queue's share of that answer (the server's query
applies it per queue). Pressroom does not set one today; the design says a
tenant queue's concurrency limit is its quota. This suite sets it on the
tenants' queues through the Prefect API (no code change) and repeats the
fairness measurement, reporting B's latency and what it costs A (its drain
rate with the limit).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from benchmarks import prefect_side
from benchmarks.runner import Bench
from benchmarks.stats import ms, ratio, summarize
from benchmarks.suites.fairness import FLOOD_CLIENTS, _b_sample

QUEUE_LIMIT = 2


async def _limit(bench: Bench, tenant: str, limit: int | None) -> None:
    queue = await bench.prefect.read_work_queue_by_name(f"tenant-{tenant}", work_pool_name="pressroom")
    await bench.prefect.update_work_queue(queue.id, concurrency_limit=limit)


async def run(bench: Bench) -> dict[str, Any]:
    p = bench.profile
    await bench.ready_worker()
    a, a_docs = await bench.warm_tenant("wfaira", docs=10)
    b, [b_doc] = await bench.warm_tenant("wfairb")
    for tenant in (a, b):
        await _limit(bench, tenant.slug, QUEUE_LIMIT)
    samples: dict[str, list[dict[str, Any]]] = {"unloaded": [], "loaded": []}
    for _ in range(p.fairness_samples):
        samples["unloaded"].append(await _b_sample(bench, b, b_doc, timeout=60))

    bench.log(f"  queue limit {QUEUE_LIMIT}: tenant A enqueues {p.fairness_flood} publishes")
    counter = iter(range(p.fairness_flood))

    async def flooder() -> None:
        for i in counter:
            await bench.api.publish(a, a_docs[i % len(a_docs)]["id"])

    await asyncio.gather(*(flooder() for _ in range(FLOOD_CLIENTS)))
    await bench.outbox.wait_sent([a.slug], timeout=max(120.0, p.fairness_flood / 2))
    t0 = time.monotonic()
    start_counts, _ = await asyncio.to_thread(bench.outbox.status_counts, [a.slug])
    for _ in range(p.fairness_samples):
        samples["loaded"].append(await _b_sample(bench, b, b_doc, timeout=p.fairness_timeout))
        bench.log(f"  B loaded: {samples['loaded'][-1]}")
    end_counts, _ = await asyncio.to_thread(bench.outbox.status_counts, [a.slug])
    a_rate = (end_counts.get("succeeded", 0) - start_counts.get("succeeded", 0)) / (time.monotonic() - t0)

    await prefect_side.pause_tenant_queues(bench.prefect, [a.slug])
    deleted = await bench.best_effort(
        "deleting A's leftover runs",
        prefect_side.delete_scheduled_of_tags(bench.stack.prefect_api_url, [f"tenant:{a.slug}"]),
    )
    unloaded = summarize(ms([s["latency_s"] for s in samples["unloaded"]]))
    loaded = summarize(ms([s["latency_s"] for s in samples["loaded"]]))
    value = ratio(loaded["p50"], unloaded["p50"])
    return {
        "settings": {
            "queue_concurrency_limit": QUEUE_LIMIT,
            "flood": p.fairness_flood,
            "samples_each": p.fairness_samples,
            "timeout_s": p.fairness_timeout,
        },
        "samples": samples,
        "summary_ms": {"unloaded": unloaded, "loaded": loaded},
        "a_publishes_per_s_while_limited": a_rate,
        "cleanup": {"a_runs_deleted": deleted},
        "ratios": {"loaded_over_unloaded_p50": value},
        "headline": {
            "metric": f"B loaded / unloaded p50, tenant queues limited to {QUEUE_LIMIT}",
            "value": value,
            "pressroom": loaded["p50"],
            "baseline": unloaded["p50"],
            "unit": "ms",
        },
        "targets": [],
    }
