"""WAL checkpoints of warm SQLite workspaces, off the request path.

SQLite's automatic checkpoint runs inside the COMMIT that takes the WAL past 1,000 pages: that one
request copies the WAL into the database file and fsyncs it (up to ~12 ms here, against ~0.03 ms for a
commit that does not; benchmarks/analysis.md, "2026-12-06"). A warm tenant's connections instead set a
far mark (``SAFETY_PAGES``, a bound on the WAL should this thread ever fall behind), and this thread
checkpoints each tenant written since its last pass, PASSIVE: it copies what no reader still needs and
never blocks a reader or a writer. SQLite's sqlite3 module releases the GIL while the checkpoint runs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import structlog
from sqlalchemy import Engine

# The automatic checkpoint left on a warm tenant's connections: ~40 MB of WAL (4 KiB pages), reached only if
# the background pass stops keeping up; SQLite's own default is 1,000 pages.
SAFETY_PAGES = 10_000

_log = structlog.get_logger("pressroom.workspace")


def checkpoint(engine: Engine) -> tuple[int, int, int]:
    """One PASSIVE checkpoint of the engine's database: (busy, WAL frames, frames checkpointed)."""
    connection = engine.raw_connection()
    try:
        # The DB-API connection is in autocommit (isolation_level None, set on connect): no transaction
        # is open, which a checkpoint needs.
        row = connection.driver_connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()  # type: ignore[union-attr]
    finally:
        connection.close()
    return (int(row[0]), int(row[1]), int(row[2])) if row else (0, 0, 0)


class Checkpointer:
    """A daemon thread checkpointing the tenants marked written, every ``interval`` seconds.

    ``engines`` gives the engine of a tenant that is still warm (None once it went cold: closing its last
    connection checkpointed it). Started on the first ``written``; ``stop`` ends it (a later ``written``
    starts it again).
    """

    def __init__(self, interval: float, engines: Callable[[str], Engine | None]) -> None:
        self.interval = interval
        self._engines = engines
        self._dirty: set[str] = set()
        self._lock = threading.Lock()
        self._thread: tuple[threading.Thread, threading.Event] | None = None
        self.checkpoints = 0  # checkpoints run, for tests and the stats

    def written(self, tenant: str) -> None:
        """A write transaction of ``tenant`` committed (cheap: a set insert under a lock)."""
        with self._lock:
            self._dirty.add(tenant)
            if self._thread is None:
                stop = threading.Event()
                thread = threading.Thread(target=self._run, args=(stop,), name="pressroom-wal-checkpoints", daemon=True)
                self._thread = (thread, stop)
                thread.start()

    @property
    def running(self) -> bool:
        with self._lock:
            return self._thread is not None and self._thread[0].is_alive()

    def run_once(self) -> int:
        """Checkpoint every tenant written since the last pass now; how many were checkpointed."""
        with self._lock:
            tenants, self._dirty = self._dirty, set()
        done = 0
        for tenant in sorted(tenants):
            engine = self._engines(tenant)
            if engine is None:
                continue
            try:
                checkpoint(engine)
            except Exception as exc:  # a locked or vanished file: the next write marks it again
                _log.warning("workspace.checkpoint_failed", tenant=tenant, error=f"{type(exc).__name__}: {exc}")
                continue
            done += 1
        with self._lock:
            self.checkpoints += done
        return done

    def stop(self) -> None:
        """End the thread (tenants still marked are checkpointed when their connections close)."""
        with self._lock:
            running, self._thread = self._thread, None
        if running is not None:
            thread, stop = running
            stop.set()
            if thread is not threading.current_thread():
                thread.join(timeout=10)
                if thread.is_alive():  # a checkpoint held up by the disk: it ends after it (daemon meanwhile)
                    _log.warning("workspace.checkpointer_still_running")

    def _run(self, stop: threading.Event) -> None:
        while not stop.wait(self.interval):
            self.run_once()
