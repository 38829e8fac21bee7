"""backup_import: a site of N documents backed up and imported through the real stack; the nightly fan-out rate.

Backup and import: for each size (documents, each with a rendered page of
~2 KiB in the store, seeded straight into the tenant's workspace and store),
``POST …/backups`` → the operation succeeded, then ``POST …/imports`` of that
backup over the same site → succeeded, timed end to end (the worker runs
them: outbox, relay, Prefect, the flow's cached steps). The worker's RSS is
sampled every 20 ms during each run: its peak over its RSS just before says
what the run held; memory is flat when that does not grow with N. Baseline,
in the same run on the same data: SQLite's online backup (``.backup``,
``sqlite3.Connection.backup``) of the workspace plus a plain file copy of
the tenant's objects, and the way back (the copy restored, the objects copied
back) — the bare cost of moving the bytes, without manifest, checksums,
JSONL, verification, staging or swap.

Fan-out, below the engine: ``chores.fan_out_tenants`` (what the
``fan_out_chore`` flow's ``fan_out`` step runs per batch) over T tenants'
workspaces (copies of one fresh workspace) for one fire of ``export_backup``:
tenant operations created per second and CPU per tenant, on a fresh factory
(the first fire after a worker starts: every workspace opened) and again the
next night on the same one (a long-running worker's engines are warm). Baseline: the floor
of touching each tenant's own database once, one connection and one empty
write transaction per tenant.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import statistics
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.pressroom_api import Tenant
from benchmarks.procstat import snapshot, tree
from benchmarks.runner import Bench
from benchmarks.stats import ratio, target
from flows.fan_out_chore import BATCH
from tenant_runtime import chores
from tenant_runtime.actions.documents import create_document
from tenant_runtime.settings import RuntimeSettings
from tenant_runtime.workspace import Actor, WorkspaceFactory, list_tenants

OWNER = Actor.for_role("u-bench", "owner")
PAGE = (
    "<!doctype html><title>Benchmark page</title><main>" + "lorem ipsum dolor sit amet " * 72 + "</main>\n"
).encode()
SEED_BATCH = 500
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
FIRE = datetime(2026, 12, 1, 3, 0, tzinfo=UTC)
# The largest fan-out size runs this many times (full profile; PRESSROOM_BENCH_FAN_OUT_REPEATS overrides it);
# the targets read the median.
FAN_OUT_REPEATS = 3
# Set to 1: only the fan-out is measured; the backup and import runs are carried over from the last result
# (with when they were measured), so the fan-out can be rerun alone in ~5 minutes.
FAN_OUT_ONLY = "PRESSROOM_BENCH_FAN_OUT_ONLY"


def _seed(factory: WorkspaceFactory, slug: str, documents: int) -> int:
    """``documents`` drafts and one rendered-size object each, straight into the workspace and the store."""
    ws = factory.open(slug)
    for start in range(0, documents, SEED_BATCH):
        with ws.transaction() as tx:
            for i in range(start, min(documents, start + SEED_BATCH)):
                create_document(tx, OWNER, slug=f"doc-{i}", title=f"Document {i}", body=f"Body of {i}.", kind="post")
    for i in range(documents):
        ws.store.put(f"site/doc-{i}/index.html", PAGE, content_type="text/html")
    return documents * len(PAGE)


def _rss(pids: list[int]) -> int:
    """The resident bytes of ``pids`` now (``/proc/{pid}/statm``: cheap enough to read every 20 ms)."""
    total = 0
    for pid in pids:
        try:
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE_SIZE
        except (OSError, IndexError, ValueError):
            continue
    return total


async def _run_timed(bench: Bench, tenant: Tenant, path: str, body: dict[str, Any]) -> dict[str, Any]:
    """POST ``path`` and wait for its operation, sampling the worker's RSS; seconds and the RSS figures."""
    worker = bench.stack.children["worker"].pid
    pids = [p.pid for p in tree(worker, snapshot())]
    before = _rss(pids)
    peak = before
    t0 = time.monotonic()
    url = f"/api/tenants/{tenant.slug}/{path}"
    accepted = await bench.api._call("POST", url, 202, json=body, headers=tenant.headers)
    waiting = asyncio.ensure_future(bench.outbox.wait_final(tenant.slug, accepted["operation_id"], timeout=1800))
    while not waiting.done():
        peak = max(peak, _rss(pids))
        await asyncio.sleep(0.02)
    row = waiting.result()
    seconds = time.monotonic() - t0
    if row.status != "succeeded":
        raise RuntimeError(f"{path} ended {row.status}; see {bench.stack.logs}/worker.log")
    return {
        "seconds": round(seconds, 3),
        "rss_before_mib": round(before / 2**20, 1),
        "rss_peak_mib": round(peak / 2**20, 1),
        "rss_growth_mib": round((peak - before) / 2**20, 1),
        **{k: v for k, v in accepted.items() if k in ("backup_id", "operation_id")},
    }


def _baseline(settings: RuntimeSettings, slug: str, scratch: Path) -> dict[str, float]:
    """SQLite's online backup + a plain copy of the tenant's objects (but its backups), and back."""
    objects = (settings.storage.root or settings.data_dir / "objects") / "tenants" / slug
    ignore = shutil.ignore_patterns("backups")
    t0 = time.monotonic()
    with sqlite3.connect(settings.workspace_path(slug)) as source, sqlite3.connect(scratch / "copy.db") as copy:
        source.backup(copy)
    shutil.copytree(objects, scratch / "objects", ignore=ignore)
    backup = time.monotonic() - t0
    t0 = time.monotonic()
    with sqlite3.connect(scratch / "copy.db") as copy, sqlite3.connect(scratch / "restored.db") as restored:
        copy.backup(restored)
    shutil.copytree(scratch / "objects", scratch / "objects-restored")
    restore = time.monotonic() - t0
    shutil.rmtree(scratch, ignore_errors=True)
    return {"backup_seconds": round(backup, 3), "import_seconds": round(restore, 3)}


def _fan_out_fire(
    settings: RuntimeSettings, factory: WorkspaceFactory, slugs: list[str], fire: datetime
) -> Counter[str]:
    """One fire as the ``fan_out_chore`` flow runs it: its ``fan_out`` step's body on each batch in turn."""
    decisions: Counter[str] = Counter()
    spec = chores.CHORES["export_backup"]
    for start in range(0, len(slugs), BATCH):
        batch = slugs[start : start + BATCH]
        done = chores.fan_out_tenants(settings, factory.open, batch, spec, fire, fire + timedelta(seconds=1))
        decisions.update(done["decisions"])
    return decisions


def _floor(settings: RuntimeSettings, slugs: list[str], threads: int) -> tuple[float, float]:
    """One connection and one empty write transaction per tenant, ``threads`` tenants at a time; seconds, CPU."""

    def touch(slug: str) -> None:
        with closing(sqlite3.connect(settings.workspace_path(slug), isolation_level=None)) as db:
            db.execute("BEGIN IMMEDIATE")
            db.execute("UPDATE site_state SET generation = generation")
            db.execute("COMMIT")

    cpu, t0 = time.process_time(), time.monotonic()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        list(pool.map(touch, slugs))
    return time.monotonic() - t0, time.process_time() - cpu


def _fan_out(root: Path, tenants: int) -> dict[str, Any]:
    """The fan-out over ``tenants`` copies of one workspace (first fire, next fire), then the floor over the
    same files."""
    settings = RuntimeSettings(data_dir=root, site_url="http://bench.test")
    factory = WorkspaceFactory(settings)
    factory.create("template")
    template = settings.workspace_path("template")
    for n in range(tenants):
        target = settings.workspace_path(f"t-{n:05d}")
        target.parent.mkdir(parents=True)
        shutil.copyfile(template, target)
    shutil.rmtree(template.parent)
    # The copies are GBs of dirty pages at 10,000 tenants (475 KB each): flushed here, not by the kernel's
    # writeback in the middle of the first fire (a real night's fan-out opens files written long before).
    synced = time.monotonic()
    os.sync()
    synced = time.monotonic() - synced
    slugs = list_tenants(settings)
    fresh = WorkspaceFactory(settings)  # nothing opened yet, as on a worker's first fire
    load_before = os.getloadavg()[0]
    cpu, t0 = time.process_time(), time.monotonic()
    decided = _fan_out_fire(settings, fresh, slugs, FIRE)
    seconds, cpu = time.monotonic() - t0, time.process_time() - cpu
    if decided != {"queued": tenants}:
        raise RuntimeError(f"the fan-out decided {dict(decided)}")
    # The next night's fire on the same factory: a long-running worker has every engine already; the first
    # fire after a start pays for opening each workspace (and here cancels the first night's operation, which
    # no relay ran: every tenant takes that path too).
    warm_cpu, t0 = time.process_time(), time.monotonic()
    decided = _fan_out_fire(settings, fresh, slugs, FIRE + timedelta(days=1))
    warm, warm_cpu = time.monotonic() - t0, time.process_time() - warm_cpu
    if decided != {"queued": tenants}:
        raise RuntimeError(f"the next fire decided {dict(decided)}")
    floor, floor_cpu = _floor(settings, slugs, 1)
    floor_threaded, _ = _floor(settings, slugs, chores.FAN_OUT_THREADS)
    return {
        "tenants": tenants,
        "batch": BATCH,
        "threads": chores.FAN_OUT_THREADS,
        "seconds": round(seconds, 3),
        "rate_per_s": round(tenants / seconds, 1),
        "cpu_ms_per_tenant": round(1000 * cpu / tenants, 3),
        "warm_seconds": round(warm, 3),
        "warm_rate_per_s": round(tenants / warm, 1),
        "warm_cpu_ms_per_tenant": round(1000 * warm_cpu / tenants, 3),
        "floor_seconds": round(floor, 3),
        "floor_rate_per_s": round(tenants / floor, 1),
        "floor_cpu_ms_per_tenant": round(1000 * floor_cpu / tenants, 3),
        # The same floor with the fan-out's threads, so the ratio can be read like for like.
        "floor_threaded_rate_per_s": round(tenants / floor_threaded, 1),
        # The machine's 1-minute load around the passes (2 shared cores: wall time is CPU only when low).
        "loadavg_1m": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "setup_sync_seconds": round(synced, 3),
    }


def _median_pass(passes: list[dict[str, Any]]) -> dict[str, Any]:
    """The passes' median of each rate and CPU figure (n passes at the same size)."""
    keys = [k for k, v in passes[0].items() if isinstance(v, float) and k != "seconds"]
    return {"tenants": passes[0]["tenants"], "n": len(passes)} | {
        k: round(statistics.median(p[k] for p in passes), 3) for k in keys
    }


def _carried_runs(bench: Bench) -> dict[str, Any]:
    """The backup and import runs of the last full result (``FAN_OUT_ONLY``), with when they were measured."""
    path = bench.out / "backup_import.json"
    try:
        before = json.loads(path.read_text())
        runs = before["runs"]
    except (OSError, ValueError, KeyError) as exc:
        raise RuntimeError(f"{FAN_OUT_ONLY}=1 reuses the backup and import runs of {path}: {exc}") from exc
    measured = before.get("runs_measured") or {
        "started_at": before.get("started_at"),
        "git_sha": before.get("machine", {}).get("git_sha"),
        "loadavg_at_start": before.get("machine", {}).get("loadavg_at_start"),
    }
    return {"runs": runs, "runs_measured": measured}


async def _backups_and_imports(bench: Bench, sizes: tuple[int, ...], runs: list[dict[str, Any]]) -> None:
    """For each size: a tenant of that many documents backed up and imported through the stack, and the copy."""
    await bench.ready_worker()
    settings = RuntimeSettings(data_dir=bench.stack.data_dir, site_url=bench.stack.site_url)
    factory = WorkspaceFactory(settings)
    for documents in sizes:
        [tenant] = await bench.api.create_tenants(f"bk{documents}", 1)
        seeded = await asyncio.to_thread(_seed, factory, tenant.slug, documents)
        backup = await _run_timed(bench, tenant, "backups", {"confirm": True})
        ref = {"tenant": tenant.slug, "id": backup["backup_id"]}
        imported = await _run_timed(bench, tenant, "imports", {"backup": ref, "confirm": True})
        scratch = Path(tempfile.mkdtemp(prefix="bench-copy-", dir=bench.stack.root))
        base = await asyncio.to_thread(_baseline, settings, tenant.slug, scratch)
        runs.append(
            {"documents": documents, "object_bytes": seeded, "backup": backup, "import": imported, "baseline": base}
        )
        bench.log(
            f"  {documents} documents: backup {backup['seconds']:.1f} s (copy {base['backup_seconds']:.2f} s), "
            f"import {imported['seconds']:.1f} s (copy back {base['import_seconds']:.2f} s), worker RSS growth "
            f"{backup['rss_growth_mib']} / {imported['rss_growth_mib']} MiB"
        )


async def run(bench: Bench) -> dict[str, Any]:
    quick = bench.profile.name == "quick"
    sizes = (1_000, 4_000) if quick else (1_000, 10_000)
    fan_out_sizes = (250, 1_000) if quick else (1_000, 10_000)
    repeats = 1 if quick else int(os.environ.get("PRESSROOM_BENCH_FAN_OUT_REPEATS", FAN_OUT_REPEATS))
    fan_out_only = os.environ.get(FAN_OUT_ONLY) == "1"
    runs: list[dict[str, Any]] = []
    carried: dict[str, Any] = {}
    bench.partial = {"runs": runs}
    if fan_out_only:
        carried = _carried_runs(bench)
        runs.extend(carried["runs"])
        bench.log(f"  {FAN_OUT_ONLY}=1: backups and imports not rerun (from {carried['runs_measured']['started_at']})")
    else:
        await _backups_and_imports(bench, sizes, runs)
    fan_outs = []
    for tenants in fan_out_sizes:
        for _ in range(repeats if tenants == fan_out_sizes[-1] else 1):
            root = Path(tempfile.mkdtemp(prefix="bench-fanout-", dir=bench.stack.root))
            fan_outs.append(await asyncio.to_thread(_fan_out, root, tenants))
            shutil.rmtree(root, ignore_errors=True)
            done = fan_outs[-1]
            bench.log(
                f"  fan-out {tenants} tenants: {done['rate_per_s']:.0f}/s first fire, {done['warm_rate_per_s']:.0f}/s "
                f"next fire (floor {done['floor_rate_per_s']:.0f}/s; load {done['loadavg_1m']})"
            )
    small, large = runs[0], runs[-1]
    growth = {kind: ratio(large[kind]["rss_peak_mib"], small[kind]["rss_peak_mib"]) for kind in ("backup", "import")}
    fan = _median_pass([f for f in fan_outs if f["tenants"] == fan_out_sizes[-1]])
    return {
        "settings": {
            "documents": list(sizes),
            "page_bytes": len(PAGE),
            "fan_out_tenants": list(fan_out_sizes),
            "worker": "the stack's runtime worker (one process); RSS of its process tree sampled every 20 ms",
            "fan_out": "in the benchmark process, below the engine (no Prefect, no relay): the fan_out step's "
            f"body on batches of {BATCH} in turn, as the flow runs them; the largest size {repeats}x (median)",
            "fan_out_only": fan_out_only,
        },
        **({"runs_measured": carried["runs_measured"]} if carried else {}),
        "runs": runs,
        "fan_out": fan_outs,
        "fan_out_median": fan,
        "ratios": {
            "backup_over_copy": ratio(large["backup"]["seconds"], large["baseline"]["backup_seconds"]),
            "import_over_copy_back": ratio(large["import"]["seconds"], large["baseline"]["import_seconds"]),
            "peak_rss_large_over_small": growth,
            "fan_out_rate_over_floor_rate": ratio(fan["rate_per_s"], fan["floor_rate_per_s"]),
        },
        "headline": {
            "metric": f"backup of {large['documents']} documents, seconds / SQLite .backup + file copy",
            "value": ratio(large["backup"]["seconds"], large["baseline"]["backup_seconds"]),
            "pressroom": large["backup"]["seconds"],
            "baseline": large["baseline"]["backup_seconds"],
            "unit": "s",
            "second": {
                "metric": "import seconds / copy back",
                "value": ratio(large["import"]["seconds"], large["baseline"]["import_seconds"]),
            },
        },
        "targets": [
            target(f"backup of {large['documents']} documents ≤ 60 s", large["backup"]["seconds"], "<=", 60, "s"),
            target(f"import of {large['documents']} documents ≤ 60 s", large["import"]["seconds"], "<=", 60, "s"),
            target(
                f"worker peak RSS flat: {large['documents']} vs {small['documents']} documents ≤ 1.2×",
                max(v for v in growth.values() if v is not None),
                "<=",
                1.2,
                "×",
            ),
            target(
                f"fan-out ≥ 200 tenant operations/s ({fan['tenants']} tenants, first fire, median of {fan['n']})",
                fan["rate_per_s"],
                ">=",
                200,
                "/s",
            ),
            target(
                f"fan-out ≥ 200 tenant operations/s ({fan['tenants']} tenants, next fire, median of {fan['n']})",
                fan["warm_rate_per_s"],
                ">=",
                200,
                "/s",
            ),
        ],
    }
