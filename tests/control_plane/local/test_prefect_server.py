"""The local Prefect server: the settings every process shares, a healthy API and UI, real flow runs."""

from __future__ import annotations

import asyncio
from pathlib import Path
from uuid import UUID

import httpx
import pytest
from prefect import flow, get_client
from prefect.client.schemas.objects import FlowRun
from prefect.settings import Settings

from control_plane.local import PrefectServerHandle, prefect_env


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
