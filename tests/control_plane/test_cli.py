"""The operator CLI goes through the same command layer and reads the same operations."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from control_plane.cli import app
from flows.probes import PROBES
from tests.fixtures.stack import Pressroom

pytestmark = pytest.mark.integration


def _env(room: Pressroom, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRESSROOM_DATA_DIR", str(room.settings.runtime.data_dir))
    monkeypatch.setenv("PRESSROOM_DATABASE_URL", room.settings.control_plane.database_url)
    monkeypatch.setenv("PRESSROOM_SITE_URL", room.settings.runtime.site_url)


def test_runs_describe_and_retry_from_the_cli(pressroom: Pressroom, monkeypatch: pytest.MonkeyPatch) -> None:
    _env(pressroom, monkeypatch)
    acme = pressroom.new_tenant("acme")
    doc = pressroom.create_document(acme, "cli-page")
    PROBES.fail(acme.slug, "render_page", times=1, permanent=True)
    pressroom.start_worker(acme)
    op = pressroom.publish(acme, doc["id"])["operation_id"]
    assert pressroom.wait_operation(acme, op)["status"] == "dead"
    runner = CliRunner()

    listed = runner.invoke(app, ["operations", "list", "--status", "dead", "--tenant", acme.slug])
    described = runner.invoke(app, ["runs", "describe", acme.slug, op, "--json"])
    retried = runner.invoke(app, ["operations", "retry", acme.slug, op, "--timeout", "60"])

    assert listed.exit_code == 0 and op in listed.output
    assert described.exit_code == 0, described.output
    info = json.loads(described.output)
    assert info["operation"]["status"] == "dead"
    assert info["flow_run"]["work_queue_name"] == f"tenant-{acme.slug}"
    assert f"op:{op}" in info["flow_run"]["tags"]
    assert retried.exit_code == 0, retried.output
    assert pressroom.operation(acme, op)["status"] == "succeeded"


def test_cli_retry_of_another_status_is_a_clear_error(pressroom: Pressroom, monkeypatch: pytest.MonkeyPatch) -> None:
    _env(pressroom, monkeypatch)
    acme = pressroom.new_tenant("acme")
    doc = pressroom.create_document(acme, "fine")
    op = pressroom.publish(acme, doc["id"])["operation_id"]

    result = CliRunner().invoke(app, ["operations", "retry", acme.slug, op, "--no-wait"])

    assert result.exit_code != 0
    assert isinstance(result.exception, Exception) and "queued" in str(result.exception)
