"""``settle_heap``: what a long-running server does once it has loaded, before it takes traffic.

A server process holds a quarter of a million objects once its imports are
done (Prefect, SQLAlchemy, Litestar and their registries), none of which will
ever be garbage. CPython's full (generation 2) collection walks every one of
them, holding the GIL: 145–176 ms on these machines, a stall of every request
in flight (docs/performance.md, brief intake). ``gc.freeze()`` moves what is
alive at start-up into the permanent generation, which collections skip;
objects made afterwards are collected as before.
"""

from __future__ import annotations

import gc


def settle_heap() -> int:
    """Collect start-up garbage, then freeze what is left out of the collector's walks; the frozen count."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


__all__ = ["settle_heap"]
