"""The local Prefect server and its PostgreSQL: start, reuse, talk to, stop."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from pathlib import Path
from uuid import UUID

import httpx
import psycopg
import pytest
from prefect import flow, get_client
from prefect.client.schemas.objects import FlowRun
from prefect.settings import Settings

from dispatch.prefect_server import (
    DataDirUnreachable,
    PostgresHandle,
    PrefectServerHandle,
    check_data_dir_access,
    prefect_env,
    start_embedded_postgres,
)


def _port(handle: PostgresHandle) -> int:
    return int(handle.url.rsplit(":", 1)[1].split("/", 1)[0])


def _alive(pid: int) -> bool:
    """True while ``pid`` runs; a zombie (exited, not yet reaped by its parent) counts as gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_prefect_env_uses_real_prefect_setting_names(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    env = prefect_env(
        api_url="http://127.0.0.1:9/api",
        home=tmp_path,
        database_url="postgresql+asyncpg://u@h/db",
        logging_level="ERROR",
    )
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    settings = Settings()
    assert settings.api.url == "http://127.0.0.1:9/api"
    assert settings.home == tmp_path
    assert settings.server.database.connection_url.get_secret_value() == "postgresql+asyncpg://u@h/db"
    assert settings.server.analytics_enabled is False
    assert settings.telemetry.enable_resource_metrics is False
    assert settings.server.ui.enabled is True
    assert settings.server.ui.show_promotional_content is False
    assert settings.logging.level == "ERROR"
    assert settings.server.logging_level == "ERROR"
    # Scheduled runs must still be created and turn Late.
    assert settings.server.services.scheduler.enabled is True
    assert settings.server.services.late_runs.enabled is True


@pytest.mark.skipif(os.geteuid() != 0, reason="PostgreSQL runs as another user only when we are root")
def test_unreachable_parent_is_named(postgres_dirs: Callable[[str], Path]) -> None:
    base = postgres_dirs("access")
    base.chmod(0o711)
    locked = base / "locked"
    locked.mkdir(mode=0o700)
    with pytest.raises(DataDirUnreachable, match=str(locked)):
        check_data_dir_access(locked / "inner" / "pg")


@pytest.mark.integration
def test_server_is_healthy_and_serves_the_ui(prefect_server: PrefectServerHandle) -> None:
    assert httpx.get(f"{prefect_server.api_url}/health").status_code == 200
    page = httpx.get(f"{prefect_server.ui_url}/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "<html" in page.text.lower()


@flow(name="pressroom-smoke")
async def _smoke(n: int) -> int:
    return n + 1


@pytest.mark.integration
def test_async_flow_runs_against_the_session_server(prefect_server: PrefectServerHandle) -> None:
    async def run_and_read_back() -> tuple[str, FlowRun]:
        state = await _smoke(41, return_state=True)
        assert await state.aresult() == 42
        async with get_client() as client:
            run_id: UUID = state.state_details.flow_run_id
            return str(client.api_url), await client.read_flow_run(run_id)

    client_url, flow_run = asyncio.run(run_and_read_back())

    assert client_url.rstrip("/") == prefect_server.api_url
    assert flow_run.state is not None and flow_run.state.is_completed()
    # Read the run straight from the server's REST API: the flow did not use an ephemeral server.
    raw = httpx.get(f"{prefect_server.api_url}/flow_runs/{flow_run.id}").json()
    assert raw["state_type"] == "COMPLETED"


@pytest.mark.integration
def test_embedded_cluster_is_reused_and_keeps_its_data(postgres_dirs: Callable[[str], Path]) -> None:
    data_dir = postgres_dirs("reuse-pg")

    began = time.monotonic()
    first = start_embedded_postgres(data_dir)
    fresh = time.monotonic() - began
    first_pid = first.pid
    assert first_pid is not None
    try:
        with psycopg.connect(host="127.0.0.1", port=_port(first), user="postgres", dbname="prefect") as conn:
            conn.execute("CREATE TABLE probe (note text)")
            conn.execute("INSERT INTO probe VALUES ('kept')")
    finally:
        first.stop()
    assert not _alive(first_pid)

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
        postmaster = adopted.pid
        assert postmaster is not None
        adopted.stop()
        assert not _alive(postmaster)
        assert not (data_dir / "postmaster.pid").exists()
    finally:
        second.stop()
