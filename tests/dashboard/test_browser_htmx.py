"""The dashboard's live parts in Chromium, with the recording twin in place of Prefect (fast, no worker):
htmx under the dashboard's CSP previews as the editor types, and the rendering indicator flips to
published on its own when the delivery lands (the test settles the operation, as a worker would). axe-core
checks the states only a browser reaches on the way: the preview and the indicator after their htmx swaps, a
success flash, and a refusal shown in place."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from control_plane.app import create_app
from tenant_runtime.actions import operations as operation_actions
from tenant_runtime.workflows import Carried
from tests.dashboard.conftest import Dashboard
from tests.dashboard.test_axe import axe_violations_under_csp, describe, with_axe
from tests.fixtures.live_server import serve

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.integration


@pytest.fixture
def editor(dashboard: Dashboard) -> str:
    """An editor of site ``acme`` (made before Chromium starts: Playwright's loop then owns the thread)."""
    return dashboard.tenant("acme", role="editor")


@pytest.fixture
def served(dashboard: Dashboard) -> Iterator[str]:
    with serve(create_app(dashboard.services.settings, services=dashboard.services)) as url:
        yield url


def _settle(dashboard: Dashboard, tenant: str) -> None:
    """What a worker does at the end of a delivery: claim the run, then finish after the last purge."""
    dashboard.services.handoff.flush()
    (operation,) = dashboard.operations(tenant)
    assert operation.flow_run_id is not None
    with dashboard.factory.open(tenant).transaction() as tx:
        carried = Carried(operation_id=operation.id, workflow=operation.flow_name, fields={})
        operation_actions.claim(tx, carried, flow_run_id=operation.flow_run_id)
        operation_actions.finish(tx, operation.id, "succeeded", step="purge_aggregates")


def test_preview_as_you_type_then_publish_with_confirmation_and_watch_the_indicator_flip(
    editor: str, served: str, dashboard: Dashboard, chromium: Browser, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    token = editor
    context = with_axe(chromium.new_context(viewport={"width": 1280, "height": 900}))
    page = context.new_page()
    found: list[str] = []  # axe-core on the states only a browser reaches: htmx swaps, a flash, an error in place
    blocked: list[str] = []
    page.on("console", lambda msg: blocked.append(msg.text) if "Content Security Policy" in msg.text else None)
    try:
        page.goto(f"{served}/dashboard/login")
        page.fill("#token", token)
        page.click("button:has-text('Sign in')")
        page.click("text=New document")
        page.fill("#title", "Launch day")
        page.fill("#slug", "launch")
        page.locator("#body").press_sequentially("We are **live**")
        expect(page.locator("#preview-body strong")).to_have_text("live")  # htmx, no reload
        found += describe("new document, preview swapped in by htmx", axe_violations_under_csp(page))
        page.click("button:has-text('Create draft')")
        expect(page.locator(".flash-success")).to_contain_text("created")
        found += describe("editor with a success flash", axe_violations_under_csp(page))

        page.click("text=Publish version 1…")
        expect(page.locator("ul.effects")).to_contain_text("becomes public at")
        page.click("button:has-text('Publish')")
        expect(page.locator(".flash-error")).to_contain_text("confirmation_required")
        assert dashboard.operations("acme") == []
        found += describe("publish refused in place (confirmation_required)", axe_violations_under_csp(page))
        page.check("input[name=confirm]")
        page.click("button:has-text('Publish')")
        expect(page.locator("#delivery")).to_have_attribute("data-state", "rendering")
        page.evaluate("window.notReloaded = true")

        _settle(dashboard, "acme")

        expect(page.locator("#delivery")).to_have_attribute("data-state", "published", timeout=15_000)
        expect(page.locator("#delivery")).to_contain_text("cache was purged")
        assert page.evaluate("window.notReloaded === true")
        found += describe("rendering indicator swapped to published by htmx", axe_violations_under_csp(page))
        page.screenshot(path=str(tmp_path / "indicator.png"))
    finally:
        context.close()
    assert blocked == []
    assert not found, f"{len(found)} serious/critical axe violations:\n" + "\n".join(found)
