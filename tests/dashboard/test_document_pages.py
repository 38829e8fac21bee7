"""Documents in the dashboard: search and filters on the server, live preview, scheduling in the site's
timezone, and the rendering indicator's states."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from control_plane.dashboard.local_time import local_and_utc, parse_local
from tenant_runtime.actions import documents as document_actions
from tenant_runtime.actions import operations as operation_actions
from tenant_runtime.errors import InvalidSchedule
from tenant_runtime.workflows import Carried
from tenant_runtime.workspace import Actor
from tests.dashboard.conftest import Browser, Dashboard
from tests.dashboard.test_dashboard import DOC, _create, _flash

BERLIN = "Europe/Berlin"


def _rows(html: str) -> list[str]:
    return re.findall(r'<tr id="doc-[^"]+">\s*<td><a href="[^"]+">([^<]+)</a>', html)


def _set_timezone(dashboard: Dashboard, tenant: str, tz: str) -> None:
    from tests.fixtures.stack import OPERATOR_TOKEN

    answer = dashboard.client.put(
        f"/api/tenants/{tenant}/settings",
        json={"timezone": tz},
        headers={"Authorization": f"Bearer {OPERATOR_TOKEN}"},
    )
    assert answer.status_code == 200, answer.text


def _publish(browser: Browser, tenant: str, doc_id: str, version: int = 1) -> None:
    browser.get(f"/dashboard/sites/{tenant}/documents/{doc_id}/publish")
    response = browser.post(
        f"/dashboard/sites/{tenant}/documents/{doc_id}/publish",
        {"confirm": "yes", "version": str(version), "form_key": browser.form_key},
    )
    assert "Publish requested" in _flash(response.text), response.text


def test_the_list_is_searched_filtered_and_paged_on_the_server(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    launch = _create(browser, "acme", slug="launch", title="Launch day")
    _create(browser, "acme", slug="pricing", title="Pricing", kind="page")
    changed = _create(browser, "acme", slug="roadmap", title="Roadmap 100% done")
    _publish(browser, "acme", launch)
    _publish(browser, "acme", changed)
    browser.get(f"/dashboard/sites/acme/documents/{changed}")
    browser.post(
        f"/dashboard/sites/acme/documents/{changed}",
        {**DOC, "slug": "roadmap", "title": "Roadmap 100% done", "body": "new", "version": "1"},
    )

    assert sorted(_rows(browser.get("/dashboard/sites/acme?q=LAUNCH").text)) == ["Launch day"]
    assert _rows(browser.get("/dashboard/sites/acme?q=100%25").text) == ["Roadmap 100% done"]  # % is literal
    assert _rows(browser.get("/dashboard/sites/acme?q=_").text) == []  # so is _
    assert _rows(browser.get("/dashboard/sites/acme?status=draft").text) == ["Pricing"]
    assert _rows(browser.get("/dashboard/sites/acme?status=changed").text) == ["Roadmap 100% done"]
    assert sorted(_rows(browser.get("/dashboard/sites/acme?status=published").text)) == [
        "Launch day",
        "Roadmap 100% done",
    ]
    assert _rows(browser.get("/dashboard/sites/acme?kind=page").text) == ["Pricing"]
    empty = browser.get("/dashboard/sites/acme?q=nothing-like-it")
    assert "Nothing matches" in empty.text and "No documents" in empty.text
    # htmx asks for the same page; it swaps #results in (hx-select), so the whole page still answers
    assert "Launch day" in browser.get("/dashboard/sites/acme?q=launch", headers={"HX-Request": "true"}).text


def test_pages_of_fifty_link_to_each_other_with_their_filters(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    with dashboard.factory.open("acme").transaction() as tx:  # one transaction: the list is what is tested
        for n in range(52):
            document_actions.create_document(
                tx, Actor.for_role("test", "owner"), slug=f"note-{n}", title=f"Note {n}", body="", kind="post"
            )
    first = browser.get("/dashboard/sites/acme?q=note")
    assert len(_rows(first.text)) == 50 and "1–50 of 52 documents" in first.text
    assert 'href="?q=note&amp;page=2"' in first.text
    second = browser.get("/dashboard/sites/acme?q=note&page=2")
    assert len(_rows(second.text)) == 2 and "51–52 of 52" in second.text and 'href="?q=note"' in second.text


def test_the_preview_renders_the_typed_body_sanitized(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    browser.get("/dashboard/sites/acme/documents/new")

    response = browser.post(
        "/dashboard/sites/acme/preview",
        {"body": "# Hi\n\n*there* <script>alert(1)</script>"},
        headers={"HX-Request": "true"},
    )

    assert response.status_code == 200 and "<em>there</em>" in response.text and "<h1" in response.text
    assert "<script>alert" not in response.text and "<html" not in response.text
    assert browser.post("/dashboard/sites/acme/preview", {"body": "x"}, csrf=False).status_code == 403
    other = dashboard.browser(dashboard.tenant("globex"))
    assert other.post("/dashboard/sites/acme/preview", {"body": "x"}).status_code == 404


def test_the_rendering_indicator_follows_the_delivery_until_it_lands(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    doc_id = _create(browser, "acme")
    assert 'data-state="draft"' in browser.get(f"/dashboard/sites/acme/documents/{doc_id}").text
    _publish(browser, "acme", doc_id)
    indicator = f"/dashboard/sites/acme/documents/{doc_id}/delivery"

    rendering = browser.get(indicator, headers={"HX-Request": "true"})
    assert 'data-state="rendering"' in rendering.text and 'hx-trigger="every 1s"' in rendering.text
    assert "<html" not in rendering.text

    (operation,) = dashboard.operations("acme")
    with dashboard.factory.open("acme").transaction() as tx:
        carried = Carried(operation_id=operation.id, workflow=operation.flow_name, fields={})
        operation_actions.claim(tx, carried, flow_run_id="run-1")
        operation_actions.finish(tx, operation.id, "succeeded", step="purge_aggregates")
    landed = browser.get(indicator, headers={"HX-Request": "true"})
    assert 'data-state="published"' in landed.text and "hx-trigger" not in landed.text  # polling stops


def test_scheduling_reads_the_sites_timezone_and_states_the_utc_instant(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    _set_timezone(dashboard, "acme", BERLIN)
    doc_id = _create(browser, "acme")
    local = (datetime.now(ZoneInfo(BERLIN)) + timedelta(days=3)).replace(hour=9, minute=30, second=0, microsecond=0)
    at = local.strftime("%Y-%m-%dT%H:%M")
    utc = local.astimezone(UTC)

    review = browser.get(f"/dashboard/sites/acme/documents/{doc_id}/schedule?at={at}")

    assert review.status_code == 200 and "What will happen" in review.text
    assert f"{local:%Y-%m-%d} 09:30 {BERLIN} ({utc:%H:%M} UTC)" in review.text
    assert utc.isoformat() in review.text
    refused = browser.post(
        f"/dashboard/sites/acme/documents/{doc_id}/schedule", {"at": at, "version": "1", "form_key": browser.form_key}
    )
    assert refused.status_code == 400 and "Tick the confirmation box" in _flash(refused.text)
    assert dashboard.operations("acme") == []

    done = browser.post(
        f"/dashboard/sites/acme/documents/{doc_id}/schedule",
        {"at": at, "version": "1", "confirm": "yes", "form_key": browser.form_key},
    )

    assert "Scheduled: operation" in _flash(done.text)
    (operation,) = dashboard.operations("acme")
    assert operation.status == "scheduled" and operation.kind == "release"
    assert operation.scheduled_for.replace(tzinfo=UTC) == utc  # stored in UTC
    assert 'data-state="scheduled"' in done.text
    listing = browser.get("/dashboard/sites/acme?status=scheduled")
    assert _rows(listing.text) == ["Launch day"] and f"09:30 {BERLIN}" in listing.text
    assert [d.status for d in dashboard.documents("acme")] == ["draft"]  # nothing public yet


@pytest.mark.parametrize(
    ("shift", "message"),
    [(timedelta(hours=-1), "in the past"), (timedelta(days=91), "at most 90 days ahead")],
    ids=["past", "beyond-90-days"],
)
def test_a_time_in_the_past_or_beyond_90_days_is_refused_inline(
    dashboard: Dashboard, shift: timedelta, message: str
) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    doc_id = _create(browser, "acme")
    at = (datetime.now(UTC) + shift).strftime("%Y-%m-%dT%H:%M")

    review = browser.get(f"/dashboard/sites/acme/documents/{doc_id}/schedule?at={at}")
    sent = browser.post(
        f"/dashboard/sites/acme/documents/{doc_id}/schedule",
        {"at": at, "version": "1", "confirm": "yes", "form_key": browser.form_key},
    )

    for response in (review, sent):
        assert response.status_code == 400 and message in response.text and 'aria-invalid="true"' in response.text
        assert "What will happen" not in response.text
    assert dashboard.operations("acme") == []


def test_local_times_that_do_not_exist_are_refused_and_repeated_ones_say_their_utc() -> None:
    now = datetime(2027, 3, 1, tzinfo=UTC)
    with pytest.raises(InvalidSchedule, match="does not exist in Europe/Berlin"):
        parse_local("2027-03-28T02:30", BERLIN, now=now)  # clocks go from 02:00 to 03:00
    autumn = parse_local(
        "2027-10-31T02:30", BERLIN, now=now + timedelta(days=180)
    )  # happens twice: the first (summer time)
    assert autumn == datetime(2027, 10, 31, 0, 30, tzinfo=UTC)
    assert local_and_utc(autumn, BERLIN) == "2027-10-31 02:30 Europe/Berlin (00:30 UTC)"
    assert local_and_utc(datetime(2027, 1, 5, 23, 30, tzinfo=UTC), "Asia/Tokyo") == (
        "2027-01-06 08:30 Asia/Tokyo (2027-01-05 23:30 UTC)"
    )
    with pytest.raises(InvalidSchedule, match="Enter a date and time"):
        parse_local("next tuesday", BERLIN, now=now)


def test_a_viewer_sees_no_publish_or_schedule_button_and_is_refused_anyway(dashboard: Dashboard) -> None:
    owner = dashboard.browser(dashboard.tenant("acme"))
    doc_id = _create(owner, "acme")
    viewer = dashboard.browser(dashboard.tenant("acme", role="viewer"))

    page = viewer.get(f"/dashboard/sites/acme/documents/{doc_id}")
    assert "Schedule version" not in page.text and "Publish version" not in page.text
    at = (datetime.now(UTC) + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")
    form = viewer.get(f"/dashboard/sites/acme/documents/{doc_id}/schedule?at={at}")
    assert "Yes, schedule" not in form.text
    refused = viewer.post(
        f"/dashboard/sites/acme/documents/{doc_id}/schedule", {"at": at, "version": "1", "confirm": "yes"}
    )
    assert "does not allow content.publish" in _flash(refused.text) and dashboard.operations("acme") == []


def test_site_settings_through_the_api_check_the_timezone(dashboard: Dashboard) -> None:
    token = dashboard.tenant("acme")
    headers = {"Authorization": f"Bearer {token}"}
    bad = dashboard.client.put("/api/tenants/acme/settings", json={"timezone": "Mars/Olympus"}, headers=headers)
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_timezone"
    ok = dashboard.client.put(
        "/api/tenants/acme/settings", json={"title": "Acme news", "timezone": BERLIN}, headers=headers
    )
    assert ok.status_code == 200
    assert ok.json()["changed"] == ["title", "timezone"]
    assert dashboard.client.get("/api/tenants/acme/settings", headers=headers).json() == {
        "title": "Acme news",
        "timezone": BERLIN,
        "description": "",
        "language": "en",
    }
    bad_language = dashboard.client.put("/api/tenants/acme/settings", json={"language": "e"}, headers=headers)
    assert bad_language.status_code == 400  # the schema's 2-35 characters
    viewer = {"Authorization": f"Bearer {dashboard.tenant('acme', role='viewer')}"}
    assert dashboard.client.put("/api/tenants/acme/settings", json={"title": "x"}, headers=viewer).status_code == 403
