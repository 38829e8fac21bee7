"""``RecordingPrefect``: the in-memory twin of ``PrefectPort`` for unit tests.

It keeps Prefect's semantics where Pressroom depends on them — an idempotency
key names one run forever (the same key with other parameters returns the first
run, as Prefect does), queues have a pause flag and a concurrency limit, state
proposals can be refused, a run entering a final state gets an end time (``clock``)
that leaving it clears, a deleted run frees its key — and records every call.
``down = True`` makes every call raise ``PrefectUnavailable``, as a dead server would.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from dispatch.prefect_port import (
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
from tenant_runtime.ids import utcnow

_STATE_NAMES = {
    RunState.SCHEDULED: "Scheduled",
    RunState.PENDING: "Pending",
    RunState.COMPLETED: "Completed",
    RunState.FAILED: "Failed",
    RunState.CANCELLED: "Cancelled",
    RunState.CANCELLING: "Cancelling",
    RunState.PAUSED: "Suspended",
}
_FINAL = (RunState.COMPLETED, RunState.FAILED, RunState.CANCELLED)


@dataclass
class TwinRun:
    id: str
    request: RunRequest
    parameters: dict[str, Any]
    state: RunState = RunState.SCHEDULED
    scheduled_time: datetime | None = None
    message: str | None = None
    running: bool = False  # the engine set it Running (``start``): only then an unforced suspend is accepted
    history: list[tuple[str, str | None]] = field(default_factory=list)  # (state type, message)
    end_time: datetime | None = None
    crashed: bool = False  # Prefect's CRASHED: a final state Pressroom never proposes, only finds

    @property
    def state_type(self) -> str:
        return "CRASHED" if self.crashed else self.state.value


@dataclass
class RecordingPrefect:
    """Runs, queues and every call, in memory."""

    queue_concurrency: int = 4
    down: bool = False
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    runs: dict[str, TwinRun] = field(default_factory=dict)
    queues: dict[str, QueueInfo] = field(default_factory=dict)
    late: dict[str, tuple[int, float]] = field(default_factory=dict)
    deployments_ensured: int = 0
    steps_of: dict[str, list[StepRun]] = field(default_factory=dict)  # task runs a test gives a flow run
    clock: Callable[[], datetime] = utcnow  # end times of runs entering a final state
    _by_key: dict[str, str] = field(default_factory=dict)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def _record(self, name: str, **arguments: Any) -> None:
        self.calls.append((name, arguments))
        if self.down:
            raise PrefectUnavailable("Prefect is unreachable (twin is down).")

    def called(self, name: str) -> list[dict[str, Any]]:
        """The arguments of every call of ``name``, in order."""
        return [arguments for called, arguments in self.calls if called == name]

    def run_for(self, idempotency_key: str) -> TwinRun | None:
        run_id = self._by_key.get(idempotency_key)
        return self.runs.get(run_id) if run_id else None

    async def ensure_deployments(self) -> None:
        self._record("ensure_deployments")
        self.deployments_ensured += 1

    async def ensure_queue(self, tenant: str, *, paused: bool | None = None) -> None:
        self._record("ensure_queue", tenant=tenant, paused=paused)
        name = f"tenant-{tenant}"
        current = self.queues.get(name)
        keep = current.paused if current is not None else False
        self.queues[name] = QueueInfo(
            name=name, exists=True, paused=keep if paused is None else paused, concurrency_limit=self.queue_concurrency
        )

    async def ensure_queues(self, tenants: Sequence[str]) -> int:
        self._record("ensure_queues", tenants=list(tenants))
        missing = [t for t in tenants if f"tenant-{t}" not in self.queues]
        for tenant in missing:
            await self.ensure_queue(tenant)
        return len(missing)

    async def queue(self, tenant: str) -> QueueInfo:
        self._record("queue", tenant=tenant)
        name = f"tenant-{tenant}"
        return self.queues.get(name, QueueInfo(name=name, exists=False))

    async def create_run(self, request: RunRequest) -> CreatedRun:
        self._record("create_run", request=request)
        existing = self.run_for(request.idempotency_key)
        if existing is None:
            existing = TwinRun(
                id=f"run-{next(self._ids)}",
                request=request,
                parameters=request.run_parameters,
                scheduled_time=request.scheduled_time,
            )
            self.runs[existing.id] = existing
            self._by_key[request.idempotency_key] = existing.id
            await self.ensure_queue(request.tenant)
        return CreatedRun(id=existing.id, parameters=dict(existing.parameters))

    async def reschedule(self, flow_run_id: str, when: datetime) -> None:
        self._record("reschedule", flow_run_id=flow_run_id, when=when)
        run = self.runs[flow_run_id]
        run.state, run.scheduled_time, run.running = RunState.SCHEDULED, when, False
        run.end_time, run.crashed = None, False
        run.history.append((RunState.SCHEDULED.value, None))

    async def read_run(self, flow_run_id: str) -> RunInfo | None:
        self._record("read_run", flow_run_id=flow_run_id)
        run = self.runs.get(flow_run_id)
        if run is None:
            return None
        return RunInfo(
            id=run.id,
            name=f"{run.request.workflow.value} {run.id}",
            state_type=run.state_type,
            state_name="Crashed" if run.crashed else _STATE_NAMES[run.state],
            state_message=run.message,
            work_queue_name=f"tenant-{run.request.tenant}",
            tags=run.request.tags,
            parameters=dict(run.parameters),
            expected_start_time=run.scheduled_time,
        )

    async def set_state(
        self, flow_run_id: str, state: RunState, *, message: str | None = None, force: bool = False
    ) -> bool:
        self._record("set_state", flow_run_id=flow_run_id, state=state, message=message, force=force)
        run = self.runs.get(flow_run_id)
        if run is None:
            return False
        final = run.state in _FINAL
        if final and not force:
            return False  # Prefect's orchestration rules refuse leaving a final state unforced
        run.state, run.message, run.running, run.crashed = state, message, False, False
        run.end_time = self.clock() if state in _FINAL else None  # as Prefect's SetEndTime rule does
        run.history.append((state.value, message))
        return True

    async def late_runs(self, tenant: str) -> tuple[int, float]:
        self._record("late_runs", tenant=tenant)
        return self.late.get(tenant, (0, 0.0))

    async def late_by_tenant(self, limit: int) -> dict[str, tuple[int, float]]:
        self._record("late_by_tenant", limit=limit)
        return {tenant: late for tenant, late in self.late.items() if late[0]}

    def start(self, flow_run_id: str) -> None:
        """The engine took the run and set it Running (a test's stand-in for the worker; not recorded)."""
        run = self.runs[flow_run_id]
        run.state, run.running = RunState.PENDING, True
        run.history.append(("RUNNING", None))

    async def suspend(self, flow_run_id: str, *, force: bool = False) -> bool:
        self._record("suspend", flow_run_id=flow_run_id, force=force)
        run = self.runs.get(flow_run_id)
        if run is None or run.state in (RunState.COMPLETED, RunState.FAILED, RunState.CANCELLED):
            return False
        if not run.running and not force:
            return False  # Prefect accepts an unforced Suspended only from Running
        run.state, run.running = RunState.PAUSED, False
        run.history.append((RunState.PAUSED.value, None))
        return True

    async def resume(self, flow_run_id: str) -> bool:
        self._record("resume", flow_run_id=flow_run_id)
        run = self.runs.get(flow_run_id)
        if run is None or run.state != RunState.PAUSED:
            return False
        run.state, run.scheduled_time = RunState.SCHEDULED, utcnow()
        run.history.append((RunState.SCHEDULED.value, "Resuming"))
        return True

    async def run_states(self, flow_run_ids: Sequence[str]) -> dict[str, str]:
        self._record("run_states", flow_run_ids=list(flow_run_ids))
        return {
            i: ("RUNNING" if self.runs[i].running else self.runs[i].state.value) for i in flow_run_ids if i in self.runs
        }

    async def step_runs(self, flow_run_ids: Sequence[str]) -> list[StepRun]:
        self._record("step_runs", flow_run_ids=list(flow_run_ids))
        return [step for i in flow_run_ids for step in self.steps_of.get(i, [])]

    async def state_history(self, flow_run_id: str) -> list[StateChange]:
        self._record("state_history", flow_run_id=flow_run_id)
        run = self.runs.get(flow_run_id)
        if run is None:
            return []
        now = utcnow()
        return [
            StateChange(flow_run_id=flow_run_id, state_type=t, state_name=t.title(), message=m, at=now)
            for t, m in run.history
        ]

    async def close(self) -> None:
        self.calls.append(("close", {}))

    def finish(self, flow_run_id: str, state_type: str, ended_at: datetime) -> None:
        """Put a run in a final state as if it had ended at ``ended_at`` (a test's setup; not recorded)."""
        run = self.runs[flow_run_id]
        run.crashed = state_type == "CRASHED"
        run.state = RunState.FAILED if run.crashed else RunState(state_type)
        if run.state not in _FINAL:
            raise ValueError(f"{state_type} is not a final state")
        run.end_time = ended_at

    async def finished_runs(
        self, state_type: str, *, ended_before: datetime, limit: int, offset: int = 0
    ) -> list[FinishedRun]:
        self._record("finished_runs", state_type=state_type, ended_before=ended_before, limit=limit, offset=offset)
        matching = sorted(
            (
                run
                for run in self.runs.values()
                if run.state_type == state_type and run.end_time is not None and run.end_time <= ended_before
            ),
            key=lambda run: (run.end_time, run.id),
            reverse=True,
        )
        return [
            FinishedRun(id=run.id, state_type=run.state_type, end_time=run.end_time, tags=run.request.tags)
            for run in matching[offset : offset + limit]
            if run.end_time is not None
        ]

    async def delete_runs(self, flow_run_ids: Sequence[str]) -> int:
        self._record("delete_runs", flow_run_ids=list(flow_run_ids))
        deleted = 0
        for flow_run_id in flow_run_ids:
            run = self.runs.pop(flow_run_id, None)
            if run is not None:
                # The key is free again: Prefect's uniqueness lives on the deleted row.
                self._by_key.pop(run.request.idempotency_key, None)
                deleted += 1
        return deleted


__all__ = ["RecordingPrefect", "TwinRun"]
