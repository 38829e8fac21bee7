"""``ReadCache``: the control-plane rows every request reads, kept in memory and exact across processes.

Every API request resolves its token (token, membership and tenant rows), reads
its tenant's row (status, quota) and its placement (shard): four queries before
the command itself, a fifth of a brief's accept. They change rarely (an operator
revokes a token, suspends a tenant, moves it), so they are cached here; what
keeps the cache exact is SQLite's ``PRAGMA data_version``, asked before every
lookup on a connection of this cache's own that never writes: its value changes
whenever any *other* connection has committed to the database since it last
asked (this process's pool, another control-plane worker, the CLI), and the cache
is then emptied whole. So a commit is seen by every lookup that starts after it,
exactly as without the cache, for one PRAGMA (microseconds) instead of the
queries. A value loaded while a commit lands is not kept (the version moved).

With PostgreSQL (no such pragma) nothing is cached: each lookup reads the database.
Failed loads (an unknown token, a missing tenant) are never cached.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Hashable
from typing import TypeVar

from sqlalchemy.engine import make_url

T = TypeVar("T")
# Enough for every tenant and token of a large install; past it the cache starts again empty.
MAX_ENTRIES = 50_000


class ReadCache:
    """Values loaded from the control-plane database, dropped whenever the database changes."""

    def __init__(self, database_url: str | None) -> None:
        self._watch = _watcher(database_url) if database_url else None
        self._lock = threading.Lock()
        self._version: int | None = None
        self._entries: dict[tuple[str, Hashable], object] = {}

    @property
    def enabled(self) -> bool:
        return self._watch is not None

    def get(self, kind: str, key: Hashable, load: Callable[[], T]) -> T:
        """The cached value of ``(kind, key)``, or ``load()`` (kept if nothing committed meanwhile)."""
        if self._watch is None:
            return load()
        entry = (kind, key)
        with self._lock:
            version = self._current()
            if entry in self._entries:
                return self._entries[entry]  # type: ignore[return-value]  # stored by this kind's loader
        value = load()
        with self._lock:
            if self._current() == version:
                if len(self._entries) >= MAX_ENTRIES:
                    self._entries.clear()
                self._entries[entry] = value
        return value

    def peek(self, kind: str, key: Hashable) -> object | None:
        """The cached value of ``(kind, key)`` if it is current, else None (never loads: cheap enough for an
        event loop)."""
        if self._watch is None:
            return None
        with self._lock:
            self._current()
            return self._entries.get((kind, key))

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def close(self) -> None:
        with self._lock:
            if self._watch is not None:
                self._watch.close()
                self._watch = None
            self._entries.clear()

    def _current(self) -> int:
        """The database's data version now; a change empties the cache (the caller holds the lock)."""
        assert self._watch is not None
        (version,) = self._watch.execute("PRAGMA data_version").fetchone()
        if version != self._version:
            self._entries.clear()
            self._version = version
        return int(version)


def _watcher(database_url: str) -> sqlite3.Connection | None:
    """A connection of the cache's own to a SQLite control-plane database (autocommit, never writes)."""
    url = make_url(database_url)
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return None
    return sqlite3.connect(url.database, isolation_level=None, check_same_thread=False, timeout=10)


__all__ = ["MAX_ENTRIES", "ReadCache"]
