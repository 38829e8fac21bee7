"""Run control through the API, over the recording twin of Prefect: the command layer's rules and the answers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from control_plane.app import create_app
from control_plane.container import Services
from dispatch.prefect_port import RunState
from dispatch.prefect_twin import RecordingPrefect
from tests.fixtures.http_errors import assert_error
from tests.fixtures.stack import OPERATOR_TOKEN, make_settings

OPERATOR = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}
CONFIRM = {"confirm": True}


class Api:
    def __init__(self, client: TestClient[Any], services: Services, relay: RecordingPrefect) -> None:
        self.client, self.services, self.relay = client, services, relay
        assert client.post("/ops/tenants", json={"slug": "acme", "name": "Acme"}, headers=OPERATOR).status_code == 201
        self.owner = self._token("owner")
        self.viewer = self._token("viewer")

    def _token(self, role: str) -> dict[str, str]:
        token = self.client.post("/ops/tenants/acme/tokens", json={"role": role}, headers=OPERATOR).json()["token"]
        return {"Authorization": f"Bearer {token}"}

    def published(self, slug: str) -> str:
        created = self.client.post(
            "/api/tenants/acme/documents", json={"slug": slug, "title": slug, "body": "Body"}, headers=self.owner
        )
        document_id = created.json()["id"]
        answer = self.client.post(
            f"/api/tenants/acme/documents/{document_id}/publish", json=CONFIRM, headers=self.owner
        )
        assert answer.status_code == 202, answer.text
        assert self.services.handoff.flush()
        return str(answer.json()["operation_id"])

    def post(self, path: str, body: Any, headers: dict[str, str] | None = None) -> Any:
        response = self.client.post(f"/api/tenants/acme/operations/{path}", json=body, headers=headers or self.owner)
        assert self.services.handoff.flush()
        return response

    def get(self, path: str) -> dict[str, Any]:
        response = self.client.get(f"/api/tenants/acme/operations/{path}", headers=self.owner)
        assert response.status_code == 200, response.text
        return dict(response.json())


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    settings = make_settings(tmp_path_factory.mktemp("run-control-api") / "data")
    relay = RecordingPrefect()
    services = Services.build(settings, prefect=relay, relay_prefect=relay)
    with TestClient(create_app(settings, services=services)) as client:
        yield Api(client, services, relay)


def test_pause_and_resume_need_confirmation_and_show_why_the_operation_waits(api: Api) -> None:
    operation_id = api.published("pause-me")
    assert_error(api.post(f"{operation_id}/pause", {}), 400, "confirmation_required")
    assert_error(api.post(f"{operation_id}/pause", CONFIRM, api.viewer), 403, "forbidden")

    paused = api.post(f"{operation_id}/pause", CONFIRM)
    assert paused.status_code == 202 and paused.json()["status"] == "paused"
    described = api.get(operation_id)
    assert described["status"] == "paused"
    assert described["waiting"]["reason"] == "paused" and described["waiting"]["until"] is None
    assert described["control"]["action"] == "pause" and described["control"]["applied"] is True
    run = api.relay.runs[described["flow_run_id"]]
    assert run.state == RunState.PAUSED
    # Every declared step of the delivery, none run yet.
    assert [s["name"] for s in described["steps"]][:3] == ["verify", "render_page", "public_record"]
    assert {s["status"] for s in described["steps"]} == {"pending"}

    resumed = api.post(f"{operation_id}/resume", CONFIRM)
    assert resumed.status_code == 202 and resumed.json()["status"] == "queued"
    assert run.state == RunState.SCHEDULED
    assert_error(api.post(f"{operation_id}/resume", CONFIRM), 409, "illegal_transition")


def test_terminate_ends_a_queued_operation_cancelled_and_only_once(api: Api) -> None:
    operation_id = api.published("terminate-me")
    ended = api.post(f"{operation_id}/terminate", CONFIRM)
    assert ended.status_code == 202 and ended.json()["status"] == "cancelled"
    run_id = api.get(operation_id)["flow_run_id"]  # None: it was still waiting behind another publish
    assert run_id is None or api.relay.runs[run_id].state == RunState.CANCELLED
    assert_error(api.post(f"{operation_id}/terminate", CONFIRM), 409, "operation_finished")
    assert_error(api.post(f"{operation_id}/events", {"type": "approval"}), 409, "operation_finished")

    timeline = api.get(f"{operation_id}/timeline")
    events = [entry["event"] for entry in timeline["entries"]]
    assert events[0] == "committed" and "operation.terminate" in events
    assert timeline["prefect"] == "ok"


def test_restart_names_a_declared_step_and_starts_a_new_run(api: Api) -> None:
    operation_id = api.published("restart-me")
    assert_error(api.post(f"{operation_id}/restart", CONFIRM), 409, "illegal_transition")  # still queued
    api.post(f"{operation_id}/terminate", CONFIRM)
    first_run = api.get(operation_id)["flow_run_id"]

    unknown = api.post(f"{operation_id}/restart", {"from_step": "nope", "confirm": True})
    assert_error(unknown, 400, "unknown_step")
    assert "render_page" in unknown.json()["error"]["details"]["steps"]
    assert_error(api.post(f"{operation_id}/restart", {"from_step": "purge"}), 400, "confirmation_required")

    restarted = api.post(f"{operation_id}/restart", {"from_step": "purge", "confirm": True})
    assert restarted.status_code == 202 and restarted.json()["restart"] == 1
    described = api.get(operation_id)
    assert described["restarts"] == 1 and described["flow_run_id"] is not None
    assert described["flow_run_id"] != first_run  # a new run, travelling alone
    run = api.relay.run_for(f"publish:{operation_id}:restart-1")
    assert run is not None and run.request.parameters.restart.from_steps == ("purge",)


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"type": "-starts-with-dash"}, "invalid_event"),
        ({"type": "has space"}, "invalid_event"),
        ({"type": ""}, "invalid_event"),
        ({"type": "approval", "payload": "x" * (1024 * 1024 + 1)}, "invalid_event"),
        ({"type": 7}, "invalid_request"),
        ({"payload": {}}, "invalid_request"),
        ({"type": "approval", "extra": 1}, "invalid_request"),
    ],
)
def test_bad_events_are_400s_and_nothing_is_kept(api: Api, body: dict[str, Any], code: str) -> None:
    operation_id = api.published(f"event-{abs(hash(repr(body)))}")
    assert_error(api.post(f"{operation_id}/events", body), 400, code)
    entries = [entry["event"] for entry in api.get(f"{operation_id}/timeline")["entries"]]
    assert "event_received" not in entries


def test_an_event_for_a_live_operation_is_kept_and_on_its_timeline(api: Api) -> None:
    operation_id = api.published("event-kept")
    sent = api.post(f"{operation_id}/events", {"type": "approval", "payload": {"by": "ed"}})
    assert sent.status_code == 202 and sent.json()["type"] == "approval"
    entries = [entry["event"] for entry in api.get(f"{operation_id}/timeline")["entries"]]
    assert "event_received" in entries and "operation.event" in entries


def test_controls_of_an_unknown_operation_are_404s(api: Api) -> None:
    for action in ("pause", "resume", "terminate", "restart"):
        assert_error(api.post(f"op_missing/{action}", CONFIRM), 404, "not_found")
    assert_error(api.post("op_missing/events", {"type": "approval"}), 404, "not_found")
