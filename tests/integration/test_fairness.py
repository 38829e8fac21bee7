"""One tenant's backlog does not starve another tenant's publish."""

from __future__ import annotations

import time
from datetime import datetime

import pytest

from tests.fixtures.stack import Pressroom

pytestmark = pytest.mark.integration


def _max_overlap(intervals: list[tuple[datetime, datetime]]) -> int:
    events = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals])
    running = peak = 0
    for _, step in events:
        running += step
        peak = max(peak, running)
    return peak


def test_a_flooding_tenant_leaves_room_for_another_tenants_publish(pressroom: Pressroom) -> None:
    flood, quiet = pressroom.new_tenant("flood"), pressroom.new_tenant("quiet")
    flooded = [
        pressroom.publish(flood, pressroom.create_document(flood, f"f-{n}")["id"])["operation_id"] for n in range(24)
    ]
    pressroom.start_worker(flood, quiet)
    while pressroom.operation(flood, flooded[0])["status"] in ("queued",):
        time.sleep(0.05)
    single = pressroom.publish(quiet, pressroom.create_document(quiet, "only")["id"])["operation_id"]

    quiet_done = pressroom.wait_operation(quiet, single, timeout=120)
    flood_done = [pressroom.wait_operation(flood, op, timeout=300) for op in flooded]

    assert quiet_done["status"] == "succeeded"
    assert {op["status"] for op in flood_done} == {"succeeded"}
    # The flood travels in few runs (a lone publish, then batches: at most `in_flight` publish runs of a
    # tenant in flight), far below the worker's concurrency (8), so a slot is free for the quiet tenant...
    runs: dict[str, list[datetime]] = {}
    for op in flood_done:
        for a in op["attempts"]:
            runs.setdefault(op["flow_run_id"], []).extend(
                [datetime.fromisoformat(a["started_at"]), datetime.fromisoformat(a["finished_at"])]
            )
    assert len(runs) < len(flooded) / 4, len(runs)
    intervals = [(min(times), max(times)) for times in runs.values()]
    coalescing = pressroom.settings.dispatch.coalescing
    assert _max_overlap(intervals) <= coalescing.in_flight < pressroom.settings.dispatch.concurrency
    # ...and it is served while the flood is still being delivered, not after it.
    last_flood = max(end for _, end in intervals)
    assert datetime.fromisoformat(quiet_done["finished_at"]) < last_flood
