"""command_ack: publish command → 202, many concurrent clients over many tenants.

Baseline, interleaved round by round on the same server: the bare Prefect
round trip Pressroom's relay makes per operation,
``create_flow_run_from_deployment`` (Scheduled, idempotency key, tags, queue).

Two loads, both sides each:
- paced (the targets): 50 clients over 20 tenants, Poisson arrivals at a fixed
  total rate well below capacity — what one publish costs with others around;
- saturated: the same 50 clients back to back — capacity (requests/s), and
  latency when every client always has a request in flight (queueing).
The tenants' Pressroom queues are paused, so the runtime worker stays idle and
the numbers are the command path plus whatever the relay does in the control
plane's background right after each response. A last, uncounted segment runs
py-spy on the control plane.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any

from benchmarks import prefect_side, profiling
from benchmarks.runner import Bench
from benchmarks.stats import ms, ratio, summarize, target
from tenant_runtime.ids import utcnow


async def _saturated(count: int, clients: int, one: Callable[[int], Awaitable[float]]) -> tuple[list[float], float]:
    """``clients`` coroutines issue ``count`` calls back to back; (latencies, wall seconds)."""
    counter = itertools.count()
    latencies: list[float] = []

    async def client() -> None:
        while (i := next(counter)) < count:
            latencies.append(await one(i))

    t0 = time.monotonic()
    await asyncio.gather(*(client() for _ in range(clients)))
    return latencies, time.monotonic() - t0


async def _paced(seconds: float, rate: float, clients: int, one: Callable[[int], Awaitable[float]]) -> list[float]:
    """Each client waits an exponential think time (total ``rate``/s) then calls; for ``seconds``."""
    counter = itertools.count()
    latencies: list[float] = []
    stop_at = time.monotonic() + seconds
    rng = random.Random(42)

    async def client() -> None:
        while True:
            think = rng.expovariate(rate / clients)
            if time.monotonic() + think >= stop_at:
                return
            await asyncio.sleep(think)
            latencies.append(await one(next(counter)))

    await asyncio.gather(*(client() for _ in range(clients)))
    return latencies


async def run(bench: Bench) -> dict[str, Any]:
    p = bench.profile
    tenants = await bench.api.create_tenants("ack", p.ack_tenants, concurrency=4)
    slugs = [t.slug for t in tenants]
    await prefect_side.pause_tenant_queues(bench.prefect, slugs)
    targets = [(t, (await bench.api.create_document(t, f"ack-{i}"))["id"]) for t in tenants for i in range(2)]

    async def pressroom(i: int) -> float:
        tenant, doc = targets[i % len(targets)]
        return (await bench.api.publish(tenant, doc)).latency

    async def prefect(i: int) -> float:
        tenant, _ = targets[i % len(targets)]
        _, seconds = await prefect_side.create_scheduled(
            bench.prefect,
            bench.deployments.noop,
            queue=prefect_side.BASELINE_QUEUE,
            when=utcnow(),
            parameters={
                "tenant": tenant.slug,
                "operation_id": f"op_bench_{i}",
                "document_id": "doc_bench",
                "version": 1,
                "generation": i,
            },
            tags=["bench:ack", f"tenant:{tenant.slug}"],
        )
        return seconds

    sides = {"pressroom": pressroom, "prefect": prefect}
    bench.log("  warm-up")
    await _saturated(40, 10, pressroom)
    await bench.outbox.wait_sent(slugs, timeout=180)
    await _saturated(40, 10, prefect)

    paced: dict[str, list[float]] = {"pressroom": [], "prefect": []}
    relay_drain: list[float] = []
    bench.partial = {"paced_ms": paced}
    for r in range(p.ack_rounds):
        for side in ("pressroom", "prefect") if r % 2 == 0 else ("prefect", "pressroom"):
            paced[side] += await _paced(p.ack_paced_seconds, p.ack_rate, p.ack_clients, sides[side])
            if side == "pressroom":
                relay_drain.append(await bench.outbox.wait_sent(slugs, timeout=300))
        bench.log(
            f"  paced round {r} ({p.ack_rate:g}/s from {p.ack_clients} clients): pressroom p50 "
            f"{summarize(paced['pressroom'])['p50'] * 1000:.1f} ms, "
            f"prefect p50 {summarize(paced['prefect'])['p50'] * 1000:.1f} ms"
        )

    saturated: dict[str, list[float]] = {"pressroom": [], "prefect": []}
    capacity: dict[str, list[float]] = {"pressroom": [], "prefect": [], "relay": []}
    bench.partial["saturated_ms"] = saturated
    for r in range(p.ack_saturated_rounds):
        for side in ("pressroom", "prefect") if r % 2 == 0 else ("prefect", "pressroom"):
            lat, wall = await _saturated(p.ack_saturated_per_round, p.ack_clients, sides[side])
            saturated[side] += lat
            capacity[side].append(p.ack_saturated_per_round / wall)
            if side == "pressroom":
                # The relay hands the outbox to Prefect after each response: let it finish so
                # the next batch does not run against its leftovers, and time how long it takes.
                drain = await bench.outbox.wait_sent(slugs, timeout=600)
                capacity["relay"].append(p.ack_saturated_per_round / (wall + drain))
        bench.log(
            f"  saturated round {r} ({p.ack_clients} clients back to back): "
            f"pressroom {capacity['pressroom'][-1]:.1f}/s "
            f"p50 {summarize(saturated['pressroom'])['p50'] * 1000:.0f} ms, "
            f"prefect {capacity['prefect'][-1]:.1f}/s p50 {summarize(saturated['prefect'])['p50'] * 1000:.0f} ms"
        )

    profile = None
    if bench.profile_server and "control-plane" in bench.stack.children:
        bench.log(f"  profile segment (not counted): py-spy on the control plane, {p.profile_seconds:.0f} s")
        path = bench.out / "profile-control-plane.txt"
        spy = profiling.start(bench.stack.children["control-plane"].pid, p.profile_seconds, path)
        await _paced(p.profile_seconds, p.ack_rate * 2, p.ack_clients, pressroom)
        error = profiling.finish(spy, timeout=p.profile_seconds + 60)
        profile = {"error": error} if error else {**profiling.summarize_and_compress(path)}

    deleted = await bench.best_effort(
        "deleting the suite's scheduled runs",
        prefect_side.delete_scheduled_of_tags(
            bench.stack.prefect_api_url, ["bench:ack", *(f"tenant:{s}" for s in slugs)]
        ),
    )
    summary = {
        f"{load}_{side}": summarize(ms(v))
        for load, d in (("paced", paced), ("saturated", saturated))
        for side, v in d.items()
    }
    ack, create = summary["paced_pressroom"], summary["paced_prefect"]
    p50_ratio = ratio(ack["p50"], create["p50"])
    sat_ratio = ratio(summary["saturated_pressroom"]["p50"], summary["saturated_prefect"]["p50"])
    return {
        "settings": {
            "tenants": len(tenants),
            "clients": p.ack_clients,
            "paced_rate_per_s": p.ack_rate,
            "paced_seconds_per_round": p.ack_paced_seconds,
            "rounds": p.ack_rounds,
            "saturated_per_round": p.ack_saturated_per_round,
            "saturated_rounds": p.ack_saturated_rounds,
            "worker": "idle (tenant queues paused)",
            "prefect_client_connections": 64,
        },
        "samples_ms": {
            f"{load}_{side}": ms(v) for load, d in (("paced", paced), ("saturated", saturated)) for side, v in d.items()
        },
        "summary_ms": summary,
        "capacity_per_s": {k: (sum(v) / len(v) if v else None) for k, v in capacity.items()},
        "relay_drain_after_paced_s": relay_drain,
        "profile": {"control-plane": profile} if profile else None,
        "ratios": {
            "paced_p50_ack_over_create": p50_ratio,
            "paced_p99_ack_over_create": ratio(ack["p99"], create["p99"]),
            "saturated_p50_ack_over_create": sat_ratio,
        },
        "headline": {
            "metric": "publish ack p50 / bare create_flow_run p50 (paced)",
            "value": p50_ratio,
            "pressroom": ack["p50"],
            "baseline": create["p50"],
            "unit": "ms",
            "second": {"metric": "same, saturated", "value": sat_ratio},
        },
        "targets": [
            target("ack p50 ≤ 10 ms", ack["p50"], "<=", 10, "ms"),
            target("ack p99 ≤ 50 ms", ack["p99"], "<=", 50, "ms"),
            target("ack p50 ≤ 0.2× bare run creation p50", p50_ratio, "<=", 0.2, "×"),
        ],
        "cleanup": {"scheduled_runs_deleted": deleted},
    }
