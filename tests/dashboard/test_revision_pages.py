"""A document's revisions in the dashboard: the list, a word diff of any two, restore as draft or published."""

from __future__ import annotations

from tests.dashboard.conftest import Dashboard
from tests.dashboard.test_dashboard import DOC, _create, _flash


def test_revisions_are_compared_word_by_word_and_one_is_restored(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    doc_id = _create(browser, "acme", body="We are live today.")
    browser.get(f"/dashboard/sites/acme/documents/{doc_id}")
    browser.post(f"/dashboard/sites/acme/documents/{doc_id}", {**DOC, "body": "We are offline today.", "version": "1"})

    page = browser.get(f"/dashboard/sites/acme/documents/{doc_id}/revisions")

    assert page.status_code == 200 and "Version 1 → version 2" in page.text
    assert "<del>live</del>" in page.text and "<ins>offline</ins>" in page.text
    same = browser.get(f"/dashboard/sites/acme/documents/{doc_id}/revisions?from_version=1&to_version=1")
    assert "<del>" not in same.text
    unconfirmed = browser.post(
        f"/dashboard/sites/acme/documents/{doc_id}/revisions/1/restore", {"publish": "yes", "expected_version": "2"}
    )
    assert "confirmation_required" in _flash(unconfirmed.text)
    restored = browser.post(
        f"/dashboard/sites/acme/documents/{doc_id}/revisions/1/restore",
        {"publish": "no", "expected_version": "2", "form_key": "restore-1"},
    )

    assert "restored as draft version 3" in _flash(restored.text)
    assert [(d.version, d.body, d.status) for d in dashboard.documents("acme")] == [(3, "We are live today.", "draft")]
    viewer = dashboard.browser(dashboard.tenant("acme", role="viewer"))
    assert "Restore version" not in viewer.get(f"/dashboard/sites/acme/documents/{doc_id}/revisions").text
