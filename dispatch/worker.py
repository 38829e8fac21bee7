"""The runtime worker: executes flow runs of tenant queues inside its own process.

Prefect's process worker starts a ~80 MB subprocess per run (~6 s from queued
to completed here). This worker claims runs from the pool with one query,
checks each against its operation before anything is touched, and runs the
flow with the engine in-process (``run_flow_async``), many at a time.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import os
import time
from collections import Counter, OrderedDict
from collections.abc import Coroutine
from collections.abc import Set as AbstractSet
from functools import partial
from typing import Any, TypeVar
from uuid import UUID

import structlog
from prefect.client.schemas.objects import FlowRun
from prefect.context import AsyncClientContext, SyncClientContext
from prefect.exceptions import Abort, Pause
from prefect.flow_engine import run_flow_async
from prefect.settings import PREFECT_API_URL, temporary_settings
from prefect.states import State

from dispatch.doorbell import Doorbell
from dispatch.metrics import SWEEP_RESCHEDULED, SWEEP_SECONDS, SWEEP_TENANTS
from dispatch.operation_sync import Claim, OperationSync
from dispatch.prefect_gateway import PrefectGateway
from dispatch.prefect_port import RunState
from dispatch.relay import Relay
from dispatch.settings import DispatchSettings
from dispatch.settlement import read_outcome, verdicts
from flows import FLOWS
from tenant_runtime.errors import ClaimRejected, NotFound
from tenant_runtime.ids import utcnow
from tenant_runtime.workflows import (
    RunOutcome,
    RunParameters,
    Workflow,
    parameters_from_run,
    run_parameters,
    spec,
)
from tenant_runtime.workspace import WorkspaceFactory, list_tenants

log = structlog.get_logger("pressroom.worker")
T = TypeVar("T")
_QUEUE_BATCH = 100  # the most queues one pool query names (Prefect looks each one up)
# The most of its own queues a shard's worker asks about in one poll when the pool's oldest due runs may all be
# other shards': with 5,000 queues a starved run is seen within 11 such polls (10 chunks, and the rest of the one
# the rotation was in).
_OWN_CHUNK = 500


class RuntimeWorker:
    """Polls the pool for due runs of its tenants and runs them concurrently."""

    def __init__(
        self,
        settings: DispatchSettings,
        factory: WorkspaceFactory,
        gateway: PrefectGateway,
        *,
        tenants: AbstractSet[str] | None = None,
        platform: bool | None = None,
    ) -> None:
        self.settings = settings
        self.factory = factory
        self.gateway = gateway
        # None: every tenant of the data directory. A shard's runtime passes its live ``ShardTenants``:
        # membership decides what it may claim, iteration (which leaves out draining tenants) what it polls.
        self.tenants = tenants
        # Platform runs (nightly fan-outs) go to the worker of every tenant unless told otherwise.
        self.platform = tenants is None if platform is None else platform
        self.relay = Relay(factory, gateway, settings.coalescing, push=settings.worker_push)
        # Rung by the relay when a tenant has new runs, and by a finished run (a slot is free): the loop
        # polls at once instead of after poll_interval (dispatch/doorbell.py).
        self.doorbell: Doorbell | None = None
        self.sync = OperationSync(factory, settings)
        self._running: dict[UUID, asyncio.Task[None]] = {}
        self._running_queues: dict[UUID, str] = {}
        # The engine's own task of each running flow: a terminate cancels it, not the claim around it.
        self._flows: dict[str, asyncio.Task[Any]] = {}
        self._terminating: dict[str, str] = {}  # flow run id → who stopped it
        self._last_sweep = 0.0
        self._sweeping: asyncio.Task[int] | None = None  # the sweep running beside the poll, if any
        self._last_control_check = 0.0
        self._quiet: dict[str, tuple[int, int]] = {}
        self._chunk_after = ""  # the last queue name of the last chunk of its own queues asked about

    def serves(self, tenant: str) -> bool:
        return self.tenants is None or tenant in self.tenants

    def busy(self, tenant: str) -> bool:
        """Whether a flow run of ``tenant`` is running here (safe to ask from another thread)."""
        return self.settings.queue_for(tenant) in list(self._running_queues.values())

    async def run(self, stop: asyncio.Event) -> None:
        """Poll until ``stop`` is set, then let running flows finish.

        Inside Prefect's client contexts, so every flow run reuses one API client of
        each kind instead of building two (and their SSL contexts) per run.
        """
        # The engine's clients talk to this worker's server, whatever the process environment says.
        with temporary_settings(updates={PREFECT_API_URL: self.settings.api_url}):
            # Listening before start-up: a ring meanwhile is kept, and the first idle wait ends at once.
            if self.settings.worker_push:
                self.doorbell = Doorbell(self.factory.settings.data_dir, self.tenants).open()
            try:
                if not await _until(stop, self._start(stop)):
                    return
                # Entered once the server has answered: entering checks its API version.
                with SyncClientContext.get_or_create():
                    async with AsyncClientContext.get_or_create():
                        await self._loop(stop)
            finally:
                if self.doorbell is not None:
                    self.doorbell.close()
                    self.doorbell = None

    async def _loop(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                # A call stuck on an unreachable server must not keep a stopping worker alive.
                started = await _until(stop, self.poll_once()) or 0
                await _until(stop, self._maybe_check_running())
                self._maybe_sweep()
            except Exception as exc:  # the server may be restarting: keep polling
                log.warning("worker.poll_failed", error=str(exc) or type(exc).__name__)
                started = 0
            if not started:
                await self._idle(stop)
        await self._stop_sweep()
        await self.drain(self.settings.shutdown_grace_seconds)

    async def _idle(self, stop: asyncio.Event) -> None:
        """Until the next poll: ``poll_interval``, or sooner when stopped or the doorbell rings."""
        if self.doorbell is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=self.settings.poll_interval)
            return
        await _until(stop, self.doorbell.wait(self.settings.poll_interval))

    async def _start(self, stop: asyncio.Event) -> bool:
        """Register deployments and queues, reclaim orphaned runs; False if stopped first."""
        while not stop.is_set():
            try:
                await self.gateway.ensure_deployments()
                await self.gateway.ensure_queues(self._tenant_list())
                await self.reclaim()
                return True
            except Exception as exc:
                log.warning("worker.start_waiting_for_prefect", error=str(exc) or type(exc).__name__)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), timeout=2)
        return False

    def _tenant_list(self) -> list[str]:
        tenants = list_tenants(self.factory.settings)
        if self.tenants is None:
            return tenants
        live = set(self.tenants)  # a draining tenant is neither swept nor polled
        return [t for t in tenants if t in live]

    async def drain(self, grace: float | None = None) -> None:
        """Let running flows finish; after ``grace`` seconds cancel the rest.

        A cancelled run stays Running in Prefect with its lease unrenewed: the next
        worker's start-up reclaim or any sweeper resumes it, and its finished steps
        come back from the cache.
        """
        if not self._running:
            return
        tasks = list(self._running.values())
        _, pending = await asyncio.wait(tasks, timeout=grace)
        if pending:
            log.warning("worker.shutdown_cancelled_runs", runs=len(pending), grace_seconds=grace)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)

    async def poll_once(self) -> int:
        """Claim due runs up to the free concurrency; returns how many started.

        Asks Prefect's pool query only for the queues that have runs waiting (the pool's oldest due
        runs, the tenants the doorbell was rung for, and for a shard a chunk of its own queues when
        those oldest runs may all be others'), never for every queue it serves: the pool query looks
        up each queue it is given, so its cost would grow with idle tenants.
        """
        free = self.settings.concurrency - len(self._running)
        if free <= 0:
            return 0
        queue_names = await self._queues_to_poll()
        if not queue_names:
            return 0  # nothing waits: no pool query at all
        started = 0
        for flow_run in _round_robin(await self.gateway.due_runs(queue_names)):
            if flow_run.work_queue_name == self.settings.platform_queue and not self.platform:
                continue
            if started >= free:
                break
            if flow_run.id in self._running or flow_run.id in self._running_queues:
                continue
            queue = flow_run.work_queue_name or ""
            if self.tenants is not None and queue not in self._queues_now():
                continue  # its tenant started draining since the poll: leave the run for the next holder
            # Counted as busy before it is taken, so a drain that starts meanwhile waits for it.
            self._running_queues[flow_run.id] = queue
            if not await self._take(flow_run.id):
                self._running_queues.pop(flow_run.id, None)
                continue
            task = asyncio.create_task(self._execute(flow_run))
            self._running[flow_run.id] = task
            task.add_done_callback(partial(self._forget, flow_run.id))
            started += 1
        return started

    async def _queues_to_poll(self) -> list[str]:
        """The queues this poll names in the pool query, at most ``_QUEUE_BATCH``; none when nothing waits."""
        waiting = await self.gateway.waiting_queues()
        names = self._waiting_queue_names(waiting.queues)
        if not waiting.full or len(names) >= _QUEUE_BATCH:
            return names
        # The pool is shared by every shard: when another is down or a fan-out made thousands of runs due at
        # once, its oldest due runs can all be other shards', and this shard's would wait until they drain.
        # The embedded worker serves every tenant: there one tenant's backlog of older runs is what hides the
        # others' (a ring names a tenant only once, when its run is sent).
        chunk = [queue for queue in self._next_own_chunk() if queue not in names]
        if not chunk:
            return names
        own = await self.gateway.waiting_queues(among=chunk)
        return list(dict.fromkeys([*names, *own.queues]))[:_QUEUE_BATCH]

    def _next_own_chunk(self) -> list[str]:
        """The next ``_OWN_CHUNK`` of the queues served now, in name order after the last chunk, wrapping round.

        Kept by name, not by position, so a tenant added or removed meanwhile shifts no queue out of turn:
        every served queue is in a chunk within ceil(queues / ``_OWN_CHUNK``) + 1 calls.
        """
        served = sorted(self._queues_now() if self.tenants is not None else self._every_tenants_queues())
        start = bisect.bisect_right(served, self._chunk_after)
        if start >= len(served):
            start = 0
        chunk = served[start : start + _OWN_CHUNK]
        self._chunk_after = chunk[-1] if chunk else ""
        return chunk

    def _waiting_queue_names(self, waiting: list[str]) -> list[str]:
        """Of ``waiting`` and the rung tenants' queues, those this worker polls now; at most ``_QUEUE_BATCH``."""
        rung = [self.settings.queue_for(t) for t in sorted(self.doorbell.take_waiting())] if self.doorbell else []
        served = None if self.tenants is None else self._queues_now()
        names: dict[str, None] = {}
        for queue in [*rung, *waiting]:
            if queue == self.settings.platform_queue:
                if not self.platform:
                    continue
            elif served is not None:
                if queue not in served:
                    continue
            elif self.settings.tenant_of_queue(queue) is None:
                continue
            names[queue] = None
            if len(names) >= _QUEUE_BATCH:
                break  # the rest are asked for at the next poll, which comes at once when this one started runs
        return list(names)

    def _every_tenants_queues(self) -> set[str]:
        """The embedded worker's: the queue of every tenant with a workspace here (read only when the pool-wide
        read came back full), and the platform's."""
        queues = {self.settings.queue_for(t) for t in list_tenants(self.factory.settings)}
        if self.platform:
            queues.add(self.settings.platform_queue)
        return queues

    def _queues_now(self) -> set[str]:
        queues = {self.settings.queue_for(t) for t in self.tenants or ()}
        if self.platform:
            queues.add(self.settings.platform_queue)
        return queues

    def _forget(self, flow_run_id: UUID, _task: asyncio.Task[None]) -> None:
        self._running.pop(flow_run_id, None)
        self._running_queues.pop(flow_run_id, None)
        if self.doorbell is not None:
            self.doorbell.ring()  # a slot is free: what waits for one is taken now

    async def _take(self, flow_run_id: UUID) -> bool:
        """Scheduled → Pending; another worker or a queue limit may say no."""
        return await self.gateway.set_state(flow_run_id, RunState.PENDING)

    async def _execute(self, flow_run: FlowRun) -> None:
        run_id = str(flow_run.id)
        # This task's own context: every line logged for the run, its steps' included, carries its ids.
        structlog.contextvars.bind_contextvars(flow_run_id=run_id)
        bound = log
        try:
            workflow, parameters = self._decode(flow_run, await self.gateway.workflow_of(flow_run.deployment_id))
            if spec(workflow).platform:
                await self._execute_platform(flow_run, workflow, parameters)
                return
            structlog.contextvars.bind_contextvars(tenant=parameters.tenant, operation_id=parameters.operation_id)
            claim = await asyncio.to_thread(self._claim, flow_run, workflow, parameters)
        except (ClaimRejected, NotFound) as exc:
            bound.warning("worker.claim_rejected", reason=exc.message, details=exc.details)
            await self.gateway.set_state(
                flow_run.id, RunState.FAILED, message=f"claim_rejected: {exc.message}", force=True
            )
            return
        if claim.held:  # paused before it started: back to suspended, unclaimed
            bound.info("worker.run_held")
            await self.gateway.suspend(run_id, force=True)
            return
        if claim.cancelled:
            bound.info("worker.run_terminated_before_start")
            await self.gateway.set_state(flow_run.id, RunState.CANCELLED, message="terminated", force=True)
            return
        claimed = claim.claimed
        if not claimed:
            bound.info("worker.stale_run_noop")
            await self.gateway.set_state(
                flow_run.id, RunState.COMPLETED, message="no-op: the operation is no longer current", force=True
            )
            return
        tenant = parameters.tenant
        bound.info("worker.run_started", flow=workflow.value, operations=len(claimed))
        lease = asyncio.create_task(self._renew_lease(tenant, claimed, run_id))
        engine = asyncio.create_task(
            run_flow_async(
                flow=FLOWS[workflow], flow_run=flow_run, parameters=run_parameters(parameters), return_type="state"
            )
        )
        self._flows[run_id] = engine
        try:
            state = await engine
        except Pause:  # suspended at a step boundary (a pause, or a wait for an event)
            await self._parked(tenant, claimed, run_id)
            return
        except Abort as exc:  # the server refused to let it run (cancelled or suspended meanwhile)
            bound.warning("worker.run_aborted", reason=str(exc))
            await self._reconcile(tenant, claimed, run_id)
            return
        except asyncio.CancelledError:
            if run_id not in self._terminating:
                raise  # the worker is stopping: the run is reclaimed later
            await self._stopped(tenant, claimed, run_id)
            return
        finally:
            lease.cancel()
            self._flows.pop(run_id, None)
        if run_id in self._terminating or (isinstance(state, State) and state.type.value == RunState.CANCELLING):
            # Cancelled while its last step ran: the engine's final state was refused.
            await self._stopped(tenant, claimed, run_id)
            return
        if not isinstance(state, State):  # return_type="state" gives a state; anything else is a lost run
            raise RuntimeError(f"run {run_id} ended without a final state")
        result = await state.aresult(raise_on_failure=False)
        outcome = read_outcome(state.is_completed(), result, state_name=state.type.value, message=state.message)
        facts = dict(outcome.facts) if isinstance(outcome, RunOutcome) else None
        settled = await asyncio.to_thread(self.sync.settle, tenant, verdicts(claimed, outcome), facts)
        bound.info("worker.run_finished", state=state.type.value, statuses=dict(Counter(settled.values())))
        await self._relay(tenant, bound)

    async def _relay(self, tenant: str, bound: Any) -> None:
        try:
            await self.relay.relay_tenant(tenant)
        except Exception as exc:
            bound.warning("worker.relay_failed", error=str(exc))

    # --- run control --------------------------------------------------------------------------------

    def terminate(self, flow_run_id: str, actor: str = "prefect") -> bool:
        """Stop a run this worker is running (its operations end cancelled); False if it runs none such."""
        engine = self._flows.get(flow_run_id)
        if engine is None or engine.done():
            return False
        self._terminating[flow_run_id] = actor
        engine.cancel()
        return True

    async def _parked(self, tenant: str, claimed: list[str], run_id: str) -> None:
        """The run suspended: it now holds no slot; its operations are paused or waiting, or go on at once."""
        parked = await asyncio.to_thread(self.sync.parked, tenant, claimed)
        bound = log.bind(tenant=tenant, flow_run_id=run_id, operation_id=claimed[0])
        if parked.decision == "resume":
            await self.gateway.resume(run_id)  # its event or a resume came while it was suspending
        elif parked.decision == "cancel":
            await self.gateway.set_state(run_id, RunState.CANCELLED, message="terminated", force=True)
        elif parked.foreign:
            # Suspended from outside (the Prefect UI pauses with a timeout, after which Prefect would
            # fail the run): held again without one, paused until resumed.
            await self.gateway.suspend(run_id, force=True)
        bound.info("worker.run_parked", decision=parked.decision, foreign=parked.foreign)
        await self._relay(tenant, bound)

    async def _stopped(self, tenant: str, claimed: list[str], run_id: str) -> None:
        actor = self._terminating.pop(run_id, "prefect")
        ended = await asyncio.to_thread(self.sync.cancelled, tenant, claimed, actor, "terminated")
        await self.gateway.set_state(run_id, RunState.CANCELLED, message="terminated", force=True)
        log.info("worker.run_terminated", tenant=tenant, flow_run_id=run_id, operations=len(ended))
        await self._relay(tenant, log.bind(tenant=tenant, flow_run_id=run_id))

    async def _reconcile(self, tenant: str, operation_ids: list[str], run_id: str) -> None:
        """Bring operations in step with a run the engine would not (or no longer) run."""
        state = (await self.gateway.run_states([run_id])).get(run_id)
        if state in ("CANCELLING", "CANCELLED"):
            await asyncio.to_thread(self.sync.cancelled, tenant, operation_ids, "prefect", "cancelled in Prefect")
            if state == "CANCELLING":
                await self.gateway.set_state(run_id, RunState.CANCELLED, message="cancelled", force=True)
        elif state == "PAUSED":
            await self._parked(tenant, operation_ids, run_id)

    async def _maybe_check_running(self) -> None:
        """Every ``control_poll_seconds``: stop the running runs someone cancelled (Cancelling in Prefect)."""
        now = asyncio.get_running_loop().time()
        if not self._flows or now - self._last_control_check < self.settings.control_poll_seconds:
            return
        self._last_control_check = now
        states = await self.gateway.run_states(list(self._flows))
        for run_id, state in states.items():
            if state == "CANCELLING" and run_id not in self._terminating:
                log.info("worker.cancel_requested", flow_run_id=run_id)
                self.terminate(run_id)

    async def _execute_platform(self, flow_run: FlowRun, workflow: Workflow, parameters: RunParameters) -> None:
        """A run for the platform (a nightly fan-out): nothing to claim, it writes into tenants' outboxes."""
        if flow_run.work_queue_name != self.settings.platform_queue or not self.platform:
            raise ClaimRejected(
                "A platform run belongs on the platform queue, to a platform worker.",
                details={"queue": flow_run.work_queue_name},
            )
        bound = log.bind(flow=workflow.value)
        bound.info("worker.platform_run_started")
        state = await run_flow_async(
            flow=FLOWS[workflow], flow_run=flow_run, parameters=run_parameters(parameters), return_type="state"
        )
        bound.info("worker.platform_run_finished", state=getattr(getattr(state, "type", None), "value", None))

    async def _renew_lease(self, tenant: str, operation_ids: list[str], flow_run_id: str) -> None:
        interval = self.settings.lease_seconds / 3
        while True:
            await asyncio.sleep(interval)
            try:
                await asyncio.to_thread(self.sync.heartbeat, tenant, operation_ids, flow_run_id)
            except Exception as exc:  # a missed beat is tolerated; three in a row lose the lease
                log.warning("worker.heartbeat_failed", tenant=tenant, flow_run_id=flow_run_id, error=str(exc))

    @staticmethod
    def _decode(flow_run: FlowRun, workflow: Workflow | None) -> tuple[Workflow, RunParameters]:
        """The run's workflow and its typed parameters; anything else is not a Pressroom run."""
        if workflow is None or workflow not in FLOWS:
            raise ClaimRejected(
                "The run is not of a Pressroom flow.", details={"deployment": str(flow_run.deployment_id)}
            )
        return workflow, parameters_from_run(workflow, flow_run.parameters)

    def _claim(self, flow_run: FlowRun, workflow: Workflow, parameters: RunParameters) -> Claim:
        tenant = parameters.tenant
        if not self.serves(tenant):
            raise ClaimRejected("This runtime does not serve the run's tenant.", details={"tenant": tenant})
        if flow_run.work_queue_name != self.settings.queue_for(tenant):
            raise ClaimRejected(
                "The run's queue does not belong to its tenant.",
                details={"queue": flow_run.work_queue_name, "tenant": tenant},
            )
        return self.sync.claim(tenant, workflow, str(flow_run.id), parameters)

    def _maybe_sweep(self) -> None:
        """Every ``sweep_interval``, a sweep beside the poll: the first after start-up reads every tenant
        (132 s at 10,000 on this machine), and due runs must not wait for it."""
        if self._sweeping is not None and not self._sweeping.done():
            return  # one sweep at a time: the next starts an interval after this one started
        now = asyncio.get_running_loop().time()
        if now - self._last_sweep < self.settings.sweep_interval:
            return
        self._last_sweep = now
        self._sweeping = asyncio.create_task(self.sweep(), name="pressroom-sweep")
        self._sweeping.add_done_callback(_log_sweep_failure)

    async def _stop_sweep(self) -> None:
        """A stopping worker cancels its sweep: what it had not looked at, the next holder's sweep does."""
        if self._sweeping is None or self._sweeping.done():
            return
        self._sweeping.cancel()
        await asyncio.gather(self._sweeping, return_exceptions=True)

    async def sweep(self) -> int:
        """Re-send unsent operations (the server was down at commit) and resume orphaned deliveries.

        A tenant found quiet (nothing unsent, nothing delivering) is skipped until its
        workspace files change, so a thousand idle tenants cost a stat() each per sweep.
        """
        started = time.perf_counter()
        try:
            return await self._sweep()
        finally:
            SWEEP_SECONDS.observe(time.perf_counter() - started)

    async def _sweep(self) -> int:
        sent = 0
        # Every tenant's stamp in one thread hop: a hop per tenant cost more than the stat()s it made.
        stamps = await asyncio.to_thread(self._stamps)
        for tenant, stamp in stamps:
            if stamp is not None and self._quiet.get(tenant) == stamp:
                SWEEP_TENANTS.labels(outcome="quiet").inc()
                continue
            SWEEP_TENANTS.labels(outcome="relayed").inc()
            sent += await self.relay.relay_tenant(tenant)
            busy = await self._resume_stale(tenant)
            if busy or stamp is None:
                self._quiet.pop(tenant, None)
            else:
                # The stamp from before the look: a write since then changes it, so nothing is missed.
                self._quiet[tenant] = stamp
        return sent

    def _stamps(self) -> list[tuple[str, tuple[int, int] | None]]:
        """Each tenant to sweep with its workspace stamp, read before any of them is looked at."""
        return [(tenant, self._workspace_stamp(tenant)) for tenant in self._tenant_list()]

    def _workspace_stamp(self, tenant: str) -> tuple[int, int] | None:
        """Modification times of the database and its WAL (0 when SQLite removed it); None: no database."""
        path = self.factory.settings.workspace_path(tenant)
        try:
            database = os.stat(path).st_mtime_ns
        except FileNotFoundError:
            return None
        try:
            wal = os.stat(f"{path}-wal").st_mtime_ns
        except FileNotFoundError:
            wal = 0
        return database, wal

    def _holds(self, flow_run_id: str) -> bool:
        """Whether this worker is taking or running the run (counted from before its Pending is asked for)."""
        return any(str(run_id) == flow_run_id for run_id in self._running_queues)  # at most `concurrency`

    async def _resume_stale(self, tenant: str) -> bool:
        """A delivery whose lease expired lost its worker: put its run back to Scheduled.

        Returns whether the tenant has anything unsent or delivering (to look at again next sweep).
        """
        rescheduled: set[str] = set()  # by this look: a batch's members share one run
        await self._check_parked(tenant)
        stale, busy = await asyncio.to_thread(self.sync.stale, tenant)
        for operation_id, flow_run_id in stale:
            # Asked at each run, not once before: the poll goes on beside the sweep and may just have taken it.
            if flow_run_id in rescheduled or self._holds(flow_run_id):
                continue
            rescheduled.add(flow_run_id)
            await self.gateway.reschedule(flow_run_id, utcnow())
            SWEEP_RESCHEDULED.inc()
            log.warning(
                "worker.lease_expired_rescheduled", tenant=tenant, operation_id=operation_id, flow_run_id=flow_run_id
            )
        await self._resend_lost(tenant, rescheduled)
        return busy

    async def _resend_lost(self, tenant: str, rescheduled: set[str]) -> None:
        """A queued operation whose run ended in Prefect without it (its Scheduled state lost) goes out again."""
        idle = await asyncio.to_thread(self.sync.idle_sends, tenant)
        if not idle:
            return
        states = await self.gateway.run_states(sorted({run_id for _, run_id in idle}))
        lost = [
            op
            for op, run_id in idle
            if run_id not in rescheduled and not self._holds(run_id) and states.get(run_id) in _ENDED
        ]
        if lost:
            await asyncio.to_thread(self.sync.resend, tenant, lost)
            log.warning("worker.lost_send_resent", tenant=tenant, operation_ids=lost)
            await self.relay.relay_tenant(tenant)

    async def _check_parked(self, tenant: str) -> None:
        """Paused and waiting runs someone cancelled in the Prefect UI: their operations end cancelled."""
        parked = await asyncio.to_thread(self.sync.parked_runs, tenant)
        if not parked:
            return
        states = await self.gateway.run_states(list(parked))
        for run_id, state in states.items():
            if state in ("CANCELLING", "CANCELLED"):
                await self._reconcile(tenant, parked[run_id], run_id)

    async def reclaim(self) -> int:
        """Runs left Running/Pending by a dead worker of these tenants go back to Scheduled.

        One worker serves each tenant set, so at start-up nothing else can be
        running them; their completed steps come back from the cache.
        """
        reclaimed = 0
        for flow_run in await self.gateway.unfinished_runs():
            tenant = _tenant_of(flow_run)
            if flow_run.id in self._running or not tenant or not self.serves(tenant):
                continue
            await self.gateway.reschedule(str(flow_run.id), utcnow())
            log.warning("worker.reclaimed", tenant=tenant, flow_run_id=str(flow_run.id))
            reclaimed += 1
        return reclaimed


async def _until(stop: asyncio.Event, work: Coroutine[Any, Any, T]) -> T | None:
    """``work``'s result, or None (and ``work`` cancelled) if ``stop`` is set first."""
    task = asyncio.ensure_future(work)
    stopped = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait([task, stopped], return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopped.cancel()
    if task.done():
        return task.result()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    return None


# Prefect states a run cannot leave by itself: a queued operation's run found in one was never started again.
_ENDED = frozenset({"COMPLETED", "FAILED", "CANCELLED", "CRASHED"})


def _log_sweep_failure(task: asyncio.Task[int]) -> None:
    if not task.cancelled() and (exc := task.exception()) is not None:  # the server may be restarting
        log.warning("worker.sweep_failed", error=str(exc) or type(exc).__name__)


def _round_robin(runs: list[FlowRun]) -> list[FlowRun]:
    """Interleave runs by queue so one tenant's backlog cannot starve another's."""
    by_queue: OrderedDict[str, list[FlowRun]] = OrderedDict()
    for run in runs:
        by_queue.setdefault(run.work_queue_name or "", []).append(run)
    ordered: list[FlowRun] = []
    while by_queue:
        for queue in list(by_queue):
            ordered.append(by_queue[queue].pop(0))
            if not by_queue[queue]:
                del by_queue[queue]
    return ordered


def _tenant_of(flow_run: FlowRun) -> str | None:
    """The tenant a run's parameters name (typed or, for runs from before the contract, flat)."""
    params = flow_run.parameters.get("params")
    source = params if isinstance(params, dict) else flow_run.parameters
    tenant = source.get("tenant")
    return str(tenant) if tenant else None


__all__ = ["RuntimeWorker"]
