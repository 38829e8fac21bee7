"""When the supervisor restarts a crashed child, and when it gives up on it."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RestartPolicy"]

BACKOFF_FIRST_S = 0.5  # short enough that a one-off crash is barely noticed
BACKOFF_CAP_S = 10.0  # a child failing on a cause that goes away (a port, a database) comes back soon after
STABLE_AFTER_S = 60.0  # up this long means healthy again: its next crash starts the backoff over
CRASH_LOOP_CRASHES = 5  # this many crashes ...
CRASH_LOOP_WINDOW_S = 120.0  # ... this close together mean restarting will not help: stop and show why
CRASH_LOG_LINES = 30  # enough of a child's log to show its traceback


@dataclass(frozen=True)
class RestartPolicy:
    """When to restart a crashed child, and when to give up on it."""

    first_delay: float = BACKOFF_FIRST_S
    max_delay: float = BACKOFF_CAP_S
    stable_after: float = STABLE_AFTER_S
    crash_limit: int = CRASH_LOOP_CRASHES
    crash_window: float = CRASH_LOOP_WINDOW_S
    log_lines: int = CRASH_LOG_LINES

    def delay(self, attempt: int) -> float:
        """Backoff before restart ``attempt`` (1, 2, …): doubling from ``first_delay`` up to ``max_delay``."""
        return min(self.max_delay, self.first_delay * 2 ** (attempt - 1))
