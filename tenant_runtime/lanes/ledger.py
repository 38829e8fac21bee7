"""The ledger of paid steps: each (brief, step) pays once, within the run's budget.

``pay_once`` returns the recorded result when the step already paid (a retry,
a rerun after a crash, a later step failing), and otherwise checks the budget
*before* the call (spent + the call's estimate over the budget is a permanent
``budget_exceeded``, nothing called), calls, and records cost and result in one
transaction. The one window left is a crash between the provider's answer and
that commit: the call is then made again (the provider has no idempotency key
to reuse it by).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, func, select

from tenant_runtime.errors import Permanent
from tenant_runtime.ids import as_utc
from tenant_runtime.workspace import Workspace
from tenant_runtime.workspace.lane_models import Brief, CostEntry, Lane


class BudgetExceeded(Permanent):
    code = "budget_exceeded"


def spent(tx: Session, brief_id: str) -> int:
    return int(
        tx.exec(select(func.coalesce(func.sum(CostEntry.cost_micros), 0)).where(CostEntry.brief_id == brief_id)).one()
    )


def spent_by(tx: Session, brief_ids: list[str]) -> dict[str, int]:
    """What each of these briefs has spent, in one query (a page of briefs, not one query a row)."""
    found = dict.fromkeys(brief_ids, 0)
    if brief_ids:
        rows = tx.exec(
            select(CostEntry.brief_id, func.sum(CostEntry.cost_micros))
            .where(col(CostEntry.brief_id).in_(brief_ids))
            .group_by(col(CostEntry.brief_id))
        )
        found.update({brief_id: int(total or 0) for brief_id, total in rows})
    return found


def budget(tx: Session, brief: Brief, default_micros: int) -> int:
    lane = tx.get(Lane, brief.lane)
    return lane.budget_micros if lane is not None and lane.budget_micros is not None else default_micros


def pay_once(
    ws: Workspace,
    brief_id: str,
    step: str,
    provider: str,
    estimate_micros: int,
    default_budget_micros: int,
    call: Callable[[], tuple[dict[str, Any], int, int]],
) -> dict[str, Any]:
    """The step's result: recorded, or from ``call()`` → (result, units, cost_micros), recorded now."""
    with ws.reader() as tx:
        entry = tx.exec(select(CostEntry).where(CostEntry.brief_id == brief_id, CostEntry.step == step)).first()
        if entry is not None:
            return dict(entry.result)
        brief = tx.get(Brief, brief_id)
        if brief is None:
            raise Permanent("No such brief.", details={"brief_id": brief_id}, code="not_found")
        used, limit = spent(tx, brief_id), budget(tx, brief, default_budget_micros)
    if used + estimate_micros > limit:
        raise BudgetExceeded(
            f"This call could cost {estimate_micros} µ$ on top of {used} µ$ spent: over the run's budget "
            f"of {limit} µ$.",
            details={"step": step, "spent_micros": used, "estimate_micros": estimate_micros, "budget_micros": limit},
        )
    result, units, cost = call()
    try:
        with ws.transaction() as tx:
            tx.add(
                CostEntry(
                    brief_id=brief_id,
                    lane=brief.lane,
                    operation_id=brief.operation_id,
                    step=step,
                    provider=provider,
                    units=units,
                    cost_micros=cost,
                    result=result,
                )
            )
    except IntegrityError:  # a concurrent attempt recorded it first: keep one entry, its result
        with ws.reader() as tx:
            entry = tx.exec(select(CostEntry).where(CostEntry.brief_id == brief_id, CostEntry.step == step)).one()
            return dict(entry.result)
    return result


def entries(tx: Session, brief_id: str) -> list[CostEntry]:
    return list(tx.exec(select(CostEntry).where(CostEntry.brief_id == brief_id).order_by(col(CostEntry.id))))


def costs(tx: Session, *, since: date | None = None) -> list[dict[str, Any]]:
    """Cost per lane and UTC day: ``[{"lane", "day", "cost_micros", "entries"}]``, newest day first."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    query = select(CostEntry)
    for entry in tx.exec(query):
        day = as_utc(entry.created_at).date()
        if since is not None and day < since:
            continue
        row = rows.setdefault(
            (entry.lane, day.isoformat()), {"lane": entry.lane, "day": day.isoformat(), "cost_micros": 0, "entries": 0}
        )
        row["cost_micros"] += entry.cost_micros
        row["entries"] += 1
    return sorted(rows.values(), key=lambda r: (r["day"], r["lane"]), reverse=True)


__all__ = ["BudgetExceeded", "budget", "costs", "entries", "pay_once", "spent"]
