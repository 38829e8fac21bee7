"""Retention of finished runs against the recording twin: ages, states, overrides, runs of no tenant, paging."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from dispatch.prefect_port import RunRequest, RunState
from dispatch.prefect_twin import RecordingPrefect
from dispatch.retention import (
    PruneReport,
    RetentionOverride,
    RetentionPolicy,
    prune_finished_runs,
    shortest,
)
from dispatch.settings import DispatchSettings
from tenant_runtime.config import SettingsError
from tenant_runtime.workflows import SeedExampleSiteParameters, Workflow

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
DEFAULTS = RetentionPolicy()


def _run(prefect: RecordingPrefect, tenant: str | None, state: str, age_days: float, key: str = "") -> str:
    """A run of ``tenant`` (None: no tenant tag) that ended ``age_days`` before NOW in ``state``."""
    n = len(prefect.runs)
    request = RunRequest(
        tenant=tenant or "platform",
        workflow=Workflow.SEED_EXAMPLE_SITE,
        parameters=SeedExampleSiteParameters(tenant=tenant or "platform", operation_id=f"op_{n}"),
        idempotency_key=key or f"seed:{tenant}:{n}",
        tags=(f"tenant:{tenant}", f"op:op_{n}") if tenant else ("kind:platform",),
        scheduled_time=NOW - timedelta(days=age_days, hours=1),
    )
    run_id = asyncio.run(prefect.create_run(request)).id
    if state != "SCHEDULED":
        prefect.finish(run_id, state, NOW - timedelta(days=age_days))
    return run_id


def _prune(
    prefect: RecordingPrefect,
    overrides: dict[str, RetentionOverride] | None = None,
    *,
    now: datetime = NOW,
    dry_run: bool = False,
    page_size: int = 200,
) -> PruneReport:
    return asyncio.run(
        prune_finished_runs(prefect, DEFAULTS, overrides or {}, now, dry_run=dry_run, page_size=page_size)
    )


def test_each_outcome_is_kept_for_its_own_days() -> None:
    prefect = RecordingPrefect()
    gone = {
        _run(prefect, "acme", "COMPLETED", 7.01),
        _run(prefect, "acme", "FAILED", 30.5),
        _run(prefect, "acme", "CRASHED", 31),
        _run(prefect, "acme", "CANCELLED", 45),
    }
    kept = {
        _run(prefect, "acme", "COMPLETED", 6.9),
        _run(prefect, "acme", "FAILED", 29),
        _run(prefect, "acme", "CRASHED", 8),
        _run(prefect, "acme", "CANCELLED", 8),
    }

    report = _prune(prefect)

    assert set(prefect.runs) == kept and not gone & set(prefect.runs)
    assert report.deleted == 4 and report.kept == 0
    assert dict(report.by_state) == {"COMPLETED": 1, "FAILED": 1, "CRASHED": 1, "CANCELLED": 1}
    assert report.by_tenant == {"acme": 4}


def test_unfinished_runs_are_never_touched_however_old() -> None:
    prefect = RecordingPrefect()
    scheduled = _run(prefect, "acme", "SCHEDULED", 400)
    running = _run(prefect, "acme", "SCHEDULED", 400)
    prefect.runs[running].state = RunState.PENDING
    # A failed run set back to Scheduled for its retry has no end time any more.
    retried = _run(prefect, "acme", "FAILED", 400)
    asyncio.run(prefect.reschedule(retried, NOW))

    report = _prune(prefect)

    assert {scheduled, running, retried} <= set(prefect.runs) and report.deleted == 0


def test_a_tenants_override_shortens_or_lengthens_only_its_own_runs() -> None:
    prefect = RecordingPrefect()
    quick_old = _run(prefect, "quick", "COMPLETED", 2)
    quick_new = _run(prefect, "quick", "COMPLETED", 0.5)
    slow_old = _run(prefect, "slow", "COMPLETED", 20)
    slow_failed = _run(prefect, "slow", "FAILED", 31)  # slow overrides only succeeded runs
    acme_two_days = _run(prefect, "acme", "COMPLETED", 2)
    acme_old = _run(prefect, "acme", "COMPLETED", 8)
    overrides = {
        "quick": RetentionOverride(succeeded_days=1),
        "slow": RetentionOverride(succeeded_days=90),
    }

    report = _prune(prefect, overrides)

    assert set(prefect.runs) == {quick_new, slow_old, acme_two_days}
    assert {quick_old, slow_failed, acme_old}.isdisjoint(prefect.runs)
    # The query for COMPLETED reached back to the shortest retention (1 day): slow's and acme's
    # younger runs were read and kept.
    assert report.kept == 2 and report.by_tenant == {"quick": 1, "slow": 1, "acme": 1}


def test_runs_without_a_tenant_tag_keep_the_defaults_whatever_tenants_override() -> None:
    prefect = RecordingPrefect()
    platform_old = _run(prefect, None, "COMPLETED", 8)
    platform_new = _run(prefect, None, "COMPLETED", 2)

    report = _prune(prefect, {"quick": RetentionOverride(succeeded_days=1)})

    assert platform_old not in prefect.runs and platform_new in prefect.runs
    assert report.by_tenant == {"": 1}


def test_one_query_per_state_type_however_many_tenants() -> None:
    prefect = RecordingPrefect()
    for n in range(60):
        _run(prefect, f"t{n}", "COMPLETED", 10)
    overrides = {f"t{n}": RetentionOverride(succeeded_days=1 + n % 5) for n in range(0, 60, 2)}

    report = _prune(prefect, overrides)

    assert report.deleted == 60 and report.queries == 4
    assert len(prefect.called("finished_runs")) == 4 and len(prefect.called("delete_runs")) == 1


def test_paging_reaches_every_run_past_retention_and_skips_only_the_kept() -> None:
    prefect = RecordingPrefect()
    doomed = {_run(prefect, "acme", "COMPLETED", 8 + n / 100) for n in range(230)}
    # Kept by their tenant's 60 days, but read by the query: interleaved in age with acme's.
    kept = {_run(prefect, "slow", "COMPLETED", 8 + n / 100 + 0.005) for n in range(70)}

    report = _prune(
        prefect,
        {"slow": RetentionOverride(succeeded_days=60), "quick": RetentionOverride(succeeded_days=1)},
        page_size=50,
    )

    assert set(prefect.runs) == kept and doomed.isdisjoint(prefect.runs)
    assert report.deleted == 230 and report.kept == 70 and report.examined == 300
    offsets = [call["offset"] for call in prefect.called("finished_runs") if call["state_type"] == "COMPLETED"]
    assert offsets[0] == 0 and offsets == sorted(offsets) and offsets[-1] <= 70


def test_a_dry_run_counts_what_would_go_and_deletes_nothing() -> None:
    prefect = RecordingPrefect()
    runs = [_run(prefect, "acme", "COMPLETED", 8 + n) for n in range(5)] + [_run(prefect, "acme", "FAILED", 1)]

    report = _prune(prefect, dry_run=True, page_size=2)

    assert set(prefect.runs) == set(runs) and not prefect.called("delete_runs")
    assert report.dry_run and report.deleted == 5 and report.examined == 5


def test_a_deleted_run_frees_its_idempotency_key_as_prefect_does() -> None:
    prefect = RecordingPrefect()
    first = _run(prefect, "acme", "COMPLETED", 8, key="publish:op_1")

    _prune(prefect)
    second = _run(prefect, "acme", "SCHEDULED", 0, key="publish:op_1")

    assert second != first and prefect.run_for("publish:op_1") is prefect.runs[second]


def test_deleting_runs_that_are_already_gone_counts_nothing() -> None:
    prefect = RecordingPrefect()
    run = _run(prefect, "acme", "COMPLETED", 8)

    assert asyncio.run(prefect.delete_runs([run, run, "run-404"])) == 1


def test_the_twin_gives_a_run_entering_a_final_state_an_end_time_and_leaving_clears_it() -> None:
    prefect = RecordingPrefect(clock=lambda: NOW)
    run = _run(prefect, "acme", "SCHEDULED", 0)

    asyncio.run(prefect.set_state(run, RunState.COMPLETED))
    assert prefect.runs[run].end_time == NOW
    asyncio.run(prefect.set_state(run, RunState.SCHEDULED, force=True))
    assert prefect.runs[run].end_time is None


def test_the_policy_takes_a_tenants_days_over_the_defaults() -> None:
    override = RetentionOverride(failed_days=90)
    merged = DEFAULTS.with_overrides(override)

    assert (merged.succeeded_days, merged.failed_days, merged.cancelled_days) == (7, 90, 30)
    assert merged.keep_for("CRASHED") == timedelta(days=90)
    assert DEFAULTS.with_overrides(None) is DEFAULTS and RetentionOverride().empty
    assert shortest(DEFAULTS, {"a": RetentionOverride(succeeded_days=2)}, "COMPLETED") == timedelta(days=2)
    assert shortest(DEFAULTS, {"a": RetentionOverride(succeeded_days=2)}, "FAILED") == timedelta(days=30)
    with pytest.raises(ValidationError):
        RetentionOverride(succeeded_days=0)


def test_defaults_come_from_settings_validated_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRESSROOM_RETENTION_SUCCEEDED_DAYS", "3")
    monkeypatch.setenv("PRESSROOM_RETENTION_CANCELLED_DAYS", "60")
    assert DispatchSettings.from_env().retention == RetentionPolicy(succeeded_days=3, cancelled_days=60)

    monkeypatch.setenv("PRESSROOM_RETENTION_FAILED_DAYS", "0")
    with pytest.raises(SettingsError, match="PRESSROOM_RETENTION_FAILED_DAYS"):
        DispatchSettings.from_env()
