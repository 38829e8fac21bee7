"""brief_intake: agents post briefs at machine speed; and brief → published with the offline provider.

Intake: 50 clients over 20 tenants post unique briefs back to back (their
Pressroom queues paused, so the runtime worker stays idle and the numbers are
the command path: validation, the brief row, the operation, the relay's
hand-off); then every brief is posted again (each must answer 200 already
queued). Baseline, interleaved in the same run: the bare Prefect run creation
the relay makes per brief (``create_flow_run_from_deployment``, Scheduled,
idempotency key, tags), from the same number of clients.

Brief → published: one brief at a time on a tenant the worker serves (the
eight-step backbone, offline provider), POST → the operation succeeded, with
the same bare run creation as the yardstick.

``PRESSROOM_BENCH_INTAKE_ONLY=1`` skips brief → published (a quick look at intake
alone). The control plane's CPU seconds over each measured round (from /proc)
give its CPU per accepted brief; with profiling on, an uncounted extra round is
sampled by py-spy on the control plane (``profile-brief-intake.txt.gz``).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any

from benchmarks import prefect_side, profiling, wrk
from benchmarks.pressroom_api import ApiError, Tenant
from benchmarks.procstat import CpuWindow
from benchmarks.runner import Bench
from benchmarks.stats import ms, ratio, summarize, target
from tenant_runtime.ids import utcnow

TENANTS = 20
CLIENTS = 50
# The open-loop phase: briefs arrive at this rate (Poisson), each on its own connection slot, whatever the
# answers take; its latencies are the ones the p99 targets read (at the rate the issue asks for).
OFFERED_RATE = 300.0
# wrk's phases: (name, run id, connections); a phase with an earlier phase's run id posts its briefs again.
WRK_PHASES = (("c4", "w4", 4), ("c8", "w8", 8), ("c8_duplicates", "w8", 8), ("c16", "w16", 16), ("c50", "w50", 50))


async def _open_loop(count: int, rate: float, one: Callable[[int], Awaitable[float]]) -> tuple[list[float], float]:
    """``count`` calls arriving at ``rate``/s (exponential gaps), not waiting for each other; latencies and the
    achieved rate (calls ÷ first arrival to last answer)."""
    rng = random.Random(13)
    t0 = time.monotonic()
    due = t0
    calls: list[asyncio.Task[float]] = []
    for i in range(count):
        due += rng.expovariate(rate)
        await asyncio.sleep(max(0.0, due - time.monotonic()))
        calls.append(asyncio.ensure_future(one(i)))
    latencies = list(await asyncio.gather(*calls))
    return latencies, count / (time.monotonic() - t0)


async def _saturated(count: int, clients: int, one: Callable[[int], Awaitable[float]]) -> tuple[list[float], float]:
    counter = itertools.count()
    latencies: list[float] = []

    async def client() -> None:
        while (i := next(counter)) < count:
            latencies.append(await one(i))

    t0 = time.monotonic()
    await asyncio.gather(*(client() for _ in range(clients)))
    return latencies, time.monotonic() - t0


async def _post(bench: Bench, tenant: Tenant, brief: dict[str, Any], expect: int) -> tuple[float, dict[str, Any]]:
    url = f"/api/tenants/{tenant.slug}/briefs"
    t0 = time.monotonic()
    response = await bench.api.api.post(url, json=brief, headers=tenant.headers)
    seconds = time.monotonic() - t0
    if response.status_code != expect:
        raise ApiError(f"POST {url} → {response.status_code} (expected {expect}): {response.text[:300]}")
    return seconds, response.json()


def _brief(run: str, i: int) -> dict[str, Any]:
    lanes = ("news", "dev", "build", "design", "marketing", "founders", "business")
    return {
        "brief_id": f"{run}-{i}",
        "lane": lanes[i % len(lanes)],
        "title": f"Benchmark brief {run} {i}",
        "notes": "What changed.\nWhy it matters.",
    }


async def _wrk_phases(bench: Bench, tenants: list[Tenant], slugs: list[str], *, seconds: float) -> dict[str, Any]:
    """The same intake under ``wrk`` (C) at 4, 8, 16 and 50 connections, and at 8 the same briefs again
    (duplicates); the targets read 8 (the rate and the p99 of one run together). Each phase's briefs reach
    Prefect before the next starts, so a phase does not measure the last one's relay."""
    if not wrk.available():
        bench.log("  wrk not installed (apt-get install wrk): its phases are skipped")
        return {"skipped": "wrk is not installed"}
    roots = {"control-plane": bench.stack.children["control-plane"].pid}
    phases: dict[str, Any] = {}
    for name, run_id, connections in WRK_PHASES:
        window = CpuWindow(roots).start()
        phase = await wrk.post_briefs(bench.stack.api_url, tenants, run_id, connections=connections, seconds=seconds)
        answered = phase["accepted"] + phase["duplicates"]
        phase["control_plane_cpu_ms_per_request"] = round(1000 * window.stop()["control-plane"] / max(1, answered), 2)
        phases[name] = phase
        bench.log(
            f"  wrk {name}: {phase['accepted_per_s']:.0f} accepted/s, {phase['duplicates_per_s']:.0f} duplicates/s, "
            f"p50 {phase['latency_ms']['p50']:.1f} ms, p99 {phase['latency_ms']['p99']:.1f} ms, "
            f"{phase['other']} other answers, errors {phase['errors']}"
        )
        await bench.outbox.wait_sent(slugs, timeout=900)
    return {"tool": "wrk", "seconds_per_phase": seconds, "phases": phases}


async def run(bench: Bench) -> dict[str, Any]:
    quick = bench.profile.name == "quick"
    per_round = 200 if quick else 1500
    rounds = 1 if quick else 2
    published_samples = 0 if os.environ.get("PRESSROOM_BENCH_INTAKE_ONLY") == "1" else (5 if quick else 30)
    tenants = await bench.api.create_tenants("brf", TENANTS, concurrency=4)
    slugs = [t.slug for t in tenants]
    await prefect_side.pause_tenant_queues(bench.prefect, slugs)

    posted: list[tuple[Tenant, dict[str, Any]]] = []

    def pressroom_side(run_id: str) -> Callable[[int], Awaitable[float]]:
        async def one(i: int) -> float:
            tenant, brief = tenants[i % len(tenants)], _brief(run_id, i)
            seconds, _ = await _post(bench, tenant, brief, 202)
            posted.append((tenant, brief))
            return seconds

        return one

    async def duplicate(i: int) -> float:
        tenant, brief = posted[i]
        seconds, body = await _post(bench, tenant, brief, 200)
        if body.get("status") != "already queued":
            raise ApiError(f"a duplicate brief answered {body}")
        return seconds

    async def prefect(i: int) -> float:
        tenant = tenants[i % len(tenants)]
        _, seconds = await prefect_side.create_scheduled(
            bench.prefect,
            bench.deployments.noop,
            queue=prefect_side.BASELINE_QUEUE,
            when=utcnow(),
            parameters={"tenant": tenant.slug, "operation_id": f"op_brief_{i}", "document_id": "d", "version": 1},
            tags=["bench:brief", f"tenant:{tenant.slug}"],
        )
        return seconds

    bench.log("  warm-up")
    await _saturated(40, 10, pressroom_side("warm"))
    await _saturated(40, 10, prefect)
    await bench.outbox.wait_sent(slugs, timeout=300)

    latencies: dict[str, list[float]] = {
        "accept": [],
        "duplicate": [],
        "prefect": [],
        "accept_at_offered_rate": [],
        "duplicate_at_offered_rate": [],
    }
    rates: dict[str, list[float]] = {
        "accept": [],
        "duplicate": [],
        "prefect": [],
        "accept_at_offered_rate": [],
        "duplicate_at_offered_rate": [],
    }
    cpu_ms: dict[str, list[float]] = {"accept": [], "duplicate": [], "relay": []}
    roots = {"control-plane": bench.stack.children["control-plane"].pid}
    bench.partial = {"latencies_ms": latencies}
    for r in range(rounds):
        posted.clear()
        for side in ("pressroom", "prefect") if r % 2 == 0 else ("prefect", "pressroom"):
            if side == "prefect":
                lat, wall = await _saturated(per_round, CLIENTS, prefect)
                latencies["prefect"] += lat
                rates["prefect"].append(per_round / wall)
                continue
            window = CpuWindow(roots).start()
            lat, wall = await _saturated(per_round, CLIENTS, pressroom_side(f"r{r}"))
            latencies["accept"] += lat
            rates["accept"].append(per_round / wall)
            cpu_ms["accept"].append(1000 * window.stop()["control-plane"] / per_round)
            # What the relay's Prefect hand-off still had to do after the accepts (it runs beside them too).
            window = CpuWindow(roots).start()
            await bench.outbox.wait_sent(slugs, timeout=600)
            cpu_ms["relay"].append(1000 * window.stop()["control-plane"] / per_round)
            window = CpuWindow(roots).start()
            lat, wall = await _saturated(len(posted), CLIENTS, duplicate)
            latencies["duplicate"] += lat
            rates["duplicate"].append(len(posted) / wall)
            cpu_ms["duplicate"].append(1000 * window.stop()["control-plane"] / len(posted))
            await bench.outbox.wait_sent(slugs, timeout=600)
            # Open loop at the rate: new briefs, then the same briefs again.
            posted.clear()
            # Half a round's briefs (full: 750, 2.5 s at 300/s): each must also reach Prefect before the next phase.
            lat, achieved = await _open_loop(per_round // 2, OFFERED_RATE, pressroom_side(f"o{r}"))
            latencies["accept_at_offered_rate"] += lat
            rates["accept_at_offered_rate"].append(achieved)
            lat, achieved = await _open_loop(len(posted), OFFERED_RATE, duplicate)
            latencies["duplicate_at_offered_rate"] += lat
            rates["duplicate_at_offered_rate"].append(achieved)
            await bench.outbox.wait_sent(slugs, timeout=600)
        at_rate = summarize(ms(latencies["accept_at_offered_rate"][-(per_round // 2) :]))
        bench.log(
            f"  round {r}: accept {rates['accept'][-1]:.0f}/s, duplicates {rates['duplicate'][-1]:.0f}/s, "
            f"bare run creation {rates['prefect'][-1]:.0f}/s; at {OFFERED_RATE:.0f}/s offered: "
            f"{rates['accept_at_offered_rate'][-1]:.0f}/s, p99 {at_rate['p99']:.0f} ms"
        )

    load_tool = await _wrk_phases(bench, tenants, slugs, seconds=3.0 if quick else 5.0)

    profile: dict[str, Any] | None = None
    if bench.profile_server:
        path = bench.out / "profile-brief-intake.txt"
        if wrk.available():
            # Sampled under the load the targets read (wrk, 4 connections), not the Python clients' pace.
            bench.log("  profile round (not counted): py-spy on the control plane under wrk, 4 connections")
            seconds = 10.0
            spy = profiling.start(roots["control-plane"], seconds, path)
            await wrk.post_briefs(bench.stack.api_url, tenants, "prof", connections=4, seconds=seconds)
        else:
            bench.log("  profile round (not counted): py-spy on the control plane")
            seconds = min(20.0, max(5.0, per_round / max(rates["accept"])))
            spy = profiling.start(roots["control-plane"], seconds, path)
            deadline = time.monotonic() + seconds
            counter = itertools.count()

            async def until_deadline() -> None:
                while time.monotonic() < deadline:
                    i = next(counter)
                    await _post(bench, tenants[i % len(tenants)], _brief("prof", i), 202)

            await asyncio.gather(*(until_deadline() for _ in range(CLIENTS)))
        error = profiling.finish(spy, timeout=seconds + 60)
        profile = {"error": error} if error else {**profiling.summarize_and_compress(path)}
        await bench.outbox.wait_sent(slugs, timeout=600)

    # Brief → published, one at a time, on a tenant the worker serves.
    to_published: list[float] = []
    if published_samples:
        await bench.ready_worker()
        [live] = await bench.api.create_tenants("brfl", 1)
    for i in range(published_samples):
        t0 = time.monotonic()
        _, body = await _post(bench, live, _brief("live", i), 202)
        row = await bench.outbox.wait_final(live.slug, body["operation_id"], timeout=120)
        if row.status != "succeeded":
            raise RuntimeError(f"brief {i} ended {row.status}")
        to_published.append(time.monotonic() - t0)
    if to_published:
        bench.log(f"  brief → published p50 {summarize(to_published)['p50']:.2f} s")

    await bench.best_effort(
        "deleting the suite's scheduled runs",
        prefect_side.delete_scheduled_of_tags(bench.stack.prefect_api_url, ["bench:brief"]),
    )
    summary = {k: summarize(ms(v)) for k, v in latencies.items()}
    summary["brief_to_published"] = summarize(ms(to_published))
    rate = {k: (sum(v) / len(v) if v else None) for k, v in rates.items()}
    accept, bare = summary["accept"], summary["prefect"]
    paced, paced_dup = summary["accept_at_offered_rate"], summary["duplicate_at_offered_rate"]
    return {
        "settings": {
            "tenants": TENANTS,
            "clients": CLIENTS,
            "briefs_per_round": per_round,
            "rounds": rounds,
            "published_samples": published_samples,
            "provider": "offline",
            "offered_rate_per_s": OFFERED_RATE,
            "worker": "idle for intake (tenant queues paused); running for brief → published",
        },
        "samples_ms": {k: ms(v) for k, v in latencies.items()} | {"brief_to_published": ms(to_published)},
        "summary_ms": summary,
        "rate_per_s": rate,
        # Control-plane CPU (all its threads: requests and the relay's hand-off) per brief, ms, each round.
        "control_plane_cpu_ms_per_brief": cpu_ms,
        # The same intake from wrk (C), so the load generator does not take the cores it measures.
        "wrk": load_tool,
        "profile": profile,
        "ratios": {
            "accept_p50_over_bare_create_p50": ratio(accept["p50"], bare["p50"]),
            "accept_rate_over_bare_create_rate": ratio(rate["accept"], rate["prefect"]),
            "duplicate_rate_over_accept_rate": ratio(rate["duplicate"], rate["accept"]),
            "brief_to_published_p50_over_bare_create_p50": ratio(summary["brief_to_published"].get("p50"), bare["p50"]),
        },
        "headline": {
            "metric": "briefs accepted per second (20 tenants, 50 clients) / bare run creations per second",
            "value": ratio(rate["accept"], rate["prefect"]),
            "pressroom": rate["accept"],
            "baseline": rate["prefect"],
            "unit": "/s",
        },
        "targets": [
            target("briefs accepted ≥ 300/s", rate["accept"], ">=", 300, "/s"),
            target("accept p99 ≤ 50 ms at 300/s offered", paced["p99"], "<=", 50, "ms"),
            target(
                "duplicates answered at the accept rate (≥ 0.9×)",
                ratio(rate["duplicate"], rate["accept"]),
                ">=",
                0.9,
                "×",
            ),
            target("duplicate p99 ≤ 50 ms at 300/s offered", paced_dup["p99"], "<=", 50, "ms"),
            # The rate and the latency of one run together: the most briefs a second any wrk phase accepted
            # while its p99 stayed within 50 ms (throughput at the latency target), and 8 connections' p99.
            target(
                "briefs accepted ≥ 300/s with p99 ≤ 50 ms (wrk: the best phase within 50 ms)",
                _best_within(load_tool, 50.0),
                ">=",
                300,
                "/s",
            ),
            target(
                "accept p99 ≤ 50 ms (wrk, 8 connections, the same run)", _wrk(load_tool, "c8", "p99"), "<=", 50, "ms"
            ),
            target(
                "duplicates at the accept rate (wrk, 8 connections, ≥ 0.9×)",
                ratio(_wrk(load_tool, "c8_duplicates", "duplicates_per_s"), _wrk(load_tool, "c8", "accepted_per_s")),
                ">=",
                0.9,
                "×",
            ),
        ],
    }


def _wrk(load: dict[str, Any], phase: str, figure: str) -> float | None:
    """A figure of a wrk phase (``p50``/``p99`` from its latencies), or None when wrk did not run."""
    found = load.get("phases", {}).get(phase)
    if found is None:
        return None
    return found["latency_ms"][figure] if figure in found["latency_ms"] else found[figure]


def _best_within(load: dict[str, Any], p99_ms: float) -> float | None:
    """The highest accept rate of the wrk phases of new briefs whose p99 was within ``p99_ms`` (0 if none)."""
    phases = [p for name, p in load.get("phases", {}).items() if not name.endswith("_duplicates")]
    if not phases:
        return None
    return max((p["accepted_per_s"] for p in phases if p["latency_ms"]["p99"] <= p99_ms), default=0.0)
