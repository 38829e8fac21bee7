"""The nightly scheduler below the engine: one date-keyed operation per tenant and fire, never twice; spread over
the window; unchanged sites skipped; after an outage only the latest fire runs; backup age and its alarm."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlmodel import select

from tenant_runtime import chores
from tenant_runtime.workspace import ChoreRun, Operation, Workspace
from tests.tenant_runtime.content import publish
from tests.tenant_runtime.lifecycle.helpers import back_up

BACKUP = chores.CHORES["export_backup"]
FIRE = datetime(2026, 12, 1, 3, 0, tzinfo=UTC)


def _runs(ws: Workspace) -> list[ChoreRun]:
    with ws.reader() as tx:
        return list(tx.exec(select(ChoreRun).order_by(ChoreRun.fire_date)))


def test_a_fire_queues_one_keyed_operation_at_the_tenants_slot_and_a_double_fire_nothing(workspace: Workspace) -> None:
    assert chores.fan_out(workspace, BACKUP, FIRE, FIRE + timedelta(seconds=5)) == chores.QUEUED
    assert chores.fan_out(workspace, BACKUP, FIRE, FIRE + timedelta(seconds=9)) == chores.EXISTS

    [run] = _runs(workspace)
    with workspace.reader() as tx:
        [operation] = list(tx.exec(select(Operation).where(Operation.kind == "backup")))
    assert operation.idempotency_key == f"export_backup:{workspace.tenant}:2026-12-01"
    assert operation.status == "scheduled" and run.operation_id == operation.id
    assert operation.scheduled_for is not None
    slot = (operation.scheduled_for.replace(tzinfo=UTC) - (FIRE + timedelta(seconds=5))).total_seconds()
    assert 0 <= slot < BACKUP.window_seconds


def test_slots_spread_many_tenants_over_the_window() -> None:
    offsets = {BACKUP.offset(f"t-{n}").total_seconds() for n in range(1000)}
    assert len(offsets) > 800 and max(offsets) < BACKUP.window_seconds
    assert BACKUP.offset("acme") == BACKUP.offset("acme")  # the same slot every night


def test_a_site_unchanged_since_its_last_good_backup_is_skipped_and_the_skip_recorded(workspace: Workspace) -> None:
    publish(workspace, "about")
    back_up(workspace)
    now = datetime.now(UTC)
    fire = BACKUP.latest_fire(now)

    assert chores.fan_out(workspace, BACKUP, fire, now) == chores.SKIPPED_UNCHANGED
    assert _runs(workspace)[-1].reason == "unchanged since the last good backup"


def test_after_an_outage_only_the_latest_fire_runs_and_the_late_ones_are_recorded(workspace: Workspace) -> None:
    now = FIRE + timedelta(days=2, hours=1)  # the 1st's and 2nd's fires were missed; the 3rd's is due
    assert chores.fan_out(workspace, BACKUP, FIRE, now) == chores.SKIPPED_LATE
    assert chores.fan_out(workspace, BACKUP, FIRE + timedelta(days=1), now) == chores.SKIPPED_LATE
    assert chores.fan_out(workspace, BACKUP, FIRE + timedelta(days=2), now) == chores.QUEUED
    assert [r.decision for r in _runs(workspace)] == ["skipped_late", "skipped_late", "queued"]


def test_health_shows_the_last_good_backups_age_and_alarms_after_26_hours(workspace: Workspace) -> None:
    publish(workspace, "about")
    back_up(workspace)
    now = datetime.now(UTC)
    with workspace.reader() as tx:
        fresh = chores.health(tx, workspace.tenant, now)
        stale = chores.health(tx, workspace.tenant, now + timedelta(hours=27))
    assert fresh["alarm"] is False and fresh["last_good_backup_age_seconds"] < 60
    assert stale["alarm"] is True and stale["last_good_backup_age_seconds"] > 26 * 3600
    assert stale["chores"]["export_backup"]["lateness_seconds"] > 0  # the night's backup is due and not done
