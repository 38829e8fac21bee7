"""The dashboard through Litestar's TestClient: sign-in, CSRF and origin checks, the command layer's answers."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from sqlmodel import Session

from control_plane.dashboard.session import session_key
from control_plane.db.models import ApiToken
from control_plane.settings import ControlPlaneSettings
from tenant_runtime.actions import operations as operation_actions
from tenant_runtime.config import SettingsError
from tenant_runtime.workflows import Carried
from tests.dashboard.conftest import OPERATOR, Browser, Dashboard

DOC = {"slug": "launch", "title": "Launch day", "body": "We are **live**.", "kind": "post"}


def _flash(html: str) -> str:
    found = re.findall(r'class="flash flash-\w+"[^>]*>(.*?)</div>', html, re.DOTALL)
    return " ".join(re.sub(r"\s+", " ", m) for m in found)


def _create(browser: Browser, tenant: str, **fields: str) -> str:
    browser.get(f"/dashboard/sites/{tenant}/documents/new")
    response = browser.post(f"/dashboard/sites/{tenant}/documents", {**DOC, **fields, "form_key": browser.form_key})
    assert response.status_code == 200 and "created" in _flash(response.text), response.text
    return str(response.url).rsplit("/", 1)[1]


# --- sign-in ---------------------------------------------------------------------------------------------------


def test_sign_in_keeps_only_an_encrypted_token_reference_in_an_httponly_lax_cookie(dashboard: Dashboard) -> None:
    token = dashboard.tenant("acme")
    browser = dashboard.browser()

    response = browser.login(token)

    assert response.status_code == 200 and response.url.path == "/dashboard/sites/acme"
    assert "Documents" in response.text
    cookie = next(c for c in browser.client.cookies.jar if c.name == "pressroom_session")
    assert cookie.path == "/dashboard" and cookie.has_nonstandard_attr("HttpOnly")
    set_cookie = response.history[0].headers["set-cookie"].lower()
    assert "httponly" in set_cookie and "samesite=lax" in set_cookie
    assert token not in cookie.value and "tok_" not in cookie.value  # encrypted, not just signed


def test_a_wrong_token_is_refused_with_a_message(dashboard: Dashboard) -> None:
    browser = dashboard.browser()
    browser.get("/dashboard/login")

    response = browser.post("/dashboard/login", {"token": "prt_not-a-token"})

    assert response.status_code == 401
    assert "not valid" in _flash(response.text) and "unauthorized" in response.text


def test_pages_need_a_sign_in_and_sign_out_ends_it(dashboard: Dashboard) -> None:
    browser = dashboard.browser()
    assert browser.get("/dashboard/sites/acme").url.path == "/dashboard/login"

    browser = dashboard.browser(dashboard.tenant("acme"))
    response = browser.post("/dashboard/logout")

    assert response.url.path == "/dashboard/login" and "signed out" in _flash(response.text)
    assert browser.get("/dashboard/sites/acme").url.path == "/dashboard/login"


def test_a_revoked_token_ends_the_browser_session_at_once(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    with Session(dashboard.services.engine) as session:
        for row in session.query(ApiToken).all():
            row.revoked_at = datetime.now(UTC)
            session.add(row)
        session.commit()

    assert browser.get("/dashboard/sites/acme").url.path == "/dashboard/login"


def test_a_member_sees_only_their_site_and_an_operator_picks_any(dashboard: Dashboard, operator_token: str) -> None:
    member = dashboard.browser(dashboard.tenant("acme"))
    dashboard.tenant("globex")

    other = member.get("/dashboard/sites/globex")
    assert other.status_code == 404 and "not_found" in other.text and "Traceback" not in other.text

    operator = dashboard.browser(operator_token)
    assert operator.last is not None and operator.last.url.path == "/dashboard/"
    assert "/dashboard/sites/acme" in operator.last.text and "/dashboard/sites/globex" in operator.last.text
    assert operator.get("/dashboard/sites/globex").status_code == 200


# --- CSRF and same origin ----------------------------------------------------------------------------------------


def test_a_form_without_the_csrf_token_is_refused_and_writes_nothing(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))

    response = browser.post("/dashboard/sites/acme/documents", DOC, csrf=False)

    assert response.status_code == 403 and "csrf_failed" in response.text
    wrong = browser.post("/dashboard/sites/acme/documents", {**DOC, "csrf_token": "x" * 43}, csrf=False)
    assert wrong.status_code == 403 and "csrf_failed" in wrong.text
    assert dashboard.documents("acme") == []


def test_another_sessions_csrf_token_is_refused(dashboard: Dashboard) -> None:
    token = dashboard.tenant("acme")
    mine, theirs = dashboard.browser(token), dashboard.browser(token)

    response = mine.post("/dashboard/sites/acme/documents", {**DOC, "csrf_token": theirs.csrf}, csrf=False)

    assert response.status_code == 403 and "csrf_failed" in response.text
    assert dashboard.documents("acme") == []


@pytest.mark.parametrize(
    "headers",
    [{"Origin": "https://evil.example"}, {"Origin": "null"}, {"Referer": "https://evil.example/page"}, {}],
    ids=["other-origin", "opaque-origin", "other-referer", "neither"],
)
def test_a_cross_origin_post_is_refused_even_with_the_token(dashboard: Dashboard, headers: dict[str, str]) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))

    response = browser.post("/dashboard/sites/acme/documents", DOC, origin=None, headers=headers)

    assert response.status_code == 403 and "cross_origin" in response.text and "Traceback" not in response.text
    assert response.headers["x-frame-options"] == "DENY" and response.headers["cache-control"] == "no-store"
    assert dashboard.documents("acme") == []


def test_a_same_origin_referer_is_enough_without_origin(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))

    response = browser.post(
        "/dashboard/sites/acme/documents",
        DOC,
        origin=None,
        headers={"Referer": "http://testserver.local/dashboard/sites/acme/documents/new"},
    )

    assert response.status_code == 200 and [d.slug for d in dashboard.documents("acme")] == ["launch"]


def test_a_refusal_is_json_for_a_client_that_asks_for_json(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))

    response = browser.post("/dashboard/logout", origin="https://evil.example", headers={"Accept": "application/json"})

    assert response.status_code == 403
    assert response.json()["error"]["code"] == "cross_origin"


# --- documents through the command layer ------------------------------------------------------------------------


def test_a_document_is_written_and_its_preview_is_sanitized(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))

    doc_id = _create(browser, "acme", title="<b>Bold</b> claim", body="Hi *there* <script>alert(1)</script>")
    page = browser.get(f"/dashboard/sites/acme/documents/{doc_id}")

    assert "&lt;b&gt;Bold&lt;/b&gt; claim" in page.text and "<b>Bold</b>" not in page.text
    assert "<em>there</em>" in page.text and "<script>alert(1)" not in page.text
    listing = browser.get("/dashboard/sites/acme")
    assert "launch" in listing.text and "draft" in listing.text
    assert page.headers["content-security-policy"].startswith("default-src 'none'")


def test_invalid_fields_come_back_with_a_readable_message_and_the_typed_text(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    browser.get("/dashboard/sites/acme/documents/new")

    response = browser.post("/dashboard/sites/acme/documents", {**DOC, "slug": "Not A Slug"})

    assert response.status_code == 400
    assert "lowercase letters" in _flash(response.text) and "invalid_request" in response.text
    assert "We are **live**." in response.text and dashboard.documents("acme") == []


def test_a_stale_version_shows_a_friendly_conflict_and_keeps_the_text(dashboard: Dashboard) -> None:
    token = dashboard.tenant("acme")
    alice, bob = dashboard.browser(token), dashboard.browser(token)
    doc_id = _create(alice, "acme")
    alice.get(f"/dashboard/sites/acme/documents/{doc_id}")
    bob.get(f"/dashboard/sites/acme/documents/{doc_id}")
    saved = bob.post(f"/dashboard/sites/acme/documents/{doc_id}", {**DOC, "body": "Bob's words", "version": "1"})
    assert saved.status_code == 200 and "Saved version 2" in _flash(saved.text)

    response = alice.post(f"/dashboard/sites/acme/documents/{doc_id}", {**DOC, "body": "Alice's words", "version": "1"})

    assert response.status_code == 409
    assert "Someone saved this document" in _flash(response.text) and "version_conflict" in response.text
    assert "Alice&#39;s words" in response.text and "Open the latest version" in response.text
    assert [d.body for d in dashboard.documents("acme")] == ["Bob's words"]


# --- publishing -------------------------------------------------------------------------------------------------


def test_a_viewer_cannot_publish_and_is_told_why(dashboard: Dashboard) -> None:
    owner = dashboard.browser(dashboard.tenant("acme"))
    doc_id = _create(owner, "acme")
    viewer = dashboard.browser(dashboard.tenant("acme", role="viewer"))
    assert "Publish…" not in viewer.get("/dashboard/sites/acme").text

    viewer.get(f"/dashboard/sites/acme/documents/{doc_id}/publish")
    response = viewer.post(
        f"/dashboard/sites/acme/documents/{doc_id}/publish",
        {"confirm": "yes", "version": "1", "form_key": viewer.form_key},
    )

    assert "does not allow content.publish" in _flash(response.text) and "forbidden" in _flash(response.text)
    assert [d.status for d in dashboard.documents("acme")] == ["draft"]
    assert dashboard.operations("acme") == [] and dashboard.relayed == []


def test_a_publish_over_the_sites_quota_is_refused_in_place_and_queues_nothing(dashboard: Dashboard) -> None:
    owner = dashboard.browser(dashboard.tenant("acme"))
    doc_id = _create(owner, "acme")
    dashboard.services.tenants.set_quota(OPERATOR, "acme", 0)  # the operator stopped the site's publishes

    owner.get(f"/dashboard/sites/acme/documents/{doc_id}/publish")
    response = owner.post(
        f"/dashboard/sites/acme/documents/{doc_id}/publish",
        {"confirm": "yes", "version": "1", "form_key": owner.form_key},
    )

    assert response.status_code == 200 and "quota_exceeded" in _flash(response.text), response.text
    assert "Traceback" not in response.text
    assert [d.status for d in dashboard.documents("acme")] == ["draft"] and dashboard.operations("acme") == []


def test_publishing_needs_the_confirmation_box(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    doc_id = _create(browser, "acme")
    browser.get(f"/dashboard/sites/acme/documents/{doc_id}/publish")

    response = browser.post(
        f"/dashboard/sites/acme/documents/{doc_id}/publish", {"version": "1", "form_key": browser.form_key}
    )

    assert response.url.path.endswith("/publish") and "Tick the confirmation box" in _flash(response.text)
    assert "confirmation_required" in response.text
    assert [d.status for d in dashboard.documents("acme")] == ["draft"] and dashboard.operations("acme") == []


def test_a_confirmed_publish_queues_one_operation_even_when_sent_twice(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    doc_id = _create(browser, "acme")
    browser.get(f"/dashboard/sites/acme/documents/{doc_id}/publish")
    form = {"confirm": "yes", "version": "1", "form_key": browser.form_key}

    first = browser.post(f"/dashboard/sites/acme/documents/{doc_id}/publish", form)
    second = browser.post(f"/dashboard/sites/acme/documents/{doc_id}/publish", form)  # a double click

    assert first.url.path == f"/dashboard/sites/acme/documents/{doc_id}" and "Publish requested" in _flash(first.text)
    assert "already sent" in _flash(second.text)
    (operation,) = dashboard.operations("acme")
    assert operation.kind == "publish" and operation.id in first.text and 'data-state="rendering"' in first.text
    assert [(d.status, d.published_version) for d in dashboard.documents("acme")] == [("published", 1)]
    assert dashboard.relayed == ["acme"]  # the replay has nothing new to hand over


def test_publishing_a_version_edited_since_the_confirmation_is_a_conflict(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    doc_id = _create(browser, "acme")
    browser.get(f"/dashboard/sites/acme/documents/{doc_id}/publish")
    confirm = {"confirm": "yes", "version": "1", "form_key": browser.form_key}
    browser.get(f"/dashboard/sites/acme/documents/{doc_id}")
    browser.post(f"/dashboard/sites/acme/documents/{doc_id}", {**DOC, "body": "changed", "version": "1"})

    response = browser.post(f"/dashboard/sites/acme/documents/{doc_id}/publish", confirm)

    assert "version_conflict" in _flash(response.text) and dashboard.operations("acme") == []


def test_unpublish_needs_confirmation_too(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    doc_id = _create(browser, "acme")
    browser.get(f"/dashboard/sites/acme/documents/{doc_id}/publish")
    browser.post(f"/dashboard/sites/acme/documents/{doc_id}/publish", {"confirm": "yes", "version": "1"})

    browser.get(f"/dashboard/sites/acme/documents/{doc_id}/unpublish")
    refused = browser.post(f"/dashboard/sites/acme/documents/{doc_id}/unpublish", {})
    assert "confirmation_required" in _flash(refused.text)
    done = browser.post(f"/dashboard/sites/acme/documents/{doc_id}/unpublish", {"confirm": "yes"})

    assert "Unpublish requested" in _flash(done.text)
    assert [d.status for d in dashboard.documents("acme")] == ["draft"]
    assert sorted(o.kind for o in dashboard.operations("acme")) == ["publish", "unpublish"]


def test_a_dead_operation_shows_its_error_and_can_be_retried(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    doc_id = _create(browser, "acme")
    browser.get(f"/dashboard/sites/acme/documents/{doc_id}/publish")
    browser.post(f"/dashboard/sites/acme/documents/{doc_id}/publish", {"confirm": "yes", "version": "1"})
    (operation,) = dashboard.operations("acme")
    with dashboard.factory.open("acme").transaction() as tx:  # a delivery that failed for good
        carried = Carried(operation_id=operation.id, workflow=operation.flow_name, fields={})
        operation_actions.claim(tx, carried, flow_run_id="run-1")
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

    page = browser.get("/dashboard/sites/acme/operations?status=dead")
    assert 'data-status="dead"' in page.text and "render_failed" in page.text and "theme broke" in page.text
    response = browser.post(f"/dashboard/sites/acme/operations/{operation.id}/retry", {"form_key": browser.form_key})

    assert "queued again" in _flash(response.text)
    assert [o.status for o in dashboard.operations("acme")] == ["queued"]


def test_a_retry_of_an_operation_that_did_not_fail_is_an_illegal_transition_message(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    doc_id = _create(browser, "acme")
    browser.get(f"/dashboard/sites/acme/documents/{doc_id}/publish")
    browser.post(f"/dashboard/sites/acme/documents/{doc_id}/publish", {"confirm": "yes", "version": "1"})
    (operation,) = dashboard.operations("acme")

    response = browser.post(f"/dashboard/sites/acme/operations/{operation.id}/retry", {})

    assert response.status_code == 200 and "illegal_transition" in _flash(response.text)


# --- session secret ---------------------------------------------------------------------------------------------


def test_the_session_key_comes_from_the_environment_or_is_random() -> None:
    configured = ControlPlaneSettings.from_env({"PRESSROOM_SESSION_SECRET": "a-long-enough-secret-value"})
    assert session_key(configured.session_secret) == session_key(configured.session_secret)
    assert len(session_key(configured.session_secret)) == 32
    assert session_key(None) != session_key(None)
    with pytest.raises(SettingsError, match="PRESSROOM_SESSION_SECRET: must be at least 16 characters") as refused:
        ControlPlaneSettings.from_env({"PRESSROOM_SESSION_SECRET": "short"})
    assert "short" not in str(refused.value)  # a secret's value never reaches an error message
