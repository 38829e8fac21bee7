"""Custom fields in the dashboard: definitions per kind, a change confirmed with what it will do, then
queued as migrate_field; progress while it runs, the documents that could not convert after."""

from __future__ import annotations

import re

from tenant_runtime.actions import fields as field_actions
from tenant_runtime.workspace import Workspace
from tests.dashboard.conftest import OPERATOR, Dashboard
from tests.dashboard.test_dashboard import _create, _flash

S = "/dashboard/sites/acme"


def _run(ws: Workspace, migration_id: str) -> None:
    """The migration run to the end, the way the migrate_field flow's steps run it."""
    while not field_actions.check_batch(ws, migration_id)["done"]:
        pass
    while not field_actions.apply_batch(ws, migration_id)["done"]:
        pass
    field_actions.finish_migration(ws, migration_id)


def _queued(html: str) -> str:
    match = re.search(r"Migration (\S+) is queued", _flash(html))
    assert match is not None, _flash(html)
    return match.group(1)


def test_a_field_is_added_then_a_type_change_lists_what_cannot_convert(dashboard: Dashboard) -> None:
    token = dashboard.tenant("acme")
    owner = dashboard.browser(token)
    for slug in ("one", "two"):
        _create(owner, "acme", slug=slug, kind="post")
    ws = dashboard.factory.open("acme")
    assert "Posts have no custom fields" in owner.get(f"{S}/fields").text

    add = {"kind": "post", "change": "add", "field": "rating", "type": "number", "default": "3"}
    confirm = owner.post(f"{S}/fields/confirm", add)
    assert confirm.status_code == 200 and "What will happen" in confirm.text
    assert "Each of the 2 existing posts gets the value 3" in confirm.text
    form_key = re.search(r'name="form_key" value="([^"]+)"', confirm.text)
    assert form_key is not None
    unconfirmed = owner.post(f"{S}/fields/migrations", {**add, "form_key": form_key.group(1)})
    assert "confirmation_required" in unconfirmed.text
    assert dashboard.services.fields.list(OPERATOR, "acme") == []

    queued = owner.post(f"{S}/fields/migrations", {**add, "confirm": "yes", "form_key": form_key.group(1)})
    migration = _queued(queued.text)
    assert f'id="migration-{migration}" data-phase="apply"' in queued.text
    assert 'hx-trigger="every 2s"' in queued.text and "0 / 2" in queued.text  # live while it runs
    _run(ws, migration)
    done = owner.get(f"{S}/fields")
    assert f'id="migration-{migration}" data-phase="done"' in done.text and 'id="field-post-rating"' in done.text
    assert 'hx-trigger="every 2s"' not in done.text
    assert {d.fields.get("rating") for d in dashboard.documents("acme")} == {3}

    change = {"kind": "post", "change": "change_type", "field": "rating", "type": "choice", "choices": "low\nhigh"}
    says = owner.post(f"{S}/fields/confirm", change)
    assert "if any value cannot become a choice, nothing changes" in says.text and "(low, high)" in says.text
    key = re.search(r'name="form_key" value="([^"]+)"', says.text)
    assert key is not None
    failed = _queued(owner.post(f"{S}/fields/migrations", {**change, "confirm": "yes", "form_key": key.group(1)}).text)
    _run(ws, failed)
    listed = owner.get(f"{S}/fields")
    assert f'id="migration-{failed}" data-phase="failed"' in listed.text and "2 documents" in listed.text
    assert "one of the field" in listed.text  # each document's reason
    assert [d["type"] for d in dashboard.services.fields.list(OPERATOR, "acme")] == ["number"]

    bad = owner.post(f"{S}/fields/confirm", {"kind": "post", "change": "add", "field": "x", "type": "colour"})
    assert "invalid_field_type" in bad.text


def test_viewers_see_no_forms_and_another_tenants_session_gets_404(dashboard: Dashboard) -> None:
    dashboard.tenant("acme")
    viewer = dashboard.browser(dashboard.tenant("acme", role="viewer"))
    page = viewer.get(f"{S}/fields")
    assert page.status_code == 200 and "Add…" not in page.text
    add = {"kind": "page", "change": "add", "field": "hero", "type": "media", "confirm": "yes", "form_key": "k-1"}
    assert "does not allow site.admin" in _flash(viewer.post(f"{S}/fields/migrations", add).text)

    stranger = dashboard.browser(dashboard.tenant("globex"))
    assert stranger.get(f"{S}/fields").status_code == 404
    assert stranger.post(f"{S}/fields/confirm", add).status_code == 404
    assert stranger.post(f"{S}/fields/migrations", add).status_code == 404
    assert dashboard.services.fields.list(OPERATOR, "acme") == []
