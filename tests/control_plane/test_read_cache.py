"""``ReadCache``: values are kept until any connection commits to the control-plane database, and only then."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from control_plane.db.read_cache import ReadCache


@pytest.fixture
def database(tmp_path: Path) -> Path:
    path = tmp_path / "control-plane.db"
    with sqlite3.connect(path, isolation_level=None) as db:
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("CREATE TABLE token (id TEXT PRIMARY KEY, revoked INTEGER)")
        db.execute("INSERT INTO token VALUES ('t1', 0)")
    return path


def _revoked(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT revoked FROM token WHERE id = 't1'").fetchone()[0])


def test_a_value_is_loaded_once_until_another_connection_commits(database: Path) -> None:
    cache = ReadCache(f"sqlite:///{database}")
    loads: list[int] = []

    def load() -> int:
        loads.append(1)
        return _revoked(database)

    assert cache.get("token", "t1", load) == 0 and cache.get("token", "t1", load) == 0
    assert len(loads) == 1
    with sqlite3.connect(database) as db:  # another connection of this process, e.g. the engine's pool
        db.execute("UPDATE token SET revoked = 1")
    assert cache.get("token", "t1", load) == 1 and len(loads) == 2
    # Another process (a second control-plane worker, the CLI) commits: seen by the next lookup too.
    script = "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.execute('UPDATE token SET revoked = 2')"
    script += "; db.commit()"
    subprocess.run([sys.executable, "-c", script, str(database)], check=True)
    assert cache.get("token", "t1", load) == 2 and len(loads) == 3
    cache.close()


def test_a_read_only_transaction_keeps_the_cache_and_a_failed_load_is_not_kept(database: Path) -> None:
    cache = ReadCache(f"sqlite:///{database}")
    assert cache.get("token", "t1", lambda: _revoked(database)) == 0
    _revoked(database)  # a reader commits nothing
    assert cache.get("token", "t1", lambda: -1) == 0

    def missing() -> int:
        raise LookupError("no such token")

    with pytest.raises(LookupError):
        cache.get("token", "t2", missing)
    assert cache.get("token", "t2", lambda: 5) == 5


def test_postgresql_and_no_database_are_never_cached() -> None:
    for url in ("postgresql://postgres@127.0.0.1/pressroom", None, "sqlite://"):
        cache = ReadCache(url)
        assert not cache.enabled
        assert [cache.get("k", 1, lambda v=v: v) for v in (1, 2)] == [1, 2]
