"""``settle_heap``: start-up garbage is collected, what is alive is frozen out of later collections."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap


def test_settle_heap_collects_start_up_cycles_and_freezes_the_rest() -> None:
    # In a process of its own: freezing is for the life of a process, not for this test run's.
    script = textwrap.dedent(
        """
        import gc, json, weakref
        from tenant_runtime.heap import settle_heap

        class Node:
            pass

        garbage = Node(); garbage.me = garbage
        gone = weakref.ref(garbage)
        del garbage
        kept = [Node() for _ in range(1000)]
        before = gc.get_freeze_count()
        frozen = settle_heap()
        later = Node(); later.me = later
        later_ref = weakref.ref(later)
        del later
        gc.collect()
        print(json.dumps({"before": before, "frozen": frozen, "count": gc.get_freeze_count(),
                          "cycle_collected": gone() is None, "later_collected": later_ref() is None}))
        """
    )
    out = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True).stdout
    result = json.loads(out)
    assert result["before"] == 0
    assert result["cycle_collected"], "garbage made before start-up ended must be collected, not frozen"
    assert result["frozen"] == result["count"] >= 1000, "what is alive at start-up is in the permanent generation"
    assert result["later_collected"], "objects made after the freeze are collected as before"
