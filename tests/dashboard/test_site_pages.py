"""The site page: settings with inline validation, navigation and redirects drafts, webhooks whose secret is
shown once, the search rebuild; and who may do which."""

from __future__ import annotations

from control_plane.auth import Principal
from tests.dashboard.conftest import OPERATOR, Dashboard
from tests.dashboard.test_dashboard import _flash


def test_settings_are_saved_and_a_bad_timezone_is_refused_next_to_its_field(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    browser.get("/dashboard/sites/acme/site")

    bad = browser.post("/dashboard/sites/acme/site/settings", {"title": "Acme", "timezone": "Mars/Olympus"})
    assert bad.status_code == 400 and 'id="timezone-error"' in bad.text and "is not a timezone" in bad.text
    assert 'value="Mars/Olympus"' in bad.text  # what was typed stays
    empty = browser.post("/dashboard/sites/acme/site/settings", {"title": " ", "timezone": "UTC"})
    assert empty.status_code == 400 and 'id="title-error"' in empty.text
    saved = browser.post("/dashboard/sites/acme/site/settings", {"title": "Acme news", "timezone": "Asia/Tokyo"})

    assert "Settings saved" in _flash(saved.text) and 'value="Asia/Tokyo"' in saved.text
    assert dashboard.services.site.settings(_owner(dashboard), "acme").timezone == "Asia/Tokyo"


def test_description_and_language_are_saved_and_a_bad_language_is_refused_next_to_its_field(
    dashboard: Dashboard,
) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    page = browser.get("/dashboard/sites/acme/site")
    assert 'id="description"' in page.text and 'id="language"' in page.text and 'value="en"' in page.text
    form = {"title": "Acme", "timezone": "UTC", "description": "All the news.", "language": "english"}

    bad = browser.post("/dashboard/sites/acme/site/settings", form)
    assert bad.status_code == 400 and 'id="language-error"' in bad.text and "pt-BR" in bad.text
    assert 'value="english"' in bad.text and "All the news.</textarea>" in bad.text  # what was typed stays
    assert dashboard.services.site.settings(_owner(dashboard), "acme").description == ""  # nothing half-saved
    saved = browser.post("/dashboard/sites/acme/site/settings", {**form, "language": "fr"})

    assert "Settings saved" in _flash(saved.text)
    settings = dashboard.services.site.settings(_owner(dashboard), "acme")
    assert (settings.description, settings.language) == ("All the news.", "fr")


def _owner(dashboard: Dashboard) -> Principal:
    return OPERATOR


def test_navigation_and_redirects_are_saved_as_drafts_with_errors_in_place(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    browser.get("/dashboard/sites/acme/site")

    bad = browser.post(
        "/dashboard/sites/acme/site/navigation",
        {"version": "0", "label_0": "Home", "href_0": "/", "label_1": "Evil", "href_1": "javascript:alert(1)"},
    )
    assert bad.status_code == 400 and "navigation[1].href must be a path or an http(s) URL" in bad.text
    assert 'value="javascript:alert(1)"' in bad.text  # the typed rows come back
    nav = browser.post(
        "/dashboard/sites/acme/site/navigation",
        {"version": "0", "label_0": "Home", "href_0": "/", "label_2": "Blog", "href_2": "/blog"},
    )
    assert "Navigation saved as draft version 1" in _flash(nav.text)
    redirects = browser.post(
        "/dashboard/sites/acme/site/redirects", {"version": "0", "from_0": "/old", "to_0": "/new", "status_0": "308"}
    )
    assert "Redirects saved as draft version 1" in _flash(redirects.text)
    stale = browser.post("/dashboard/sites/acme/site/redirects", {"version": "0", "from_0": "/a", "to_0": "/b"})
    assert stale.status_code == 409 and "changed since you loaded it" in stale.text

    navigation = dashboard.services.site.resource(_owner(dashboard), "acme", "navigation")
    assert navigation.content == [{"label": "Home", "href": "/"}, {"label": "Blog", "href": "/blog"}]
    assert navigation.published_version is None  # a draft until a release publishes it
    assert dashboard.services.site.resource(_owner(dashboard), "acme", "redirects").content == [
        {"from": "/old", "to": "/new", "status": 308}
    ]


def test_a_webhook_secret_is_shown_once_and_endpoints_are_disabled_and_enabled(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    browser.get("/dashboard/sites/acme/site")

    invalid = browser.post("/dashboard/sites/acme/site/webhooks", {"url": "ftp://nope"})
    assert invalid.status_code == 400 and 'id="url-error"' in invalid.text
    private = browser.post("/dashboard/sites/acme/site/webhooks", {"url": "http://10.1.2.3/hook"})
    assert private.status_code == 400 and 'id="url-error"' in private.text and "private address" in private.text
    created = browser.post("/dashboard/sites/acme/site/webhooks", {"url": "https://hooks.example/p", "form_key": "k1"})

    assert created.status_code == 201 and "only this once" in created.text
    (hook,) = dashboard.services.webhooks.list(_owner(dashboard), "acme")
    secret = created.text.split('<p class="secret">')[1].split("</p>")[0]
    assert len(secret) >= 16 and secret not in browser.get("/dashboard/sites/acme/site").text
    off = browser.post(f"/dashboard/sites/acme/site/webhooks/{hook.id}/disable", {})
    assert "disabled" in _flash(off.text)
    assert [h.enabled for h in dashboard.services.webhooks.list(_owner(dashboard), "acme")] == [False]
    browser.post(f"/dashboard/sites/acme/site/webhooks/{hook.id}/enable", {})
    assert [h.enabled for h in dashboard.services.webhooks.list(_owner(dashboard), "acme")] == [True]


def test_search_rebuild_queues_an_operation(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    browser.get("/dashboard/sites/acme/site")

    response = browser.post("/dashboard/sites/acme/site/search", {"force": "yes"})

    assert "Search rebuild requested" in _flash(response.text)
    assert [o.kind for o in dashboard.operations("acme")] == ["search_rebuild"]


def test_a_search_rebuild_sent_twice_from_one_page_queues_one_operation(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    browser.get("/dashboard/sites/acme/site")
    form = {"force": "yes", "form_key": browser.form_key}

    first = browser.post("/dashboard/sites/acme/site/search", form)
    second = browser.post("/dashboard/sites/acme/site/search", form)  # a double click

    (operation,) = dashboard.operations("acme")
    assert operation.kind == "search_rebuild"
    assert operation.id in _flash(first.text) and operation.id in _flash(second.text)
    browser.get("/dashboard/sites/acme/site")  # a new page, a new key: a new rebuild
    browser.post("/dashboard/sites/acme/site/search", {"force": "yes", "form_key": browser.form_key})
    assert len(dashboard.operations("acme")) == 2


def test_an_editor_edits_navigation_but_not_settings_or_webhooks_and_a_viewer_edits_nothing(
    dashboard: Dashboard,
) -> None:
    editor = dashboard.browser(dashboard.tenant("acme", role="editor"))
    page = editor.get("/dashboard/sites/acme/site")
    assert "Save navigation draft" in page.text and "Save settings" not in page.text
    assert "Register webhook" not in page.text and "Rebuild search index" not in page.text
    refused = editor.post("/dashboard/sites/acme/site/settings", {"title": "Mine", "timezone": "UTC"})
    assert refused.status_code == 403 and "does not allow site.admin" in _flash(refused.text)
    assert editor.post("/dashboard/sites/acme/site/webhooks", {"url": "https://x.example/h"}).status_code == 403

    viewer = dashboard.browser(dashboard.tenant("acme", role="viewer"))
    assert "Save navigation draft" not in viewer.get("/dashboard/sites/acme/site").text
    nav = viewer.post("/dashboard/sites/acme/site/navigation", {"version": "0", "label_0": "x", "href_0": "/"})
    assert nav.status_code == 403 and "does not allow content.edit" in nav.text
    assert dashboard.services.site.settings(_owner(dashboard), "acme").title != "Mine"


def test_retention_policies_are_set_in_place_and_a_prune_runs_only_when_confirmed(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    page = browser.get("/dashboard/sites/acme/site")
    assert 'id="retention"' in page.text and 'data-entity="document"' in page.text

    bad = browser.post("/dashboard/sites/acme/site/retention/document", {"keep_last": "0", "keep_days": "10"})
    assert "Keep between 1 and 10,000 versions" in _flash(bad.text)
    saved = browser.post("/dashboard/sites/acme/site/retention/document", {"keep_last": "3", "keep_days": "10"})
    assert "Retention of documents: the last 3 versions" in _flash(saved.text)
    policies = {p["entity_type"]: p for p in dashboard.services.retention.get(OPERATOR, "acme")["policies"]}
    assert (policies["document"]["keep_last"], policies["document"]["keep_days"]) == (3, 10)
    assert policies["document"]["default"] is False and policies["site_resource"]["default"] is True

    unconfirmed = browser.post("/dashboard/sites/acme/site/retention/prune", {})
    assert "confirm" in _flash(unconfirmed.text).lower()
    assert not [op for op in dashboard.operations("acme") if op.kind == "prune"]
    pruned = browser.post("/dashboard/sites/acme/site/retention/prune", {"confirm": "yes"})
    assert "Pruning requested" in _flash(pruned.text)
    (operation,) = [op for op in dashboard.operations("acme") if op.kind == "prune"]
    assert f"/operations/{operation.id}" in str(pruned.url)


def test_an_editor_sees_retention_but_cannot_change_it_or_sweep_media(dashboard: Dashboard) -> None:
    editor = dashboard.browser(dashboard.tenant("acme", role="editor"))
    page = editor.get("/dashboard/sites/acme/site")
    assert 'data-entity="document"' in page.text and "Prune versions now" not in page.text
    refused = editor.post("/dashboard/sites/acme/site/retention/document", {"keep_last": "1", "keep_days": "0"})
    assert "does not allow site.admin" in _flash(refused.text)
    assert "Sweep the trash now" not in editor.get("/dashboard/sites/acme/media?state=deleted").text
    swept = editor.post("/dashboard/sites/acme/media/sweep", {"confirm": "yes"})
    assert "does not allow site.admin" in _flash(swept.text)
    assert all(p["default"] for p in dashboard.services.retention.get(OPERATOR, "acme")["policies"])
    assert not [op for op in dashboard.operations("acme") if op.kind in ("prune", "media_sweep")]


def test_the_trash_states_the_media_policy_and_an_owner_sweeps_it_when_confirmed(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    trash = browser.get("/dashboard/sites/acme/media?state=deleted")
    assert 'id="library-policy"' in trash.text and "Sweep the trash now" in trash.text
    policy = dashboard.services.media.policy(OPERATOR, "acme")
    assert f"restored for {policy.retention_days} days" in trash.text

    assert "confirm" in _flash(browser.post("/dashboard/sites/acme/media/sweep", {}).text).lower()
    swept = browser.post("/dashboard/sites/acme/media/sweep", {"confirm": "yes"})
    assert "Sweep requested" in _flash(swept.text)
    kinds = [op.kind for op in dashboard.operations("acme")]
    assert kinds.count("media_sweep") == 1, kinds
