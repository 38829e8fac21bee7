"""Nightly chores per tenant: when each fires, which tenants it queues, skips and why, and how late a tenant is.

A chore (``CHORES``) has a cron schedule in UTC and a window. One platform run
per fire (``flows/chores.py``, on its own deployment) calls ``fan_out`` for
every tenant; for each it decides, in one transaction of that tenant:

- ``exists``: this fire was handled already (a double fire, a restarted fan-out): nothing twice;
- ``skipped_suspended``: the tenant is suspended (``tenant_runtime.workspace.service``): recorded, nothing queued;
  a deleted tenant is ``skipped_deleted`` without its workspace being opened at all (``fan_out_tenants``);
- ``skipped_late``: a newer fire is already due (the runs of an outage): only the latest fire runs,
  the skipped ones are recorded;
- ``skipped_unchanged``: the chore has nothing to do (a backup of a site unchanged since its last good backup);
- ``queued``: an operation for ``{chore}:{tenant}:{date}``, scheduled at the tenant's slot in the window
  (a stable hash of chore and tenant, so 10,000 tenants do not all start in the same second); an older
  fire of the chore still waiting for its slot is cancelled (skipped_late): the newest runs instead.

``fan_out_tenants`` runs a batch of tenants (the fan-out flow's step, and the
benchmark's), counting each decision and naming the tenants skipped for their
status. ``health`` says per tenant what the last fire did, how late its chore is, and
(for backups) the age of the last good backup and whether it alarms (26 h).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import structlog
from cronsim import CronSim
from sqlalchemy import Row, and_, bindparam, exists, func, or_, update
from sqlmodel import Session, col, select

from tenant_runtime import audit
from tenant_runtime.actions.backups import IMPORT_KIND, RESTORE_KIND, schedule_backup
from tenant_runtime.actions.media import schedule_sweep
from tenant_runtime.actions.retention import schedule_prune
from tenant_runtime.errors import NotFound
from tenant_runtime.ids import as_utc, utcnow
from tenant_runtime.lifecycle.catalog import SUCCEEDED, last_good_backup
from tenant_runtime.lifecycle.restore import history_start
from tenant_runtime.operation_states import CANCELLED, SCHEDULED, check_transition, settled
from tenant_runtime.settings import RuntimeSettings
from tenant_runtime.workspace import AuditEntry, Backup, ChoreRun, EntityHistory, Operation, Workspace
from tenant_runtime.workspace.rows import insert_values, row_values, table_of
from tenant_runtime.workspace.service import ACTIVE, DELETED, SUSPENDED, service_status

QUEUED, SKIPPED_LATE, SKIPPED_UNCHANGED, EXISTS = "queued", "skipped_late", "skipped_unchanged", "exists"
SKIPPED_SUSPENDED, SKIPPED_DELETED, FAILED = "skipped_suspended", "skipped_deleted", "failed"
# How many tenants a fan-out's result names per skip (the counts are always whole; the result stays small).
NAMED_SKIPS = 100
# How many tenants ``fan_out_tenants`` decides at once (threads; see there).
FAN_OUT_THREADS = 4
log = structlog.get_logger("pressroom.chores")
BACKUP_ALARM = timedelta(hours=26)


@dataclass(frozen=True)
class Chore:
    """A nightly chore: its schedule, its window, and what it queues for one tenant."""

    name: str
    cron: str  # UTC
    window_seconds: int
    # (tx, tenant, due_at, run key) -> the operation's id; the chore's workflow and its parameters
    enqueue: Callable[[Session, str, datetime, str], str]
    # (tx) -> True when this tenant has nothing for the chore to do tonight
    unchanged: Callable[[Session], bool] | None = None

    def latest_fire(self, now: datetime) -> datetime:
        """The last fire at or before ``now``."""
        probe = now.replace(microsecond=0) + timedelta(seconds=1)
        for fire in CronSim(self.cron, probe, reverse=True):
            if fire <= now:
                return fire
        raise AssertionError("a cron schedule always has an earlier fire")

    def next_fire(self, now: datetime) -> datetime:
        return next(iter(CronSim(self.cron, now)))

    def offset(self, tenant: str) -> timedelta:
        """The tenant's place in the window: the same every night, spread evenly over tenants."""
        digest = hashlib.sha256(f"{self.name}:{tenant}".encode()).digest()
        return timedelta(seconds=int.from_bytes(digest[:8], "big") % max(1, self.window_seconds))

    def key(self, tenant: str, fire: datetime) -> str:
        return f"{self.name}:{tenant}:{fire_date(fire)}"


def fire_date(fire: datetime) -> str:
    return as_utc(fire).date().isoformat()


_runs, _operations, _backups, _history = (table_of(m) for m in (ChoreRun, Operation, Backup, EntityHistory))
# The statements every tenant runs every night, built once (Core, on the transaction's connection: the ORM's
# per-query machinery cost more than SQLite's work here).
# This fire's row if it was handled already, and the older fires still waiting for their slot (queued, their
# operation still scheduled): the queued ones that ran stay as they are. One index range of this chore.
_FIRES = (
    select(_runs.c.id, _runs.c.fire_date, _runs.c.operation_id)
    .select_from(_runs.outerjoin(_operations, _operations.c.id == _runs.c.operation_id))
    .where(
        _runs.c.chore == bindparam("chore"),
        or_(
            _runs.c.fire_date == bindparam("date"),
            and_(_runs.c.decision == QUEUED, _runs.c.fire_date < bindparam("date"), _operations.c.status == SCHEDULED),
        ),
    )
)
# The last good backup (last_good_backup's order), the newest history id, and whether an import or a restore
# came after its snapshot.
_LAST_GOOD = (
    select(
        _backups.c.history_mark,
        _backups.c.snapshot_at,
        select(func.max(_history.c.id)).scalar_subquery(),
        exists().where(
            _operations.c.kind.in_((IMPORT_KIND, RESTORE_KIND)), _operations.c.created_at >= _backups.c.snapshot_at
        ),
    )
    .where(_backups.c.status == SUCCEEDED)
    .order_by(_backups.c.snapshot_at.desc(), _backups.c.id.desc())
    .limit(1)
)
# An operation still scheduled (the WHERE keeps one that moved meanwhile as it is) cancelled, as set_status does.
_CANCEL = (
    update(_operations)
    .where(_operations.c.id == bindparam("operation_id"), _operations.c.status == SCHEDULED)
    .values(status=CANCELLED, updated_at=bindparam("now"), finished_at=bindparam("now"))
)
_SKIP_OLDER = (
    update(_runs).where(_runs.c.id == bindparam("run_id")).values(decision=SKIPPED_LATE, reason=bindparam("reason"))
)


def site_unchanged_since_last_backup(tx: Session) -> bool:
    """Nothing versioned changed since the last good backup's snapshot, and no import or restore came after it."""
    last = tx.connection().execute(_LAST_GOOD).first()
    if last is None:
        return False
    mark, snapshot_at, newest, replaced = last
    return mark is not None and snapshot_at is not None and newest == mark and not replaced


CHORES: dict[str, Chore] = {
    # Before the backup, so the night's snapshot does not carry files that were due to go (media, issue 12).
    "sweep_media": Chore("sweep_media", cron="0 2 * * *", window_seconds=3600, enqueue=schedule_sweep),
    "export_backup": Chore(
        "export_backup",
        cron="0 3 * * *",
        window_seconds=3600,
        enqueue=schedule_backup,
        unchanged=site_unchanged_since_last_backup,
    ),
    # After the backup, so a prune never races the snapshot of the night (version retention, issue 12).
    "prune_policies": Chore("prune_policies", cron="0 4 * * *", window_seconds=3600, enqueue=schedule_prune),
}


def chore(name: str) -> Chore:
    try:
        return CHORES[name]
    except KeyError:
        raise NotFound("No such chore.", details={"chore": name, "chores": sorted(CHORES)}) from None


def fan_out(ws: Workspace, chore: Chore, fire: datetime, now: datetime, *, status: str = ACTIVE) -> str:
    """Decide (and record) what fire ``fire`` of ``chore`` does for this tenant (whose service status is
    ``status``); the decision."""
    fire, now = as_utc(fire), as_utc(now)
    date = fire_date(fire)
    with ws.transaction() as tx:
        fires = tx.connection().execute(_FIRES, {"chore": chore.name, "date": date}).all()
        if any(row.fire_date == date for row in fires):
            return EXISTS
        if status != ACTIVE:
            # Recorded, so its health says why nothing ran tonight; resumed later the same night, the
            # tenant's next chance is the next fire (this one is handled).
            return _record(tx, chore, fire, SKIPPED_SUSPENDED, reason=f"the tenant is {status}")
        latest = chore.latest_fire(now)
        if fire < latest:
            return _record(
                tx, chore, fire, SKIPPED_LATE, reason=f"the {fire_date(latest)} fire is due: it runs instead"
            )
        if chore.unchanged is not None and chore.unchanged(tx):
            return _record(tx, chore, fire, SKIPPED_UNCHANGED, reason="unchanged since the last good backup")
        # An older fire still waiting for its slot (rare: a tenant whose run did not start for a day) is
        # cancelled through the state machine; this fire runs instead.
        if fires:
            _cancel_waiting(tx, fires, date)
        due = max(fire, now) + chore.offset(ws.tenant)
        operation_id = chore.enqueue(tx, ws.tenant, due, chore.key(ws.tenant, fire))
        return _record(tx, chore, fire, QUEUED, due_at=due, operation_id=operation_id)


def _cancel_waiting(tx: Session, fires: Sequence[Row[Any]], date: str) -> None:
    """Cancel the operations of older fires still waiting for their slot and record them skipped late."""
    check_transition(SCHEDULED, CANCELLED)  # the one move this makes, through the state machine's table
    connection, now = tx.connection(), utcnow()
    for older in fires:
        connection.execute(_CANCEL, {"operation_id": older.operation_id, "now": now})
        reason = f"not started by the {date} fire, which runs instead"
        connection.execute(_SKIP_OLDER, {"run_id": older.id, "reason": reason})


def fan_out_tenants(
    settings: RuntimeSettings,
    open_workspace: Callable[[str], Workspace],
    tenants: Iterable[str],
    chore: Chore,
    fire: datetime,
    now: datetime,
    *,
    threads: int = FAN_OUT_THREADS,
) -> dict[str, Any]:
    """One fire for each of ``tenants``: active ones decided by ``fan_out``, suspended ones recorded as skipped,
    deleted ones skipped without opening their workspace; each decision's count and the skipped tenants' names.

    ``threads`` tenants at a time: each has its own database file, and a tenant's wait on its commit and on
    its file's checkpoint at close (SQLite releases the GIL there) is another's turn to run."""

    def decide(slug: str) -> tuple[str, str, str]:
        status = service_status(settings, slug)
        if status == DELETED:
            return slug, status, SKIPPED_DELETED
        try:
            return slug, status, fan_out(open_workspace(slug), chore, fire, now, status=status)
        except Exception as exc:  # one tenant's broken workspace must not hold the others back
            log.warning("chore.fan_out_failed", tenant=slug, chore=chore.name, error=str(exc))
            return slug, status, FAILED

    decisions: Counter[str] = Counter()
    skipped: dict[str, list[str]] = {SUSPENDED: [], DELETED: []}
    with ThreadPoolExecutor(max_workers=max(1, threads), thread_name_prefix="fan-out") as pool:
        for slug, status, decision in pool.map(decide, tenants):  # in the tenants' order
            decisions[decision] += 1
            if decision in (SKIPPED_SUSPENDED, SKIPPED_DELETED) and len(skipped[status]) < NAMED_SKIPS:
                skipped[status].append(slug)
    return {"decisions": dict(decisions), "skipped": skipped}


def _record(
    tx: Session,
    chore: Chore,
    fire: datetime,
    decision: str,
    *,
    reason: str | None = None,
    due_at: datetime | None = None,
    operation_id: str | None = None,
) -> str:
    date = fire_date(fire)
    run = row_values(
        ChoreRun,
        chore=chore.name,
        fire_date=date,
        fired_at=fire,
        due_at=due_at,
        decision=decision,
        operation_id=operation_id,
        reason=reason,
    )
    entry = audit.entry_values(
        f"chore.{decision}", "system", "chore", f"{chore.name}:{date}", operation_id=operation_id, reason=reason
    )
    # Plain INSERTs: every tenant gets these two rows every night (``insert_values``).
    insert_values(tx, ChoreRun, run)
    insert_values(tx, AuditEntry, entry)
    return decision


def health(tx: Session, tenant: str, now: datetime) -> dict[str, Any]:
    """Per chore: the last fire's decision, how late the tenant is, the next fire; and the backup's age and alarm."""
    now = as_utc(now)
    chores = {name: _chore_health(tx, c, tenant, now) for name, c in CHORES.items()}
    last = last_good_backup(tx)
    age = (now - as_utc(last.snapshot_at)).total_seconds() if last and last.snapshot_at else None
    known_for = (now - history_start(tx)).total_seconds()
    alarm = (age if age is not None else known_for) > BACKUP_ALARM.total_seconds()
    return {
        "last_good_backup": None
        if last is None
        else {"id": last.id, "at": as_utc(last.snapshot_at or last.created_at)},
        "last_good_backup_age_seconds": age,
        "alarm": alarm,
        "alarm_after_seconds": BACKUP_ALARM.total_seconds(),
        "lateness_seconds": max((c["lateness_seconds"] for c in chores.values()), default=0.0),
        "chores": chores,
    }


def _chore_health(tx: Session, chore: Chore, tenant: str, now: datetime) -> dict[str, Any]:
    fire = chore.latest_fire(now)
    due = fire + chore.offset(tenant)
    if due > now:  # tonight's slot has not come yet: the one to have finished is the previous fire's
        fire = chore.latest_fire(fire - timedelta(seconds=1))
        due = fire + chore.offset(tenant)
    run = tx.exec(select(ChoreRun).where(ChoreRun.chore == chore.name, ChoreRun.fire_date == fire_date(fire))).first()
    lateness, status = (now - due).total_seconds(), "not fanned out"
    if run is None and history_start(tx) > fire:
        lateness, status = 0.0, "not due yet (the site is newer than the fire)"
    if run is not None:
        status, lateness = run.decision, 0.0
        operation = tx.get(Operation, run.operation_id) if run.operation_id else None
        if operation is not None:
            status = operation.status
            if not settled(operation.status, operation.next_attempt_at):
                lateness = max(0.0, (now - as_utc(run.due_at or due)).total_seconds())
    recent = tx.exec(
        select(ChoreRun).where(ChoreRun.chore == chore.name).order_by(col(ChoreRun.fire_date).desc()).limit(7)
    )
    upcoming = chore.next_fire(now)
    return {
        "cron": chore.cron,
        "fire": fire,
        "due_at": due,
        "status": status,
        "lateness_seconds": max(0.0, lateness),
        "next_fire": upcoming,
        "next_due_at": upcoming + chore.offset(tenant),
        "recent": [
            {"date": r.fire_date, "decision": r.decision, "operation_id": r.operation_id, "reason": r.reason}
            for r in recent
        ],
    }


__all__ = [
    "BACKUP_ALARM",
    "CHORES",
    "EXISTS",
    "FAILED",
    "NAMED_SKIPS",
    "QUEUED",
    "SKIPPED_DELETED",
    "SKIPPED_LATE",
    "SKIPPED_SUSPENDED",
    "SKIPPED_UNCHANGED",
    "Chore",
    "chore",
    "fan_out",
    "fan_out_tenants",
    "fire_date",
    "health",
    "site_unchanged_since_last_backup",
]
