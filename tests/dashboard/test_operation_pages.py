"""An operation's page: its events, its Prefect run, and retry, cancel and reschedule in the site's timezone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from tenant_runtime.actions import operations as operation_actions
from tenant_runtime.workflows import Carried
from tests.dashboard.conftest import Browser, Dashboard
from tests.dashboard.test_dashboard import _create, _flash
from tests.dashboard.test_document_pages import BERLIN, _publish, _set_timezone


def _schedule(browser: Browser, tenant: str, doc_id: str, local: datetime) -> str:
    at = local.strftime("%Y-%m-%dT%H:%M")
    browser.get(f"/dashboard/sites/{tenant}/documents/{doc_id}/schedule?at={at}")
    done = browser.post(
        f"/dashboard/sites/{tenant}/documents/{doc_id}/schedule",
        {"at": at, "version": "1", "confirm": "yes", "form_key": browser.form_key},
    )
    assert "Scheduled: operation" in _flash(done.text), done.text
    return str(_flash(done.text).split("operation ")[1].split(" ")[0])


def test_a_failed_delivery_shows_its_events_and_run_and_is_retried_from_its_page(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    doc_id = _create(browser, "acme")
    _publish(browser, "acme", doc_id)
    assert dashboard.relayed == ["acme"]  # the twin of Prefect created its run
    (operation,) = dashboard.operations("acme")
    run_id = operation.flow_run_id
    assert run_id is not None
    with dashboard.factory.open("acme").transaction() as tx:
        carried = Carried(operation_id=operation.id, workflow=operation.flow_name, fields={})
        operation_actions.claim(tx, carried, flow_run_id=run_id)
        operation_actions.fail(
            tx,
            operation.id,
            step="render_page",
            error_code="render_failed",
            error_message="theme broke",
            max_retries=5,
            next_attempt_at=None,
            permanent=True,
        )

    page = browser.get(f"/dashboard/sites/acme/operations/{operation.id}")

    assert page.status_code == 200 and 'data-status="dead"' in page.text
    assert "attempt 1 started" in page.text and "failed at render_page: " in page.text
    assert "render_failed" in page.text and "theme broke" in page.text
    assert f"/runs/flow-run/{run_id}" in page.text
    assert "hx-trigger" not in page.text.split('id="op-live"')[1].split(">")[0]  # dead: nothing to follow
    retried = browser.post(
        f"/dashboard/sites/acme/operations/{operation.id}/retry", {"form_key": browser.form_key, "back": "operation"}
    )
    assert retried.url.path == f"/dashboard/sites/acme/operations/{operation.id}"
    assert "queued again" in _flash(retried.text) and 'hx-trigger="every 1s"' in retried.text  # now it is live
    assert browser.get("/dashboard/sites/acme/operations/op_missing").status_code == 404


def test_a_scheduled_release_is_rescheduled_in_local_time_then_cancelled(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    _set_timezone(dashboard, "acme", BERLIN)
    doc_id = _create(browser, "acme")
    first = (datetime.now(ZoneInfo(BERLIN)) + timedelta(days=2)).replace(hour=8, minute=0, second=0, microsecond=0)
    operation_id = _schedule(browser, "acme", doc_id, first)
    page = browser.get(f"/dashboard/sites/acme/operations/{operation_id}")
    assert "What this release publishes" in page.text and "Launch day" in page.text
    assert f'value="{first:%Y-%m-%dT%H:%M}"' in page.text  # the reschedule field starts at its local time

    past = browser.post(
        f"/dashboard/sites/acme/operations/{operation_id}/reschedule",
        {"at": "2020-01-01T10:00", "confirm": "yes", "form_key": browser.form_key},
    )
    assert past.status_code == 400 and "in the past" in past.text and 'aria-invalid="true"' in past.text
    later = first + timedelta(days=1, hours=2)
    moved = browser.post(
        f"/dashboard/sites/acme/operations/{operation_id}/reschedule",
        {"at": later.strftime("%Y-%m-%dT%H:%M"), "confirm": "yes", "form_key": browser.form_key},
    )

    assert "Rescheduled: operation" in _flash(moved.text)
    statuses = {o.id: (o.status, o.scheduled_for) for o in dashboard.operations("acme")}
    assert statuses.pop(operation_id)[0] == "cancelled"
    ((new_id, (status, when)),) = statuses.items()
    assert status == "scheduled" and when.replace(tzinfo=UTC) == later.astimezone(UTC)
    assert moved.url.path.endswith(new_id) and f"{later:%Y-%m-%d} 10:00 {BERLIN}" in moved.text

    cancelled = browser.post(f"/dashboard/sites/acme/operations/{new_id}/cancel", {"form_key": browser.form_key})
    assert "is cancelled" in _flash(cancelled.text) and 'data-status="cancelled"' in cancelled.text
    assert {o.status for o in dashboard.operations("acme")} == {"cancelled"}
    assert [d.status for d in dashboard.documents("acme")] == ["draft"]


def test_a_viewer_sees_the_operation_but_no_action(dashboard: Dashboard) -> None:
    owner = dashboard.browser(dashboard.tenant("acme"))
    doc_id = _create(owner, "acme")
    operation_id = _schedule(owner, "acme", doc_id, datetime.now(UTC) + timedelta(days=1))
    viewer = dashboard.browser(dashboard.tenant("acme", role="viewer"))

    page = viewer.get(f"/dashboard/sites/acme/operations/{operation_id}")

    assert page.status_code == 200 and "Cancel this scheduled" not in page.text and "Reschedule" not in page.text
    refused = viewer.post(f"/dashboard/sites/acme/operations/{operation_id}/cancel", {})
    assert "does not allow content.publish" in _flash(refused.text)
    assert [o.status for o in dashboard.operations("acme")] == ["scheduled"]


def test_pause_resume_terminate_and_restart_from_the_operation_page(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    doc_id = _create(browser, "acme")
    _publish(browser, "acme", doc_id)
    (operation,) = dashboard.operations("acme")
    page_url = f"/dashboard/sites/acme/operations/{operation.id}"
    page = browser.get(page_url)
    assert 'data-control="pause"' in page.text and 'data-control="resume"' not in page.text
    assert 'data-step="verify"' in page.text  # every declared step, none run yet

    unconfirmed = browser.post(f"{page_url}/control", {"action": "pause", "form_key": browser.form_key})
    assert "confirm" in _flash(unconfirmed.text)
    paused = browser.post(f"{page_url}/control", {"action": "pause", "confirm": "yes", "form_key": browser.form_key})
    assert "it is paused" in _flash(paused.text) and 'data-status="paused"' in paused.text
    assert 'data-waiting="paused"' in paused.text and 'data-control="resume"' in paused.text

    resumed = browser.post(f"{page_url}/control", {"action": "resume", "confirm": "yes", "form_key": browser.form_key})
    assert 'data-status="queued"' in resumed.text
    ended = browser.post(f"{page_url}/control", {"action": "terminate", "confirm": "yes", "form_key": browser.form_key})
    assert 'data-status="cancelled"' in ended.text and 'data-control="restart"' in ended.text
    assert '<option value="index_search">' in ended.text

    restarted = browser.post(
        f"{page_url}/restart", {"from_step": "index_search", "confirm": "yes", "form_key": browser.form_key}
    )
    assert "restarts from index_search" in _flash(restarted.text) and 'data-status="queued"' in restarted.text
    bad = browser.post(f"{page_url}/control", {"action": "explode", "confirm": "yes", "form_key": browser.form_key})
    assert bad.status_code == 400


def test_the_operations_list_is_searched_on_the_server_by_id_kind_or_document(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    launch = _create(browser, "acme", slug="launch", title="Launch day")
    pricing = _create(browser, "acme", slug="pricing", title="Pricing")
    _publish(browser, "acme", launch)
    _publish(browser, "acme", pricing)
    by_document = {op.document_id: op.id for op in dashboard.operations("acme")}

    def listed(query: str) -> set[str]:
        response = browser.get(f"/dashboard/sites/acme/operations?{query}")
        assert response.status_code == 200, response.text
        return {op_id for op_id in by_document.values() if f'id="{op_id}"' in response.text}

    assert listed("q=launch") == {by_document[launch]}  # a document's slug or title (any case)
    assert listed("q=PRICING") == {by_document[pricing]}
    assert listed(f"q={by_document[pricing][:10]}") >= {by_document[pricing]}  # an operation id's start
    assert listed(f"q={by_document[launch]}") == {by_document[launch]}
    assert listed(f"q={launch}") == {by_document[launch]}  # a document id
    assert listed("q=publish") == set(by_document.values())  # a kind
    assert listed("q=%25") == set() and listed("q=_") == set()  # LIKE's wildcards are matched literally
    assert listed("q=launch&status=succeeded") == set()  # with the status filter
    page = browser.get("/dashboard/sites/acme/operations?q=launch+day")
    assert 'value="launch day"' in page.text and 'hx-target="#op-table"' in page.text  # searched as you type
