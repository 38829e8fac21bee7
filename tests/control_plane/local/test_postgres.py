"""The embedded PostgreSQL: runs from a clone under a mode-700 home (as root too), keeps its data
across restarts, adopts a postmaster left running, stops for sure and dies with its starter."""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import psycopg
import pytest

from control_plane.local import (
    DataDirUnreachable,
    PostgresHandle,
    check_data_dir_access,
    pg_binaries,
    pg_user,
    postgres,
    start_embedded_postgres,
)
from control_plane.local.pg_user import OsUser, run_as_prefix

REPO = Path(__file__).resolve().parents[3]
STARTER = (
    "import sys, time; from pathlib import Path; from control_plane.local import start_embedded_postgres; "
    "print(start_embedded_postgres(Path(sys.argv[1])).pid, flush=True); time.sleep(600)"
)
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="PostgreSQL runs as another user only when we are root")


def _port(handle: PostgresHandle) -> int:
    return int(handle.url.rsplit(":", 1)[1].split("/", 1)[0])


def _postmasters_of(data_dir: Path) -> list[psutil.Process]:
    """Every live postgres process whose command line names ``data_dir``."""
    found = []
    for proc in psutil.process_iter(["name", "cmdline", "status"]):
        if proc.info["status"] != psutil.STATUS_ZOMBIE and str(data_dir) in " ".join(proc.info["cmdline"] or []):
            found.append(proc)
    return found


def _status(pid: int) -> dict[str, str]:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return {k: v.strip() for k, _, v in (line.partition(":") for line in lines)}


@pytest.fixture
def world_dir() -> Iterator[Path]:
    """A directory everyone may enter (pytest's own temp root is mode 700)."""
    path = Path(tempfile.mkdtemp(prefix="pressroom-test-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def clone_in_private_home(tmp_path: Path, world_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A home of mode 700 with a 'clone' in it whose virtualenv holds the PostgreSQL binaries."""
    monkeypatch.setattr(pg_binaries, "STAGE_ROOT", world_dir / "stage")  # not /var/cache: removed after
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    home.chmod(0o700)
    installed = postgres.pg_bin("postgres").parent.parent
    site = home / "clone" / ".venv" / "site-packages"
    copy = site / "embedded_postgres" / "pginstall"
    for part in ("bin", "lib", "share"):
        shutil.copytree(installed / part, copy / part, symlinks=True)
    # The binaries find libpq through an rpath of $ORIGIN/../../../embedded_postgres.libs.
    shutil.copytree(installed.parent.parent / "embedded_postgres.libs", site / "embedded_postgres.libs")
    monkeypatch.setattr(postgres, "pg_bin", lambda name: copy / "bin" / name)
    yield home / "clone"
    for leftover in _postmasters_of(home):
        leftover.kill()  # only if a test failed half-way: ours, found by our own directory


@pytest.mark.integration
def test_a_cluster_under_a_mode_700_home_keeps_its_data_and_leaves_nothing_behind(clone_in_private_home: Path) -> None:
    data_dir = clone_in_private_home / "data" / "prefect-pg"
    assert (clone_in_private_home.parent.stat().st_mode & 0o777) == 0o700

    began = time.monotonic()
    first = start_embedded_postgres(data_dir)
    fresh = time.monotonic() - began
    assert first.pid is not None
    if os.geteuid() == 0:
        # Not root, and exactly one capability: search/read through directories it cannot enter.
        status = _status(first.pid)
        assert status["Uid"].split()[0] == str(pwd.getpwnam("postgres").pw_uid)
        assert int(status["CapEff"], 16) == 1 << 2  # CAP_DAC_READ_SEARCH
    try:
        with psycopg.connect(host="127.0.0.1", port=_port(first), user="postgres", dbname="prefect") as conn:
            conn.execute("CREATE TABLE probe (note text)")
            conn.execute("INSERT INTO probe VALUES ('kept')")
    finally:
        first.stop()
    assert not _postmasters_of(data_dir)

    began = time.monotonic()
    second = start_embedded_postgres(data_dir)
    warm = time.monotonic() - began
    try:
        assert warm < fresh / 2, f"warm start {warm:.2f}s vs fresh {fresh:.2f}s: cluster was not reused"
        with psycopg.connect(host="127.0.0.1", port=_port(second), user="postgres", dbname="prefect") as conn:
            assert conn.execute("SELECT note FROM probe").fetchall() == [("kept",)]

        # An earlier run that died without stopping its postmaster: the next start adopts it.
        adopted = start_embedded_postgres(data_dir)
        assert (adopted.pid, adopted.url) == (second.pid, second.url)
        adopted.stop()
    finally:
        second.stop()
    assert not _postmasters_of(data_dir)
    assert not (data_dir / "postmaster.pid").exists()


@pytest.mark.integration
def test_the_postmaster_dies_with_the_process_that_started_it(tmp_path: Path) -> None:
    data_dir = tmp_path / "pg"
    starter = subprocess.Popen(
        [sys.executable, "-c", STARTER, str(data_dir)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert starter.stdout is not None
        postmaster = int(starter.stdout.readline())
        starter.kill()  # kill -9: no chance to stop anything
        starter.wait()
        deadline = time.monotonic() + 20
        while _postmasters_of(data_dir) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _postmasters_of(data_dir), f"postmaster {postmaster} outlived its starter"
    finally:
        if starter.poll() is None:
            starter.kill()
        for leftover in _postmasters_of(data_dir):
            leftover.kill()


@as_root
def test_without_the_capability_the_error_says_what_to_do(world_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    locked = world_dir / "locked"
    locked.mkdir(mode=0o700)
    monkeypatch.setattr(pg_user, "_capability_held", lambda: False)
    with pytest.raises(DataDirUnreachable, match=str(locked)) as raised:
        check_data_dir_access(locked / "inner" / "pg")
    assert raised.value.code == "data_dir_unreachable"
    assert "CAP_DAC_READ_SEARCH" in str(raised.value) and "chmod o+x" in str(raised.value)


@as_root
def test_without_setpriv_the_error_says_what_to_do(world_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    locked = world_dir / "locked"
    locked.mkdir(mode=0o700)
    monkeypatch.setattr(pg_user, "setpriv_path", lambda: None)
    with pytest.raises(DataDirUnreachable, match="setpriv"):
        check_data_dir_access(locked / "pg")


@as_root
def test_a_reachable_path_switches_user_without_any_capability(tmp_path: Path) -> None:
    user = pg_user.postgres_os_user()
    assert user is not None
    open_dir, locked = tmp_path / "open", tmp_path / "locked"
    open_dir.mkdir()
    locked.mkdir(mode=0o700)
    world = Path("/tmp")
    true = Path(shutil.which("true") or "/bin/true")

    plain = run_as_prefix(user, [world], death_signal=signal.SIGINT, probe=true)
    assert not any("caps" in arg for arg in plain)
    assert f"--reuid={user.uid}" in plain and "--pdeathsig=SIGINT" in plain
    through = run_as_prefix(user, [locked], death_signal=None, probe=true)
    assert "--ambient-caps=+dac_read_search" in through and "--inh-caps=+dac_read_search" in through
    assert not any("pdeathsig" in arg for arg in through)


def test_a_non_root_user_runs_postgres_as_itself(tmp_path: Path) -> None:
    (tmp_path / "pg").mkdir()
    pg = postgres.EmbeddedPostgres(tmp_path / "pg", user=None)
    assert pg.launch_prefix(death_signal=signal.SIGINT) == []
    assert pg.postmaster_argv(5432)[0] == str(postgres.pg_bin("postgres"))


def test_a_long_data_dir_puts_the_socket_in_tmp(tmp_path: Path) -> None:
    deep = tmp_path / ("x" * 60) / ("y" * 60)
    assert postgres.EmbeddedPostgres(deep, user=None).socket_dir(5432).parent == Path("/tmp")
    assert postgres.EmbeddedPostgres(Path("/srv/pg"), user=None).socket_dir(5432) == Path("/srv/pg/sock")


def test_pg_variables_never_reach_the_binaries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PGDATA", "/elsewhere")
    monkeypatch.setenv("PGPORT", "1")
    env = postgres.pg_child_env()
    assert "PGDATA" not in env and "PGPORT" not in env and env["PATH"] == os.environ["PATH"]


def test_os_user_is_none_unless_root() -> None:
    user = pg_user.postgres_os_user()
    assert (user is None) == (os.geteuid() != 0)
    if user is not None:
        assert isinstance(user, OsUser) and user.uid != 0
