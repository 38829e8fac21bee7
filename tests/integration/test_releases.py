"""Releases, scheduling, cancel, reschedule, supersede, idempotency, quota, Prefect down."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta

import pytest
from litestar.testing import TestClient
from prefect.client.orchestration import get_client

from control_plane.app import create_app
from control_plane.container import Services
from dispatch.prefect_twin import RecordingPrefect
from tests.fixtures.stack import Pressroom, Tenant

pytestmark = pytest.mark.integration


def _at(seconds: float) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat()


def _release(room: Pressroom, tenant: Tenant, docs: list[dict], **extra: object):  # type: ignore[no-untyped-def]
    return room.api.post(
        f"/api/tenants/{tenant.slug}/releases",
        json={"documents": [{"id": d["id"], "version": d["version"]} for d in docs], "confirm": True, **extra},
        headers=tenant.headers,
    )


def _run_state(run_id: str):  # type: ignore[no-untyped-def]
    async def read():  # type: ignore[no-untyped-def]
        async with get_client() as client:
            return (await client.read_flow_run(run_id)).state

    return asyncio.run(read())


def test_a_release_of_three_pages_becomes_public_together(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    docs = [pressroom.create_document(acme, f"page-{n}", kind="page", body=f"Body {n}") for n in range(3)]
    before = [pressroom.site.get(f"/{acme.slug}/page-{n}").status_code for n in range(3)]

    response = _release(pressroom, acme, docs)

    assert before == [404, 404, 404]
    assert response.status_code == 202 and response.json()["status"] == "queued"
    assert [pressroom.site.get(f"/{acme.slug}/page-{n}").status_code for n in range(3)] == [200, 200, 200]
    pressroom.start_worker(acme)
    operation = pressroom.wait_operation(acme, response.json()["operation_id"])
    assert operation["status"] == "succeeded" and operation["kind"] == "release"
    for n in range(3):
        assert pressroom.store.get(f"tenants/{acme.slug}/site/page-{n}/index.html") is not None


def test_a_scheduled_release_fires_on_time(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    doc = pressroom.create_document(acme, "embargoed", body="Embargoed news")
    pressroom.start_worker(acme)
    publish_at = datetime.now(UTC) + timedelta(seconds=3)

    response = _release(pressroom, acme, [doc], publish_at=publish_at.isoformat())

    assert response.status_code == 202 and response.json()["status"] == "scheduled"
    assert pressroom.site.get(f"/{acme.slug}/embargoed").status_code == 404
    operation = pressroom.wait_operation(acme, response.json()["operation_id"], timeout=30)
    assert operation["status"] == "succeeded"
    started = datetime.fromisoformat(operation["attempts"][0]["started_at"])
    assert publish_at <= started < publish_at + timedelta(seconds=5)
    assert pressroom.site.get(f"/{acme.slug}/embargoed").status_code == 200


def test_a_scheduled_release_fails_with_version_conflict_after_an_edit(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    first = pressroom.create_document(acme, "first")
    second = pressroom.create_document(acme, "second")
    pressroom.start_worker(acme)
    response = _release(pressroom, acme, [first, second], publish_at=_at(2))
    edited = pressroom.api.put(
        f"/api/tenants/{acme.slug}/documents/{second['id']}",
        json={"version": 1, "body": "changed after scheduling"},
        headers=acme.headers,
    )
    assert edited.status_code == 200

    operation = pressroom.wait_operation(
        acme, response.json()["operation_id"], statuses=("failed", "succeeded"), timeout=30
    )

    assert operation["status"] == "failed"
    assert operation["error"]["code"] == "version_conflict"
    # All or nothing: neither page became public.
    assert pressroom.site.get(f"/{acme.slug}/first").status_code == 404
    assert pressroom.site.get(f"/{acme.slug}/second").status_code == 404


def test_cancel_a_scheduled_release_and_its_run_ends_as_a_noop(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    doc = pressroom.create_document(acme, "never")
    pressroom.start_worker(acme)
    response = _release(pressroom, acme, [doc], publish_at=_at(2))
    op_id = response.json()["operation_id"]
    run_id = _wait_sent(pressroom, acme, op_id)

    cancelled = pressroom.api.post(f"/api/tenants/{acme.slug}/operations/{op_id}/cancel", headers=acme.headers)
    again = pressroom.api.post(f"/api/tenants/{acme.slug}/operations/{op_id}/cancel", headers=acme.headers)

    assert cancelled.status_code == 202 and cancelled.json()["status"] == "cancelled"
    assert again.status_code == 409 and again.json()["error"]["code"] == "illegal_transition"
    state = _wait_run_final(run_id)
    assert state.is_completed() and "no-op" in (state.message or "")
    assert pressroom.operation(acme, op_id)["status"] == "cancelled"
    assert pressroom.site.get(f"/{acme.slug}/never").status_code == 404


def test_reschedule_creates_a_new_operation_and_the_old_run_is_a_noop(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    doc = pressroom.create_document(acme, "moved")
    old = _release(pressroom, acme, [doc], publish_at=_at(2)).json()["operation_id"]
    old_run = _wait_sent(pressroom, acme, old)

    # No worker yet: however loaded the machine, the release is still scheduled (not claimed) when
    # it is moved, even if its two seconds have passed; its run fires as soon as the worker starts.
    moved = pressroom.api.post(
        f"/api/tenants/{acme.slug}/operations/{old}/reschedule",
        json={"publish_at": _at(4), "confirm": True},
        headers=acme.headers,
    )
    pressroom.start_worker(acme)

    assert moved.status_code == 202, moved.text
    new = moved.json()["operation_id"]
    assert new != old and moved.json()["replaces"] == old
    assert pressroom.operation(acme, old)["status"] == "cancelled"
    old_state = _wait_run_final(old_run)
    assert old_state.is_completed() and "no-op" in (old_state.message or "")
    assert pressroom.site.get(f"/{acme.slug}/moved").status_code == 404
    assert pressroom.wait_operation(acme, new, timeout=30)["status"] == "succeeded"
    assert pressroom.site.get(f"/{acme.slug}/moved").status_code == 200


@pytest.mark.parametrize("publish_at", ["2030-01-01T09:00:00", "2001-01-01T00:00:00+00:00", "far"])
def test_bad_publish_at_is_refused_and_nothing_is_written(pressroom: Pressroom, publish_at: str) -> None:
    acme = pressroom.new_tenant("acme")
    doc = pressroom.create_document(acme, "x")
    if publish_at == "far":
        publish_at = _at(91 * 24 * 3600)

    response = _release(pressroom, acme, [doc], publish_at=publish_at)

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_schedule"
    assert pressroom.api.get(f"/api/tenants/{acme.slug}/operations", headers=acme.headers).json() == []


def test_an_older_version_delivered_late_is_superseded(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    doc = pressroom.create_document(acme, "news", body="first version")
    first = pressroom.publish(acme, doc["id"])["operation_id"]
    pressroom.api.put(
        f"/api/tenants/{acme.slug}/documents/{doc['id']}",
        json={"version": 1, "body": "second version"},
        headers=acme.headers,
    )
    second = pressroom.publish(acme, doc["id"])["operation_id"]
    pressroom.start_worker(acme)

    assert pressroom.wait_operation(acme, first)["status"] == "superseded"
    assert pressroom.wait_operation(acme, second)["status"] == "succeeded"
    page = pressroom.site.get(f"/{acme.slug}/news")
    assert "second version" in page.text and "first version" not in page.text


def test_idempotency_key_repeats_the_first_answer_and_rejects_another_body(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    doc = pressroom.create_document(acme, "once")
    url = f"/api/tenants/{acme.slug}/documents/{doc['id']}/publish"
    headers = {**acme.headers, "Idempotency-Key": "publish-once-1"}

    first = pressroom.api.post(url, json={"confirm": True}, headers=headers)
    repeat = pressroom.api.post(url, json={"confirm": True}, headers=headers)
    other = pressroom.api.post(url, json={"confirm": True, "version": 1}, headers=headers)

    assert first.status_code == repeat.status_code == 202
    assert repeat.json()["operation_id"] == first.json()["operation_id"]
    assert other.status_code == 409 and other.json()["error"]["code"] == "idempotency_key_reused"
    operations = pressroom.api.get(f"/api/tenants/{acme.slug}/operations", headers=acme.headers).json()
    assert len(operations) == 1


def test_quota_answers_429_with_retry_after(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    quota = pressroom.api.patch(
        f"/ops/tenants/{acme.slug}/quota", json={"publishes_per_hour": 2}, headers=pressroom.operator
    )
    assert quota.status_code == 200
    docs = [pressroom.create_document(acme, f"q-{n}") for n in range(3)]
    answers = [
        pressroom.api.post(
            f"/api/tenants/{acme.slug}/documents/{d['id']}/publish", json={"confirm": True}, headers=acme.headers
        )
        for d in docs
    ]

    assert [a.status_code for a in answers] == [202, 202, 429]
    assert answers[2].json()["error"]["code"] == "quota_exceeded"
    assert 0 < int(answers[2].headers["retry-after"]) <= 3600
    assert (
        pressroom.api.get(f"/api/tenants/{acme.slug}/documents/{docs[2]['id']}", headers=acme.headers).json()["status"]
        == "draft"
    )


def test_a_command_commits_while_prefect_is_down_and_the_sweeper_sends_it_later(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    doc = pressroom.create_document(acme, "resilient")
    settings = pressroom.settings
    services = Services.build(
        settings,
        factory=pressroom.factory,
        prefect=RecordingPrefect(down=True),
        relay_prefect=RecordingPrefect(down=True),
    )
    with TestClient(create_app(settings, services=services)) as cut_off:
        started = time.monotonic()
        response = cut_off.post(
            f"/api/tenants/{acme.slug}/documents/{doc['id']}/publish", json={"confirm": True}, headers=acme.headers
        )
        assert response.status_code == 202
        assert time.monotonic() - started < 5  # the answer never waits on Prefect
        assert services.handoff.flush(10)  # the relay tried, and kept the operation unsent
    op_id = response.json()["operation_id"]
    pending = pressroom.operation(acme, op_id)
    assert pending["status"] == "queued" and pending["sent"] is False and pending["send_error"]
    assert pressroom.site.get(f"/{acme.slug}/resilient").status_code == 200  # the commit stands

    pressroom.start_worker(acme)  # its sweeper finds the unsent operation

    done = pressroom.wait_operation(acme, op_id)
    assert done["status"] == "succeeded" and done["sent"] is True


def _wait_sent(room: Pressroom, tenant: Tenant, op_id: str, timeout: float = 15) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        operation = room.operation(tenant, op_id)
        if operation["flow_run_id"]:
            return str(operation["flow_run_id"])
        time.sleep(0.1)
    raise AssertionError("operation never sent")


def _wait_run_final(run_id: str, timeout: float = 30):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = _run_state(run_id)
        if state is not None and state.is_final():
            return state
        time.sleep(0.2)
    raise AssertionError("run never finished")


def test_redirects_are_versioned_and_go_public_with_a_release(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    target = pressroom.create_document(acme, "new-home", kind="page")
    saved = pressroom.api.put(
        f"/api/tenants/{acme.slug}/site/redirects",
        headers=acme.headers,
        json={"version": 0, "content": [{"from": "/old-home", "to": "/new-home", "status": 301}]},
    )
    stale = pressroom.api.put(
        f"/api/tenants/{acme.slug}/site/redirects", headers=acme.headers, json={"version": 0, "content": []}
    )
    bad = pressroom.api.put(
        f"/api/tenants/{acme.slug}/site/redirects",
        headers=acme.headers,
        json={"version": 1, "content": [{"from": "old", "to": "javascript:alert(1)"}]},
    )
    before = pressroom.site.get(f"/{acme.slug}/old-home", follow_redirects=False)

    released = _release(pressroom, acme, [target], redirects_version=1)

    assert saved.status_code == 200 and saved.json()["version"] == 1 and saved.json()["published_version"] is None
    assert stale.status_code == 409 and bad.status_code == 400
    assert before.status_code == 404
    assert released.status_code == 202
    moved = pressroom.site.get(f"/{acme.slug}/old-home", follow_redirects=False)
    assert moved.status_code == 301
    assert moved.headers["location"] == f"http://site.test/{acme.slug}/new-home"
    resource = pressroom.api.get(f"/api/tenants/{acme.slug}/site/redirects", headers=acme.headers).json()
    assert resource["published_version"] == 1 and resource["published_content"][0]["from"] == "/old-home"
