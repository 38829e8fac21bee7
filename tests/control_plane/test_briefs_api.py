"""The brief intake and lanes API over the recording twin of Prefect: validation, brief_id idempotency, packs."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient
from typer.testing import CliRunner

from control_plane.app import create_app
from control_plane.cli import app as cli
from control_plane.container import Services
from control_plane.settings import Settings
from dispatch.prefect_twin import RecordingPrefect
from tenant_runtime.lanes import BACKBONE, REFERENCE_LANES
from tenant_runtime.lanes.reference import RESEARCH_GRAPH
from tests.fixtures.http_errors import assert_error
from tests.fixtures.stack import OPERATOR_TOKEN, make_settings

OPERATOR = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}
T = "/api/tenants/lanes"


@pytest.fixture(scope="module")
def relay_twin() -> RecordingPrefect:
    return RecordingPrefect()


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return make_settings(tmp_path_factory.mktemp("briefs-api") / "data")


@pytest.fixture(scope="module")
def api(settings: Settings, relay_twin: RecordingPrefect) -> Iterator[TestClient[Any]]:
    services = Services.build(settings, prefect=RecordingPrefect(), relay_prefect=relay_twin)
    with TestClient(create_app(settings, services=services)) as client:
        assert client.post("/ops/tenants", json={"slug": "lanes", "name": "Lanes"}, headers=OPERATOR).status_code == 201
        yield client


def _token(api: TestClient[Any], role: str) -> dict[str, str]:
    token = api.post("/ops/tenants/lanes/tokens", json={"role": role}, headers=OPERATOR).json()["token"]
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture(scope="module")
def owner(api: TestClient[Any]) -> dict[str, str]:
    return _token(api, "owner")


@pytest.fixture(scope="module")
def editor(api: TestClient[Any]) -> dict[str, str]:
    return _token(api, "editor")


def brief(brief_id: str, **fields: Any) -> dict[str, Any]:
    return {
        "brief_id": brief_id,
        "lane": "news",
        "title": f"Story {brief_id}",
        "sources": ["https://example.com/a"],
        "notes": "What changed.\nWhy it matters.",
        **fields,
    }


def _wait_run(twin: RecordingPrefect, key: str) -> Any:
    deadline = time.monotonic() + 10
    while (run := twin.run_for(key)) is None:
        assert time.monotonic() < deadline, f"no run for {key}"
        time.sleep(0.02)
    return run


def test_the_site_has_the_seven_reference_lanes_on_the_backbone(api: TestClient[Any], editor: dict[str, str]) -> None:
    lanes = api.get(f"{T}/lanes", headers=editor)
    assert lanes.status_code == 200
    assert {lane["name"] for lane in lanes.json()} == set(REFERENCE_LANES) and len(REFERENCE_LANES) == 7
    for lane in lanes.json():
        assert lane["graph"] == list(BACKBONE)
        assert lane["pack_version"] == 1 and lane["source"] == "backbone" and lane["enabled"] is True
    pack = api.get(f"{T}/lanes/dev/pack", headers=editor).json()
    assert pack["version"] == 1 and pack["voice"] == REFERENCE_LANES["dev"].voice


def test_a_brief_is_accepted_once_and_its_repeat_answers_already_queued(
    api: TestClient[Any], editor: dict[str, str], relay_twin: RecordingPrefect
) -> None:
    first = api.post(f"{T}/briefs", json=brief("b-1"), headers=editor)
    assert first.status_code == 202, first.text
    assert first.json()["status"] == "queued"
    operation_id = first.json()["operation_id"]

    again = api.post(f"{T}/briefs", json=brief("b-1"), headers=editor)
    assert again.status_code == 200
    assert again.json()["status"] == "already queued" and again.json()["operation_id"] == operation_id

    run = _wait_run(relay_twin, "brief:b-1")
    assert "lane:news" in run.request.tags and f"op:{operation_id}" in run.request.tags
    articles = [op for op in api.get(f"{T}/operations", headers=editor).json() if op["kind"] == "article"]
    assert [op["id"] for op in articles] == [operation_id]
    assert len([c for c in relay_twin.called("create_run") if c["request"].idempotency_key == "brief:b-1"]) == 1

    reused = api.post(f"{T}/briefs", json=brief("b-1", title="Another story"), headers=editor)
    error = assert_error(reused, 409, "brief_id_reused")
    assert error["details"]["operation_id"] == operation_id


def test_a_request_resolves_its_dependencies_in_turn_without_a_task_group(
    api: TestClient[Any], editor: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two dependencies at one level are resolved in an anyio task group, on every request (about a sixth of
    a brief's CPU, benchmarks/analysis.md); the principal depends on the services, so no group is made."""
    import litestar._kwargs.kwargs_model as kwargs_model

    def no_task_group() -> None:
        raise AssertionError("the request's dependencies were resolved in a task group")

    monkeypatch.setattr(kwargs_model, "create_task_group", no_task_group)
    accepted = api.post(f"{T}/briefs", json=brief("b-deps"), headers=editor)
    assert accepted.status_code == 202, accepted.text
    assert api.get(f"{T}/briefs/b-deps", headers=editor).json()["operation_id"] == accepted.json()["operation_id"]


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"lane": "news", "title": "No id"}, 400, "invalid_request"),
        (brief("bad id!"), 400, "invalid_request"),
        (brief("b-x", lane="poetry"), 400, "unknown_lane"),
        (brief("b-x", title=""), 400, "invalid_request"),
        (brief("b-x", sources=["ftp://example.com/x"]), 400, "invalid_request"),
        (brief("b-x", slug="Not A Slug"), 400, "invalid_request"),
        (brief("b-x", slug="search"), 400, "invalid_slug"),
        (brief("b-x", surprise=True), 400, "invalid_request"),
    ],
)
def test_a_bad_brief_is_a_4xx_with_a_code_and_writes_nothing(
    api: TestClient[Any], editor: dict[str, str], body: dict[str, Any], status: int, code: str
) -> None:
    assert_error(api.post(f"{T}/briefs", json=body, headers=editor), status, code)
    assert api.get(f"{T}/briefs/b-x", headers=editor).status_code == 404


def test_slugs_are_unique_in_the_site_across_documents_and_briefs(
    api: TestClient[Any], editor: dict[str, str], owner: dict[str, str]
) -> None:
    doc = api.post(f"{T}/documents", json={"slug": "taken", "title": "Taken"}, headers=editor)
    assert doc.status_code == 201
    assert_error(api.post(f"{T}/briefs", json=brief("b-slug", slug="taken"), headers=editor), 409, "slug_taken")
    assert api.post(f"{T}/briefs", json=brief("b-slug-1", slug="fresh"), headers=editor).status_code == 202
    assert_error(api.post(f"{T}/briefs", json=brief("b-slug-2", slug="fresh"), headers=editor), 409, "slug_taken")


def test_a_disabled_lane_refuses_briefs_and_a_viewer_cannot_post(api: TestClient[Any], owner: dict[str, str]) -> None:
    assert api.post(f"{T}/lanes/design/enabled", json={"enabled": False}, headers=owner).status_code == 200
    assert_error(api.post(f"{T}/briefs", json=brief("b-off", lane="design"), headers=owner), 409, "lane_disabled")
    assert api.post(f"{T}/lanes/design/enabled", json={"enabled": True}, headers=owner).status_code == 200
    assert api.post(f"{T}/briefs", json=brief("b-off", lane="design"), headers=owner).status_code == 202
    assert_error(api.post(f"{T}/briefs", json=brief("b-v"), headers=_token(api, "viewer")), 403, "forbidden")


def test_packs_are_versioned_data_and_a_brief_keeps_the_version_it_was_accepted_with(
    api: TestClient[Any], owner: dict[str, str], editor: dict[str, str]
) -> None:
    assert api.post(f"{T}/briefs", json=brief("b-pack-1", lane="founders"), headers=editor).status_code == 202
    edited = api.put(
        f"{T}/lanes/founders/pack", json={"version": 1, "voice": "Blunt.", "avoid": ["jargon"]}, headers=owner
    )
    assert edited.status_code == 200, edited.text
    assert edited.json()["version"] == 2 and edited.json()["voice"] == "Blunt."
    assert edited.json()["audience"] == REFERENCE_LANES["founders"].audience  # carried over
    assert_error(
        api.put(f"{T}/lanes/founders/pack", json={"version": 1, "voice": "x"}, headers=owner), 409, "version_conflict"
    )
    assert_error(
        api.put(f"{T}/lanes/founders/pack", json={"version": 2, "voice": "x"}, headers=editor), 403, "forbidden"
    )
    assert api.post(f"{T}/briefs", json=brief("b-pack-2", lane="founders"), headers=editor).status_code == 202

    assert api.get(f"{T}/briefs/b-pack-1", headers=editor).json()["pack_version"] == 1
    assert api.get(f"{T}/briefs/b-pack-2", headers=editor).json()["pack_version"] == 2
    assert (
        api.get(f"{T}/lanes/founders/pack?version=1", headers=editor).json()["voice"]
        == REFERENCE_LANES["founders"].voice
    )
    lanes = {lane["name"]: lane for lane in api.get(f"{T}/lanes", headers=editor).json()}
    assert lanes["founders"]["pack_version"] == 2


def test_the_cli_posts_briefs_and_operates_lanes_through_the_same_services(
    api: TestClient[Any], settings: Settings, editor: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PRESSROOM_DATA_DIR", str(settings.runtime.data_dir))
    monkeypatch.setenv("PRESSROOM_DATABASE_URL", settings.control_plane.database_url)
    monkeypatch.setenv("PRESSROOM_SITE_URL", settings.runtime.site_url)
    runner = CliRunner()
    args = ["briefs", "submit", "lanes", "--brief-id", "cli-1", "--lane", "build", "--title", "From the shell"]

    first, again = runner.invoke(cli, args), runner.invoke(cli, args)
    budget = runner.invoke(cli, ["lanes", "budget", "lanes", "build", "5000"])
    listed = runner.invoke(cli, ["lanes", "list", "lanes"])
    bad = runner.invoke(cli, ["briefs", "submit", "lanes", "--brief-id", "cli-2", "--lane", "nope", "--title", "X"])

    assert first.exit_code == 0, first.output
    assert '"http_status": 202' in first.output and '"status": "queued"' in first.output
    assert '"http_status": 200' in again.output and "already queued" in again.output
    assert budget.exit_code == 0 and '"budget_micros": 5000' in budget.output
    assert listed.exit_code == 0 and "validate → ground → generate" in listed.output
    assert bad.exit_code != 0
    shown = api.get(f"{T}/briefs/cli-1", headers=editor).json()
    assert shown["lane"] == "build" and shown["slug"] == "from-the-shell" and shown["cost_micros"] == 0
    assert api.get(f"{T}/costs", headers=editor).json() == []


def test_a_lane_with_its_own_graph_is_checked_when_installed(
    api: TestClient[Any], owner: dict[str, str], editor: dict[str, str]
) -> None:
    research = {"name": "research", "graph": list(RESEARCH_GRAPH), "source": "research-pack@1.0.0"}
    installed = api.post(f"{T}/lanes", json=research, headers=owner)
    assert installed.status_code == 201, installed.text
    assert installed.json()["graph"] == [n["id"] for n in RESEARCH_GRAPH]
    assert installed.json()["source"] == "research-pack@1.0.0" and installed.json()["pack_version"] == 1

    broken = [n for n in RESEARCH_GRAPH if n["step"] != "clean"]
    error = assert_error(
        api.post(f"{T}/lanes", json={"name": "broken", "graph": broken}, headers=owner), 400, "lane_graph_invalid"
    )
    assert error["details"] == {"node": "persist", "step": "persist", "missing": ["body"]}
    assert "persist" in error["message"] and "body" in error["message"]
    unknown = [*RESEARCH_GRAPH, {"id": "tweet", "step": "tweet"}]
    assert_error(
        api.post(f"{T}/lanes", json={"name": "broken", "graph": unknown}, headers=owner), 400, "lane_graph_invalid"
    )
    close = [*BACKBONE[:3], "fact_check", *BACKBONE[3:]]
    one_step = {"name": "close", "graph": [{"id": s, "step": s} for s in close]}
    assert_error(api.post(f"{T}/lanes", json=one_step, headers=owner), 400, "lane_graph_too_close")
    assert_error(api.post(f"{T}/lanes", json={**one_step, "override": True}, headers=owner), 403, "forbidden")
    assert api.post(f"{T}/lanes", json={**one_step, "override": True}, headers=OPERATOR).status_code == 201
    assert_error(api.post(f"{T}/lanes", json=research, headers=editor), 403, "forbidden")
    names = {lane["name"] for lane in api.get(f"{T}/lanes", headers=editor).json()}
    assert {"research", "close"} <= names and "broken" not in names
