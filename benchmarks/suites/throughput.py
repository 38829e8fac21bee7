"""throughput: sustained publishes per minute across many tenants, against Prefect's process worker.

A closed-loop feeder keeps a fixed number of publishes outstanding (each one
a real edit + publish through the API, so every delivery renders new output)
and the segment counts deliveries that finished inside its window. Segments
alternate: Pressroom's runtime worker, then the same load through the process
worker (tenants whose Pressroom queues are paused; the same publish_document
run created in the process worker's pool). CPU of every server process tree
is read from /proc around each window. A last, uncounted Pressroom segment
runs under py-spy to show where the Prefect server's time goes.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from benchmarks import prefect_side, profiling
from benchmarks.pressroom_api import Tenant
from benchmarks.procstat import CpuWindow
from benchmarks.runner import Bench
from benchmarks.stats import ms, ratio, summarize, target
from tenant_runtime.ids import utcnow

DOCS_PER_TENANT = 20  # enough that a document rarely has two publishes outstanding (superseded)
WARMUP_S = 5.0
# 10 per tenant: sites publishing steadily, so each tenant has publishes waiting while its
# earlier runs deliver, which is when Pressroom coalesces them (tenant_runtime/actions/outbox.py).
PRESSROOM_OUTSTANDING = 200
FEED_BURST = 24  # publishes started at once by the feeder, then it looks again
PROCESS_LIMIT = 4
PROCESS_OUTSTANDING = 8  # 2× the process worker's --limit
OUTSTANDING = frozenset({"queued", "delivering", "failed"})


@dataclass
class Load:
    """Tenants, their documents and the versions the feeder last saw."""

    tenants: list[Tenant]
    docs: list[tuple[Tenant, str]]
    versions: dict[str, int]
    locks: dict[str, asyncio.Lock] = field(default_factory=dict)
    cursor: int = 0

    errors: list[str] = field(default_factory=list)

    async def publish(self, bench: Bench) -> Any:
        """Edit then publish the next document; None (and the error kept) if a request failed."""
        tenant, doc = self.docs[self.cursor % len(self.docs)]
        self.cursor += 1
        async with self.locks.setdefault(doc, asyncio.Lock()):
            try:
                updated = await bench.api.update_document(
                    tenant, doc, self.versions[doc], f"Throughput body {secrets.token_hex(8)}."
                )
                self.versions[doc] = updated["version"]
                return await bench.api.publish(tenant, doc)
            except Exception as exc:  # one failed request must not end a sustained-load window
                self.errors.append(f"{type(exc).__name__}: {exc}"[:300])
                self.versions[doc] = (await bench.api.document(tenant, doc))["version"]
                return None


async def _load(bench: Bench, prefix: str, count: int) -> Load:
    tenants = await bench.api.create_tenants(prefix, count, concurrency=4)
    docs: list[tuple[Tenant, str]] = []
    versions: dict[str, int] = {}
    for i in range(DOCS_PER_TENANT):
        created = await asyncio.gather(*(bench.api.create_document(t, f"thr-{i}") for t in tenants))
        for tenant, doc in zip(tenants, created, strict=True):
            docs.append((tenant, doc["id"]))
            versions[doc["id"]] = doc["version"]
    return Load(tenants, docs, versions)


async def _segment(
    bench: Bench, load: Load, window: float, *, process: bool, profile_dir: Any = None
) -> dict[str, Any]:
    slugs = [t.slug for t in load.tenants]
    acks: list[float] = []
    runs: set[UUID] = set()
    stop = asyncio.Event()

    async def outstanding() -> int:
        if process:
            if not runs:
                return 0
            states = await prefect_side.read_runs(bench.prefect, list(runs))
            for run_id, run in states.items():
                if run.state is not None and run.state.type.value in prefect_side.FINAL_TYPES:
                    runs.discard(run_id)
            return len(runs)
        counts, _ = await asyncio.to_thread(bench.outbox.status_counts, slugs)
        return sum(counts.get(s, 0) for s in OUTSTANDING)

    async def one() -> None:
        published = await load.publish(bench)
        if published is None:
            return
        acks.append(published.latency)
        if process:
            row = (await asyncio.to_thread(bench.outbox.rows, published.tenant, [published.operation_id]))[
                published.operation_id
            ]
            run_id, _ = await prefect_side.create_scheduled(
                bench.prefect,
                bench.deployments.process_publish,
                queue="default",
                parameters={"params": row.parameters},
                when=utcnow(),
                tags=["bench:throughput", f"tenant:{published.tenant}"],
            )
            runs.add(run_id)

    async def feeder() -> None:
        goal = PROCESS_OUTSTANDING if process else PRESSROOM_OUTSTANDING
        while not stop.is_set():
            missing = goal - await outstanding()
            if missing > 0:
                await asyncio.gather(*(one() for _ in range(min(missing, FEED_BURST))))
            await asyncio.sleep(0.2)

    segment_start = utcnow()
    feeding = asyncio.create_task(feeder())
    try:
        await asyncio.sleep(WARMUP_S)
        if process:
            # The process worker's first runs pay its own start-up: open the window after one completes.
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline and not await prefect_side.read_runs_of_tag(
                bench.prefect, "bench:throughput", segment_start, utcnow()
            ):
                await asyncio.sleep(1)
        cpu = CpuWindow(bench.stack.pids()).start()
        started: datetime = utcnow()
        spies = []
        if profile_dir is not None:
            for name in ("prefect_server", "worker"):
                pid = bench.stack.pids().get(name)
                if pid is not None:
                    spies.append((name, profiling.start(pid, window, profile_dir / f"profile-{name}.txt")))
        await asyncio.sleep(window)
        ended: datetime = utcnow()
        cpu.stop()
    finally:
        stop.set()
        await asyncio.wait_for(feeding, timeout=120)

    if process:
        finished = await prefect_side.read_runs_of_tag(bench.prefect, "bench:throughput", started, ended)
        done = len(finished)
    else:
        rows = []
        for slug in slugs:
            rows += (await asyncio.to_thread(bench.outbox.rows, slug)).values()
        inside = [r for r in rows if r.finished_at is not None and started <= r.finished_at <= ended]
        # A superseded publish is a finished one too: a newer version of its document was delivered.
        done = sum(1 for r in inside if r.status in ("succeeded", "superseded"))
        superseded = sum(1 for r in inside if r.status == "superseded")
        runs_used = len({r.flow_run_id for r in inside if r.flow_run_id})
    result: dict[str, Any] = {
        "side": "process_worker" if process else "pressroom",
        "window_s": (ended - started).total_seconds(),
        "completed": done,
        "per_minute": 60.0 * done / (ended - started).total_seconds(),
        **({} if process else {"superseded": superseded, "flow_runs": runs_used}),
        "cpu_s": cpu.cpu,
        "cpu_percent": cpu.percent(),
        "ack_ms": summarize(ms(acks)),
        "request_errors": list(load.errors),
    }
    load.errors.clear()
    if profile_dir is not None:
        result["profiles"] = {}
        for name, spy in spies:
            error = profiling.finish(spy, timeout=window + 60)
            path = profile_dir / f"profile-{name}.txt"
            result["profiles"][name] = {"error": error} if error else {**profiling.summarize_and_compress(path)}
    return result


async def _drain(bench: Bench, load: Load, timeout: float = 120) -> None:
    slugs = [t.slug for t in load.tenants]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        counts, _ = await asyncio.to_thread(bench.outbox.status_counts, slugs)
        if sum(counts.get(s, 0) for s in OUTSTANDING) == 0:
            return
        await asyncio.sleep(0.5)


def _per_publish(segments: list[dict[str, Any]], process_name: str) -> dict[str, float | None]:
    done = sum(s["completed"] for s in segments)
    cpu = {
        k: sum(s["cpu_s"].get(k, 0.0) for s in segments)
        for k in ("prefect_server", "postgres", process_name, "control-plane")
    }
    return {f"{k}_cpu_s": (v / done if done else None) for k, v in cpu.items()}


async def run(bench: Bench) -> dict[str, Any]:
    p = bench.profile
    await bench.ready_worker()
    pload = await _load(bench, "thrp", p.throughput_tenants)
    bload = await _load(bench, "thrb", p.throughput_tenants)
    await prefect_side.pause_tenant_queues(bench.prefect, [t.slug for t in bload.tenants])
    await prefect_side.ensure_queue(bench.prefect, prefect_side.PROCESS_POOL, "default", paused=False)
    process_name = f"process-worker-{prefect_side.PROCESS_POOL}"

    pressroom: list[dict[str, Any]] = []
    process: list[dict[str, Any]] = []
    profiled: dict[str, Any] | None = None
    segments = max(1, p.throughput_segments)
    inline = bench.profile_server and p.profile_inline
    for i in range(segments):
        bench.log(
            f"  segment {i}: Pressroom runtime worker, {p.throughput_window / segments:.0f} s"
            + (" (py-spy on the Prefect server and worker)" if inline and i == 0 else "")
        )
        pressroom.append(
            await _segment(
                bench,
                pload,
                p.throughput_window / segments,
                process=False,
                profile_dir=bench.out if inline and i == 0 else None,
            )
        )
        if inline and i == 0:
            profiled = {"profiles": pressroom[-1].pop("profiles"), "inline": True}
        bench.log(f"    {pressroom[-1]['completed']} publishes ({pressroom[-1]['per_minute']:.1f}/min)")
        await _drain(bench, pload)
        bench.log(f"  segment {i}: process worker, {p.throughput_baseline_window / segments:.0f} s")
        bench.stack.start_process_worker(prefect_side.PROCESS_POOL, limit=PROCESS_LIMIT, query_seconds=0.5)
        try:
            await asyncio.sleep(3)  # its start-up, outside the window
            process.append(await _segment(bench, bload, p.throughput_baseline_window / segments, process=True))
        finally:
            bench.stack.stop_child(process_name)
            await prefect_side.delete_scheduled_of_tags(bench.stack.prefect_api_url, ["bench:throughput"])
        bench.log(f"    {process[-1]['completed']} runs ({process[-1]['per_minute']:.1f}/min)")

    if bench.profile_server and not inline:
        bench.log(
            f"  profile segment (not counted): py-spy on the Prefect server and worker, {p.profile_seconds:.0f} s"
        )
        profiled = await _segment(bench, pload, p.profile_seconds, process=False, profile_dir=bench.out)
        await _drain(bench, pload)

    p_rate = sum(s["completed"] for s in pressroom) * 60.0 / sum(s["window_s"] for s in pressroom)
    b_rate = sum(s["completed"] for s in process) * 60.0 / sum(s["window_s"] for s in process)
    per_publish = _per_publish(pressroom, "worker")
    per_run_process = _per_publish(process, process_name)
    server_cpu = per_publish["prefect_server_cpu_s"]
    value = ratio(p_rate, b_rate)
    return {
        "settings": {
            "tenants": p.throughput_tenants,
            "docs_per_tenant": DOCS_PER_TENANT,
            "pressroom_outstanding": PRESSROOM_OUTSTANDING,
            "process_outstanding": PROCESS_OUTSTANDING,
            "process_limit": PROCESS_LIMIT,
            "window_s": p.throughput_window,
            "baseline_window_s": p.throughput_baseline_window,
            "segments": segments,
            "load": "closed loop: edit + publish through the API, fixed number outstanding",
            "coalescing": "publishes of a tenant with two runs in flight wait and travel as one batch run",
        },
        "segments": {"pressroom": pressroom, "process_worker": process},
        "per_minute": {"pressroom": p_rate, "process_worker": b_rate},
        "per_second": {"pressroom": p_rate / 60.0, "process_worker": b_rate / 60.0},
        "cpu_per_publish_s": {"pressroom": per_publish, "process_worker": per_run_process},
        "profile": profiled,
        "ratios": {"pressroom_over_process_worker": value},
        "headline": {
            "metric": "publishes/min, Pressroom / process worker",
            "value": value,
            "pressroom": p_rate,
            "baseline": b_rate,
            "unit": "/min",
            "second": {"metric": "Prefect-server CPU-s per publish", "value": server_cpu},
        },
        "targets": [
            target("≥ 4× the process worker", value, ">=", 4.0, "×"),
            target("Prefect-server CPU ≤ 0.25 s per publish", server_cpu, "<=", 0.25, "CPU-s"),
            target("stretch: ≥ 20 publishes/s across 20 tenants", p_rate / 60.0, ">=", 20.0, "/s"),
        ],
    }
