"""Describe and timeline: an operation's own record joined with what Prefect knows of its runs.

Steps: every step the workflow declares (``WorkflowSpec.steps``, in run order), each
joined with Prefect's task runs of that name across the operation's flow runs (a
restart is a new flow run): status from the latest task run, attempts summed over
all of them, error, first start and total duration. A step with no task run is
``pending`` while the operation can still run, ``skipped`` once it has settled.

Timeline: the operation's record (committed, audit entries, attempts, waits, events)
with its runs' state changes (created, scheduled, running, retried, paused, …), in
time order. When Prefect does not answer, both degrade to the record alone.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from datetime import datetime

from dispatch.prefect_port import PrefectPort, PrefectUnavailable, StepRun
from dispatch.runtime.views import OperationOut, OperationRecord, StepOut, TimelineEntry
from tenant_runtime.ids import as_utc
from tenant_runtime.operation_states import settled
from tenant_runtime.workflows import spec

PREFECT_TIMEOUT = 5.0


def step_status(run: StepRun) -> str:
    """Prefect's task-run state as a step status."""
    name = run.state_name.lower()
    if run.state_type == "COMPLETED":
        return "cached" if name == "cached" else "completed"
    if run.state_type == "RUNNING":
        return "retrying" if name == "retrying" else "running"
    if run.state_type in ("FAILED", "CRASHED"):
        return "failed"
    if run.state_type == "SCHEDULED" and name == "awaitingretry":
        return "retrying"
    if run.state_type == "CANCELLED":
        return "failed"
    return "pending"


def join_steps(operation: OperationOut, runs: list[StepRun]) -> list[StepOut]:
    """The declared steps (then any other task run) with what Prefect ran of each."""
    try:
        declared = spec(operation.workflow or "").steps
    except (KeyError, ValueError):
        declared = ()
    by_name: dict[str, list[StepRun]] = defaultdict(list)
    order: list[str] = list(declared)
    for run in runs:
        by_name[run.name].append(run)
        if run.name not in order:
            order.append(run.name)
    done = settled(operation.status, operation.next_attempt_at)
    steps = []
    for name in order:
        ran = by_name.get(name)
        if not ran:
            steps.append(StepOut(name, "skipped" if done else "pending", 0, None, None, None))
            continue
        latest = ran[-1]
        status = step_status(latest)
        started = [r.start_time for r in ran if r.start_time is not None]
        steps.append(
            StepOut(
                name=name,
                status=status,
                attempts=sum(max(r.run_count, 0) for r in ran),
                error=latest.message if status in ("failed", "retrying") else None,
                started_at=as_utc(min(started)) if started else None,
                duration_ms=round(sum(r.duration_seconds for r in ran) * 1000) if started else None,
            )
        )
    return steps


def _runs_of(operation: OperationOut) -> list[str]:
    runs = list(operation.flow_run_ids)
    if operation.flow_run_id and operation.flow_run_id not in runs:
        runs.append(operation.flow_run_id)
    return runs


async def describe(prefect: PrefectPort, operation: OperationOut) -> tuple[OperationOut, bool]:
    """The operation with its steps; False as the second value when Prefect did not answer."""
    runs = _runs_of(operation)
    try:
        task_runs = await asyncio.wait_for(prefect.step_runs(runs), timeout=PREFECT_TIMEOUT) if runs else []
    except (TimeoutError, PrefectUnavailable):
        operation.steps = join_steps(operation, [])
        return operation, False
    operation.steps = join_steps(operation, task_runs)
    return operation, True


async def timeline(prefect: PrefectPort, record: OperationRecord) -> tuple[list[TimelineEntry], bool]:
    """The record's entries and its runs' state changes and finished steps, oldest first."""
    entries = list(record.entries)
    answered = True
    try:
        for run_id in record.flow_run_ids:
            for change in await asyncio.wait_for(prefect.state_history(run_id), timeout=PREFECT_TIMEOUT):
                entries.append(
                    TimelineEntry(
                        as_utc(change.at),
                        "engine",
                        f"run_{change.state_name.lower() or change.state_type.lower()}",
                        {"flow_run_id": run_id, "state": change.state_type, "message": change.message},
                    )
                )
        task_runs = await asyncio.wait_for(prefect.step_runs(record.flow_run_ids), timeout=PREFECT_TIMEOUT)
        for run in task_runs:
            if run.end_time is None:
                continue
            entries.append(
                TimelineEntry(
                    as_utc(run.end_time),
                    "engine",
                    f"step_{step_status(run)}",
                    {"step": run.name, "attempts": run.run_count, "flow_run_id": run.flow_run_id},
                )
            )
    except (TimeoutError, PrefectUnavailable):
        answered = False
    entries.sort(key=lambda entry: _key(entry.at))
    return entries, answered


def _key(at: datetime) -> datetime:
    return as_utc(at)


__all__ = ["describe", "join_steps", "step_status", "timeline"]
