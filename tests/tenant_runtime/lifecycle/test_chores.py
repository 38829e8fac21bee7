"""The nightly scheduler below the engine: one date-keyed operation per tenant and fire, never twice; spread over
the window; unchanged sites skipped; after an outage only the latest fire runs; backup age and its alarm."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlmodel import select

from tenant_runtime import audit, chores
from tenant_runtime.workspace import Backup, ChoreRun, Operation, Workspace, WorkspaceFactory, list_tenants
from tenant_runtime.workspace.service import set_service_status
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


def test_a_fire_queues_only_active_tenants_and_its_result_names_the_suspended_and_deleted_ones(
    workspace_factory: WorkspaceFactory,
) -> None:
    settings = workspace_factory.settings
    for slug in ("acme", "globex", "hooli", "initech"):
        workspace_factory.create(slug)
    set_service_status(settings, "globex", "suspended")
    set_service_status(settings, "hooli", "deleted")
    set_service_status(settings, "initech", "suspended")
    set_service_status(settings, "initech", "active")  # resumed: an active tenant like any other
    opened: list[str] = []

    def open_workspace(slug: str) -> Workspace:
        opened.append(slug)
        return workspace_factory.open(slug)

    now = FIRE + timedelta(seconds=5)
    result = chores.fan_out_tenants(settings, open_workspace, list_tenants(settings), BACKUP, FIRE, now)

    assert result["decisions"] == {"queued": 2, "skipped_suspended": 1, "skipped_deleted": 1}
    assert result["skipped"] == {"suspended": ["globex"], "deleted": ["hooli"]}
    assert "hooli" not in opened  # a deleted tenant's workspace is not even opened
    for slug, queued in (("acme", 1), ("globex", 0), ("initech", 1)):
        with workspace_factory.open(slug).reader() as tx:
            kinds = [o.kind for o in tx.exec(select(Operation))]
        assert kinds == ["backup"] * queued, slug
    [skip] = _runs(workspace_factory.open("globex"))
    assert skip.decision == "skipped_suspended" and skip.reason == "the tenant is suspended"
    assert skip.operation_id is None
    with workspace_factory.open("hooli").reader() as tx:
        assert list(tx.exec(select(ChoreRun))) == []

    # A double fire: the active ones exist, the suspended one's skip is recorded already, the deleted one is skipped.
    again = chores.fan_out_tenants(settings, open_workspace, list_tenants(settings), BACKUP, FIRE, now)
    assert again["decisions"] == {"exists": 3, "skipped_deleted": 1}
    assert again["skipped"] == {"suspended": [], "deleted": ["hooli"]}


def test_one_broken_workspace_is_counted_failed_and_the_others_still_fan_out(
    workspace_factory: WorkspaceFactory,
) -> None:
    settings = workspace_factory.settings
    for slug in ("acme", "globex"):
        workspace_factory.create(slug)

    def open_workspace(slug: str) -> Workspace:
        if slug == "acme":
            raise OSError("disk gone")
        return workspace_factory.open(slug)

    result = chores.fan_out_tenants(settings, open_workspace, ["acme", "globex"], BACKUP, FIRE, FIRE)
    assert result["decisions"] == {"failed": 1, "queued": 1}


def test_the_next_fire_cancels_only_an_older_fire_still_waiting_and_its_rows_read_back_whole(
    workspace: Workspace,
) -> None:
    # Night 1 queued and delivered (succeeded); night 2 queued, still waiting for its slot when night 3 fires.
    assert chores.fan_out(workspace, BACKUP, FIRE, FIRE + timedelta(seconds=1)) == chores.QUEUED
    with workspace.transaction() as tx:
        [first] = tx.exec(select(Operation))
        first.status = "succeeded"
        tx.add(first)
    second = FIRE + timedelta(days=1)
    assert chores.fan_out(workspace, BACKUP, second, second + timedelta(seconds=1)) == chores.QUEUED
    third = FIRE + timedelta(days=2)
    assert chores.fan_out(workspace, BACKUP, third, third + timedelta(seconds=1)) == chores.QUEUED

    runs = _runs(workspace)
    assert [(r.fire_date, r.decision) for r in runs] == [
        ("2026-12-01", "queued"),  # ran: left alone
        ("2026-12-02", "skipped_late"),
        ("2026-12-03", "queued"),
    ]
    assert runs[1].reason == "not started by the 2026-12-03 fire, which runs instead"
    with workspace.reader() as tx:
        statuses = {o.idempotency_key[-10:]: o.status for o in tx.exec(select(Operation))}
        [queued] = audit.entries(tx, action="chore.queued", limit=1)
        [scheduled] = audit.entries(tx, action="backup.schedule", limit=1)
        backup = tx.exec(select(Backup).where(Backup.operation_id == runs[2].operation_id)).one()
    assert statuses == {"2026-12-01": "succeeded", "2026-12-02": "cancelled", "2026-12-03": "scheduled"}
    # Written with plain INSERTs (tenant_runtime.workspace.rows): the ORM reads them back like any row.
    assert queued.object_id == "export_backup:2026-12-03" and queued.operation_id == runs[2].operation_id
    assert queued.data == {"reason": None} and queued.created_at is not None
    assert scheduled.data["due_at"].startswith("2026-12-03T03:") and scheduled.object_id == backup.id
    assert backup.reason == "nightly" and backup.status == "queued" and runs[2].due_at is not None


def test_tenants_decided_in_threads_are_counted_whole_and_named_in_their_order(
    workspace_factory: WorkspaceFactory,
) -> None:
    settings = workspace_factory.settings
    slugs = [f"t-{n:02d}" for n in range(12)]
    for n, slug in enumerate(slugs):
        workspace_factory.create(slug)
        if n % 3 == 1:
            set_service_status(settings, slug, "suspended")
    now = FIRE + timedelta(seconds=5)
    result = chores.fan_out_tenants(settings, workspace_factory.open, slugs, BACKUP, FIRE, now, threads=4)
    assert result["decisions"] == {"queued": 8, "skipped_suspended": 4}
    assert result["skipped"]["suspended"] == ["t-01", "t-04", "t-07", "t-10"]
    for slug in slugs:
        [run] = _runs(workspace_factory.open(slug))
        assert run.decision == ("skipped_suspended" if slug in result["skipped"]["suspended"] else "queued")
    # One thread decides the same (a restarted fan-out finds every tenant handled).
    again = chores.fan_out_tenants(settings, workspace_factory.open, slugs, BACKUP, FIRE, now, threads=1)
    assert again["decisions"] == {"exists": 12}


def test_a_site_changed_or_replaced_since_its_last_good_backup_is_backed_up_again(
    workspace_factory: WorkspaceFactory,
) -> None:
    edited, imported = workspace_factory.create("edited"), workspace_factory.create("imported")
    for ws in (edited, imported):
        publish(ws, "about")
        back_up(ws)
    publish(edited, "contact")  # new history after the snapshot
    with imported.transaction() as tx:  # an import after the snapshot (the history mark alone would not see it)
        tx.add(Operation(kind="import", flow_name="import_content", status="succeeded", idempotency_key="i"))
    now = datetime.now(UTC)
    fire = BACKUP.latest_fire(now)
    with edited.reader() as tx:
        assert chores.site_unchanged_since_last_backup(tx) is False
    assert chores.fan_out(edited, BACKUP, fire, now) == chores.QUEUED
    assert chores.fan_out(imported, BACKUP, fire, now) == chores.QUEUED
