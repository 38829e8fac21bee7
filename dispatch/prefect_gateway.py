"""``PrefectGateway``: the adapter of ``PrefectPort`` over Prefect's client — pool, tenant queues, deployments, runs.

One client per gateway, entered on first use (so a process can start while the
server is down). Connection failures surface as ``PrefectUnavailable``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast
from uuid import UUID, uuid4

import httpx
from prefect._flow_run_suspension import mark_flow_run_suspension_requested
from prefect.client.orchestration import PrefectClient
from prefect.client.schemas.actions import DeploymentScheduleCreate, WorkPoolCreate
from prefect.client.schemas.filters import (
    FlowRunFilter,
    FlowRunFilterEndTime,
    FlowRunFilterId,
    FlowRunFilterNextScheduledStartTime,
    FlowRunFilterState,
    FlowRunFilterStateName,
    FlowRunFilterStateType,
    FlowRunFilterWorkQueueName,
    TaskRunFilter,
    TaskRunFilterFlowRunId,
    WorkPoolFilter,
    WorkPoolFilterName,
    WorkQueueFilter,
    WorkQueueFilterName,
)
from prefect.client.schemas.objects import FlowRun, StateType
from prefect.client.schemas.responses import OrchestrationResult, SetStateStatus
from prefect.client.schemas.schedules import CronSchedule
from prefect.client.schemas.sorting import FlowRunSort
from prefect.exceptions import ObjectAlreadyExists, ObjectNotFound
from prefect.states import Cancelled, Cancelling, Completed, Failed, Pending, Scheduled, State, Suspended

from dispatch.prefect_port import (
    PAUSE_KEY_PREFIX,
    CreatedRun,
    FinishedRun,
    PrefectUnavailable,
    QueueInfo,
    RunInfo,
    RunRequest,
    RunState,
    StateChange,
    StepRun,
)
from dispatch.settings import DispatchSettings
from flows import FLOWS
from tenant_runtime.chores import CHORES
from tenant_runtime.ids import utcnow
from tenant_runtime.workflows import FanOutChoreParameters, Workflow, run_parameters

DEPLOYMENT_NAME = "pressroom"
_PAGE = 200
_WAITING_PAGES = 5  # the oldest 1,000 due runs of the pool name the queues a poll asks for
_BULK_DELETE = 50  # the most Prefect's bulk delete takes at once


def _state(state: RunState, message: str | None, when: datetime | None = None) -> State[Any]:
    if state == RunState.SCHEDULED:
        return Scheduled(scheduled_time=when or utcnow(), message=message)
    if state == RunState.PAUSED:  # no timeout: Prefect would fail an expired pause
        return Suspended(pause_key=f"{PAUSE_KEY_PREFIX}{uuid4()}", message=message)
    return {
        RunState.PENDING: Pending,
        RunState.COMPLETED: Completed,
        RunState.FAILED: Failed,
        RunState.CANCELLED: Cancelled,
        RunState.CANCELLING: Cancelling,
    }[state](message=message)


def _plain(value: datetime | None) -> datetime | None:
    """A plain aware datetime (Prefect's client hands out its own DateTime subclass, which msgspec refuses)."""
    if value is None:
        return None
    return datetime.fromtimestamp(value.timestamp(), UTC)


async def _upsert_deployment(client: PrefectClient, full_name: str, **deployment: Any) -> UUID:
    """Create (or update) a deployment; when another process creates it at the same moment, Prefect
    answers 409 to one of the two: that one reads the winner's id by name."""
    try:
        deployment_id: UUID = await client.create_deployment(**deployment)
        return deployment_id
    except ObjectAlreadyExists:
        existing = await client.read_deployment_by_name(full_name)
        return existing.id


@dataclass(frozen=True)
class Waiting:
    """What a waiting-queues read found: queue names, those of the longest-waiting runs first."""

    queues: list[str]
    full: bool  # its last page came back full: more due runs may wait beyond those it read


def run_info(run: FlowRun) -> RunInfo:
    """Pressroom's view of a Prefect flow run."""
    return RunInfo(
        id=str(run.id),
        name=run.name,
        state_type=run.state.type.value if run.state is not None else "UNKNOWN",
        state_name=run.state_name or "",
        state_message=run.state.message if run.state is not None else None,
        work_queue_name=run.work_queue_name,
        tags=tuple(run.tags),
        parameters=dict(run.parameters),
        expected_start_time=_plain(run.expected_start_time),
        start_time=_plain(run.start_time),
        end_time=_plain(run.end_time),
        total_run_time_seconds=run.total_run_time.total_seconds(),
    )


class PrefectGateway:
    """Holds one Prefect client for the process and caches deployment ids."""

    def __init__(self, settings: DispatchSettings) -> None:
        self.settings = settings
        self._client: PrefectClient | None = None
        self._deployments: dict[Workflow, UUID] = {}
        self._workflow_by_deployment: dict[UUID, Workflow] = {}
        self._known_queues: set[str] = set()
        self._lock: asyncio.Lock | None = None

    async def __aenter__(self) -> PrefectGateway:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def client(self) -> PrefectClient:
        """The entered client (created on first use, pinned to this gateway's API URL)."""
        if self._client is None:
            client = PrefectClient(self.settings.api_url)
            await client.__aenter__()
            self._client = client
        return self._client

    async def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.__aexit__(None, None, None)

    @asynccontextmanager
    async def _call(self) -> AsyncIterator[PrefectClient]:
        """The client, with connection failures turned into PrefectUnavailable."""
        try:
            yield await self.client()
        except (httpx.TransportError, OSError) as exc:
            raise PrefectUnavailable(
                "Prefect is unreachable.", details={"error": str(exc) or type(exc).__name__}
            ) from None
        except httpx.HTTPStatusError as exc:
            if exc.response.status_code < 500:
                raise
            raise PrefectUnavailable(
                "Prefect answered with an error.", details={"status": exc.response.status_code}
            ) from None

    # --- pool, deployments, queues -----------------------------------------------------------------

    async def _ensure_pool(self, client: PrefectClient) -> None:
        with suppress(ObjectAlreadyExists):
            await client.create_work_pool(WorkPoolCreate(name=self.settings.work_pool, type="process"))

    async def ensure_deployments(self) -> None:
        await self._deployment_ids()

    async def _deployment_ids(self) -> dict[Workflow, UUID]:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock, self._call() as client:
            if self._deployments:
                return self._deployments
            await self._ensure_pool(client)
            # Kept only once every deployment is registered: a failure halfway (another process
            # registering at the same moment, a server restart) is retried whole on the next call,
            # never cached as a partial table that would refuse the later workflows' runs.
            deployments: dict[Workflow, UUID] = {}
            by_deployment: dict[UUID, Workflow] = {}
            for workflow, flow in FLOWS.items():
                flow_id = await client.create_flow_from_name(workflow.value)
                module = flow.fn.__module__
                deployment_id = await _upsert_deployment(
                    client,
                    f"{workflow.value}/{DEPLOYMENT_NAME}",
                    flow_id=flow_id,
                    name=DEPLOYMENT_NAME,
                    work_pool_name=self.settings.work_pool,
                    entrypoint=f"{module.replace('.', '/')}.py:{flow.fn.__name__}",
                    enforce_parameter_schema=False,
                    description=flow.description,
                )
                deployments[workflow] = deployment_id
                by_deployment[deployment_id] = workflow
                if workflow == Workflow.FAN_OUT_CHORE:
                    for chore_id in await self._chore_deployments(client, flow_id, flow.fn):
                        by_deployment[chore_id] = workflow
            self._workflow_by_deployment.update(by_deployment)
            self._deployments = deployments
            return self._deployments

    async def _chore_deployments(self, client: PrefectClient, flow_id: UUID, fn: Any) -> list[UUID]:
        """One platform deployment per nightly chore, named after it, with its cron schedule in UTC: its
        runs fan the chore out into every tenant's outbox (``flows/fan_out_chore.py``)."""
        ids = []
        for chore in CHORES.values():
            ids.append(
                await _upsert_deployment(
                    client,
                    f"{Workflow.FAN_OUT_CHORE.value}/{chore.name}",
                    flow_id=flow_id,
                    name=chore.name,
                    work_pool_name=self.settings.work_pool,
                    work_queue_name=self.settings.platform_queue,
                    entrypoint=f"{fn.__module__.replace('.', '/')}.py:{fn.__name__}",
                    parameters=run_parameters(FanOutChoreParameters(chore=chore.name)),
                    schedules=[DeploymentScheduleCreate(schedule=CronSchedule(cron=chore.cron, timezone="UTC"))],
                    enforce_parameter_schema=False,
                    description=f"Nightly {chore.name}: one date-keyed operation into each tenant's outbox",
                )
            )
        return ids

    async def workflow_of(self, deployment_id: UUID | None) -> Workflow | None:
        """Which Pressroom workflow a run's deployment is (None: not one of ours)."""
        await self._deployment_ids()
        return self._workflow_by_deployment.get(deployment_id) if deployment_id else None

    async def ensure_queue(self, tenant: str, *, paused: bool | None = None) -> None:
        name = self.settings.queue_for(tenant)
        if name in self._known_queues and paused is None:
            return
        limit = self.settings.queue_concurrency
        async with self._call() as client:
            await self._ensure_pool(client)
            try:
                await client.create_work_queue(
                    name=name, work_pool_name=self.settings.work_pool, is_paused=paused, concurrency_limit=limit
                )
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

    async def ensure_queues(self, tenants: Sequence[str]) -> int:
        """Every tenant's queue, with one paged read of the pool's queues; returns how many were changed."""
        existing: dict[str, Any] = {}
        async with self._call() as client:
            await self._ensure_pool(client)
            offset = 0
            while True:
                page = await client.read_work_queues(work_pool_name=self.settings.work_pool, limit=_PAGE, offset=offset)
                existing.update({queue.name: queue for queue in page})
                offset += len(page)
                if len(page) < _PAGE:
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

    async def queue(self, tenant: str) -> QueueInfo:
        name = self.settings.queue_for(tenant)
        async with self._call() as client:
            try:
                queue = await client.read_work_queue_by_name(name, work_pool_name=self.settings.work_pool)
            except ObjectNotFound:
                return QueueInfo(name=name, exists=False)
        return QueueInfo(name=name, exists=True, paused=queue.is_paused, concurrency_limit=queue.concurrency_limit)

    # --- runs ----------------------------------------------------------------------------------------

    async def create_run(self, request: RunRequest) -> CreatedRun:
        deployments = await self._deployment_ids()
        await self.ensure_queue(request.tenant)
        async with self._call() as client:
            run = await client.create_flow_run_from_deployment(
                deployments[request.workflow],
                parameters=request.run_parameters,
                idempotency_key=request.idempotency_key,
                tags=list(request.tags),
                work_queue_name=self.settings.queue_for(request.tenant),
                state=Scheduled(scheduled_time=request.scheduled_time),
            )
        return CreatedRun(id=str(run.id), parameters=dict(run.parameters))

    async def reschedule(self, flow_run_id: str, when: datetime) -> None:
        async with self._call() as client:
            await client.set_flow_run_state(flow_run_id, Scheduled(scheduled_time=when), force=True)

    async def read_run(self, flow_run_id: str) -> RunInfo | None:
        async with self._call() as client:
            try:
                return run_info(await client.read_flow_run(UUID(flow_run_id)))
            except (ObjectNotFound, ValueError):
                return None

    async def set_state(
        self, flow_run_id: str | UUID, state: RunState, *, message: str | None = None, force: bool = False
    ) -> bool:
        return (await self._propose(flow_run_id, state, message, force)).status == SetStateStatus.ACCEPT

    async def _propose(
        self, flow_run_id: str | UUID, state: RunState, message: str | None, force: bool
    ) -> OrchestrationResult[Any]:
        async with self._call() as client:
            return await client.set_flow_run_state(flow_run_id, _state(state, message), force=force)

    # --- run control (dispatch/run_control.py) ---------------------------------------------------------

    async def suspend(self, flow_run_id: str, *, force: bool = False) -> bool:
        result = await self._propose(flow_run_id, RunState.PAUSED, "paused by Pressroom", force)
        if result.status != SetStateStatus.ACCEPT:
            return False
        # The engine hears of a suspension from its observer's event subscription, which a loaded
        # server can deliver after the run's last step: an engine running in this process (the
        # embedded worker, a shard runtime's own relay) is told at once and stops at the next step.
        if result.state is not None:
            mark_flow_run_suspension_requested(UUID(str(flow_run_id)), result.state)
        return True

    async def resume(self, flow_run_id: str) -> bool:
        async with self._call() as client:
            run = await client.read_flow_run(UUID(flow_run_id))
            if run.state is None or run.state.type != StateType.PAUSED:
                return False
            resuming: State[Any] = Scheduled(scheduled_time=utcnow(), name="Resuming")
            result = await client.set_flow_run_state(flow_run_id, resuming, force=True)
        return result.status == SetStateStatus.ACCEPT

    async def run_states(self, flow_run_ids: Sequence[str]) -> dict[str, str]:
        if not flow_run_ids:
            return {}
        states: dict[str, str] = {}
        async with self._call() as client:
            for start in range(0, len(flow_run_ids), _PAGE):
                chunk = [UUID(i) for i in flow_run_ids[start : start + _PAGE]]
                runs = await client.read_flow_runs(
                    flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=chunk)), limit=len(chunk)
                )
                states.update({str(run.id): run.state.type.value for run in runs if run.state is not None})
        return states

    async def step_runs(self, flow_run_ids: Sequence[str]) -> list[StepRun]:
        if not flow_run_ids:
            return []
        async with self._call() as client:
            runs = await client.read_task_runs(
                task_run_filter=TaskRunFilter(flow_run_id=TaskRunFilterFlowRunId(any_=[UUID(i) for i in flow_run_ids])),
                limit=_PAGE,
            )
        steps = [
            StepRun(
                flow_run_id=str(run.flow_run_id),
                name=run.task_key.rsplit("-", 1)[0] if not run.name else run.name.rsplit("-", 1)[0],
                state_type=run.state.type.value if run.state is not None else "UNKNOWN",
                state_name=run.state_name or "",
                message=run.state.message if run.state is not None else None,
                run_count=run.run_count,
                start_time=_plain(run.start_time),
                end_time=_plain(run.end_time),
                duration_seconds=run.total_run_time.total_seconds(),
                created=_plain(run.created),
            )
            for run in runs
        ]
        return sorted(steps, key=lambda step: step.created or step.start_time or datetime.min.replace(tzinfo=UTC))

    async def state_history(self, flow_run_id: str) -> list[StateChange]:
        async with self._call() as client:
            try:
                states = await client.read_flow_run_states(UUID(flow_run_id))
            except (ObjectNotFound, ValueError):
                return []
        return [
            StateChange(
                flow_run_id=flow_run_id,
                state_type=state.type.value,
                state_name=state.name or "",
                message=state.message,
                at=_plain(state.timestamp) or utcnow(),
            )
            for state in sorted(states, key=lambda state: state.timestamp)
        ]

    async def late_runs(self, tenant: str) -> tuple[int, float]:
        async with self._call() as client:
            runs = await client.read_flow_runs(
                flow_run_filter=FlowRunFilter(state=FlowRunFilterState(name=FlowRunFilterStateName(any_=["Late"]))),
                work_queue_filter=WorkQueueFilter(name=WorkQueueFilterName(any_=[self.settings.queue_for(tenant)])),
                limit=_PAGE,
            )
        now = datetime.now(UTC)
        lateness = [
            (now - run.expected_start_time).total_seconds() for run in runs if run.expected_start_time is not None
        ]
        return len(runs), max(lateness, default=0.0)

    async def late_by_tenant(self, limit: int) -> dict[str, tuple[int, float]]:
        runs: list[FlowRun] = []
        async with self._call() as client:
            while len(runs) < limit:  # Prefect answers at most _PAGE runs a call
                page = await client.read_flow_runs(
                    flow_run_filter=FlowRunFilter(state=FlowRunFilterState(name=FlowRunFilterStateName(any_=["Late"]))),
                    work_pool_filter=WorkPoolFilter(name=WorkPoolFilterName(any_=[self.settings.work_pool])),
                    sort=FlowRunSort.EXPECTED_START_TIME_ASC,
                    limit=min(_PAGE, limit - len(runs)),
                    offset=len(runs),
                )
                runs.extend(page)
                if len(page) < _PAGE:
                    break
        now = datetime.now(UTC)
        found: dict[str, tuple[int, float]] = {}
        for run in runs:
            tenant = self.settings.tenant_of_queue(run.work_queue_name)
            if tenant is None:
                continue
            late = (now - run.expected_start_time).total_seconds() if run.expected_start_time is not None else 0.0
            count, oldest = found.get(tenant, (0, 0.0))
            found[tenant] = (count + 1, max(oldest, late))
        return found

    # --- what only the runtime worker asks -------------------------------------------------------------

    async def waiting_queues(self, among: Sequence[str] | None = None, *, pages: int = _WAITING_PAGES) -> Waiting:
        """The queues of the pool (of ``among``) that have a Scheduled run due now, the longest-waiting first.

        One indexed query on ``flow_run`` a page (state type and next scheduled start), so an idle
        poll costs the same whether the pool has 10 queues or 10,000: ``get_scheduled_flow_runs``
        looks up every queue it is given, one query each, and without names reads and marks every
        queue of the pool (see ``due_runs``). At most ``pages`` pages of ``_PAGE`` runs are read.
        With ``among``, each further page asks only for the names not found yet, so one queue's
        backlog cannot fill every page: each page finds a queue more, or ends the read.
        """
        names: dict[str, None] = {}
        full = False
        now = utcnow()
        async with self._call() as client:
            for page_number in range(pages):
                # With ``among``, the names not found yet: the runs read so far are left out, so no offset.
                unfound = None if among is None else [name for name in among if name not in names]
                if unfound == []:
                    return Waiting(queues=list(names), full=False)
                page = await client.read_flow_runs(
                    flow_run_filter=FlowRunFilter(
                        state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.SCHEDULED])),
                        next_scheduled_start_time=FlowRunFilterNextScheduledStartTime(before_=now),
                        work_queue_name=None if unfound is None else FlowRunFilterWorkQueueName(any_=unfound),
                    ),
                    work_pool_filter=WorkPoolFilter(name=WorkPoolFilterName(any_=[self.settings.work_pool])),
                    sort=FlowRunSort.NEXT_SCHEDULED_START_TIME_ASC,
                    limit=_PAGE,
                    offset=page_number * _PAGE if among is None else 0,
                )
                names.update((run.work_queue_name, None) for run in page if run.work_queue_name)
                full = len(page) == _PAGE
                if not full:
                    break
        return Waiting(queues=list(names), full=full)

    async def due_runs(self, queue_names: Sequence[str] | None) -> list[FlowRun]:
        """Scheduled runs of the pool (of those queues) that are due now, in queue-priority order."""
        async with self._call() as client:
            responses = await client.get_scheduled_flow_runs_for_work_pool(
                work_pool_name=self.settings.work_pool,
                work_queue_names=list(queue_names) if queue_names else None,
                scheduled_before=utcnow(),
            )
        return [response.flow_run for response in responses]

    async def unfinished_runs(self) -> list[FlowRun]:
        """Runs of the pool that are Running or Pending (a dead worker may have left them)."""
        async with self._call() as client:
            return await client.read_flow_runs(
                flow_run_filter=FlowRunFilter(
                    state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.RUNNING, StateType.PENDING]))
                ),
                work_pool_filter=WorkPoolFilter(name=WorkPoolFilterName(any_=[self.settings.work_pool])),
                limit=_PAGE,
            )

    # --- retention (dispatch/retention.py) -----------------------------------------------------------

    async def finished_runs(
        self, state_type: str, *, ended_before: datetime, limit: int, offset: int = 0
    ) -> list[FinishedRun]:
        async with self._call() as client:
            runs = await client.read_flow_runs(
                flow_run_filter=FlowRunFilter(
                    state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType(state_type)])),
                    end_time=FlowRunFilterEndTime(before_=ended_before),
                ),
                work_pool_filter=WorkPoolFilter(name=WorkPoolFilterName(any_=[self.settings.work_pool])),
                sort=FlowRunSort.END_TIME_DESC,
                limit=limit,
                offset=offset,
            )
        return [
            FinishedRun(id=str(run.id), state_type=state_type, end_time=run.end_time, tags=tuple(run.tags))
            for run in runs
            if run.end_time is not None
        ]

    async def delete_runs(self, flow_run_ids: Sequence[str]) -> int:
        # Prefect's bulk delete: up to 50 runs a request, answering the ids it removed (a run already
        # gone is not counted); it queues the removal of their logs, as the one-run delete does.
        deleted = 0
        async with self._call() as client:
            for start in range(0, len(flow_run_ids), _BULK_DELETE):
                chunk = [str(run_id) for run_id in flow_run_ids[start : start + _BULK_DELETE]]
                response = await client.request(
                    "POST",
                    cast(Any, "/flow_runs/bulk_delete"),  # a server route the client has no method for
                    json={"flow_runs": {"id": {"any_": chunk}}, "limit": len(chunk)},
                )
                deleted += len(response.json()["deleted"])
        return deleted


__all__ = ["DEPLOYMENT_NAME", "PrefectGateway", "Waiting", "run_info"]
