"""Gauges computed at scrape time from what the control plane already holds, at a bounded cost per scrape.

    figure                                    source                                         cost per scrape
    ----------------------------------------  ---------------------------------------------  ------------------------
    pressroom_tenants{status}                 control-plane database                         one query
    pressroom_shard_tenants{shard}            the placement table                            one GROUP BY
    pressroom_shard_up{shard,transport}       each remote shard's /healthz                   one call per shard
    pressroom_tenant_late_runs{tenant},       Prefect: the pool's Late runs, oldest first    pages of 200, at most
    pressroom_tenant_lateness_seconds{tenant}                                                LATE_RUNS_READ runs
    pressroom_operations{status},             each tenant's figures, from its runtime        at most
    pressroom_tenant_queue_depth{tenant}                                                     ``per_scrape`` tenants

Operation figures live in the tenants' own databases, which only their
runtimes open. ``FigureSampler`` keeps the last figures of every tenant and
refreshes the ``per_scrape`` longest-unrefreshed ones each scrape, so with
10,000 tenants, 100 a scrape and a 15 s interval every tenant is at most 25
minutes old; ``pressroom_figures_oldest_seconds`` says how old the oldest is.
Per-tenant series are left out for tenants with nothing unfinished or late:
idle tenants cost no series.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

import structlog
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from control_plane.placement.services import ShardOut
from dispatch.runtime import RuntimeClient, TenantFigures
from dispatch.runtime import messages as m
from tenant_runtime.errors import PressroomError

log = structlog.get_logger("pressroom.metrics")
LATE_RUNS_READ = 1000  # Late runs read from Prefect per scrape (oldest first): a backlog beyond is still visible
SCRAPER = m.ActorRef(id="operator:metrics", role="viewer")  # the figures are a read: the least role


class FigureSampler:
    """Every tenant's last operation figures; ``refresh`` asks at most ``per_scrape`` runtimes for new ones."""

    def __init__(self, runtime: RuntimeClient, per_scrape: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.runtime = runtime
        self.per_scrape = per_scrape
        self.clock = clock
        self._figures: dict[str, tuple[float, TenantFigures]] = {}
        self._lock = threading.Lock()  # two scrapes at once refresh one after the other

    def refresh(self, tenants: list[str]) -> int:
        """Forget tenants that are gone, refresh the longest-unrefreshed; returns how many runtimes answered."""
        with self._lock:
            present = set(tenants)
            for gone in set(self._figures) - present:
                del self._figures[gone]
            due = sorted(tenants, key=lambda slug: self._figures.get(slug, (-math.inf,))[0])[: self.per_scrape]
            answered = 0
            for slug in due:
                try:
                    figures = self.runtime.figures(slug, SCRAPER)
                except PressroomError as exc:  # its runtime is down or moving it: keep the last figures
                    log.info("metrics.figures_unavailable", tenant=slug, code=exc.code)
                    continue
                self._figures[slug] = (self.clock(), figures)
                answered += 1
            return answered

    def figures(self) -> dict[str, TenantFigures]:
        with self._lock:
            return {slug: figures for slug, (_, figures) in self._figures.items()}

    def oldest_seconds(self) -> float:
        """Age of the oldest figures held (0 with none)."""
        with self._lock:
            if not self._figures:
                return 0.0
            return max(0.0, self.clock() - min(at for at, _ in self._figures.values()))


@dataclass(eq=False)  # a registry keys its collectors by identity
class Snapshot(Collector):
    """One scrape's figures, yielded as Prometheus families."""

    tenants_by_status: Mapping[str, int]
    shards: list[ShardOut]
    figures: Mapping[str, TenantFigures]
    figures_oldest_seconds: float
    tenants_without_figures: int
    late: Mapping[str, tuple[int, float]] | None  # None: Prefect did not answer
    scrape_seconds: float = 0.0

    def collect(self) -> Iterator[Metric]:
        tenants = GaugeMetricFamily("pressroom_tenants", "Tenants by status.", labels=["status"])
        for status, count in sorted(self.tenants_by_status.items()):
            tenants.add_metric([status], count)
        yield tenants

        placed = GaugeMetricFamily("pressroom_shard_tenants", "Tenants placed on each shard.", labels=["shard"])
        up = GaugeMetricFamily(
            "pressroom_shard_up",
            "Whether the shard's runtime answers (1) or not (0); an in-process shard is this process.",
            labels=["shard", "transport"],
        )
        for shard in self.shards:
            placed.add_metric([shard.name], shard.tenants)
            up.add_metric([shard.name, shard.transport], 0 if shard.status == "unavailable" else 1)
        yield placed
        yield up

        by_status: dict[str, int] = {}
        depth = GaugeMetricFamily(
            "pressroom_tenant_queue_depth",
            "Unfinished operations of a tenant (tenants with none are left out).",
            labels=["tenant"],
        )
        for slug, figures in sorted(self.figures.items()):
            for status, count in figures.by_status.items():
                by_status[status] = by_status.get(status, 0) + count
            if figures.unfinished_operations:
                depth.add_metric([slug], figures.unfinished_operations)
        operations = GaugeMetricFamily(
            "pressroom_operations", "Operations by status, summed over the tenants with figures.", labels=["status"]
        )
        for status, count in sorted(by_status.items()):
            operations.add_metric([status], count)
        yield operations
        yield depth
        yield GaugeMetricFamily(
            "pressroom_figures_oldest_seconds",
            "Age of the oldest tenant figures behind pressroom_operations (refreshed a bounded number per scrape).",
            value=self.figures_oldest_seconds,
        )
        yield GaugeMetricFamily(
            "pressroom_figures_missing_tenants",
            "Tenants whose runtime has not given figures yet (not counted in pressroom_operations).",
            value=self.tenants_without_figures,
        )

        prefect_up = int(self.late is not None)
        yield GaugeMetricFamily("pressroom_prefect_up", "Whether Prefect answered this scrape.", value=prefect_up)
        late_runs = GaugeMetricFamily("pressroom_tenant_late_runs", "Late runs on a tenant's queue.", labels=["tenant"])
        lateness = GaugeMetricFamily(
            "pressroom_tenant_lateness_seconds", "How late the tenant's oldest Late run is.", labels=["tenant"]
        )
        for slug, (count, seconds) in sorted((self.late or {}).items()):
            late_runs.add_metric([slug], count)
            lateness.add_metric([slug], seconds)
        yield late_runs
        yield lateness
        yield GaugeMetricFamily(
            "pressroom_scrape_seconds", "How long gathering this scrape's figures took.", value=self.scrape_seconds
        )


async def probe_shards(shards: list[ShardOut], health: Mapping[str, Callable[[], object]], timeout: float) -> None:
    """Set each remote shard's ``status`` from its /healthz, all at once, none waited on beyond ``timeout``."""

    async def probe(shard: ShardOut) -> None:
        check = health.get(shard.name)
        if check is None:
            return
        try:
            await asyncio.wait_for(asyncio.to_thread(check), timeout)
            shard.status = "ok"
        except (TimeoutError, PressroomError):
            shard.status = "unavailable"

    await asyncio.gather(*(probe(shard) for shard in shards))


__all__ = ["LATE_RUNS_READ", "FigureSampler", "Snapshot", "probe_shards"]
