"""Releases in the dashboard: pick, preview every change before → after, then publish now or schedule."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from tests.dashboard.conftest import Dashboard
from tests.dashboard.test_dashboard import DOC, _create, _flash
from tests.dashboard.test_document_pages import BERLIN, _publish, _set_timezone


def _api(dashboard: Dashboard, token: str, method: str, path: str, body: object) -> None:
    answer = dashboard.client.request(method, path, json=body, headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code < 300, answer.text


def test_the_preview_shows_each_change_before_and_after_then_publishes_it_all_at_once(dashboard: Dashboard) -> None:
    token = dashboard.tenant("acme")
    browser = dashboard.browser(token)
    doc_id = _create(browser, "acme", body="line one\nline two")
    _publish(browser, "acme", doc_id)
    browser.get(f"/dashboard/sites/acme/documents/{doc_id}")
    browser.post(
        f"/dashboard/sites/acme/documents/{doc_id}",
        {**DOC, "title": "Launch week", "body": "line one\nline 2", "version": "1"},
    )
    fresh = _create(browser, "acme", slug="faq", title="FAQ", body="Ask us")
    _api(
        dashboard,
        token,
        "PUT",
        "/api/tenants/acme/site/navigation",
        {"version": 0, "content": [{"label": "Home", "href": "/"}]},
    )

    picker = browser.get("/dashboard/sites/acme/releases")
    assert f'value="{doc_id}:2"' in picker.text and f'value="{fresh}:1"' in picker.text
    assert 'name="navigation" value="1"' in picker.text
    review = browser.get(f"/dashboard/sites/acme/releases/preview?doc={doc_id}:2&doc={fresh}:1&navigation=1")

    assert review.status_code == 200 and "changes 3 things" in review.text
    assert '<td class="before">Launch day</td>' in review.text and '<td class="after">Launch week</td>' in review.text
    assert '<span class="del">- line two</span>' in review.text and '<span class="add">+ line 2</span>' in review.text
    assert "new on the site" in review.text and "+ Ask us" in review.text
    assert "+ Home → /" in review.text
    assert [d.published_version for d in dashboard.documents("acme") if d.id == doc_id] == [1]  # nothing yet

    done = browser.post(
        "/dashboard/sites/acme/releases",
        {
            "doc": [f"{doc_id}:2", f"{fresh}:1"],
            "navigation": "1",
            "when": "now",
            "confirm": "yes",
            "form_key": browser.form_key,
        },
    )

    assert "Release published" in _flash(done.text)
    assert {d.slug: (d.status, d.published_version) for d in dashboard.documents("acme")} == {
        "launch": ("published", 2),
        "faq": ("published", 1),
    }
    (release,) = [o for o in dashboard.operations("acme") if o.kind == "release"]
    assert done.url.path.endswith(release.id) and "What this release publishes" in done.text


def test_a_release_is_scheduled_in_the_sites_timezone_and_refuses_stale_picks(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    _set_timezone(dashboard, "acme", BERLIN)
    doc_id = _create(browser, "acme")
    local = (datetime.now(ZoneInfo(BERLIN)) + timedelta(days=5)).replace(hour=7, minute=15, second=0, microsecond=0)
    at = local.strftime("%Y-%m-%dT%H:%M")

    unconfirmed = browser.post(
        "/dashboard/sites/acme/releases",
        {"doc": f"{doc_id}:1", "when": "later", "at": at, "form_key": browser.form_key},
    )
    assert unconfirmed.status_code == 400 and "Tick the confirmation box" in _flash(unconfirmed.text)
    assert f"07:15 {BERLIN}" in unconfirmed.text and local.astimezone(UTC).isoformat() in unconfirmed.text
    beyond = browser.post(
        "/dashboard/sites/acme/releases",
        {
            "doc": f"{doc_id}:1",
            "when": "later",
            "at": (local + timedelta(days=90)).strftime("%Y-%m-%dT%H:%M"),
            "confirm": "yes",
        },
    )
    assert beyond.status_code == 400 and "at most 90 days ahead" in beyond.text
    stale = browser.get(f"/dashboard/sites/acme/releases/preview?doc={doc_id}:7")
    assert "no longer exists" in stale.text or "was saved after you picked" in stale.text
    empty = browser.get("/dashboard/sites/acme/releases/preview")
    assert empty.status_code == 400 and "empty_release" in empty.text
    assert dashboard.operations("acme") == []

    done = browser.post(
        "/dashboard/sites/acme/releases",
        {"doc": f"{doc_id}:1", "when": "later", "at": at, "confirm": "yes", "form_key": browser.form_key},
    )

    assert "Release scheduled" in _flash(done.text)
    (operation,) = dashboard.operations("acme")
    assert operation.status == "scheduled" and operation.scheduled_for.replace(tzinfo=UTC) == local.astimezone(UTC)
    listing = browser.get("/dashboard/sites/acme/releases")
    assert operation.id in listing.text and f"07:15 {BERLIN}" in listing.text
    assert [d.status for d in dashboard.documents("acme")] == ["draft"]


def test_a_viewer_can_look_but_not_release(dashboard: Dashboard) -> None:
    owner = dashboard.browser(dashboard.tenant("acme"))
    doc_id = _create(owner, "acme")
    viewer = dashboard.browser(dashboard.tenant("acme", role="viewer"))

    assert "Preview the changes" not in viewer.get("/dashboard/sites/acme/releases").text
    assert "Confirm release" not in viewer.get(f"/dashboard/sites/acme/releases/preview?doc={doc_id}:1").text
    refused = viewer.post("/dashboard/sites/acme/releases", {"doc": f"{doc_id}:1", "when": "now", "confirm": "yes"})
    assert refused.status_code == 403 and "does not allow content.publish" in _flash(refused.text)
    assert dashboard.operations("acme") == []
