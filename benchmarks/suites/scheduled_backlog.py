"""scheduled_backlog: thousands of runs scheduled 30–90 days ahead, and what they cost while idle.

Per backend (the stack's PostgreSQL-backed server; in full mode also a second
Prefect server on SQLite with its own runtime worker):
1. idle window without the backlog: CPU of server, database, runtime worker;
   timing of the worker's pool query;
2. create the backlog. Through Pressroom when ``POST …/releases`` takes
   ``publish_at`` (the relay then creates each Scheduled run), interleaved in
   chunks with bare ``create_flow_run_from_deployment`` calls (the baseline);
   bare calls only when the endpoint is not there (that is what the relay does);
3. the same idle window with the backlog; database size before/after;
4. lateness: runs due in the next few seconds, picked up by the runtime
   worker; lateness = Pending (claimed) − the later of expected start and
   creation. These are bare runs with parameters no operation matches, so
   the worker claims each (Scheduled → Pending), refuses it and fails it:
   pickup is the same path as a real run's.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any
from uuid import UUID

import psycopg

from benchmarks import prefect_side
from benchmarks.procstat import CpuWindow
from benchmarks.runner import Bench
from benchmarks.stats import ms, ratio, summarize, target
from benchmarks.suites.backlog_parts import Backend, pressroom_releases, sqlite_backend
from tenant_runtime.ids import utcnow

CHUNK = 100
CLIENTS = 8
BACKLOG_TENANTS = 10
SETTLE_S = 11.0  # one sweep interval of the runtime worker, and a little


async def _idle(bench: Bench, backend: Backend, seconds: float) -> dict[str, Any]:
    cpu = CpuWindow(backend.cpu_roots()).start()
    await asyncio.sleep(seconds)
    cpu.stop()
    polls = []
    for _ in range(20):
        t0 = time.monotonic()
        await backend.client.get_scheduled_flow_runs_for_work_pool(
            work_pool_name="pressroom", scheduled_before=utcnow()
        )
        polls.append(time.monotonic() - t0)
    return {
        "window_s": cpu.elapsed,
        "cpu_percent": cpu.percent(),
        "pool_query_ms": summarize(ms(polls)),
        "db_bytes": await asyncio.to_thread(backend.db_size),
    }


async def _bare_chunk(backend: Backend, queues: list[str], count: int) -> float:
    """Create ``count`` far-future runs with CLIENTS concurrent callers; returns wall seconds."""
    todo = iter(range(count))

    async def caller() -> None:
        for i in todo:
            when = utcnow() + timedelta(days=random.uniform(30, 90))
            queue = queues[i % len(queues)]
            await prefect_side.create_scheduled(
                backend.client,
                backend.deployment,
                queue=queue,
                when=when,
                tags=["bench:backlog"],
                parameters={
                    "params": {
                        "tenant": queue.removeprefix("tenant-"),
                        "operation_id": f"op_backlog_{i}",
                        "document_id": "doc_backlog",
                        "version": 1,
                        "generation": 0,
                    }
                },
            )

    t0 = time.monotonic()
    await asyncio.gather(*(caller() for _ in range(CLIENTS)))
    return time.monotonic() - t0


async def _create_backlog(
    bench: Bench, backend: Backend, total: int, pressroom: Callable[[int], Awaitable[float]] | None
) -> dict[str, Any]:
    made = {"pressroom": 0, "bare": 0}
    spent = {"pressroom": 0.0, "bare": 0.0}
    deadline = time.monotonic() + bench.profile.backlog_create_budget
    while sum(made.values()) < total and time.monotonic() < deadline:
        for side in ("pressroom", "bare") if pressroom else ("bare",):
            n = min(CHUNK, total - sum(made.values()))
            if n <= 0:
                break
            spent[side] += await (
                pressroom(n) if side == "pressroom" and pressroom else _bare_chunk(backend, backend.queues, n)
            )
            made[side] += n
        bench.log(f"    {backend.name}: {sum(made.values())}/{total} scheduled")
    return {"created": made, "seconds": spent, "per_s": {k: (made[k] / spent[k] if spent[k] else None) for k in made}}


async def _lateness(bench: Bench, backend: Backend, count: int) -> dict[str, Any]:
    """``count`` runs due 3–10 s from now; how late the runtime worker claims them."""
    start = utcnow()
    ids: list[UUID] = []

    async def one(i: int) -> None:
        when = start + timedelta(seconds=random.uniform(3, 10))
        queue = backend.queues[i % len(backend.queues)]
        run_id, _ = await prefect_side.create_scheduled(
            backend.client,
            backend.deployment,
            queue=queue,
            when=when,
            tags=["bench:due"],
            parameters={
                "params": {
                    "tenant": queue.removeprefix("tenant-"),
                    "operation_id": f"op_due_{i}",
                    "document_id": "doc_due",
                    "version": 1,
                    "generation": 0,
                }
            },
        )
        ids.append(run_id)

    gate = asyncio.Semaphore(CLIENTS)

    async def gated(i: int) -> None:
        async with gate:
            await one(i)

    await asyncio.gather(*(gated(i) for i in range(count)))
    created_s = (utcnow() - start).total_seconds()
    deadline = time.monotonic() + 120
    runs: dict[UUID, Any] = {}
    while time.monotonic() < deadline:
        runs = await prefect_side.read_runs(backend.client, ids)
        waiting = [r for r in runs.values() if r.state is not None and r.state.type.value == "SCHEDULED"]
        if not waiting:
            break
        await asyncio.sleep(1)
    late: list[float] = []
    unclaimed = 0
    for run_id in ids:
        run = runs.get(run_id)
        if run is None:
            unclaimed += 1
            continue
        times = await prefect_side.state_times(backend.client, run_id)
        if "PENDING" not in times or run.expected_start_time is None:
            unclaimed += 1
            continue
        # A run cannot be claimed before it exists: late from when it was both due and created.
        due = max(run.expected_start_time, run.created) if run.created else run.expected_start_time
        late.append(max(0.0, (times["PENDING"] - due).total_seconds()))
    return {
        "runs": count,
        "created_in_s": created_s,
        "unclaimed_after_120s": unclaimed,
        "lateness_ms": summarize(ms(late)),
        "samples_ms": ms(late),
    }


async def _backend_phases(
    bench: Bench, backend: Backend, total: int, pressroom: Callable[[int], Awaitable[float]] | None
) -> dict[str, Any]:
    window = bench.profile.backlog_window
    # The first sweep after a worker start opens every tenant's workspace: not idle cost.
    await asyncio.sleep(SETTLE_S)
    bench.log(f"  {backend.name}: idle {window:.0f} s without the backlog")
    before = await _idle(bench, backend, window)
    bench.log(f"  {backend.name}: creating {total} runs 30–90 days ahead")
    creation = await _create_backlog(bench, backend, total, pressroom)
    await asyncio.sleep(5)  # let the relay finish what it was handed
    bench.log(f"  {backend.name}: idle {window:.0f} s with the backlog")
    after = await _idle(bench, backend, window)
    bench.log(f"  {backend.name}: lateness of {bench.profile.backlog_due_runs} runs due in 3–10 s")
    lateness = await _lateness(bench, backend, bench.profile.backlog_due_runs)
    created = sum(creation["created"].values())
    db_delta = after["db_bytes"] - before["db_bytes"]
    return {
        "before": before,
        "after": after,
        "creation": creation,
        "lateness": lateness,
        "db_bytes_per_run": db_delta / created if created else None,
        "idle_cpu_ratio": {
            k: ratio(after["cpu_percent"].get(k), before["cpu_percent"].get(k)) for k in after["cpu_percent"]
        },
    }


def _pg_size(url: str) -> Callable[[], int]:
    port = int(url.rsplit(":", 1)[1].split("/", 1)[0])

    def size() -> int:
        with psycopg.connect(host="127.0.0.1", port=port, user="postgres", dbname="prefect", connect_timeout=5) as conn:
            return int(conn.execute("SELECT pg_database_size('prefect')").fetchone()[0])

    return size


async def run(bench: Bench) -> dict[str, Any]:
    p = bench.profile
    await bench.ready_worker()
    assert bench.stack.postgres is not None
    tenants = await bench.api.create_tenants("sched", BACKLOG_TENANTS, concurrency=4)
    deployment = (await bench.prefect.read_deployment_by_name("publish_document/pressroom")).id
    pids = bench.stack.pids()
    pg = Backend(
        "postgresql",
        bench.prefect,
        bench.stack.prefect_api_url,
        deployment,
        [f"tenant-{t.slug}" for t in tenants],
        lambda: (
            {k: pids[k] for k in ("prefect_server", "postgres") if k in pids}
            | {"worker": bench.stack.pids().get("worker")}
        ),
        _pg_size(bench.stack.postgres.url),
    )
    pressroom, how = await pressroom_releases(bench, tenants)
    results: dict[str, Any] = {"postgresql": await _backend_phases(bench, pg, p.backlog_runs, pressroom)}
    await prefect_side.delete_scheduled_of_tags(
        bench.stack.prefect_api_url, ["bench:backlog", *(f"tenant:{t.slug}" for t in tenants)], budget=300
    )
    if p.backlog_sqlite:
        async with sqlite_backend(bench) as sqlite:
            results["sqlite"] = await _backend_phases(bench, sqlite, p.backlog_sqlite_runs, None)

    main = results["postgresql"]
    lat = main["lateness"]["lateness_ms"]
    cpu_ratio = main["idle_cpu_ratio"].get("prefect_server")
    targets = [
        target("idle server CPU unchanged by the backlog (after/before ≤ 1.25)", cpu_ratio, "<=", 1.25, "×"),
        target("lateness p99 ≤ 5 s", lat.get("p99"), "<=", 5000, "ms"),
    ]
    if "sqlite" in results:
        s_lat = results["sqlite"]["lateness"]["lateness_ms"]
        targets.append(target("SQLite: lateness p99 ≤ 5 s", s_lat.get("p99"), "<=", 5000, "ms"))
        targets.append(
            target(
                "SQLite: idle server CPU unchanged (≤ 1.25×)",
                results["sqlite"]["idle_cpu_ratio"].get("prefect_server"),
                "<=",
                1.25,
                "×",
            )
        )
    rates = main["creation"]["per_s"]
    return {
        "settings": {
            "backlog_runs": p.backlog_runs,
            "window_s": p.backlog_window,
            "due_runs": p.backlog_due_runs,
            "clients": CLIENTS,
            "tenants": BACKLOG_TENANTS,
            "pressroom_path": how,
            "sqlite": p.backlog_sqlite,
            "sqlite_runs": p.backlog_sqlite_runs,
        },
        "backends": results,
        "ratios": {
            "idle_server_cpu_after_over_before": cpu_ratio,
            "pressroom_over_bare_creation_rate": ratio(rates.get("pressroom"), rates.get("bare")),
        },
        "headline": {
            "metric": f"idle Prefect-server CPU with {p.backlog_runs:,} far-future runs / without",
            "value": cpu_ratio,
            "pressroom": main["after"]["cpu_percent"].get("prefect_server"),
            "baseline": main["before"]["cpu_percent"].get("prefect_server"),
            "unit": "% CPU",
            "second": {"metric": "lateness p99 (ms)", "value": lat.get("p99")},
        },
        "targets": targets,
        "notes": [how],
    }
