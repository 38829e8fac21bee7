"""Start the stack, run the chosen suites one after another, write results, stop everything."""

from __future__ import annotations

import asyncio
import importlib
import os
import sys
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.config import STACKLESS_SUITES, Profile
from benchmarks.outbox import Outbox
from benchmarks.pressroom_api import PressroomApi, Tenant
from benchmarks.results import machine_info, now_iso, write_result
from benchmarks.stack import BenchStack


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", flush=True)


def point_prefect_at(env: dict[str, str]) -> None:
    """Make this process's Prefect settings (imported or not yet) follow ``env``."""
    os.environ.update(env)
    context = sys.modules.get("prefect.context")
    if context is not None:
        context.refresh_global_settings_context()


@dataclass
class Bench:
    """What every suite gets: the stack, its clients, the profile and a place for artefacts."""

    stack: BenchStack
    profile: Profile
    api: PressroomApi
    outbox: Outbox
    prefect: Any  # PrefectClient, entered
    deployments: Any  # prefect_side.BenchDeployments
    out: Path
    profile_server: bool
    notes: list[str] = field(default_factory=list)
    partial: dict[str, Any] = field(default_factory=dict)  # what a suite measured so far, kept if it fails
    probe: tuple[Tenant, list[dict[str, Any]]] | None = None

    def log(self, message: str) -> None:
        log(message)

    async def best_effort(self, label: str, action: Awaitable[Any]) -> Any:
        """Clean-up that must not fail a suite: a failure becomes a note in the results."""
        try:
            return await action
        except Exception as exc:
            self.notes.append(f"{label} failed: {type(exc).__name__}: {exc}")
            self.log(f"  warning: {label} failed: {exc}")
            return None

    def worker_running(self) -> bool:
        child = self.stack.children.get("worker")
        return child is not None and child.alive()

    async def start_worker(self) -> None:
        if not self.worker_running():
            self.stack.start_worker()
            await asyncio.sleep(0)

    async def ready_worker(self, timeout: float = 300) -> float:
        """Start the runtime worker if needed and prove it polls: a publish on the probe tenant succeeds.

        A worker that was just (re)started first registers every tenant's queue; a
        measurement window must not overlap that start-up.
        """
        await self.start_worker()
        if self.probe is None:
            self.probe = await self.warm_tenant("probe")
        tenant, [doc] = self.probe
        published = await self.api.publish(tenant, doc["id"])
        row = await self.outbox.wait_final(tenant.slug, published.operation_id, timeout=timeout)
        if row.status != "succeeded":
            raise RuntimeError(f"the probe publish ended {row.status}; see {self.stack.logs}/worker.log")
        return row.latency or 0.0

    def stop_worker(self) -> None:
        self.stack.stop_child("worker")

    async def warm_tenant(self, prefix: str, docs: int = 1) -> tuple[Tenant, list[dict[str, Any]]]:
        """A fresh tenant with ``docs`` documents."""
        [tenant] = await self.api.create_tenants(prefix, 1)
        created = [await self.api.create_document(tenant, f"doc-{i}") for i in range(docs)]
        return tenant, created


async def _prove_pipeline(bench: Bench) -> None:
    """One publish end to end before any suite: the stack must work before it is measured."""
    seconds = await bench.ready_worker(timeout=180)
    bench.log(f"warm-up publish succeeded in {seconds:.2f} s (worker cold start included)")


async def _run_suites(
    stack: BenchStack,
    profile: Profile,
    suites: list[str],
    out: Path,
    profile_server: bool,
    baseline: dict[str, str] | None = None,
) -> list[str]:
    from benchmarks import prefect_side

    failures: list[str] = []
    api = PressroomApi(stack.api_url, stack.site_url, stack.operator_token)
    async with prefect_side.client(64) as prefect:
        deployments = await prefect_side.ensure_deployments(prefect)
        bench = Bench(stack, profile, api, Outbox(stack.data_dir), prefect, deployments, out, profile_server)
        try:
            await _prove_pipeline(bench)
            for name in suites:
                failures += await _one_suite(bench, name, baseline or {})
        finally:
            await api.close()
    return failures


async def _as(bench: Bench, overrides: dict[str, str]) -> None:
    """The control plane and the worker restarted with ``overrides`` in their environment."""
    bench.stop_worker()
    bench.stack.with_overrides(overrides)
    await bench.ready_worker()


# What a suite's baseline run keeps beside the run of the build as it is.
BASELINE_KEYS = ("summary_ms", "pressroom_phases_ms", "ratios", "headline")


async def _one_suite(bench: Bench, name: str, baseline: dict[str, str]) -> list[str]:
    module = importlib.import_module(f"benchmarks.suites.{name}")
    suite: Callable[[Bench], Awaitable[dict[str, Any]]] = module.run
    bench.log(f"suite {name} ({bench.profile.name})")
    started = now_iso()
    t0 = time.monotonic()
    result: dict[str, Any] = {
        "suite": name,
        "mode": bench.profile.name,
        "started_at": started,
        "machine": machine_info(),
        "profile": bench.profile.as_dict(),
    }
    failed = False
    bench.notes = []
    bench.partial = {}
    try:
        if baseline:
            # The same suite first with the old path switched back on (--baseline), then as built, in this
            # one stack: the ratios between them are the change's, whatever the machine's load does.
            bench.log(f"  baseline run with {baseline}")
            await _as(bench, baseline)
            before = await suite(bench)
            result["baseline"] = {"env": baseline} | {k: before[k] for k in BASELINE_KEYS if k in before}
            bench.log("  run as built")
            await _as(bench, {})
        result.update(await suite(bench))
        if baseline:
            result["versus_baseline"] = _versus(result["baseline"], result)
    except Exception as exc:
        failed = True
        result["error"] = f"{type(exc).__name__}: {exc}"
        result["traceback"] = traceback.format_exc()
        result["partial"] = bench.partial
        bench.log(f"suite {name} FAILED: {result['error']}")
    result["machine"]["loadavg_at_end"] = list(os.getloadavg())
    if bench.notes:
        result["notes"] = [*result.get("notes", []), *bench.notes]
    result["duration_s"] = round(time.monotonic() - t0, 1)
    path = write_result(bench.out, result)
    verdicts = ", ".join(
        f"{t['name']}={'met' if t['met'] else 'MISSED' if t['met'] is False else 'n/a'}"
        for t in result.get("targets", [])
    )
    bench.log(f"suite {name} done in {result['duration_s']} s → {path} {verdicts}")
    # A dead child invalidates everything after it: stop here rather than measure a broken stack.
    if bench.stack is not None:
        bench.stack.check_alive()
    return [name] if failed else []


def _versus(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Headline and p50s as built over the baseline run's (below 1: the change made it faster)."""
    out: dict[str, Any] = {}
    old, new = before.get("headline", {}), after.get("headline", {})
    if isinstance(old.get("value"), (int, float)) and isinstance(new.get("value"), (int, float)):
        out["headline"] = {"metric": new.get("metric"), "baseline": old["value"], "now": new["value"]}
    p50s = {}
    for side, summary in after.get("summary_ms", {}).items():
        was = before.get("summary_ms", {}).get(side, {})
        if isinstance(summary, dict) and was.get("p50") and summary.get("p50") is not None:
            p50s[side] = {"baseline_p50": was["p50"], "p50": summary["p50"], "ratio": summary["p50"] / was["p50"]}
    out["p50_ms"] = p50s
    return out


def _run_stackless(profile: Profile, suites: list[str], out: Path, docs: Path) -> int:
    """Suites that build their own subject in-process (``STACKLESS_SUITES``): no stack, no clients."""
    from benchmarks.report import write_report

    log(f"no stack needed ({profile.name}; suites: {', '.join(suites)})")
    bench = Bench(None, profile, None, None, None, None, out, False)  # type: ignore[arg-type]

    async def suites_in_order() -> list[str]:
        failures: list[str] = []
        for name in suites:
            failures += await _one_suite(bench, name, {})
        return failures

    failures = asyncio.run(suites_in_order())
    log(f"wrote {write_report(out, docs)}")
    return 1 if failures else 0


def run(
    profile: Profile,
    *,
    suites: list[str],
    out: Path,
    docs: Path,
    profile_server: bool,
    keep: bool,
    baseline: dict[str, str] | None = None,
) -> int:
    from benchmarks.report import write_report

    if suites and all(name in STACKLESS_SUITES for name in suites):
        return _run_stackless(profile, suites, out, docs)
    stack = BenchStack()
    failures: list[str] = []
    crashed = False
    t0 = time.monotonic()
    try:
        log(f"starting the benchmark stack ({profile.name}; suites: {', '.join(suites)})")
        stack.start(progress=log)
        point_prefect_at(stack.env())
        failures = asyncio.run(_run_suites(stack, profile, suites, out, profile_server, baseline))
    except BaseException as exc:
        crashed = True
        log(f"aborted: {type(exc).__name__}: {exc}")
        traceback.print_exc()
    finally:
        stack.stop()
        if keep or crashed or failures:
            log(f"kept {stack.root} (logs in {stack.logs})")
        else:
            stack.remove()
    report = write_report(out, docs)
    log(f"wrote {report}; total {time.monotonic() - t0:.0f} s")
    if failures:
        log(f"suites that failed: {', '.join(failures)}")
    return 1 if crashed or failures else 0
