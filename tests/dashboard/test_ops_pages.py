"""The operator console: tenants with status, queue depth and lateness; create, suspend/resume, quota;
dead operations across tenants with replay; the operator audit by action. Members are refused."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest

from control_plane.dashboard import ops_pages
from dispatch.prefect_twin import RecordingPrefect
from tenant_runtime.actions import operations as operation_actions
from tenant_runtime.workflows import Carried
from tests.dashboard.conftest import OPERATOR, Dashboard
from tests.dashboard.test_dashboard import _create, _flash
from tests.dashboard.test_document_pages import _publish
from tests.tenant_runtime.package_kit import Publisher


def _prefect(dashboard: Dashboard) -> RecordingPrefect:
    """The twin the control plane asks about queues and late runs."""
    prefect = dashboard.services.prefect
    assert isinstance(prefect, RecordingPrefect)
    return prefect


def test_an_operator_sees_every_tenant_creates_one_and_sets_its_quota(
    dashboard: Dashboard, operator_token: str
) -> None:
    dashboard.tenant("acme")
    _prefect(dashboard).late["acme"] = (2, 95.0)  # what Prefect reports of acme's queue
    operator = dashboard.browser(operator_token)

    console = operator.get("/dashboard/ops")
    assert console.status_code == 200 and 'id="tenant-acme"' in console.text
    assert "2 late" in console.text and "by up to 95 s" in console.text
    row = console.text.split('id="tenant-acme"')[1].split("</tr>")[0]
    assert "data-backup-alarm=" in row and "none yet" in row  # the last good backup's age (none yet), its alarm

    bad = operator.post("/dashboard/ops/tenants", {"slug": "Bad Slug", "name": "Globex"})
    assert bad.status_code == 400 and 'id="slug-error"' in bad.text and 'value="Bad Slug"' in bad.text
    made = operator.post("/dashboard/ops/tenants", {"slug": "globex", "name": "Globex"})
    assert "Site globex created" in _flash(made.text) and 'id="tenant-globex"' in made.text
    quota = operator.post("/dashboard/ops/tenants/globex/quota", {"publishes_per_hour": "12"})
    assert "may publish 12 times an hour" in _flash(quota.text)
    assert dashboard.services.tenants.get("globex").publishes_per_hour == 12
    refused = operator.post("/dashboard/ops/tenants/globex/quota", {"publishes_per_hour": "lots"})
    assert "whole number" in _flash(refused.text)


def test_a_suspended_sites_editor_sees_why_and_is_refused_until_it_resumes(
    dashboard: Dashboard, operator_token: str
) -> None:
    editor = dashboard.browser(dashboard.tenant("acme", role="editor"))
    operator = dashboard.browser(operator_token)

    suspended = operator.post("/dashboard/ops/tenants/acme/suspend", {})
    assert "is suspended" in _flash(suspended.text) and 'data-status="suspended"' in suspended.text
    assert [c for c in _prefect(dashboard).called("ensure_queue") if c["tenant"] == "acme"][-1]["paused"] is True

    page = editor.get("/dashboard/sites/acme/documents/new")
    assert "This site is <strong>suspended</strong>" in page.text
    refused = editor.post("/dashboard/sites/acme/documents", {"slug": "x", "title": "X", "body": "", "kind": "post"})
    assert refused.status_code == 423 and "tenant_suspended" in refused.text
    assert dashboard.documents("acme") == []

    operator.post("/dashboard/ops/tenants/acme/resume", {})
    assert "suspended" not in editor.get("/dashboard/sites/acme").text.split("<main")[1].split("</h1>")[0]
    audit = operator.get("/dashboard/ops/audit?action=tenant.suspend")
    assert (
        audit.status_code == 200
        and "tenant.suspend" in audit.text
        and "tenant.resume" not in audit.text.split("<tbody>")[1]
    )


def test_dead_operations_across_tenants_are_replayed_from_the_console(
    dashboard: Dashboard, operator_token: str
) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    doc_id = _create(browser, "acme")
    _publish(browser, "acme", doc_id)
    dashboard.services.handoff.flush()
    (operation,) = dashboard.operations("acme")
    with dashboard.factory.open("acme").transaction() as tx:
        carried = Carried(operation_id=operation.id, workflow=operation.flow_name, fields={})
        operation_actions.claim(tx, carried, flow_run_id=operation.flow_run_id or "")
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
    operator = dashboard.browser(operator_token)

    dead = operator.get("/dashboard/ops/operations")
    assert f'id="{operation.id}"' in dead.text and "render_failed" in dead.text
    replayed = operator.post(f"/dashboard/ops/operations/acme/{operation.id}/retry", {})

    assert "queued again" in _flash(replayed.text) and f'id="{operation.id}"' not in replayed.text
    assert [o.status for o in dashboard.operations("acme")] == ["queued"]


def test_a_member_is_refused_the_console(dashboard: Dashboard) -> None:
    owner = dashboard.browser(dashboard.tenant("acme"))

    assert owner.get("/dashboard/ops").status_code == 403
    assert owner.get("/dashboard/ops/audit").status_code == 403
    refused = owner.post("/dashboard/ops/tenants/acme/suspend", {})
    assert refused.status_code == 403 and dashboard.services.tenants.get("acme").status == "active"


def _row(html: str, key_id: str) -> str:
    return html.split(f'id="key-{key_id}"')[1].split("</tr>")[0]


def test_an_operator_trusts_a_publisher_key_on_every_site_sets_its_expiry_and_revokes_it_confirmed(
    dashboard: Dashboard, operator_token: str
) -> None:
    owner = dashboard.browser(dashboard.tenant("acme"))
    operator = dashboard.browser(operator_token)
    publisher = Publisher()
    assert "Package keys" in operator.get("/dashboard/ops").text

    bad = operator.post("/dashboard/ops/keys", {"public_key": "not-a-key", "name": "Vendor"})
    assert bad.status_code == 400 and "invalid_public_key" in bad.text and 'value="not-a-key"' in bad.text
    assert dashboard.services.platform_keys.keys(OPERATOR) == []

    added = operator.post("/dashboard/ops/keys", {"public_key": publisher.public_key, "name": "Vendor"})
    [key] = dashboard.services.platform_keys.keys(OPERATOR)
    assert f"Packages signed by {key.key_id} are trusted on every site" in _flash(added.text)
    assert key.name == "Vendor" and key.status == "trusted" and key.expires_at is None
    assert 'data-status="trusted"' in _row(added.text, key.key_id)
    site_keys = owner.get("/dashboard/sites/acme/packages").text
    assert "every site (operator)" in _row(site_keys, key.key_id)  # the site sees the platform's key

    past = operator.post(f"/dashboard/ops/keys/{key.key_id}/expire", {"at": "2020-01-01T00:00"})
    assert "still to come" in _flash(past.text)
    assert dashboard.services.platform_keys.key(OPERATOR, key.key_id).expires_at is None
    later = operator.post(f"/dashboard/ops/keys/{key.key_id}/expire", {"at": "2031-06-01T12:30"})
    assert "until 2031-06-01 12:30 UTC" in _flash(later.text)
    expires = dashboard.services.platform_keys.key(OPERATOR, key.key_id).expires_at
    assert expires == datetime(2031, 6, 1, 12, 30, tzinfo=UTC)

    confirm = operator.get(f"/dashboard/ops/keys/{key.key_id}/revoke")
    assert confirm.status_code == 200 and "No site trusts packages signed by this key" in confirm.text
    unticked = operator.post(f"/dashboard/ops/keys/{key.key_id}/revoke", {})
    assert unticked.status_code == 400 and 'name="confirm"' in unticked.text
    assert dashboard.services.platform_keys.key(OPERATOR, key.key_id).status == "trusted"
    revoked = operator.post(f"/dashboard/ops/keys/{key.key_id}/revoke", {"confirm": "yes"})
    assert f"{key.key_id} is revoked" in _flash(revoked.text)
    assert 'data-status="revoked"' in _row(revoked.text, key.key_id)
    first = dashboard.services.platform_keys.key(OPERATOR, key.key_id).revoked_at
    operator.post(f"/dashboard/ops/keys/{key.key_id}/revoke", {"confirm": "yes"})  # a second click changes nothing
    assert dashboard.services.platform_keys.key(OPERATOR, key.key_id).revoked_at == first
    assert 'data-status="revoked"' in _row(owner.get("/dashboard/sites/acme/packages").text, key.key_id)

    audit = operator.get("/dashboard/ops/audit?action=package.key.platform.add").text.split("<tbody>")[1]
    assert audit.count(key.key_id) == 1
    missing = operator.get("/dashboard/ops/keys/0123456789abcdef/revoke")
    assert "No such platform key" in _flash(missing.text)


def test_a_member_never_reaches_the_platform_keys(dashboard: Dashboard) -> None:
    owner = dashboard.browser(dashboard.tenant("acme"))
    assert owner.get("/dashboard/ops/keys").status_code == 403
    refused = owner.post("/dashboard/ops/keys", {"public_key": Publisher().public_key})
    assert refused.status_code == 403 and dashboard.services.platform_keys.keys(OPERATOR) == []


def test_the_console_lists_sites_a_page_at_a_time_and_finds_one_by_slug_or_name(
    dashboard: Dashboard, operator_token: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ops_pages, "TENANTS_PAGE", 2)
    for slug in ("alpha", "bravo", "charlie"):
        dashboard.tenant(slug)
    asked: list[str] = []
    detail = dashboard.services.tenants.detail

    async def counted(operator: Any, slug: str) -> Any:
        asked.append(slug)
        return await detail(operator, slug)

    monkeypatch.setattr(dashboard.services.tenants, "detail", counted)
    operator = dashboard.browser(operator_token)

    first = operator.get("/dashboard/ops")
    assert 'id="tenant-alpha"' in first.text and 'id="tenant-bravo"' in first.text
    assert 'id="tenant-charlie"' not in first.text and asked == ["alpha", "bravo"]  # only the page is asked about
    following = re.search(r'href="([^"]+)" rel="next"', first.text)
    assert following is not None
    second = operator.get(following.group(1).replace("&amp;", "&"))
    assert 'id="tenant-charlie"' in second.text and 'id="tenant-alpha"' not in second.text
    assert 'rel="next"' not in second.text and "First page" in second.text

    found = operator.get("/dashboard/ops?q=SITE+BRA")  # names are "Site {slug}"; any case
    assert 'id="tenant-bravo"' in found.text and 'id="tenant-alpha"' not in found.text
    assert "No site matches" in operator.get("/dashboard/ops?q=100%25").text  # a literal %, not a wildcard
    operator.post("/dashboard/ops/tenants/charlie/suspend", {})
    suspended = operator.get("/dashboard/ops?status=suspended")
    assert 'id="tenant-charlie"' in suspended.text and 'id="tenant-alpha"' not in suspended.text
