"""The delivery state machine of operations: one table, nothing else allowed.

scheduled ─▶ queued ─▶ delivering ─▶ succeeded | superseded | failed
scheduled ─▶ cancelled          failed ─▶ queued (retry) | dead
scheduled ─▶ failed (version conflict when it fires)
dead ─▶ queued (explicit replay)
delivering ─▶ queued (a crashed worker's run is reclaimed and re-run)
"""

from __future__ import annotations

from tenant_runtime.errors import IllegalTransition

SCHEDULED = "scheduled"
QUEUED = "queued"
DELIVERING = "delivering"
SUCCEEDED = "succeeded"
SUPERSEDED = "superseded"
FAILED = "failed"
DEAD = "dead"
CANCELLED = "cancelled"

STATUSES = (SCHEDULED, QUEUED, DELIVERING, SUCCEEDED, SUPERSEDED, FAILED, DEAD, CANCELLED)
# Nothing more happens to these by itself (a dead one can still be replayed by a person).
TERMINAL = frozenset({SUCCEEDED, SUPERSEDED, DEAD, CANCELLED})

TRANSITIONS: dict[str, frozenset[str]] = {
    SCHEDULED: frozenset({QUEUED, CANCELLED, FAILED}),
    QUEUED: frozenset({DELIVERING}),
    DELIVERING: frozenset({SUCCEEDED, SUPERSEDED, FAILED, QUEUED}),
    FAILED: frozenset({QUEUED, DEAD}),
    DEAD: frozenset({QUEUED}),
    SUCCEEDED: frozenset(),
    SUPERSEDED: frozenset(),
    CANCELLED: frozenset(),
}


def settled(status: str, next_attempt_at: object | None) -> bool:
    """Nothing more happens by itself: terminal, or failed with no retry planned (a final failure)."""
    return status in TERMINAL or (status == FAILED and next_attempt_at is None)


def check_transition(current: str, new: str) -> None:
    """Raise IllegalTransition unless the table allows current → new."""
    if new not in TRANSITIONS.get(current, frozenset()):
        raise IllegalTransition(
            f"An operation cannot go from {current} to {new}.",
            details={"from": current, "to": new, "allowed": sorted(TRANSITIONS.get(current, ()))},
        )
