"""The Prefect server restarts in the middle of a delivery: the run still completes."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from control_plane.local import PrefectServerHandle, ensure_external_database, free_port, start_prefect_server
from flows.probes import PROBES
from tests.fixtures.stack import build_pressroom

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture
def own_prefect_database() -> Iterator[str]:
    name = f"pressroom_restart_{secrets.token_hex(5)}"
    handle = ensure_external_database(f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}")
    try:
        yield handle.url
    finally:
        with psycopg.connect(host="127.0.0.1", port=5432, user="postgres", dbname="postgres", autocommit=True) as c:
            c.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def test_a_delivery_survives_a_prefect_server_restart(
    prefect_server: PrefectServerHandle, own_prefect_database: str, tmp_path: Path
) -> None:
    port = free_port()
    home = tmp_path / "prefect-home"

    def start() -> PrefectServerHandle:
        return start_prefect_server(
            database_url=own_prefect_database, home=home, port=port, log_path=tmp_path / "prefect.log"
        )

    server = start()
    try:
        with build_pressroom(tmp_path, api_url=server.api_url) as room:
            acme = room.new_tenant("acme")
            doc = room.create_document(acme, "steady", body="survives restarts")
            gate = PROBES.park(acme.slug, "render_home")
            room.start_worker(acme)
            op = room.publish(acme, doc["id"])["operation_id"]
            deadline = time.monotonic() + 60
            while PROBES.count(acme.slug, "render_home") == 0:
                assert time.monotonic() < deadline, "delivery never reached render_home"
                time.sleep(0.05)

            server.stop()
            server = start()
            gate.set()

            done = room.wait_operation(acme, op, timeout=180)
            assert done["status"] == "succeeded", done
            assert PROBES.count(acme.slug, "render_page") == 1  # completed steps never redone
            assert room.site.get(f"/{acme.slug}/steady").headers["x-pressroom-source"] in ("object", "cache")
    finally:
        server.stop()
