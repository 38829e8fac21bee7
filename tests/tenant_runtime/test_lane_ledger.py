"""Paid steps pay once per (brief, step), within the run's budget, and their cost is readable per lane and day."""

from __future__ import annotations

import pytest

from tenant_runtime.actions.briefs import BriefInput, submit_brief
from tenant_runtime.lanes.ledger import BudgetExceeded, costs, entries, pay_once
from tenant_runtime.workspace import SYSTEM, Lane, Workspace


def _brief(ws: Workspace, brief_id: str, lane: str = "news") -> None:
    with ws.transaction() as tx:
        submit_brief(tx, ws.tenant, SYSTEM, BriefInput(brief_id=brief_id, lane=lane, title=f"T {brief_id}"))


def test_a_step_pays_once_and_a_repeat_returns_the_recorded_result(workspace: Workspace) -> None:
    _brief(workspace, "b-1")
    calls: list[int] = []

    def call() -> tuple[dict[str, object], int, int]:
        calls.append(1)
        return {"key": f"k{len(calls)}"}, 50, 300

    first = pay_once(workspace, "b-1", "generate", "offline", 300, 10_000, call)
    second = pay_once(workspace, "b-1", "generate", "offline", 300, 10_000, call)

    assert first == second == {"key": "k1"} and len(calls) == 1
    with workspace.reader() as tx:
        assert [(e.step, e.cost_micros, e.units) for e in entries(tx, "b-1")] == [("generate", 300, 50)]


def test_the_budget_stops_the_call_that_would_cross_it(workspace: Workspace) -> None:
    _brief(workspace, "b-2", lane="dev")
    with workspace.transaction() as tx:
        lane = tx.get(Lane, "dev")
        assert lane is not None
        lane.budget_micros = 500
        tx.add(lane)
    pay_once(workspace, "b-2", "generate", "offline", 300, 10_000, lambda: ({}, 1, 300))
    called: list[int] = []
    with pytest.raises(BudgetExceeded) as stopped:
        pay_once(workspace, "b-2", "cover", "offline", 300, 10_000, lambda: (called.append(1) or {}, 1, 300))
    assert called == []
    assert stopped.value.details == {
        "step": "cover",
        "spent_micros": 300,
        "estimate_micros": 300,
        "budget_micros": 500,
    }


def test_costs_are_summed_per_lane_and_day(workspace: Workspace) -> None:
    for brief_id, lane in (("c-1", "news"), ("c-2", "news"), ("c-3", "business")):
        _brief(workspace, brief_id, lane)
        pay_once(workspace, brief_id, "generate", "offline", 0, 10_000, lambda: ({}, 1, 250))
    with workspace.reader() as tx:
        rows = {(r["lane"], r["cost_micros"], r["entries"]) for r in costs(tx)}
    assert rows == {("news", 500, 2), ("business", 250, 1)}
