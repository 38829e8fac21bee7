"""whatif (opt-in, ``--suite whatif``): HTTP clients built per call, measured against reuse.

The profiles showed HTTP clients built per call, each loading the CA bundle
into a fresh SSL context (tens of ms of CPU every time):
1. a purge sent with ``httpx.request`` (a new client per call, what the purger
   did when this harness was written) against a long-lived client, as one
   PURGE against the real site server;
2. ``run_flow_async`` builds a ``PrefectClient`` and a ``SyncPrefectClient``
   per flow run unless its caller is inside Prefect's client contexts. Variant
   ``client_contexts`` runs the RuntimeWorker inside ``SyncClientContext`` and
   ``AsyncClientContext`` so every run reuses one client of each; ``as_is`` is
   the worker as it is.
Nothing is edited: variant 2 is applied in this process only and the runs
execute in an in-process RuntimeWorker (as in retry_cost), so the worker's CPU
is this process's CPU (plus the harness's own client, the same for both).
Variants alternate round by round on the same tenant.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from typing import Any

import httpx

from benchmarks.procstat import CpuWindow
from benchmarks.runner import Bench
from benchmarks.stats import ms, ratio, summarize

VARIANTS = ("as_is", "client_contexts")


async def _purge_micro(bench: Bench, samples: int) -> dict[str, Any]:
    """One PURGE against the real site server: a client per call vs. one long-lived client (ms)."""
    url = f"{bench.stack.site_url}/"
    headers = {"xkey-purge": "whatif:probe"}
    shared = httpx.Client(timeout=5)
    timings: dict[str, list[float]] = {"client_per_call": [], "long_lived_client": []}

    def per_call() -> None:
        httpx.request("PURGE", url, headers=headers, timeout=5).raise_for_status()

    def long_lived() -> None:
        shared.request("PURGE", url, headers=headers).raise_for_status()

    try:
        for i in range(samples * 2):
            variant, call = ("client_per_call", per_call) if i % 2 == 0 else ("long_lived_client", long_lived)
            t0 = time.perf_counter()
            await asyncio.to_thread(call)
            timings[variant].append(time.perf_counter() - t0)
    finally:
        shared.close()
    return {k: summarize(ms(v)) for k, v in timings.items()}


async def _variant_round(
    bench: Bench, variant: str, tenant: Any, doc: dict[str, Any], count: int, settings: Any, factory: Any
) -> dict[str, Any]:
    from prefect.context import AsyncClientContext, SyncClientContext

    from dispatch.prefect_gateway import PrefectGateway
    from dispatch.worker import RuntimeWorker

    stop = asyncio.Event()

    async def worker_main() -> None:
        async with PrefectGateway(settings) as gateway:
            worker = RuntimeWorker(settings, factory, gateway, tenants=frozenset({tenant.slug}))
            if variant == "client_contexts":
                with SyncClientContext.get_or_create():
                    async with AsyncClientContext.get_or_create():
                        await worker.run(stop)
            else:
                await worker.run(stop)

    async def publish_once() -> float:
        updated = await bench.api.update_document(tenant, doc["id"], doc["version"], f"What if {secrets.token_hex(6)}")
        doc["version"] = updated["version"]
        published = await bench.api.publish(tenant, doc["id"])
        row = await bench.outbox.wait_final(tenant.slug, published.operation_id, timeout=120)
        if row.status != "succeeded" or row.latency is None:
            raise RuntimeError(f"{variant}: publish ended {row.status}")
        return row.latency

    latencies: list[float] = []
    running = asyncio.create_task(worker_main())
    try:
        await publish_once()  # the worker's first run pays its start-up: not counted
        cpu = CpuWindow(bench.stack.pids()).start()
        process_cpu = time.process_time()
        for _ in range(count):
            latencies.append(await publish_once())
        worker_cpu = time.process_time() - process_cpu
        server = cpu.stop()
    finally:
        stop.set()
        await asyncio.wait_for(running, timeout=60)
    return {
        "latencies": latencies,
        "worker_cpu_s_per_publish": worker_cpu / count,
        "server_cpu_s_per_publish": server.get("prefect_server", 0.0) / count,
    }


async def run(bench: Bench) -> dict[str, Any]:
    from dispatch.settings import DispatchSettings
    from flows import runtime
    from tenant_runtime.logs import configure_logging
    from tenant_runtime.settings import RuntimeSettings
    from tenant_runtime.workspace import WorkspaceFactory

    configure_logging("WARNING")
    per_round = 8 if bench.profile.name == "quick" else 15
    rounds = 2 if bench.profile.name == "quick" else 4
    micro = await _purge_micro(bench, 20)
    bench.log(
        f"  one purge: client per call p50 {micro['client_per_call']['p50']:.1f} ms, "
        f"long-lived client p50 {micro['long_lived_client']['p50']:.1f} ms"
    )

    tenant, [doc] = await bench.warm_tenant("whatif")
    bench.stop_worker()
    factory = WorkspaceFactory(RuntimeSettings.from_env())
    runtime.configure(factory)
    settings = DispatchSettings.from_env().model_copy(update={"poll_interval": 0.1})
    results: dict[str, dict[str, list[float]]] = {
        v: {"latency": [], "worker_cpu": [], "server_cpu": []} for v in VARIANTS
    }
    try:
        for r in range(rounds):
            for variant in VARIANTS if r % 2 == 0 else VARIANTS[::-1]:
                out = await _variant_round(bench, variant, tenant, doc, per_round, settings, factory)
                results[variant]["latency"] += out["latencies"]
                results[variant]["worker_cpu"].append(out["worker_cpu_s_per_publish"])
                results[variant]["server_cpu"].append(out["server_cpu_s_per_publish"])
                bench.log(
                    f"  round {r} {variant}: worker {out['worker_cpu_s_per_publish']:.3f} CPU-s/publish, "
                    f"latency p50 {summarize(out['latencies'])['p50']:.2f} s"
                )
    finally:
        await bench.start_worker()

    summary = {
        v: {
            "latency_ms": summarize(ms(d["latency"])),
            "worker_cpu_s_per_publish": sum(d["worker_cpu"]) / len(d["worker_cpu"]),
            "server_cpu_s_per_publish": sum(d["server_cpu"]) / len(d["server_cpu"]),
        }
        for v, d in results.items()
    }
    cpu_ratio = ratio(
        summary["client_contexts"]["worker_cpu_s_per_publish"], summary["as_is"]["worker_cpu_s_per_publish"]
    )
    purge_ratio = ratio(micro["long_lived_client"]["p50"], micro["client_per_call"]["p50"])
    return {
        "settings": {
            "variants": list(VARIANTS),
            "publishes_per_variant_round": per_round,
            "rounds": rounds,
            "worker": "RuntimeWorker in the harness process (poll 0.1 s)",
        },
        "purge_call_ms": micro,
        "variants": summary,
        "raw": results,
        "ratios": {"worker_cpu_contexts_over_as_is": cpu_ratio, "purge_call_long_lived_over_per_call": purge_ratio},
        "headline": {
            "metric": "worker CPU per publish, in client contexts / as is",
            "value": cpu_ratio,
            "pressroom": summary["client_contexts"]["worker_cpu_s_per_publish"],
            "baseline": summary["as_is"]["worker_cpu_s_per_publish"],
            "unit": "CPU-s",
            "second": {"metric": "one PURGE, long-lived client / client per call", "value": purge_ratio},
        },
        "targets": [],
    }
