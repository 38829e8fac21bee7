"""Retention of finished flow runs in Prefect: each run is deleted once it is older than its outcome's retention.

    outcome      run state types          default   setting
    succeeded    COMPLETED                7 days    PRESSROOM_RETENTION_SUCCEEDED_DAYS
    failed       FAILED, CRASHED          30 days   PRESSROOM_RETENTION_FAILED_DAYS
    cancelled    CANCELLED                30 days   PRESSROOM_RETENTION_CANCELLED_DAYS

A tenant may override any of them (``tenant.retention_*_days`` in the
control-plane database, set by ``PATCH /ops/tenants/{slug}/retention``). A run's
tenant is its ``tenant:`` tag; a run without one (a platform run, a benchmark
run) keeps the defaults. Age is measured from the run's end time.

Only the run in Prefect goes: its task runs and states with it (Prefect cascades
them) and its logs (the delete queues their removal). The operation row and its
attempts stay in the tenant's workspace, so an operation's history outlives its
run; ``runs describe`` then says Prefect no longer knows the run. Runs that are
not finished (scheduled, late, running, paused, suspended) are never touched,
and a run set back to Scheduled for a retry has no end time again.

``prune_finished_runs`` makes one paged query per state type over the pool,
for runs older than the shortest retention any tenant has for that outcome, and
deletes those past their own tenant's: the cost grows with the runs to delete,
not with the number of tenants.

Who prunes, and why there: the control plane, hourly in the background
(``control_plane/app.py``), and ``pressroom runs prune [--dry-run]`` on demand.
The control plane already holds what the decision needs: the overrides (its
own database) and a Prefect client. Not Prefect's own ``db_vacuum`` of flow
runs: it has one retention for every run of the server, by end time, none per
outcome or per tenant (it remains a safe backstop if an operator enables it
with a longer period). Not a platform flow run: it would be one more run to
keep and prune, take a worker's slot, and need the control-plane database in
the runtime. Several control planes pruning at once is harmless: each pass reads
fresh state, deleting a run already deleted deletes nothing (Prefect's bulk
delete answers only the ids it removed), and their hours are jittered apart.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from dispatch.prefect_port import FinishedRun, PrefectPort

Outcome = Literal["succeeded", "failed", "cancelled"]
OUTCOME_OF_STATE: dict[str, Outcome] = {
    "COMPLETED": "succeeded",
    "FAILED": "failed",
    "CRASHED": "failed",
    "CANCELLED": "cancelled",
}
MAX_DAYS = 3650
PAGE = 200


class RetentionPolicy(BaseModel):
    """Days a finished run stays in Prefect, per outcome."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    succeeded_days: int = Field(7, ge=1, le=MAX_DAYS)
    failed_days: int = Field(30, ge=1, le=MAX_DAYS)
    cancelled_days: int = Field(30, ge=1, le=MAX_DAYS)

    def days(self, outcome: Outcome) -> int:
        return int(getattr(self, f"{outcome}_days"))

    def keep_for(self, state_type: str) -> timedelta:
        """How long a run that ended in ``state_type`` is kept."""
        return timedelta(days=self.days(OUTCOME_OF_STATE[state_type]))

    def with_overrides(self, override: RetentionOverride | None) -> RetentionPolicy:
        """This policy with a tenant's own values in place of the defaults it overrides."""
        if override is None:
            return self
        return self.model_copy(update=override.model_dump(exclude_none=True))


class RetentionOverride(BaseModel):
    """A tenant's own retention, per outcome; None keeps the default."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    succeeded_days: int | None = Field(None, ge=1, le=MAX_DAYS)
    failed_days: int | None = Field(None, ge=1, le=MAX_DAYS)
    cancelled_days: int | None = Field(None, ge=1, le=MAX_DAYS)

    @property
    def empty(self) -> bool:
        return not self.model_dump(exclude_none=True)


@dataclass
class PruneReport:
    """What one pass found and did (``dry_run``: what it would have deleted)."""

    now: datetime
    dry_run: bool
    examined: int = 0
    deleted: int = 0
    kept: int = 0  # older than the shortest retention, but within their own tenant's
    queries: int = 0
    by_state: Counter[str] = field(default_factory=Counter)
    by_tenant: Counter[str] = field(default_factory=Counter)  # "" for runs without a tenant tag
    seconds: float = 0.0

    def summary(self) -> dict[str, Any]:
        """For the structured log line and the CLI."""
        return {
            "now": self.now.isoformat(),
            "dry_run": self.dry_run,
            "examined": self.examined,
            "deleted": self.deleted,
            "kept": self.kept,
            "queries": self.queries,
            "by_state": dict(self.by_state),
            "tenants": len(self.by_tenant),
            "seconds": round(self.seconds, 3),
        }


def shortest(policy: RetentionPolicy, overrides: Mapping[str, RetentionOverride], state_type: str) -> timedelta:
    """The shortest retention any run in ``state_type`` can have: the default's or a tenant's."""
    kept = [policy.keep_for(state_type)]
    kept += [policy.with_overrides(o).keep_for(state_type) for o in overrides.values()]
    return min(kept)


async def prune_finished_runs(
    prefect: PrefectPort,
    policy: RetentionPolicy,
    overrides: Mapping[str, RetentionOverride],
    now: datetime,
    *,
    dry_run: bool = False,
    page_size: int = PAGE,
    progress: Callable[[PruneReport], None] | None = None,
) -> PruneReport:
    """Delete the pool's finished runs that are past their tenant's retention at ``now``.

    Pages newest-ended first; a page's deletions shift the runs after it forward,
    so the next page starts after only the runs this pass kept.
    """
    started = time.monotonic()
    report = PruneReport(now=now, dry_run=dry_run)
    for state_type in OUTCOME_OF_STATE:
        cutoff = now - shortest(policy, overrides, state_type)
        offset = 0
        while True:
            page = await prefect.finished_runs(state_type, ended_before=cutoff, limit=page_size, offset=offset)
            report.queries += 1
            report.examined += len(page)
            doomed = [run for run in page if _past_retention(run, policy, overrides, now)]
            report.kept += len(page) - len(doomed)
            if doomed and not dry_run:
                report.deleted += await prefect.delete_runs([run.id for run in doomed])
            elif dry_run:
                report.deleted += len(doomed)
            for run in doomed:
                report.by_state[state_type] += 1
                report.by_tenant[run.tenant or ""] += 1
            offset += len(page) if dry_run else len(page) - len(doomed)
            if progress is not None:
                progress(report)
            if len(page) < page_size:
                break
    report.seconds = time.monotonic() - started
    return report


def _past_retention(
    run: FinishedRun, policy: RetentionPolicy, overrides: Mapping[str, RetentionOverride], now: datetime
) -> bool:
    override = overrides.get(run.tenant) if run.tenant else None
    return run.end_time < now - policy.with_overrides(override).keep_for(run.state_type)


__all__ = [
    "OUTCOME_OF_STATE",
    "PruneReport",
    "RetentionOverride",
    "RetentionPolicy",
    "prune_finished_runs",
    "shortest",
]
