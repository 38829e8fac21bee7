"""Members in Chromium, with the recording twin in place of Prefect: an owner invites an editor, the
editor signs in with the token the page showed once and finds no owner pages, and the audit log filters
by action in place (htmx under the dashboard's CSP)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from control_plane.app import create_app
from tests.dashboard.conftest import Dashboard
from tests.fixtures.live_server import serve

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.integration


@pytest.fixture
def owner(dashboard: Dashboard) -> str:
    """An owner of site ``acme`` (made before Chromium starts: Playwright's loop then owns the thread)."""
    return dashboard.tenant("acme", role="owner")


@pytest.fixture
def served(dashboard: Dashboard) -> Iterator[str]:
    with serve(create_app(dashboard.services.settings, services=dashboard.services)) as url:
        yield url


def test_an_owner_invites_an_editor_who_signs_in_and_the_audit_filters_in_place(
    owner: str, served: str, chromium: Browser
) -> None:
    from playwright.sync_api import expect

    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    blocked: list[str] = []
    page.on("console", lambda msg: blocked.append(msg.text) if "Content Security Policy" in msg.text else None)
    try:
        page.goto(f"{served}/dashboard/login")
        page.fill("#token", owner)
        page.click("button:has-text('Sign in')")
        page.click("nav.sitenav >> text=Members")
        page.fill("#name", "Eddie Editor")
        page.fill("#email", "eddie@example.com")
        page.select_option("#invite-role", "editor")
        page.click("button:has-text('Invite')")
        expect(page.locator("#new-token")).to_contain_text("only this once")
        secret = page.locator("#new-token .secret").inner_text().strip()
        assert secret.startswith("prt_")
        expect(page.locator("#members")).to_contain_text("Eddie Editor")

        page.goto(f"{served}/dashboard/sites/acme/audit")
        page.evaluate("window.notReloaded = true")
        page.select_option("#action", "member.invite")
        expect(page.locator("#audit-rows tbody tr")).to_have_count(1)
        expect(page.locator("#audit-rows")).to_contain_text("member.invite")
        assert page.evaluate("window.notReloaded === true")  # htmx swapped the rows; no reload
        assert "action=member.invite" in page.url

        page.click("button:has-text('Sign out')")
        page.fill("#token", secret)
        page.click("button:has-text('Sign in')")
        expect(page.locator(".who")).to_contain_text("editor")
        expect(page.locator("nav.sitenav")).not_to_contain_text("Members")
    finally:
        context.close()
    assert blocked == []
