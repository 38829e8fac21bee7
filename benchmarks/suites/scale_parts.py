"""The measurements of the ``scale`` suite, one function each (``scale.py`` runs them at every size)."""

from __future__ import annotations

import asyncio
import itertools
import math
import random
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from benchmarks.procstat import CpuWindow, sample_trees
from benchmarks.runner import Bench

BARE_POOL_N = "bench-scale-bare"  # N bare queues: Prefect's own cost of queue count
BARE_POOL_ONE = "bench-scale-one"  # one queue: the floor


def metric_sums(text: str) -> dict[str, float]:
    """Every sample of a Prometheus text page, label sets summed away: {sample name: value}."""
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[sample.name] = out.get(sample.name, 0.0) + float(sample.value)
    return out


def histogram_mean(before: dict[str, float], after: dict[str, float], name: str) -> dict[str, float | None]:
    """Observations of histogram ``name`` between two scrapes: count and mean seconds."""
    count = after.get(f"{name}_count", 0.0) - before.get(f"{name}_count", 0.0)
    total = after.get(f"{name}_sum", 0.0) - before.get(f"{name}_sum", 0.0)
    return {"count": count, "mean_s": total / count if count else None}


async def timed_calls(call: Callable[[], Awaitable[Any]], times: int) -> list[float]:
    """Seconds of ``times`` sequential calls."""
    out = []
    for _ in range(times):
        t0 = time.perf_counter()
        await call()
        out.append(time.perf_counter() - t0)
    return out


def median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


async def create_tenants(bench: Bench, slugs: list[str], concurrency: int) -> dict[str, Any]:
    """``POST /ops/tenants`` for each slug (workspace on the shard, placement, row, Prefect queue), timed."""
    gate = asyncio.Semaphore(concurrency)
    pids = bench.stack.pids()
    cpu = CpuWindow({k: pids.get(k) for k in ("control-plane", "prefect_server", "postgres")}).start()

    async def one(slug: str) -> None:
        async with gate:
            await bench.api._call(
                "POST", "/ops/tenants", 201, json={"slug": slug, "name": f"Scale {slug}"}, headers=bench.api.operator
            )

    t0 = time.monotonic()
    await asyncio.gather(*(one(s) for s in slugs))
    seconds = time.monotonic() - t0
    used = cpu.stop()
    n = max(1, len(slugs))
    return {
        "count": len(slugs),
        "seconds": round(seconds, 2),
        "per_s": round(len(slugs) / seconds, 1) if seconds else None,
        "cpu_ms_per_tenant": {k: round(1000 * v / n, 2) for k, v in used.items()},
    }


def bulk_rows(env: dict[str, str], slugs: list[str], batch: int = 500) -> dict[str, Any]:
    """What ``TenantService.create`` writes, for many tenants at once, below the API.

    One workspace is made by the real path (the revision chain, then ``configure_site``)
    and copied per tenant: the same file the chain would write (a fresh workspace holds
    no tenant name; the title is the template's). The control-plane row, its audit row and
    the placement go through the same actions, ``batch`` tenants a transaction.
    """
    import shutil

    from sqlmodel import Session

    from control_plane.auth import Principal
    from control_plane.db.engine import make_engine
    from control_plane.db.models import Placement
    from control_plane.settings import Settings
    from control_plane.tenants import actions
    from tenant_runtime.actions.site import configure_site
    from tenant_runtime.workspace import Actor, WorkspaceFactory

    settings = Settings.from_env(env)
    runtime = settings.runtime
    t0 = time.monotonic()
    scratch = runtime.data_dir.parent / "scale-template"
    template_settings = runtime.model_copy(update={"data_dir": scratch})
    factory = WorkspaceFactory(template_settings)
    ws = factory.create("template")
    with ws.transaction() as tx:
        configure_site(tx, Actor.for_role("operator:bench-scale", "owner"), title="Scale tenant")
    factory.forget("template")
    template = template_settings.workspace_path("template")
    operator = Principal(token_id="bench-scale", kind="operator")
    engine = make_engine(settings.database_url)
    try:
        for start in range(0, len(slugs), batch):
            chunk = slugs[start : start + batch]
            for slug in chunk:
                target = runtime.workspace_path(slug)
                target.parent.mkdir(parents=True)
                shutil.copyfile(template, target)
            with Session(engine) as session:
                for slug in chunk:
                    session.add(Placement(tenant=slug, shard=settings.control_plane.default_shard))
                    per_hour = settings.control_plane.default_publishes_per_hour
                    actions.create_tenant(session, operator, slug, f"Scale {slug}", publishes_per_hour=per_hour)
                session.commit()
    finally:
        engine.dispose()
        shutil.rmtree(scratch, ignore_errors=True)
    return {"count": len(slugs), "rows_seconds": round(time.monotonic() - t0, 2)}


def insert_queues(database_url: str, pool: str, names: list[str], concurrency_limit: int | None) -> float:
    """Work queues written straight into Prefect's database, one transaction; seconds.

    The rows Prefect's ``create_work_queue`` writes (name, pool, concurrency limit, the next
    priority, NOT_READY), without a round trip each: through the API this machine made
    ~12 queues/s under load, so 19,000 (the tenants' and the baseline's) would take half an hour.
    """
    import uuid

    import psycopg
    from sqlalchemy.engine import make_url

    url = make_url(database_url)
    t0 = time.monotonic()
    with psycopg.connect(
        host=url.host, port=url.port, user=url.username, dbname=url.database, password=url.password
    ) as db:
        row = db.execute("SELECT id FROM work_pool WHERE name = %s", (pool,)).fetchone()
        if row is None:
            raise RuntimeError(f"no work pool {pool!r}")
        (top,) = db.execute("SELECT coalesce(max(priority), 0) FROM work_queue WHERE work_pool_id = %s", row).fetchone()
        with db.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO work_queue (id, created, updated, name, description, is_paused, concurrency_limit, "
                "priority, status, work_pool_id) VALUES (%s, now(), now(), %s, '', false, %s, %s, 'NOT_READY', %s) "
                "ON CONFLICT (work_pool_id, name) DO NOTHING",
                [(uuid.uuid4(), name, concurrency_limit, top + 1 + i, row[0]) for i, name in enumerate(names)],
            )
    return time.monotonic() - t0


async def ensure_bare_queues(prefect: Any, pool: str, count: int, have: int, concurrency: int = 16) -> int:
    """Bare queues ``q-00000``… in ``pool`` up to ``count`` (Prefect's client, no Pressroom); returns count."""
    from benchmarks import prefect_side

    await prefect_side._ensure_pool(prefect, pool)
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with gate:
            await prefect_side.ensure_queue(prefect, pool, f"q-{i:05d}", paused=False)

    await asyncio.gather(*(one(i) for i in range(have, count)))
    return count


async def pool_query_costs(
    bench: Bench,
    pool: str,
    *,
    names: list[str] | None,
    calls: int,
    settle: float = 1.5,
    background: float = 4.0,
    call: Callable[[], Awaitable[Any]] | None = None,
) -> dict[str, Any]:
    """``get_scheduled_flow_runs`` on ``pool`` (of ``names`` if given) ``calls`` times, nothing else polling.

    Latency of each call, and the CPU the Prefect server and PostgreSQL spent per call,
    including the follow-up Prefect schedules after answering (it marks every polled
    queue's last_polled, and their deployments ready), so the window runs ``settle``
    seconds past the last call; less the server's background rate over ``background`` seconds before.
    ``call`` measures another call the same way (the worker's waiting-queues query). A call that fails
    (Prefect's 500 past its database timeout) gives ``error`` instead of figures.
    """
    from tenant_runtime.ids import utcnow

    pids = bench.stack.pids()
    roots = {"prefect_server": pids["prefect_server"], "postgres": pids["postgres"]}
    # The server's own loop services (scheduler, late runs...) run meanwhile: their rate, measured first with
    # nothing calling, is taken off the window's CPU.
    quiet = CpuWindow(roots).start()
    await asyncio.sleep(background)
    idle = quiet.stop()
    window = CpuWindow(roots).start()

    async def pool_call() -> None:
        await bench.prefect.get_scheduled_flow_runs_for_work_pool(
            work_pool_name=pool, work_queue_names=names, scheduled_before=utcnow()
        )

    try:
        seconds = await timed_calls(call or pool_call, calls)
    except Exception as exc:  # Prefect answering 500 (its database timeout) is itself the figure
        window.stop()
        return {"calls": calls, "error": f"{type(exc).__name__}: {str(exc)[:200]}"}
    await asyncio.sleep(settle)
    used = window.stop()

    def per_call(name: str) -> float:
        spent = used[name] - idle[name] / quiet.elapsed * window.elapsed
        return round(1000 * max(0.0, spent) / calls, 2)

    return {
        "calls": calls,
        "p50_ms": round(1000 * (median(seconds) or 0), 2),
        "max_ms": round(1000 * max(seconds), 2),
        "server_cpu_ms_per_call": per_call("prefect_server"),
        "postgres_cpu_ms_per_call": per_call("postgres"),
        "background_cpu_percent": {k: round(100 * v / quiet.elapsed, 1) for k, v in idle.items()},
    }


def placement_lookups(database_url: str, slugs: list[str], lookups: int) -> dict[str, Any]:
    """The control plane's ``ShardRouter.shard_of`` for random tenants, on its own database, per lookup."""
    from control_plane.db.engine import make_engine
    from control_plane.placement.router import ShardRouter

    engine = make_engine(database_url)
    try:
        router = ShardRouter(engine, {}, "default")
        chosen = [random.choice(slugs) for _ in range(lookups)]
        router.shard_of(chosen[0])  # a warm connection and compiled statement
        t0 = time.perf_counter()
        for slug in chosen:
            router.shard_of(slug)
        seconds = time.perf_counter() - t0
    finally:
        engine.dispose()
    return {"lookups": lookups, "us_per_lookup": round(1e6 * seconds / lookups, 1)}


async def scrape(url: str, headers: dict[str, str] | None = None, times: int = 3) -> dict[str, Any]:
    """GET ``url`` ``times`` times: median seconds, page bytes, the last page's sample sums."""
    seconds: list[float] = []
    text = ""
    async with httpx.AsyncClient(timeout=120) as http:
        for _ in range(times):
            t0 = time.perf_counter()
            response = await http.get(url, headers=headers)
            seconds.append(time.perf_counter() - t0)
            response.raise_for_status()
            text = response.text
    return {"p50_ms": round(1000 * (median(seconds) or 0), 1), "bytes": len(text), "sums": metric_sums(text)}


def tree_rss_mb(bench: Bench) -> dict[str, float]:
    trees = sample_trees(bench.stack.pids())
    return {name: round(sample.rss / 2**20, 1) for name, sample in trees.items()}


def disk_bytes(path: Path) -> int:
    total = 0
    for child in path.rglob("*"):
        try:
            if child.is_file():
                total += child.stat().st_size
        except OSError:
            continue
    return total


def exponent(points: list[dict[str, Any]], key: Callable[[dict[str, Any]], float | None]) -> dict[str, Any]:
    """How ``key`` grows with tenants: the log-log slope between each pair of sizes and overall.

    1 is linear, 0 flat, above 1 faster than linear. ``per_10x`` is the factor per ten times the tenants.
    """
    values = [(p["tenants"], key(p)) for p in points]
    pairs = [(n, v) for n, v in values if v is not None and v > 0]
    steps = []
    for (n1, v1), (n2, v2) in itertools.pairwise(pairs):
        steps.append(round(math.log(v2 / v1) / math.log(n2 / n1), 2))
    overall = None
    if len(pairs) >= 2 and pairs[-1][0] > pairs[0][0]:
        (n1, v1), (n2, v2) = pairs[0], pairs[-1]
        overall = math.log(v2 / v1) / math.log(n2 / n1)
    return {
        "values": [v for _, v in values],
        "steps": steps,
        "overall": round(overall, 2) if overall is not None else None,
        "per_10x": round(10**overall, 2) if overall is not None else None,
    }


def marginal(points: list[dict[str, Any]], key: Callable[[dict[str, Any]], float | None]) -> list[float | None]:
    """The increase of ``key`` per added tenant between consecutive sizes (memory per idle tenant)."""
    out: list[float | None] = []
    for a, b in itertools.pairwise(points):
        va, vb = key(a), key(b)
        out.append(None if va is None or vb is None else round((vb - va) / (b["tenants"] - a["tenants"]), 4))
    return out


__all__ = [
    "BARE_POOL_N",
    "BARE_POOL_ONE",
    "bulk_rows",
    "create_tenants",
    "disk_bytes",
    "ensure_bare_queues",
    "exponent",
    "histogram_mean",
    "insert_queues",
    "marginal",
    "metric_sums",
    "placement_lookups",
    "pool_query_costs",
    "scrape",
    "tree_rss_mb",
]
