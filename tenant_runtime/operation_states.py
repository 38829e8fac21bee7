"""The delivery state machine of operations: one table, nothing else allowed.

scheduled ─▶ queued ─▶ delivering ─▶ succeeded | superseded | failed
scheduled ─▶ cancelled          failed ─▶ queued (retry) | dead
scheduled ─▶ failed (version conflict when it fires)
dead ─▶ queued (explicit replay)
delivering ─▶ queued (a crashed worker's run is reclaimed and re-run)

Run control (``tenant_runtime/actions/run_control.py``):
queued | delivering ─▶ paused ─▶ queued (resume)          delivering ─▶ waiting ─▶ queued (its event, or its timeout)
scheduled | queued | delivering | paused | waiting | failed ─▶ cancelled (terminate)
any settled operation ─▶ queued by a restart (``check_restart``), the one way out of a terminal state
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
PAUSED = "paused"  # stopped at a step boundary by a person; holds no worker slot
WAITING = "waiting"  # parked in wait_for_event until its event arrives or its timeout passes

STATUSES = (SCHEDULED, QUEUED, DELIVERING, PAUSED, WAITING, SUCCEEDED, SUPERSEDED, FAILED, DEAD, CANCELLED)
# Nothing more happens to these by itself (a dead one can still be replayed by a person).
TERMINAL = frozenset({SUCCEEDED, SUPERSEDED, DEAD, CANCELLED})

TRANSITIONS: dict[str, frozenset[str]] = {
    SCHEDULED: frozenset({QUEUED, CANCELLED, FAILED}),
    QUEUED: frozenset({DELIVERING, PAUSED, CANCELLED}),
    DELIVERING: frozenset({SUCCEEDED, SUPERSEDED, FAILED, QUEUED, PAUSED, WAITING, CANCELLED}),
    PAUSED: frozenset({QUEUED, CANCELLED}),
    WAITING: frozenset({QUEUED, CANCELLED}),
    FAILED: frozenset({QUEUED, DEAD, CANCELLED}),
    DEAD: frozenset({QUEUED}),
    SUCCEEDED: frozenset(),
    SUPERSEDED: frozenset(),
    CANCELLED: frozenset(),
}


def settled(status: str, next_attempt_at: object | None) -> bool:
    """Nothing more happens by itself: terminal, or failed with no retry planned (a final failure)."""
    return status in TERMINAL or (status == FAILED and next_attempt_at is None)


def restartable(status: str, next_attempt_at: object | None) -> bool:
    """A restart runs a settled operation again (from the top or from a step)."""
    return settled(status, next_attempt_at)


def check_restart(status: str, next_attempt_at: object | None) -> None:
    """Raise IllegalTransition unless the operation has settled (a restart never races a live run)."""
    if not restartable(status, next_attempt_at):
        raise IllegalTransition(
            f"Only a settled operation can be restarted; this one is {status}.",
            details={"from": status, "to": QUEUED, "restart": True},
        )


def check_transition(current: str, new: str) -> None:
    """Raise IllegalTransition unless the table allows current → new."""
    if new not in TRANSITIONS.get(current, frozenset()):
        raise IllegalTransition(
            f"An operation cannot go from {current} to {new}.",
            details={"from": current, "to": new, "allowed": sorted(TRANSITIONS.get(current, ()))},
        )
