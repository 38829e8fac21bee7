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
    flooded = [pressroom.publish(flood, pressroom.create_document(flood, f"f-{n}")["id"])["operation_id"]
               for n in range(24)]
    pressroom.start_worker(flood, quiet)
    while pressroom.operation(flood, flooded[0])["status"] in ("queued",):
        time.sleep(0.05)
    single = pressroom.publish(quiet, pressroom.create_document(quiet, "only")["id"])["operation_id"]

    quiet_done = pressroom.wait_operation(quiet, single, timeout=120)
    flood_done = [pressroom.wait_operation(flood, op, timeout=300) for op in flooded]

    assert quiet_done["status"] == "succeeded"
    # The flood's queue holds at most queue_concurrency (4) runs at a time, below the worker's
    # concurrency (8), so a slot is always free for the quiet tenant's run...
    attempts = [(datetime.fromisoformat(a["started_at"]), datetime.fromisoformat(a["finished_at"]))
                for op in flood_done for a in op["attempts"]]
    assert _max_overlap(attempts) <= 4 < pressroom.settings.dispatch.concurrency
    # ...and it is served while the flood is still being delivered, not after it.
    last_flood = max(end for _, end in attempts)
    assert datetime.fromisoformat(quiet_done["finished_at"]) < last_flood
