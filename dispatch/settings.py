"""Settings of dispatch: where Prefect is, how runs are polled and leased, how delivery retries and coalesces."""

from __future__ import annotations

from pydantic import Field, SecretStr, model_validator

from dispatch.retention import MAX_DAYS, RetentionPolicy
from tenant_runtime.actions.outbox import Coalescing
from tenant_runtime.config import PressroomSettings


class DispatchSettings(PressroomSettings):
    api_url: str = Field("http://127.0.0.1:4200/api", validation_alias="PREFECT_API_URL")
    # The Prefect UI operations link to; None: the API URL without /api.
    ui_url: str | None = Field(None, validation_alias="PRESSROOM_PREFECT_UI_URL")
    work_pool: str = Field("pressroom", min_length=1, max_length=100)
    # Where runs for the platform itself (nightly fan-outs) wait; a worker with ``platform`` runs them.
    platform_queue: str = Field("platform", min_length=1, max_length=100)
    max_retries: int = Field(5, ge=0, le=100)
    retry_base_seconds: float = Field(5.0, ge=0)
    retry_cap_seconds: float = Field(300.0, ge=0)
    poll_interval: float = Field(0.5, gt=0, le=60, validation_alias="PRESSROOM_WORKER_POLL_SECONDS")
    concurrency: int = Field(8, ge=1, le=1000, validation_alias="PRESSROOM_WORKER_CONCURRENCY")
    # The relay rings the workers' doorbell when it has sent runs, so a worker picks them up at once and
    # polls only as a fallback (dispatch/doorbell.py); 0 turns both off (a worker then only polls).
    worker_push: bool = Field(True, validation_alias="PRESSROOM_WORKER_PUSH")
    sweep_interval: float = Field(10.0, ge=0, validation_alias="PRESSROOM_SWEEP_SECONDS")
    # How often a worker asks Prefect whether someone cancelled one of its running runs (Cancelling).
    control_poll_seconds: float = Field(2.0, gt=0, le=60, validation_alias="PRESSROOM_CONTROL_POLL_SECONDS")
    # A running attempt renews its lease every lease_seconds / 3; one older than
    # lease_seconds belongs to a dead worker and is rescheduled by any sweeper.
    lease_seconds: float = Field(30.0, ge=1)
    # Runs of one tenant in Pending/Running at once (the tenant queue's concurrency limit):
    # the pool query then leaves room for other tenants however long one tenant's backlog is.
    queue_concurrency: int = Field(4, ge=1, le=1000)
    # On SIGTERM a worker lets running flows finish this long, then cancels them (they are
    # resumed from the cache by the next worker); below Kubernetes' default 30 s grace period.
    shutdown_grace_seconds: float = Field(25.0, ge=0)
    # Publish coalescing (tenant_runtime/actions/outbox.py): runs in flight per tenant, batch size, hold.
    publish_runs_in_flight: int = Field(1, ge=1, le=100)
    publish_batch_max: int = Field(50, ge=1, le=1000)
    publish_hold_seconds: float = Field(60.0, ge=0)
    # Finished runs stay in Prefect this many days per outcome (dispatch/retention.py; tenants may
    # override); the control plane prunes every retention_prune_seconds (0: only `pressroom runs prune`).
    retention_succeeded_days: int = Field(7, ge=1, le=MAX_DAYS)
    retention_failed_days: int = Field(30, ge=1, le=MAX_DAYS)
    retention_cancelled_days: int = Field(30, ge=1, le=MAX_DAYS)
    retention_prune_seconds: float = Field(3600.0, ge=0)

    @model_validator(mode="after")
    def _derived(self) -> DispatchSettings:
        object.__setattr__(self, "api_url", self.api_url.rstrip("/"))
        ui = self.ui_url if self.ui_url is not None else self.api_url.removesuffix("/api")
        object.__setattr__(self, "ui_url", ui.rstrip("/"))
        return self

    @property
    def coalescing(self) -> Coalescing:
        return Coalescing(
            in_flight=self.publish_runs_in_flight,
            batch_max=self.publish_batch_max,
            hold_seconds=self.publish_hold_seconds,
        )

    @property
    def retention(self) -> RetentionPolicy:
        return RetentionPolicy(
            succeeded_days=self.retention_succeeded_days,
            failed_days=self.retention_failed_days,
            cancelled_days=self.retention_cancelled_days,
        )

    def queue_for(self, tenant: str) -> str:
        return f"tenant-{tenant}"

    def tenant_of_queue(self, queue: str | None) -> str | None:
        """The tenant whose queue ``queue`` is (None: not a tenant's queue)."""
        if not queue or not queue.startswith("tenant-"):
            return None
        return queue.removeprefix("tenant-") or None

    def run_url(self, flow_run_id: str | None) -> str | None:
        return f"{self.ui_url}/runs/flow-run/{flow_run_id}" if flow_run_id else None

    def backoff(self, retry: int) -> float:
        """Bounded exponential backoff for the ``retry``-th retry (1-based)."""
        return float(min(self.retry_cap_seconds, self.retry_base_seconds * (2 ** max(0, retry - 1))))


class ShardRuntimeSettings(PressroomSettings):
    """``pressroom runtime --shard NAME``: where its internal API listens and the one credential it accepts."""

    runtime_host: str = "127.0.0.1"
    runtime_port: int = Field(8100, gt=0, lt=65536)
    # The shard's bearer secret; the control plane holds the same one in PRESSROOM_SHARDS.
    runtime_secret: SecretStr | None = None
    # Whether this runtime also runs platform runs (nightly fan-outs); one runtime of the install should.
    runtime_platform: bool = False


__all__ = ["DispatchSettings", "ShardRuntimeSettings"]
