"""The one gateway to the Prefect API: pool, tenant queues, deployments, runs."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from prefect.client.orchestration import PrefectClient, get_client
from prefect.client.schemas.actions import WorkPoolCreate
from prefect.exceptions import ObjectAlreadyExists, ObjectNotFound
from prefect.states import Scheduled

from dispatch.settings import DispatchSettings
from flows import FLOWS

DEPLOYMENT_NAME = "pressroom"


class PrefectGateway:
    """Holds one Prefect client for the process and caches deployment ids."""

    def __init__(self, settings: DispatchSettings) -> None:
        self.settings = settings
        self._client: PrefectClient | None = None
        self._deployments: dict[str, UUID] = {}
        self._flow_by_deployment: dict[UUID, str] = {}
        self._known_queues: set[str] = set()
        self._lock = asyncio.Lock()

    async def __aenter__(self) -> PrefectGateway:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def client(self) -> PrefectClient:
        if self._client is None:
            # The API URL comes from this process's settings, so a control plane and a
            # worker can be pointed at different servers (and tests at a dead one).
            self._client = PrefectClient(self.settings.api_url) if self.settings.api_url else get_client()
            # Entered lazily so a process can start while the Prefect server is down.
            self._entered = self._client.__aenter__()
        return self._client

    async def _ready(self) -> PrefectClient:
        client = self.client
        entered = getattr(self, "_entered", None)
        if entered is not None:
            self._entered = None
            await entered
        return client

    async def close(self) -> None:
        if self._client is not None and getattr(self, "_entered", None) is None:
            await self._client.__aexit__(None, None, None)
        self._client = None

    async def ensure_pool(self) -> None:
        client = await self._ready()
        try:
            await client.create_work_pool(WorkPoolCreate(name=self.settings.work_pool, type="process"))
        except ObjectAlreadyExists:
            pass

    async def ensure_deployments(self) -> dict[str, UUID]:
        """Register every Pressroom flow as a deployment in the pool (idempotent)."""
        async with self._lock:
            if self._deployments:
                return self._deployments
            await self.ensure_pool()
            client = await self._ready()
            for name, flow in FLOWS.items():
                flow_id = await client.create_flow_from_name(name)
                module = flow.fn.__module__
                deployment_id = await client.create_deployment(
                    flow_id=flow_id,
                    name=DEPLOYMENT_NAME,
                    work_pool_name=self.settings.work_pool,
                    entrypoint=f"{module.replace('.', '/')}.py:{flow.fn.__name__}",
                    enforce_parameter_schema=False,
                    description=flow.description,
                )
                self._deployments[name] = deployment_id
                self._flow_by_deployment[deployment_id] = name
            return self._deployments

    async def flow_name_for(self, deployment_id: UUID | None) -> str | None:
        await self.ensure_deployments()
        return self._flow_by_deployment.get(deployment_id) if deployment_id else None

    async def ensure_queue(self, tenant: str, *, paused: bool | None = None) -> None:
        """Create the tenant's work queue ``tenant-{slug}`` in the pool (idempotent)."""
        name = self.settings.queue_for(tenant)
        if name in self._known_queues and paused is None:
            return
        await self.ensure_pool()
        client = await self._ready()
        limit = self.settings.queue_concurrency
        try:
            await client.create_work_queue(name=name, work_pool_name=self.settings.work_pool, is_paused=paused,
                                           concurrency_limit=limit)
        except ObjectAlreadyExists:
            queue = await client.read_work_queue_by_name(name, work_pool_name=self.settings.work_pool)
            changes: dict[str, Any] = {}
            if paused is not None and queue.is_paused != paused:
                changes["is_paused"] = paused
            if queue.concurrency_limit != limit:
                changes["concurrency_limit"] = limit
            if changes:
                await client.update_work_queue(queue.id, **changes)
        self._known_queues.add(name)

    async def ensure_queues(self, tenants: list[str]) -> int:
        """Every tenant's queue, with one paged read of the pool's queues; returns how many were changed."""
        await self.ensure_pool()
        client = await self._ready()
        existing: dict[str, Any] = {}
        offset = 0
        while True:
            page = await client.read_work_queues(work_pool_name=self.settings.work_pool, limit=200, offset=offset)
            existing.update({queue.name: queue for queue in page})
            offset += len(page)
            if len(page) < 200:
                break
        changed = 0
        for tenant in tenants:
            queue = existing.get(self.settings.queue_for(tenant))
            if queue is not None and queue.concurrency_limit == self.settings.queue_concurrency:
                self._known_queues.add(queue.name)
                continue
            await self.ensure_queue(tenant)
            changed += 1
        return changed

    async def queue_state(self, tenant: str) -> dict[str, Any]:
        client = await self._ready()
        try:
            queue = await client.read_work_queue_by_name(
                self.settings.queue_for(tenant), work_pool_name=self.settings.work_pool
            )
        except ObjectNotFound:
            return {"name": self.settings.queue_for(tenant), "exists": False}
        return {"name": queue.name, "exists": True, "paused": queue.is_paused, "id": str(queue.id)}

    async def create_run(
        self,
        *,
        tenant: str,
        flow_name: str,
        parameters: dict[str, Any],
        idempotency_key: str,
        tags: list[str],
        scheduled_time: datetime,
    ) -> tuple[UUID, dict[str, Any]]:
        """Create (or find, by idempotency key) the flow run on the tenant's queue."""
        deployments = await self.ensure_deployments()
        await self.ensure_queue(tenant)
        client = await self._ready()
        run = await client.create_flow_run_from_deployment(
            deployments[flow_name],
            parameters=parameters,
            idempotency_key=idempotency_key,
            tags=tags,
            work_queue_name=self.settings.queue_for(tenant),
            state=Scheduled(scheduled_time=scheduled_time),
        )
        return run.id, dict(run.parameters)

    async def reschedule(self, flow_run_id: str | UUID, when: datetime) -> None:
        client = await self._ready()
        await client.set_flow_run_state(flow_run_id, Scheduled(scheduled_time=when), force=True)

    async def late_runs(self, tenant: str) -> tuple[int, float]:
        """How many of the tenant's runs are overdue, and by how long the oldest is late."""
        from prefect.client.schemas.filters import (
            FlowRunFilter,
            FlowRunFilterState,
            FlowRunFilterStateName,
            WorkQueueFilter,
            WorkQueueFilterName,
        )

        client = await self._ready()
        runs = await client.read_flow_runs(
            flow_run_filter=FlowRunFilter(state=FlowRunFilterState(name=FlowRunFilterStateName(any_=["Late"]))),
            work_queue_filter=WorkQueueFilter(name=WorkQueueFilterName(any_=[self.settings.queue_for(tenant)])),
            limit=200,
        )
        now = datetime.now(UTC)
        lateness = [
            (now - run.expected_start_time).total_seconds() for run in runs if run.expected_start_time is not None
        ]
        return len(runs), max(lateness, default=0.0)
