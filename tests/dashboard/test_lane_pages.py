"""Briefs and lanes in the dashboard: the briefs list (lane, run, cost; searched and filtered on the server),
lanes with their costs per lane and day, enable/disable, editorial packs edited as new versions, and the
approvals inbox deciding a waiting run through the operation-event command, confirmed — by role and tenant."""

from __future__ import annotations

from typing import Any

from tenant_runtime.actions import operations as operation_actions
from tenant_runtime.actions import run_control
from tenant_runtime.workflows import Carried
from tenant_runtime.workspace.lane_models import CostEntry
from tenant_runtime.workspace.run_control_models import OperationEvent
from tests.dashboard.conftest import OPERATOR, Dashboard
from tests.dashboard.test_dashboard import _flash

S = "/dashboard/sites/acme"


def _brief(dashboard: Dashboard, token: str, brief_id: str, lane: str = "news", **fields: Any) -> str:
    """Post a brief through the tenant API, as an agent does; its operation id."""
    body = {"brief_id": brief_id, "lane": lane, "title": f"Story {brief_id}", **fields}
    answer = dashboard.client.post("/api/tenants/acme/briefs", json=body, headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 202, answer.text
    return str(answer.json()["operation_id"])


def _waiting_for_approval(dashboard: Dashboard, operation_id: str) -> None:
    """What a worker does when a lane's run reaches its approve step: claim, record the wait, park."""
    dashboard.services.handoff.flush()
    ws = dashboard.factory.open("acme")
    with ws.transaction() as tx:
        operation = operation_actions.get_operation(tx, operation_id)
        assert operation.flow_run_id is not None
        carried = Carried(operation_id=operation.id, workflow=operation.flow_name, fields={})
        operation_actions.claim(tx, carried, flow_run_id=operation.flow_run_id)
        assert run_control.check_wait(tx, operation_id, "approve", "approval", 3600).status == "pending"
        assert run_control.parked(tx, [operation_id]).decision == "waiting"


def _events(dashboard: Dashboard, operation_id: str) -> list[OperationEvent]:
    with dashboard.factory.open("acme").reader() as tx:
        return run_control.events_of(tx, operation_id)


def test_briefs_show_their_lane_run_and_cost_and_are_filtered_on_the_server(dashboard: Dashboard) -> None:
    token = dashboard.tenant("acme")
    news = _brief(dashboard, token, "b-news-1", slug="rates-rise")
    dev = _brief(dashboard, token, "b-dev-1", lane="dev")
    with dashboard.factory.open("acme").transaction() as tx:
        tx.add(
            CostEntry(
                brief_id="b-news-1",
                lane="news",
                operation_id=news,
                step="generate",
                provider="offline",
                cost_micros=12_500,
            )
        )
    browser = dashboard.browser(token)

    page = browser.get(f"{S}/briefs")

    assert page.status_code == 200 and "Story b-news-1" in page.text and "Story b-dev-1" in page.text
    row = page.text.split('id="brief-b-news-1"')[1].split("</tr>")[0]
    assert f"{S}/operations/{news}" in row and 'data-status="queued"' in row and "$0.0125" in row
    assert f"{S}/lanes/news/pack?version=1" in row and "/rates-rise" in row
    only_dev = browser.get(f"{S}/briefs?lane=dev").text
    assert f"{S}/operations/{dev}" in only_dev and "b-news-1" not in only_dev.split('id="brief-table"')[1]
    found = browser.get(f"{S}/briefs?q=rates").text.split('id="brief-table"')[1]
    assert "b-news-1" in found and "b-dev-1" not in found
    assert "No briefs matching" in browser.get(f"{S}/briefs?q=nothing%25").text


def test_lanes_show_costs_per_lane_and_an_owner_disables_one(dashboard: Dashboard) -> None:
    token = dashboard.tenant("acme")
    op = _brief(dashboard, token, "b-1")
    with dashboard.factory.open("acme").transaction() as tx:
        for step, micros in (("generate", 20_000), ("cover", 5_000)):
            tx.add(
                CostEntry(
                    brief_id="b-1", lane="news", operation_id=op, step=step, provider="offline", cost_micros=micros
                )
            )
    owner = dashboard.browser(token)

    page = owner.get(f"{S}/lanes")

    news = page.text.split('id="lane-news"')[1].split("</tr>")[0]
    assert "$0.0250" in news and "(2 paid calls)" in news and news.startswith(' data-enabled="yes"')
    assert "validate → ground → generate" in news and f"{S}/lanes/news/pack" in news
    assert '<tr data-lane="news">' in page.text  # the per-day table
    off = owner.post(f"{S}/lanes/news/enabled", {})
    assert "Lane news is disabled" in _flash(off.text) and 'id="lane-news" data-enabled="no"' in off.text
    refused = dashboard.client.post(
        "/api/tenants/acme/briefs",
        json={"brief_id": "b-2", "lane": "news", "title": "Later"},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "lane_disabled"
    on = owner.post(f"{S}/lanes/news/enabled", {"enabled": "yes"})
    assert 'id="lane-news" data-enabled="yes"' in on.text

    editor = dashboard.browser(dashboard.tenant("acme", role="editor"))
    assert "Disable" not in editor.get(f"{S}/lanes").text.split('id="lane-news"')[1].split("</tr>")[0]
    denied = editor.post(f"{S}/lanes/news/enabled", {})
    assert "does not allow site.admin" in _flash(denied.text) and 'id="lane-news" data-enabled="yes"' in denied.text


def test_an_owner_requires_approval_and_sets_a_budget_per_run(dashboard: Dashboard) -> None:
    owner = dashboard.browser(dashboard.tenant("acme"))
    owner.get(f"{S}/lanes")

    required = owner.post(f"{S}/lanes/news/approval", {"required": "yes"})

    assert "now waits for an editor&#39;s approval" in _flash(required.text)
    news = required.text.split('id="lane-news"')[1].split("</tr>")[0]
    assert 'data-approval="yes"' in news and "cover → approve → publish" in news
    budget = owner.post(f"{S}/lanes/news/budget", {"budget": "$0.125"})
    assert "more than $0.125" in _flash(budget.text)
    news = budget.text.split('id="lane-news"')[1].split("</tr>")[0]
    assert 'data-budget="125000"' in news and 'value="0.125"' in news
    bad = owner.post(f"{S}/lanes/news/budget", {"budget": "lots"})
    assert "amount of dollars" in _flash(bad.text) and 'data-budget="125000"' in bad.text
    cleared = owner.post(f"{S}/lanes/news/budget", {"budget": ""})
    assert "default budget" in _flash(cleared.text) and 'data-budget=""' in cleared.text.split('id="lane-news"')[1]
    off = owner.post(f"{S}/lanes/news/approval", {})
    assert 'data-approval="no"' in off.text.split('id="lane-news"')[1].split("</tr>")[0]

    editor = dashboard.browser(dashboard.tenant("acme", role="editor"))
    denied = editor.post(f"{S}/lanes/news/approval", {"required": "yes"})
    assert "does not allow site.admin" in _flash(denied.text)
    assert 'data-approval="no"' in denied.text.split('id="lane-news"')[1].split("</tr>")[0]


def test_an_edit_of_a_pack_adds_a_version_and_old_versions_stay_readable(dashboard: Dashboard) -> None:
    owner = dashboard.browser(dashboard.tenant("acme"))
    page = owner.get(f"{S}/lanes/news/pack")
    assert page.status_code == 200 and "Save as version 2" in page.text
    form = {"version": "1", "voice": "Plain and brisk.", "audience": "Commuters.", "avoid": "hype\r\n\r\nclichés\r\n"}

    saved = owner.post(f"{S}/lanes/news/pack", {**form, "guidance": "Lead with the number."})

    assert "saved as version 2" in _flash(saved.text) and "Save as version 3" in saved.text
    pack = dashboard.services.lanes.pack(OPERATOR, "acme", "news")
    assert (pack.version, pack.voice, pack.avoid, pack.guidance) == (
        2,
        "Plain and brisk.",
        ["hype", "clichés"],
        "Lead with the number.",
    )
    first = owner.get(f"{S}/lanes/news/pack?version=1")
    assert 'id="pack"' in first.text and "Save as version" not in first.text and "the current one is 2" in first.text
    stale = owner.post(f"{S}/lanes/news/pack", {**form, "voice": "Mine"})
    assert stale.status_code == 409 and "Your text is kept below" in stale.text and ">Mine</textarea>" in stale.text
    empty = owner.post(f"{S}/lanes/news/pack", {**form, "version": "2", "voice": "  "})
    assert empty.status_code == 400 and "The voice is 1-4,000 characters." in empty.text
    assert owner.get(f"{S}/lanes/nope/pack").status_code == 404
    assert dashboard.services.lanes.pack(OPERATOR, "acme", "news").version == 2

    editor = dashboard.browser(dashboard.tenant("acme", role="editor"))
    assert "Save as version" not in editor.get(f"{S}/lanes/news/pack").text
    assert editor.post(f"{S}/lanes/news/pack", {**form, "version": "2"}).status_code == 403


def test_the_approvals_inbox_approves_and_rejects_waiting_runs_with_a_confirmation(dashboard: Dashboard) -> None:
    token = dashboard.tenant("acme")
    set_approval = dashboard.client.put(
        "/api/tenants/acme/lanes/news/approval", json={"required": True}, headers={"Authorization": f"Bearer {token}"}
    )
    assert set_approval.status_code == 200, set_approval.text
    first, second = _brief(dashboard, token, "b-1"), _brief(dashboard, token, "b-2")
    _waiting_for_approval(dashboard, first)
    _waiting_for_approval(dashboard, second)
    editor = dashboard.browser(dashboard.tenant("acme", role="editor"))

    inbox = editor.get(f"{S}/approvals")

    assert inbox.status_code == 200 and "Story b-1" in inbox.text and "Story b-2" in inbox.text
    item = inbox.text.split(f'id="approval-{first}"')[1].split("</li>")[0]
    assert 'data-status="waiting"' in item and f"{S}/operations/{first}" in item and 'data-decision="reject"' in item
    unconfirmed = editor.post(f"{S}/approvals/{first}", {"decision": "approve", "type": "approval"})
    assert "confirmation_required" in unconfirmed.text and _events(dashboard, first) == []

    approved = editor.post(f"{S}/approvals/{first}", {"decision": "approve", "type": "approval", "confirm": "yes"})

    assert "Approved: operation" in _flash(approved.text)
    (event,) = _events(dashboard, first)
    assert (event.type, event.payload) == ("approval", {"approved": True})
    assert "queued" in approved.text.split(f'id="approval-{first}"')[1].split("</li>")[0]  # woken, not yet read
    assert 'data-decided="yes"' in approved.text.split(f'id="approval-{first}"')[1].split(">")[0]
    rejected = editor.post(
        f"{S}/approvals/{second}",
        {"decision": "reject", "type": "approval", "reason": "Needs a second source", "confirm": "yes"},
    )
    assert "Rejected: operation" in _flash(rejected.text)
    assert [e.payload for e in _events(dashboard, second)] == [{"approved": False, "reason": "Needs a second source"}]
    assert editor.post(f"{S}/approvals/{second}", {"decision": "maybe", "confirm": "yes"}).status_code == 200
    assert len(_events(dashboard, second)) == 1

    viewer = dashboard.browser(dashboard.tenant("acme", role="viewer"))
    assert 'data-decision="approve"' not in viewer.get(f"{S}/approvals").text
    denied = viewer.post(f"{S}/approvals/{first}", {"decision": "reject", "type": "approval", "confirm": "yes"})
    assert "does not allow content.publish" in _flash(denied.text) and len(_events(dashboard, first)) == 1


def test_another_tenants_session_sees_none_of_it_and_changes_nothing(dashboard: Dashboard) -> None:
    token = dashboard.tenant("acme")
    op = _brief(dashboard, token, "b-1")
    stranger = dashboard.browser(dashboard.tenant("globex"))

    for path in ("briefs", "lanes", "lanes/news/pack", "approvals"):
        answer = stranger.get(f"{S}/{path}")
        assert answer.status_code == 404 and "not_found" in answer.text, path
    for path, form in (
        ("lanes/news/enabled", {}),
        ("lanes/news/pack", {"version": "1", "voice": "x", "audience": "y"}),
        (f"approvals/{op}", {"decision": "approve", "type": "approval", "confirm": "yes"}),
    ):
        assert stranger.post(f"{S}/{path}", form).status_code == 404, path
    owner = dashboard.browser(token)
    assert 'id="lane-news" data-enabled="yes"' in owner.get(f"{S}/lanes").text
    assert dashboard.services.lanes.pack(OPERATOR, "acme", "news").version == 1
    assert _events(dashboard, op) == []
