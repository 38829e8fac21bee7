"""``pressroom tenants create|list|show|suspend|resume|quota|tokens``, ``audit`` and ``shards``: the operator API
from a shell, through the same services (audited as ``operator:cli``), against the recording twin of Prefect."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from control_plane.cli import app
from control_plane.cli import tenants as tenants_cli
from control_plane.container import Services
from dispatch.prefect_twin import RecordingPrefect
from tests.fixtures.stack import make_settings


@pytest.fixture
def prefect(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RecordingPrefect:
    """Every CLI command builds its services over one data directory and this Prefect twin."""
    twin = RecordingPrefect()
    settings = make_settings(tmp_path / "data")
    monkeypatch.setattr(
        tenants_cli, "services", lambda **_: Services.build(settings, prefect=twin, relay_prefect=RecordingPrefect())
    )
    return twin


def _cli(*args: str, input: str | None = None) -> Any:
    return CliRunner().invoke(app, list(args), input=input)


def test_an_operator_runs_a_tenants_life_from_the_shell(prefect: RecordingPrefect) -> None:
    assert _cli("tenants", "create", "acme", "Acme").exit_code == 0
    listed = _cli("tenants", "list")
    assert listed.exit_code == 0 and "acme" in listed.stdout and "default" in listed.stdout

    token = _cli("tenants", "tokens", "acme", "--role", "editor", "--name", "ci")
    assert token.exit_code == 0, token.output
    issued = token.stdout.strip().splitlines()[-1]  # the token alone on stdout's last line: scripts capture it
    member = tenants_cli.services().tokens.resolve(f"Bearer {issued}")
    assert (member.tenant_slug, member.role) == ("acme", "editor")

    assert _cli("tenants", "quota", "acme", "12").exit_code == 0
    assert _cli("tenants", "suspend", "acme", input="n\n").exit_code != 0  # asks first; "no" changes nothing
    assert prefect.queues["tenant-acme"].paused is not True
    for bad in ("x" * 501, "line one\nline two"):  # the API's rule for a reason: refused before anything changes
        refused = _cli("tenants", "suspend", "acme", "--reason", bad, "--yes")
        assert refused.exit_code == 1 and "error: invalid_request:" in refused.output, refused.output
    assert prefect.queues["tenant-acme"].paused is not True
    suspended = _cli("tenants", "suspend", "acme", "--reason", "Unpaid invoice: call billing", "--yes")
    assert suspended.exit_code == 0 and "suspended" in suspended.output
    assert prefect.queues["tenant-acme"].paused is True

    prefect.late["acme"] = (3, 120.0)
    shown = _cli("tenants", "show", "acme", "--json")
    assert shown.exit_code == 0, shown.output
    detail = json.loads(shown.stdout)
    assert detail["status"] == "suspended" and detail["publishes_per_hour"] == 12 and detail["shard"] == "default"
    assert detail["status_reason"] == "Unpaid invoice: call billing"  # what its editors are told (banner, 423)
    assert detail["queue_depth"] == 0 and detail["late_runs"] == 3 and detail["prefect"] == "ok"
    table = _cli("tenants", "show", "acme")
    assert table.exit_code == 0 and "3 (by 120s)" in table.stdout and "Unpaid invoice" in table.stdout

    assert _cli("tenants", "resume", "acme").exit_code == 0
    assert prefect.queues["tenant-acme"].paused is False

    audit = _cli("audit", "--tenant", "acme", "--json")
    assert audit.exit_code == 0, audit.output
    actions = [entry["action"] for entry in json.loads(audit.stdout)]
    assert actions == ["tenant.resume", "tenant.suspend", "tenant.quota.set", "token.issue", "tenant.create"]
    assert {entry["actor"] for entry in json.loads(audit.stdout)} == {"operator:cli"}
    suspend_row = next(entry for entry in json.loads(audit.stdout) if entry["action"] == "tenant.suspend")
    assert "Unpaid invoice: call billing" in json.dumps(suspend_row)  # the reason is kept in the audit row
    assert json.loads(_cli("tenants", "show", "acme", "--json").stdout)["status_reason"] is None  # resume clears it


def test_refusals_are_a_code_and_exit_1_never_a_traceback(prefect: RecordingPrefect) -> None:
    assert _cli("tenants", "create", "acme", "Acme").exit_code == 0
    for args, code in (
        (("tenants", "show", "nobody"), "not_found"),
        (("tenants", "tokens", "acme", "--role", "admin"), "invalid_role"),
        (("tenants", "quota", "acme", "1000000000"), "invalid_request"),
        (("tenants", "create", "acme", "Again"), "already_exists"),
    ):
        result = _cli(*args)
        assert result.exit_code == 1, (args, result.output)
        assert f"error: {code}:" in result.output, (args, result.output)
        assert result.exception is None or isinstance(result.exception, SystemExit)
    prefect.down = True  # the queue cannot be paused: nothing is flipped
    refused = _cli("tenants", "suspend", "acme", "--yes")
    assert refused.exit_code == 1 and "error: " in refused.output
    assert json.loads(_cli("tenants", "show", "acme", "--json").stdout)["status"] == "active"


def test_tenants_list_follows_the_pages_to_the_last_tenant(
    prefect: RecordingPrefect, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tenants_cli, "LIST_PAGE", 2)
    slugs = ["pg-a", "pg-b", "pg-c", "pg-d", "pg-e"]
    for slug in slugs:
        assert _cli("tenants", "create", slug, slug).exit_code == 0
    listed = _cli("tenants", "list")
    assert listed.exit_code == 0, listed.output
    assert [line.split("│")[1].strip() for line in listed.stdout.splitlines() if "pg-" in line] == slugs
    # Printed as it is read: a table a page (three here), the header once, every page's columns as wide.
    assert listed.stdout.count("slug") == 1 and listed.stdout.count("└") == 3
    assert len({len(line) for line in listed.stdout.splitlines() if "pg-" in line}) == 1
