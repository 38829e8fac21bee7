"""Editors in a real browser: write a post, publish it with confirmation, watch it land; retry a dead delivery."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from flows.probes import PROBES
from tests.fixtures.browser import LiveDashboard

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.integration

SCREENSHOTS = Path("/tmp/pressroom-dashboard")


def _shot(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def _reload_until_status(page: Page, operation_id: str, status: str, timeout: float = 60) -> None:
    badge = page.locator(f'tr[id="{operation_id}"] .badge')
    deadline = time.monotonic() + timeout
    while badge.get_attribute("data-status") != status:
        assert time.monotonic() < deadline, f"operation stuck in {badge.get_attribute('data-status')}"
        time.sleep(0.3)
        page.reload()


def _sign_in(page: Page, live: LiveDashboard, token: str, screenshot: str | None = None) -> None:
    from playwright.sync_api import expect

    page.goto(f"{live.url}/dashboard/")
    expect(page).to_have_url(f"{live.url}/dashboard/login")
    page.fill("#token", token)
    if screenshot:
        _shot(page, screenshot)
    page.click("button:has-text('Sign in')")
    expect(page.locator("h1")).to_have_text("Documents")


def _write_and_publish(page: Page, title: str, slug: str, body: str, *, screenshots: bool = False) -> str:
    """Create a post, publish it through the confirmation page; returns the operation id."""
    from playwright.sync_api import expect

    page.click("text=New document")
    page.fill("#title", title)
    page.fill("#slug", slug)
    page.select_option("#kind", "post")
    page.fill("#body", body)
    page.click("button:has-text('Create draft')")
    expect(page.locator(".flash-success")).to_contain_text("created")
    if screenshots:
        _shot(page, "edit")
    page.click("text=Publish version 1…")
    page.click("button:has-text('Publish')")  # the box is not ticked: refused, nothing public
    expect(page.locator(".flash-error")).to_contain_text("confirmation_required")
    page.check("input[name=confirm]")
    if screenshots:
        _shot(page, "confirm")
    page.click("button:has-text('Publish')")
    expect(page.locator("h1")).to_have_text(title)  # back on the document, its rendering indicator live
    expect(page.locator(".flash-success")).to_contain_text("Publish requested")
    link = page.locator("#delivery a").get_attribute("href") or ""
    operation_id = link.rsplit("/", 1)[-1]
    assert operation_id.startswith("op_"), link
    return operation_id


def test_an_editor_publishes_a_post_from_the_dashboard(chromium: Browser, live_dashboard: LiveDashboard) -> None:
    from playwright.sync_api import expect

    room = live_dashboard.room
    acme = room.new_tenant("acme")
    editor = room.token(acme, "editor")["Authorization"].removeprefix("Bearer ")
    room.start_worker(acme)
    context = chromium.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    try:
        _sign_in(page, live_dashboard, editor, screenshot="login")
        operation_id = _write_and_publish(
            page,
            "Launch day",
            "launch",
            "We are **live**.\n\n- fast\n- offline\n\n<script>alert('x')</script>",
            screenshots=True,
        )
        # The indicator flips to published by itself (htmx polling): the page is never reloaded.
        page.evaluate("window.notReloaded = true")
        expect(page.locator("#delivery")).to_have_attribute("data-state", "published", timeout=60_000)
        expect(page.locator("#delivery")).to_contain_text("cache was purged")
        assert page.evaluate("window.notReloaded === true")
        _shot(page, "document-published")

        page.click("nav >> text=Operations")
        run_link = page.locator(f'tr[id="{operation_id}"] a:has-text("Prefect run")')
        assert (run_link.get_attribute("href") or "").startswith(room.settings.dispatch.ui_url + "/runs/flow-run/")
        _shot(page, "operations")

        page.click("nav >> text=Documents")
        row = page.locator("tbody tr", has_text="Launch day")
        expect(row.locator(".badge").first).to_have_text("published")
        _shot(page, "documents")
        page.click("text=Launch day")
        expect(page.locator(".preview strong")).to_have_text("live")
        assert page.locator(".preview script").count() == 0
    finally:
        context.close()

    public = room.site.get(f"/{acme.slug}/launch")
    assert public.status_code == 200 and "<strong>live</strong>" in public.text and "<script>alert" not in public.text
    assert room.operation(acme, operation_id)["status"] == "succeeded"


def test_a_dead_delivery_shows_its_error_and_the_retry_button_finishes_it(
    chromium: Browser, live_dashboard: LiveDashboard
) -> None:
    from playwright.sync_api import expect

    room = live_dashboard.room
    acme = room.new_tenant("acme")
    PROBES.fail(acme.slug, "render_home", times=1, permanent=True)
    room.start_worker(acme)
    context = chromium.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    try:
        _sign_in(page, live_dashboard, acme.token)
        operation_id = _write_and_publish(page, "Flaky home", "flaky", "Body")
        expect(page.locator("#delivery")).to_have_attribute("data-state", "failed", timeout=60_000)
        page.click("nav >> text=Operations")
        _reload_until_status(page, operation_id, "dead")
        row = page.locator(f'tr[id="{operation_id}"]')
        expect(row.locator("td.error")).to_contain_text("permanent_failure")
        _shot(page, "operations-dead")

        row.locator("button:has-text('Retry')").click()
        expect(page.locator(".flash-success")).to_contain_text("queued again")
        _reload_until_status(page, operation_id, "succeeded", timeout=120)  # a loaded machine is slow to replay
        expect(page.locator(f'tr[id="{operation_id}"] button:has-text("Retry")')).to_have_count(0)
    finally:
        context.close()

    assert room.site.get(f"/{acme.slug}/flaky").status_code == 200
