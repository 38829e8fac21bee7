"""scale: how the control plane's and Prefect's costs grow with tenants, up to 10,000 on this machine.

At each size (full: 100, 1,000, 10,000 tenants; quick: 50, 200, 500)
the tenants missing are created through the operator API (``POST
/ops/tenants``: placement, workspace on the shard, control-plane row, Prefect
work queue; the cheapest honest path, the one an operator takes), then, with
the runtime worker stopped so nothing else polls:

- the pool query, ``get_scheduled_flow_runs`` on the ``pressroom`` pool as the
  embedded worker sends it (the whole pool) and as a shard runtime sends it
  (its queue names, here all N); baseline in the same run: the same call on a
  bare pool with N bare queues and on one with a single queue. Latency, and the
  Prefect server's and PostgreSQL's CPU per call (the server marks every polled
  queue's ``last_polled`` after answering, so the window includes that);
- placement lookups (``ShardRouter.shard_of``, what every command does first);
- the control plane's ``GET /metrics`` and ``GET /ops/tenants``;

then the worker is started behind a counting proxy with its metrics port:
start-up (until its first pool poll: it registers every tenant's queue), the
first sweeps (every workspace opened once), an idle window (CPU, RSS, polls,
quiet sweep seconds from ``pressroom_sweep_seconds``), and a few publishes on
one tenant (the relay pass from ``pressroom_relay_pass_seconds``, ack and
publish-to-succeeded). Growth is the log-log slope between sizes (1 linear,
above 1 faster than linear) and the factor per 10x tenants.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import time
from typing import Any

from benchmarks.countproxy import CountingProxy
from benchmarks.procstat import CpuWindow
from benchmarks.runner import Bench
from benchmarks.stats import ratio, summarize, target
from benchmarks.suites import scale_parts as parts
from benchmarks.suites.idle_tenants import POLLS, _settle, _wait_polling
from control_plane.local import free_port

SIZES = {"quick": (50, 200, 500), "full": (100, 1_000, 10_000)}
# Only some of the sizes (e.g. ``10000``: the 10,000-tenant point alone, created in bulk), comma-separated.
SIZES_VAR = "PRESSROOM_BENCH_SCALE_SIZES"
WINDOW_S = {"quick": 6.0, "full": 30.0}
POOL_CALLS = {"quick": 5, "full": 20}
NAMED_POOL_CALLS = {"quick": 3, "full": 3}
# A shard's poll names every queue it serves; Prefect looks each name up on its own. With 3,000 names one call
# outlasted the client's 60 s (first full run, load 13), so the named poll is measured with at most this many.
NAMED_MAX = 1_000
PUBLISHES = {"quick": 3, "full": 8}
CREATE_CONCURRENCY = 8
# Sizes up to this many tenants are created through the operator API (its rate is measured); beyond, the same rows,
# workspaces and queues are made in bulk below it (``scale_parts.bulk_rows``): at 3-10 tenants/s through the API
# on this shared machine (8.9/s to 1,000 at load 12, 3.1/s at load 17) 10,000 would take most of an hour, most of
# it the control plane running the workspace revision chain (~40 ms CPU a tenant) and Prefect creating the queue.
API_UP_TO = {"quick": 200, "full": 100}


async def _pool(bench: Bench, n: int, queue_names: list[str], api_url: str) -> dict[str, Any]:
    from dispatch.prefect_gateway import PrefectGateway
    from dispatch.settings import DispatchSettings

    calls, named_calls = POOL_CALLS[bench.profile.name], NAMED_POOL_CALLS[bench.profile.name]
    async with PrefectGateway(DispatchSettings(api_url=api_url)) as gateway:
        # What an idle worker's poll sends now (nothing waits, so no pool query follows).
        idle_poll = await parts.pool_query_costs(
            bench, "pressroom", names=None, calls=calls, call=gateway.waiting_queues
        )
    return {
        "worker_idle_poll": idle_poll,
        "pressroom_pool": await parts.pool_query_costs(bench, "pressroom", names=None, calls=calls),
        "pressroom_named": await parts.pool_query_costs(
            bench, "pressroom", names=queue_names[:NAMED_MAX], calls=named_calls
        )
        | {"names": min(n, NAMED_MAX)},
        "bare_n_queues": await parts.pool_query_costs(bench, parts.BARE_POOL_N, names=None, calls=calls),
        "bare_one_queue": await parts.pool_query_costs(bench, parts.BARE_POOL_ONE, names=None, calls=calls),
    }


async def _control_plane(bench: Bench, database_url: str, slugs: list[str]) -> dict[str, Any]:
    lookups = await asyncio.to_thread(parts.placement_lookups, database_url, slugs, 2_000)
    t0 = time.perf_counter()
    listed = await bench.api._call("GET", "/ops/tenants", 200, headers=bench.api.operator)
    list_ms = 1000 * (time.perf_counter() - t0)
    scraped = await parts.scrape(f"{bench.stack.api_url}/metrics", bench.api.operator)
    return {
        "placement": lookups,
        "ops_tenants_list_ms": round(list_ms, 1),
        "ops_tenants_listed": len(listed) if isinstance(listed, list) else len(listed.get("items", [])),
        "metrics_scrape_ms": scraped["p50_ms"],
        "metrics_bytes": scraped["bytes"],
    }


async def _worker(bench: Bench, proxy: CountingProxy, env: dict[str, str], metrics_url: str) -> dict[str, Any]:
    """Start-up, first sweeps, an idle window and a few publishes of the worker serving every tenant."""
    p = bench.profile
    bench.stack.start_worker(env=env)
    startup_s = await _wait_polling(proxy, bench, timeout=900)
    # The loop sweeps right after its first poll: that first sweep opens every tenant's workspace.
    t0 = time.monotonic()
    first_done = await _sweeps_done(bench, metrics_url, 1, timeout=900)
    first = {"count": 1.0, "mean_s": first_done.get("pressroom_sweep_seconds_sum", 0.0)}
    settle_s = time.monotonic() - t0 + await _settle(bench, proxy, timeout=900)
    settled = parts.metric_sums(await _get(metrics_url))

    pids = bench.stack.pids()
    cpu = CpuWindow(pids).start()
    requests = proxy.requests.copy()
    await asyncio.sleep(WINDOW_S[p.name])
    # At least two quiet sweeps inside the window (one every 10 s).
    after = await _sweeps_done(bench, metrics_url, settled.get("pressroom_sweep_seconds_count", 0) + 2, timeout=120)
    cpu.stop()
    counted = proxy.requests - requests
    polls = sum(counted[path] for path in POLLS)
    quiet = parts.histogram_mean(settled, after, "pressroom_sweep_seconds")
    rss = parts.tree_rss_mb(bench)

    publishes = await _publishes(bench, PUBLISHES[p.name])
    bench.stop_worker()
    return {
        "startup_s": round(startup_s, 2),
        "settle_s": round(settle_s, 1),
        "first_sweeps": first,
        "idle": {
            "window_s": round(cpu.elapsed, 1),
            "cpu_percent": {k: round(v, 2) for k, v in cpu.percent().items()},
            "polls_per_s": round(polls / cpu.elapsed, 2),
            "quiet_sweeps": quiet,
            "quiet_tenants_per_sweep": round(
                (after.get("pressroom_sweep_tenants_total", 0) - settled.get("pressroom_sweep_tenants_total", 0))
                / quiet["count"],
                1,
            )
            if quiet["count"]
            else None,
        },
        "rss_mb": rss,
        "publish": publishes,
    }


async def _sweeps_done(bench: Bench, metrics_url: str, count: float, *, timeout: float) -> dict[str, float]:
    """The worker's metrics once it has finished ``count`` sweeps since it started."""
    deadline = time.monotonic() + timeout
    while True:
        bench.stack.check_alive()
        sums = parts.metric_sums(await _get(metrics_url))
        if sums.get("pressroom_sweep_seconds_count", 0) >= count:
            return sums
        if time.monotonic() > deadline:
            raise TimeoutError(f"the worker finished fewer than {count:.0f} sweeps in {timeout:.0f} s")
        await asyncio.sleep(0.5)


async def _publishes(bench: Bench, count: int) -> dict[str, Any]:
    """``count`` publishes one after another on one tenant: ack, publish → succeeded, relay pass."""
    assert bench.probe is not None
    tenant, _ = bench.probe
    before = parts.metric_sums(await _get(f"{bench.stack.api_url}/metrics", bench.api.operator))
    acks, finals = [], []
    for _ in range(count):
        doc = await bench.api.create_document(tenant, f"scale-{secrets.token_hex(4)}")
        published = await bench.api.publish(tenant, doc["id"])
        row = await bench.outbox.wait_final(tenant.slug, published.operation_id, timeout=300)
        if row.status != "succeeded":
            raise RuntimeError(f"a publish ended {row.status}; see {bench.stack.logs}/worker.log")
        acks.append(published.latency)
        finals.append(row.latency or 0.0)
    after = parts.metric_sums(await _get(f"{bench.stack.api_url}/metrics", bench.api.operator))
    return {
        "count": count,
        "ack_ms": summarize([1000 * a for a in acks]),
        "succeeded_s": summarize(finals),
        "relay_pass": parts.histogram_mean(before, after, "pressroom_relay_pass_seconds"),
    }


async def _get(url: str, headers: dict[str, str] | None = None) -> str:
    import httpx

    async with httpx.AsyncClient(timeout=120) as http:
        response = await http.get(url, headers=headers)
        response.raise_for_status()
        return response.text


async def run(bench: Bench) -> dict[str, Any]:
    from control_plane.settings import Settings
    from dispatch.settings import DispatchSettings

    p = bench.profile
    sizes = SIZES[p.name]
    if os.environ.get(SIZES_VAR):
        sizes = tuple(int(size) for size in os.environ[SIZES_VAR].split(","))
    assert bench.stack.prefect is not None
    await bench.ready_worker()  # the probe tenant exists and publishes
    upstream = int(bench.stack.prefect.api_url.rsplit(":", 1)[1].split("/", 1)[0])
    proxy = await CountingProxy(upstream).start()
    metrics_port = free_port()
    env = bench.stack.env(prefect_api_url=f"http://127.0.0.1:{proxy.port}/api")
    env["PRESSROOM_WORKER_METRICS_PORT"] = str(metrics_port)
    database_url = Settings.from_env(bench.stack.env()).database_url
    dispatch = DispatchSettings.from_env(bench.stack.env())
    assert bench.stack.postgres is not None
    prefect_db = bench.stack.postgres.url
    tenants_dir = bench.stack.data_dir / "tenants"
    bench.stop_worker()
    await parts.ensure_bare_queues(bench.prefect, parts.BARE_POOL_ONE, 1, 0)
    points: list[dict[str, Any]] = []
    bench.partial = {"points": points}
    prefix = f"sc{secrets.token_hex(2)}"
    ours: list[str] = []
    bare = 0
    try:
        for size in sizes:
            have = len(os.listdir(tenants_dir))
            new = [f"{prefix}-{len(ours) + i:05d}" for i in range(max(0, size - have))]
            if size <= API_UP_TO[p.name]:
                bench.log(f"  {size} tenants: creating {len(new)} through POST /ops/tenants")
                creation = await parts.create_tenants(bench, new, CREATE_CONCURRENCY)
            else:
                bench.log(f"  {size} tenants: creating {len(new)} below the API (template workspace, rows, queues)")
                t0 = time.monotonic()
                creation = await asyncio.to_thread(parts.bulk_rows, bench.stack.env(), new)
                # The tenants' queues as PrefectGateway.ensure_queue makes them (its limit), in one transaction;
                # the worker's start-up reads every queue back and would fix one that differed.
                names = [dispatch.queue_for(slug) for slug in new]
                creation["queues_seconds"] = round(
                    await asyncio.to_thread(
                        parts.insert_queues, prefect_db, dispatch.work_pool, names, dispatch.queue_concurrency
                    ),
                    2,
                )
                creation["seconds"] = round(time.monotonic() - t0, 2)
                creation["per_s"] = round(len(new) / creation["seconds"], 1) if new else None
                creation["path"] = "bulk"
            ours += new
            n = len(os.listdir(tenants_dir))
            t0 = time.monotonic()
            if size <= API_UP_TO[p.name]:
                bare = await parts.ensure_bare_queues(bench.prefect, parts.BARE_POOL_N, n, bare)
            else:
                if bare == 0:  # this size is the first (PRESSROOM_BENCH_SCALE_SIZES): the bare pool is made here
                    bare = await parts.ensure_bare_queues(bench.prefect, parts.BARE_POOL_N, 1, 0)
                names = [f"q-{i:05d}" for i in range(bare, n)]
                await asyncio.to_thread(parts.insert_queues, prefect_db, parts.BARE_POOL_N, names, None)
                bare = n
            bare_s = time.monotonic() - t0
            queue_names = [f"tenant-{slug}" for slug in sorted(os.listdir(tenants_dir))]
            bench.log(f"  {n} tenants ({creation['per_s']}/s); pool queries, control plane, worker")
            point: dict[str, Any] = {
                "tenants": n,
                "loadavg_1m": round(os.getloadavg()[0], 2),
                "creation": creation,
                "bare_queue_creation_s": round(bare_s, 1),
                "pool_query": await _pool(bench, n, queue_names, bench.stack.prefect.api_url),
                "control_plane": await _control_plane(bench, database_url, ours or queue_names),
            }
            point["control_plane"]["rss_mb"] = parts.tree_rss_mb(bench).get("control-plane")
            point["worker"] = await _worker(bench, proxy, env, f"http://127.0.0.1:{metrics_port}/metrics")
            point["disk"] = {
                "workspaces_bytes_per_tenant": round(await asyncio.to_thread(parts.disk_bytes, tenants_dir) / n),
            }
            points.append(point)
            w = point["worker"]
            bench.log(
                f"  {n}: start-up {w['startup_s']} s, worker RSS {w['rss_mb'].get('worker')} MB, quiet sweep "
                f"{w['idle']['quiet_sweeps']['mean_s']}, pool poll server CPU "
                f"{point['pool_query']['pressroom_pool']['server_cpu_ms_per_call']} ms"
            )
    finally:
        bench.stop_worker()
        await proxy.close()
        await bench.start_worker()
    return _result(points, sizes)


def _get_in(point: dict[str, Any], *path: str) -> float | None:
    value: Any = point
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return float(value) if isinstance(value, (int, float)) else None


def _result(points: list[dict[str, Any]], sizes: tuple[int, ...]) -> dict[str, Any]:
    def grow(*path: str) -> dict[str, Any]:
        return parts.exponent(points, lambda point: _get_in(point, *path))

    def poll_cpu(side: str) -> dict[str, Any]:
        return parts.exponent(
            points,
            lambda pt: (
                (_get_in(pt, "pool_query", side, "server_cpu_ms_per_call") or 0)
                + (_get_in(pt, "pool_query", side, "postgres_cpu_ms_per_call") or 0)
            ),
        )

    growth = {
        "worker_startup_s": grow("worker", "startup_s"),
        "worker_rss_mb": grow("worker", "rss_mb", "worker"),
        "first_sweep_s": grow("worker", "first_sweeps", "mean_s"),
        "quiet_sweep_s": grow("worker", "idle", "quiet_sweeps", "mean_s"),
        "worker_idle_cpu_percent": grow("worker", "idle", "cpu_percent", "worker"),
        "prefect_idle_cpu_percent": grow("worker", "idle", "cpu_percent", "prefect_server"),
        "postgres_idle_cpu_percent": grow("worker", "idle", "cpu_percent", "postgres"),
        "relay_pass_s": grow("worker", "publish", "relay_pass", "mean_s"),
        "publish_ack_p50_ms": grow("worker", "publish", "ack_ms", "p50"),
        "worker_idle_poll_ms": grow("pool_query", "worker_idle_poll", "p50_ms"),
        "worker_idle_poll_cpu_ms": poll_cpu("worker_idle_poll"),
        "pool_poll_ms_pressroom": grow("pool_query", "pressroom_pool", "p50_ms"),
        "pool_poll_ms_shard_named": grow("pool_query", "pressroom_named", "p50_ms"),
        "pool_poll_ms_bare_n": grow("pool_query", "bare_n_queues", "p50_ms"),
        "pool_poll_ms_bare_one": grow("pool_query", "bare_one_queue", "p50_ms"),
        "pool_poll_cpu_ms_pressroom": poll_cpu("pressroom_pool"),
        "pool_poll_cpu_ms_shard_named": poll_cpu("pressroom_named"),
        "pool_poll_cpu_ms_bare_n": poll_cpu("bare_n_queues"),
        "placement_lookup_us": grow("control_plane", "placement", "us_per_lookup"),
        "metrics_scrape_ms": grow("control_plane", "metrics_scrape_ms"),
        "ops_tenants_list_ms": grow("control_plane", "ops_tenants_list_ms"),
        "control_plane_rss_mb": grow("control_plane", "rss_mb"),
    }
    per_tenant = {
        "worker_rss_kb": [
            None if v is None else round(1024 * v, 1)
            for v in parts.marginal(points, lambda pt: _get_in(pt, "worker", "rss_mb", "worker"))
        ],
        "control_plane_rss_kb": [
            None if v is None else round(1024 * v, 1)
            for v in parts.marginal(points, lambda pt: _get_in(pt, "control_plane", "rss_mb"))
        ],
        "prefect_server_rss_kb": [
            None if v is None else round(1024 * v, 1)
            for v in parts.marginal(points, lambda pt: _get_in(pt, "worker", "rss_mb", "prefect_server"))
        ],
    }
    last = points[-1] if points else {}
    pool = last.get("pool_query", {})

    def poll_total(side: str) -> float | None:
        server = _get_in(last, "pool_query", side, "server_cpu_ms_per_call")
        pg = _get_in(last, "pool_query", side, "postgres_cpu_ms_per_call")
        return None if server is None or pg is None else server + pg

    largest = last.get("tenants")
    return {
        "settings": {
            "sizes": list(sizes),
            "creation": f"POST /ops/tenants, {CREATE_CONCURRENCY} at a time, the worker stopped, up to "
            f"{API_UP_TO}; beyond, in bulk below the API (a template workspace copied, the same actions' rows, "
            "the queues' rows written into Prefect's database as create_work_queue writes them; bare queues too)",
            "worker": "pressroom worker (every tenant; poll 0.5 s, sweep 10 s) behind a counting proxy",
            "pool_query": "from the benchmark process, nothing else polling; CPU includes the server's follow-up",
        },
        "points": points,
        "growth": growth,
        "per_added_tenant": per_tenant,
        "ratios": {
            "pool_poll_cpu_pressroom_over_bare_n": ratio(poll_total("pressroom_pool"), poll_total("bare_n_queues")),
            "idle_poll_cpu_worker_over_bare_n": ratio(poll_total("worker_idle_poll"), poll_total("bare_n_queues")),
            "pool_poll_cpu_bare_n_over_bare_one": ratio(poll_total("bare_n_queues"), poll_total("bare_one_queue")),
            "pool_poll_ms_shard_named_over_pool": ratio(
                _get_in(pool, "pressroom_named", "p50_ms"), _get_in(pool, "pressroom_pool", "p50_ms")
            ),
        },
        "headline": {
            "metric": f"Prefect + PostgreSQL CPU per pool poll, {largest} queues / 1 queue (bare Prefect)",
            "value": ratio(poll_total("bare_n_queues"), poll_total("bare_one_queue")),
            "pressroom": poll_total("pressroom_pool"),
            "baseline": poll_total("bare_one_queue"),
            "unit": "ms",
            "second": {
                "metric": "Pressroom's pool poll CPU / bare Prefect's with as many queues",
                "value": ratio(poll_total("pressroom_pool"), poll_total("bare_n_queues")),
            },
        },
        "targets": [
            target(
                "placement lookup flat in tenants (growth exponent <= 0.2)",
                growth["placement_lookup_us"]["overall"],
                "<=",
                0.2,
            ),
            target(
                "worker start-up not faster than linear (exponent <= 1.1)",
                growth["worker_startup_s"]["overall"],
                "<=",
                1.1,
            ),
            target(
                "the worker's idle poll flat in tenants (growth exponent <= 0.2)",
                growth["worker_idle_poll_ms"]["overall"],
                "<=",
                0.2,
            ),
            target(
                "quiet sweep not faster than linear (exponent <= 1.1)", growth["quiet_sweep_s"]["overall"], "<=", 1.1
            ),
            target(
                "metrics scrape not faster than linear (exponent <= 1.1)",
                growth["metrics_scrape_ms"]["overall"],
                "<=",
                1.1,
            ),
            # What each worker sends when nothing waits: Pressroom's the waiting-queues read (no pool query
            # follows), a stock Prefect worker the pool query over every queue. The whole-pool query over
            # Pressroom's pool is still measured (the ratio above) but no worker of Pressroom's sends it.
            target(
                "the worker's idle poll costs Prefect <= 1.5x a stock worker's idle poll of a bare pool with as "
                "many queues",
                ratio(poll_total("worker_idle_poll"), poll_total("bare_n_queues")),
                "<=",
                1.5,
                "x",
            ),
        ],
    }
