"""Drag-and-drop upload in Chromium (only a browser shows it): files dropped on the media library's form go
up one by one with a progress bar under the dashboard's CSP; a refused one says why in place and keeps the
page, an accepted one lands in the library."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from PIL import Image

from control_plane.app import create_app
from tests.dashboard.conftest import OPERATOR, Dashboard
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


def _png() -> list[int]:
    out = io.BytesIO()
    Image.new("RGB", (4, 3), "blue").save(out, format="PNG")
    return list(out.getvalue())


DROP = """([png, text]) => {
  const dt = new DataTransfer();
  dt.items.add(new File([new Uint8Array(png)], 'dropped.png', {type: 'image/png'}));
  dt.items.add(new File([text], 'notes.png', {type: 'image/png'}));
  return dt;
}"""


def test_dropped_files_upload_with_progress_and_a_refusal_is_shown_in_place(
    editor: str, served: str, dashboard: Dashboard, chromium: Browser
) -> None:
    from playwright.sync_api import expect

    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    blocked: list[str] = []
    page.on("console", lambda msg: blocked.append(msg.text) if "Content Security Policy" in msg.text else None)
    try:
        page.goto(f"{served}/dashboard/login")
        page.fill("#token", editor)
        page.click("button:has-text('Sign in')")
        page.goto(f"{served}/dashboard/sites/acme/media")
        page.evaluate("window.notReloaded = true")
        files = page.evaluate_handle(DROP, [_png(), "plain text, not a picture"])
        page.dispatch_event("[data-dropzone]", "dragenter", {"dataTransfer": files})
        expect(page.locator("[data-dropzone]")).to_have_class("dropzone stack dragging")
        page.dispatch_event("[data-dropzone]", "drop", {"dataTransfer": files})

        rows = page.locator("[data-progress] li")
        expect(rows).to_have_count(2)
        expect(rows.nth(0)).to_contain_text("uploaded")
        expect(rows.nth(0).locator("progress")).to_have_attribute("value", "100")
        expect(rows.nth(1).locator("[role=alert]")).to_contain_text("media_type_not_allowed")
        assert page.evaluate("window.notReloaded === true")  # a refusal keeps the page and says why
        assert [m.name for m in dashboard.services.media.list(OPERATOR, "acme")] == ["dropped.png"]

        page.goto(f"{served}/dashboard/sites/acme/media")
        expect(page.locator(".media-item")).to_contain_text("dropped.png")
    finally:
        context.close()
    assert blocked == []
