"""The seam between Pressroom and Prefect: what the control plane, the relay and the worker ask of it.

``PrefectGateway`` (``dispatch/prefect_gateway.py``) is the adapter over
Prefect's client; ``RecordingPrefect`` (``dispatch/prefect_twin.py``) is the
in-memory twin unit tests use instead of a server. Nothing else in Pressroom
talks to the Prefect API, and no Prefect type crosses this seam but the
``FlowRun`` the worker hands to Prefect's own engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

from tenant_runtime.errors import Unavailable
from tenant_runtime.workflows import RunParameters, Workflow, run_parameters


class PrefectUnavailable(Unavailable):
    """The Prefect API did not answer (or refused); nothing was changed by the call."""

    code = "prefect_unavailable"


class RunState(StrEnum):
    """The run states Pressroom sets."""

    SCHEDULED = "SCHEDULED"
    PENDING = "PENDING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"
    CANCELLING = "CANCELLING"  # a cancel asked of a running run: the worker stops it, then Cancelled
    PAUSED = "PAUSED"  # Suspended (no timeout): holds no worker; a resume sets it Scheduled


# The pause key of a suspension Pressroom asks for (a wait's own keys start with ``wait:``).
PAUSE_KEY_PREFIX = "pause:"


@dataclass(frozen=True)
class RunRequest:
    """A flow run to create on a tenant's queue (or find, by its idempotency key)."""

    tenant: str
    workflow: Workflow
    parameters: RunParameters
    idempotency_key: str
    tags: tuple[str, ...]
    scheduled_time: datetime

    @property
    def run_parameters(self) -> dict[str, Any]:
        return run_parameters(self.parameters)


@dataclass(frozen=True)
class CreatedRun:
    """The run Prefect holds for a request's key: ``parameters`` are the run's, maybe another request's."""

    id: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class RunInfo:
    """What Pressroom shows of a flow run."""

    id: str
    name: str
    state_type: str  # SCHEDULED, PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, CRASHED, PAUSED, …
    state_name: str  # Scheduled, Late, AwaitingRetry, Running, Suspended, …
    state_message: str | None
    work_queue_name: str | None
    tags: tuple[str, ...]
    parameters: dict[str, Any] = field(default_factory=dict)
    expected_start_time: datetime | None = None
    start_time: datetime | None = None
    end_time: datetime | None = None
    total_run_time_seconds: float = 0.0


@dataclass(frozen=True)
class StepRun:
    """One task run of a flow run, as describe shows it."""

    flow_run_id: str
    name: str  # the task's name: the step
    state_type: str  # PENDING, RUNNING, COMPLETED, FAILED, CRASHED, …
    state_name: str  # Completed, Cached, AwaitingRetry, Retrying, Failed, …
    message: str | None
    run_count: int
    start_time: datetime | None
    end_time: datetime | None
    duration_seconds: float
    created: datetime | None = None


@dataclass(frozen=True)
class StateChange:
    """One state a flow run went through."""

    flow_run_id: str
    state_type: str
    state_name: str
    message: str | None
    at: datetime


@dataclass(frozen=True)
class FinishedRun:
    """A run in a final state, as retention sees it (``dispatch/retention.py``)."""

    id: str
    state_type: str  # COMPLETED, FAILED, CRASHED or CANCELLED
    end_time: datetime
    tags: tuple[str, ...] = ()

    @property
    def tenant(self) -> str | None:
        """The tenant its ``tenant:`` tag names (None: a platform or other run)."""
        return next((tag.removeprefix("tenant:") for tag in self.tags if tag.startswith("tenant:")), None)


@dataclass(frozen=True)
class QueueInfo:
    name: str
    exists: bool
    paused: bool | None = None
    concurrency_limit: int | None = None


class PrefectPort(Protocol):
    """Everything Pressroom asks of Prefect's API (the worker's engine calls aside)."""

    async def ensure_deployments(self) -> None:
        """Register a deployment per built workflow in the work pool (idempotent)."""

    async def ensure_queue(self, tenant: str, *, paused: bool | None = None) -> None:
        """The tenant's work queue exists with its concurrency limit (and pause state, if given)."""

    async def ensure_queues(self, tenants: Sequence[str]) -> int:
        """Every tenant's queue; returns how many had to be created or changed."""

    async def queue(self, tenant: str) -> QueueInfo:
        """The tenant's queue as Prefect holds it."""

    async def create_run(self, request: RunRequest) -> CreatedRun:
        """Create the run on the tenant's queue, or return the run its idempotency key already names."""

    async def reschedule(self, flow_run_id: str, when: datetime) -> None:
        """Set an existing run back to Scheduled at ``when`` (a retry, or a lost worker's run)."""

    async def read_run(self, flow_run_id: str) -> RunInfo | None:
        """The run, or None if Prefect does not know it."""

    async def set_state(
        self, flow_run_id: str, state: RunState, *, message: str | None = None, force: bool = False
    ) -> bool:
        """Propose ``state``; whether Prefect accepted it."""

    async def suspend(self, flow_run_id: str, *, force: bool = False) -> bool:
        """Suspend the run (no timeout); unforced only a Running run can be: it stops at its next step."""

    async def resume(self, flow_run_id: str) -> bool:
        """A suspended run goes back to Scheduled now (to re-run with its completed steps cached)."""

    async def run_states(self, flow_run_ids: Sequence[str]) -> dict[str, str]:
        """The state type of each of these runs Prefect knows."""

    async def step_runs(self, flow_run_ids: Sequence[str]) -> list[StepRun]:
        """The task runs of these flow runs, oldest first."""

    async def state_history(self, flow_run_id: str) -> list[StateChange]:
        """The states the run went through, oldest first."""

    async def late_runs(self, tenant: str) -> tuple[int, float]:
        """How many of the tenant's runs are Late, and by how many seconds the oldest is."""

    async def late_by_tenant(self, limit: int) -> dict[str, tuple[int, float]]:
        """Late runs of the whole pool by tenant (count, seconds the oldest is late), from at most ``limit`` runs."""

    async def close(self) -> None:
        """Release the client."""

    async def finished_runs(
        self, state_type: str, *, ended_before: datetime, limit: int, offset: int = 0
    ) -> list[FinishedRun]:
        """The pool's runs in final ``state_type`` that ended before ``ended_before``, latest end first."""

    async def delete_runs(self, flow_run_ids: Sequence[str]) -> int:
        """Delete these runs with their task runs and logs; how many were there to delete."""


__all__ = [
    "PAUSE_KEY_PREFIX",
    "CreatedRun",
    "FinishedRun",
    "PrefectPort",
    "PrefectUnavailable",
    "QueueInfo",
    "RunInfo",
    "RunRequest",
    "RunState",
    "StateChange",
    "StepRun",
]
