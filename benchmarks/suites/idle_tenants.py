"""idle_tenants: many tenants with queues and nothing to do.

The runtime worker runs behind a counting proxy, so its requests to the
Prefect server are counted by path. Window A: the tenants earlier suites left.
Then N more tenants are created through the operator API (workspace + queue
each) and window B measures the same worker, which serves them without a
restart; finally the worker is restarted to time its start-up with every
tenant (it registers each tenant's queue before polling).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from benchmarks.countproxy import CountingProxy
from benchmarks.procstat import CpuWindow, sample_trees
from benchmarks.runner import Bench
from benchmarks.stats import ratio, summarize, target

POLL_PATH = "POST /api/work_pools/pressroom/get_scheduled_flow_runs"
# The worker's poll asks which queues have due runs first (dispatch/prefect_gateway.py waiting_queues), and
# makes the pool query above only when some do: an idle worker's polls are these.
WAITING_PATH = "POST /api/flow_runs/filter"
POLLS = (POLL_PATH, WAITING_PATH)
SETTLE_S = 11.0  # one sweep interval (10 s) and a little


async def _wait_polling(proxy: CountingProxy, bench: Bench, timeout: float) -> float:
    """Seconds until the worker's first pool poll (its start-up is done)."""
    t0 = time.monotonic()
    before = proxy.requests[POLL_PATH]
    # Start-up reads flow runs too (its reclaim): the first poll is the first pool query or the first
    # waiting-queues query after the deployments are registered.
    waiting_before = proxy.requests[WAITING_PATH] + 1
    while proxy.requests[POLL_PATH] == before and proxy.requests[WAITING_PATH] <= waiting_before:
        bench.stack.check_alive()
        if time.monotonic() - t0 > timeout:
            raise TimeoutError(f"the worker did not poll within {timeout:.0f} s; see {bench.stack.logs}/worker.log")
        await asyncio.sleep(0.1)
    return time.monotonic() - t0


async def _settle(bench: Bench, proxy: CountingProxy, timeout: float = 180) -> float:
    """Wait until the worker has had nothing but polls to send for a whole sweep interval.

    Leftover runs of earlier suites and the first sweep after a start (it opens every
    tenant's workspace once) are not the idle cost being measured.
    """
    t0 = time.monotonic()
    quiet_since = time.monotonic()
    last = proxy.requests.copy()
    while time.monotonic() - quiet_since < SETTLE_S:
        if time.monotonic() - t0 > timeout:
            raise TimeoutError(f"the worker was still busy after {timeout:.0f} s: {dict(proxy.requests - last)}")
        await asyncio.sleep(1.0)
        now = proxy.requests.copy()
        if any(path not in POLLS for path in (now - last)):
            quiet_since = time.monotonic()
        last = now
    return time.monotonic() - t0


async def _window(bench: Bench, proxy: CountingProxy, seconds: float, tenants: int) -> dict[str, Any]:
    pids = bench.stack.pids()
    requests_before = proxy.requests.copy()
    cpu = CpuWindow(pids).start()
    rss: list[int] = []
    processes: list[int] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        trees = await asyncio.to_thread(sample_trees, {"worker": pids.get("worker")})
        rss.append(trees["worker"].rss)
        processes.append(trees["worker"].processes)
        await asyncio.sleep(1.0)
    cpu.stop()
    counted = proxy.requests - requests_before
    everything = await asyncio.to_thread(sample_trees, pids)
    return {
        "tenants": tenants,
        "window_s": cpu.elapsed,
        "cpu_percent": cpu.percent(),
        "worker_rss_mb": summarize([r / 2**20 for r in rss]),
        "worker_processes_max": max(processes, default=0),
        "stack_processes": {k: v.processes for k, v in everything.items()},
        "worker_requests_per_s": sum(counted.values()) / cpu.elapsed,
        "worker_requests_by_path": dict(counted.most_common(12)),
    }


async def run(bench: Bench) -> dict[str, Any]:
    p = bench.profile
    assert bench.stack.prefect is not None
    upstream = int(bench.stack.prefect.api_url.rsplit(":", 1)[1].split("/", 1)[0])
    proxy = await CountingProxy(upstream).start()
    bench.stop_worker()
    try:
        env = bench.stack.env(prefect_api_url=f"http://127.0.0.1:{proxy.port}/api")
        bench.stack.start_worker(env=env)
        await _wait_polling(proxy, bench, timeout=300)
        before = len(list((bench.stack.data_dir / "tenants").iterdir()))
        await _settle(bench, proxy)
        bench.log(f"  window A: {before} tenants, {p.idle_window:.0f} s")
        window_a = await _window(bench, proxy, p.idle_window, before)

        bench.log(f"  creating {p.idle_tenants} tenants")
        t0 = time.monotonic()
        await bench.api.create_tenants("idle", p.idle_tenants, concurrency=4)
        create_s = time.monotonic() - t0
        after = before + p.idle_tenants
        await _settle(bench, proxy)
        bench.log(f"  window B: {after} tenants, {p.idle_window:.0f} s")
        window_b = await _window(bench, proxy, p.idle_window, after)

        startup_s = None
        if p.idle_restart:
            bench.stop_worker()
            bench.stack.start_worker(env=env)
            startup_s = await _wait_polling(proxy, bench, timeout=600)
            bench.log(f"  worker start-up with {after} tenants: {startup_s:.1f} s")
    finally:
        bench.stop_worker()
        await proxy.close()
        await bench.start_worker()

    rss_max = window_b["worker_rss_mb"].get("max")
    procs_a, procs_b = window_a["worker_processes_max"], window_b["worker_processes_max"]
    return {
        "settings": {
            "new_tenants": p.idle_tenants,
            "window_s": p.idle_window,
            "worker": "defaults (poll 0.5 s, sweep 10 s), behind a counting proxy",
        },
        "windows": {"before": window_a, "after": window_b},
        "tenant_creation": {"count": p.idle_tenants, "seconds": create_s, "per_s": p.idle_tenants / create_s},
        "worker_startup_s": startup_s,
        "ratios": {
            "worker_cpu_after_over_before": _ratio(window_b, window_a, "worker"),
            "server_cpu_after_over_before": _ratio(window_b, window_a, "prefect_server"),
        },
        "headline": {
            "metric": f"worker RSS with {after} tenants / with {before}",
            "value": ratio(rss_max, window_a["worker_rss_mb"].get("max")),
            "pressroom": rss_max,
            "baseline": window_a["worker_rss_mb"].get("max"),
            "unit": "MB",
            "second": {"metric": "worker CPU, same comparison", "value": _ratio(window_b, window_a, "worker")},
        },
        "targets": [
            target("no process per tenant (worker processes unchanged)", procs_b - procs_a, "==", 0, "processes"),
            target("worker RSS ≤ 400 MB", rss_max, "<=", 400, "MB"),
        ],
    }


def _ratio(after: dict[str, Any], before: dict[str, Any], name: str) -> float | None:
    a, b = after["cpu_percent"].get(name), before["cpu_percent"].get(name)
    return a / b if a is not None and b else None
