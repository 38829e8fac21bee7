"""A scrape: this process's instruments and the figures gathered for it, in Prometheus text format."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Iterator

from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

from control_plane.metrics.figures import LATE_RUNS_READ, FigureSampler, Snapshot, probe_shards
from control_plane.placement import PlacementService
from control_plane.tenants.services import TenantService
from dispatch.prefect_port import PrefectPort, PrefectUnavailable
from dispatch.runtime import RuntimeClient


class _ThisProcess(Collector):
    """prometheus_client's default registry (commands, relay, sweep, steps, the process itself)."""

    def collect(self) -> Iterator[Metric]:
        yield from REGISTRY.collect()


class MetricsService:
    def __init__(
        self,
        tenants: TenantService,
        placement: PlacementService,
        prefect: PrefectPort,
        runtime: RuntimeClient,
        *,
        tenants_per_scrape: int,
        timeout: float,
    ) -> None:
        self.tenants = tenants
        self.placement = placement
        self.prefect = prefect
        self.sampler = FigureSampler(runtime, tenants_per_scrape)
        self.timeout = timeout

    async def snapshot(self) -> Snapshot:
        """The scrape-time figures (see ``figures.py`` for what each costs)."""
        started = time.perf_counter()
        tenants = await asyncio.to_thread(self.tenants.list)
        shards = await asyncio.to_thread(self.placement.shards)
        await probe_shards(
            shards, {name: remote.health for name, remote in self.placement.remotes.items()}, self.timeout
        )
        slugs = [tenant.slug for tenant in tenants]
        await asyncio.to_thread(self.sampler.refresh, slugs)
        figures = self.sampler.figures()
        try:
            late: dict[str, tuple[int, float]] | None = await asyncio.wait_for(
                self.prefect.late_by_tenant(LATE_RUNS_READ), self.timeout
            )
        except (TimeoutError, PrefectUnavailable):
            late = None
        return Snapshot(
            tenants_by_status=dict(Counter(tenant.status for tenant in tenants)),
            shards=shards,
            figures=figures,
            figures_oldest_seconds=self.sampler.oldest_seconds(),
            tenants_without_figures=sum(1 for slug in slugs if slug not in figures),
            late=late,
            scrape_seconds=time.perf_counter() - started,
        )

    async def render(self) -> bytes:
        """The whole scrape in Prometheus text format."""
        registry = CollectorRegistry(auto_describe=False)
        registry.register(_ThisProcess())
        registry.register(await self.snapshot())
        return generate_latest(registry)


__all__ = ["MetricsService"]
