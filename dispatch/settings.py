"""Settings of dispatch: where Prefect is and how delivery retries."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from tenant_runtime.actions.outbox import Coalescing


def _number(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number, got {raw!r}") from None
    if value < 0:
        raise ValueError(f"{name} must not be negative, got {raw!r}")
    return value


@dataclass(frozen=True)
class DispatchSettings:
    api_url: str = "http://127.0.0.1:4200/api"
    ui_url: str = "http://127.0.0.1:4200"
    work_pool: str = "pressroom"
    max_retries: int = 5
    retry_base_seconds: float = 5.0
    retry_cap_seconds: float = 300.0
    poll_interval: float = 0.5
    concurrency: int = 8
    sweep_interval: float = 10.0
    # A running attempt renews its lease every lease_seconds / 3; one older than
    # lease_seconds belongs to a dead worker and is rescheduled by any sweeper.
    lease_seconds: float = 30.0
    # Runs of one tenant in Pending/Running at once (the tenant queue's concurrency limit):
    # the pool query then leaves room for other tenants however long one tenant's backlog is.
    queue_concurrency: int = 4
    # On SIGTERM a worker lets running flows finish this long, then cancels them (they are
    # resumed from the cache by the next worker); below Kubernetes' default 30 s grace period.
    shutdown_grace_seconds: float = 25.0
    # Publish coalescing (tenant_runtime/actions/outbox.py): runs in flight per tenant, batch size, hold.
    coalescing: Coalescing = field(default_factory=Coalescing)

    def queue_for(self, tenant: str) -> str:
        return f"tenant-{tenant}"

    def run_url(self, flow_run_id: str | None) -> str | None:
        return f"{self.ui_url}/runs/flow-run/{flow_run_id}" if flow_run_id else None

    def backoff(self, retry: int) -> float:
        """Bounded exponential backoff for the ``retry``-th retry (1-based)."""
        return min(self.retry_cap_seconds, self.retry_base_seconds * (2 ** max(0, retry - 1)))

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> DispatchSettings:
        env = os.environ if environ is None else environ
        api_url = env.get("PREFECT_API_URL", "http://127.0.0.1:4200/api").rstrip("/")
        default_ui = api_url.removesuffix("/api")
        return cls(
            api_url=api_url,
            ui_url=env.get("PRESSROOM_PREFECT_UI_URL", default_ui).rstrip("/"),
            work_pool=env.get("PRESSROOM_WORK_POOL", "pressroom"),
            max_retries=int(_number(env, "PRESSROOM_MAX_RETRIES", 5)),
            retry_base_seconds=_number(env, "PRESSROOM_RETRY_BASE_SECONDS", 5.0),
            retry_cap_seconds=_number(env, "PRESSROOM_RETRY_CAP_SECONDS", 300.0),
            poll_interval=_number(env, "PRESSROOM_WORKER_POLL_SECONDS", 0.5),
            concurrency=max(1, int(_number(env, "PRESSROOM_WORKER_CONCURRENCY", 8))),
            sweep_interval=_number(env, "PRESSROOM_SWEEP_SECONDS", 10.0),
            lease_seconds=max(1.0, _number(env, "PRESSROOM_LEASE_SECONDS", 30.0)),
            queue_concurrency=max(1, int(_number(env, "PRESSROOM_QUEUE_CONCURRENCY", 4))),
            shutdown_grace_seconds=_number(env, "PRESSROOM_SHUTDOWN_GRACE_SECONDS", 25.0),
            coalescing=Coalescing(
                in_flight=max(1, int(_number(env, "PRESSROOM_PUBLISH_RUNS_IN_FLIGHT", 1))),
                batch_max=max(1, int(_number(env, "PRESSROOM_PUBLISH_BATCH_MAX", 50))),
                hold_seconds=_number(env, "PRESSROOM_PUBLISH_HOLD_SECONDS", 60.0),
            ),
        )
