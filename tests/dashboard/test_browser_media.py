"""The media library in Chromium (only a browser shows it), under the dashboard's CSP. Drag-and-drop upload:
files dropped on the library's form go up one by one with a progress bar; a refused one says why in place and
keeps the page, an accepted one lands in the library. The editor's media picker: the panel opens in the
editor by keyboard, searches on the server, and a chosen image's embed code lands at the body's cursor, where
the preview shows the image; axe-core checks the editor with the panel open."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from PIL import Image

from control_plane.app import create_app
from tests.dashboard.conftest import OPERATOR, Dashboard
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


def _png_bytes() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (4, 3), "blue").save(out, format="PNG")
    return out.getvalue()


def _png() -> list[int]:
    return list(_png_bytes())


@pytest.fixture
def library(dashboard: Dashboard, editor: str) -> dict[str, str]:
    """Two images in ``acme``'s library and one in its trash, by name → id (uploaded before Chromium starts)."""
    names = ("logo.png", "banner.png", "old logo.png")
    ids = {name: dashboard.services.media.upload(OPERATOR, "acme", name, _png_bytes()).body["id"] for name in names}
    dashboard.services.media.delete(OPERATOR, "acme", ids["old logo.png"])
    return ids


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


def test_an_editor_opens_the_media_picker_chooses_an_image_and_the_preview_shows_it(
    editor: str, library: dict[str, str], served: str, dashboard: Dashboard, chromium: Browser
) -> None:
    from playwright.sync_api import expect

    logo = library["logo.png"]
    context = with_axe(chromium.new_context(viewport={"width": 1280, "height": 900}))
    # The files live on the public site (another host in tests): Chromium is handed the image from there.
    context.route(
        f"{dashboard.services.settings.runtime.site_url}/acme/media/*",
        lambda route: route.fulfill(status=200, content_type="image/png", body=_png_bytes()),
    )
    page = context.new_page()
    blocked: list[str] = []
    page.on("console", lambda msg: blocked.append(msg.text) if "Content Security Policy" in msg.text else None)
    found: list[str] = []
    try:
        page.goto(f"{served}/dashboard/login")
        page.fill("#token", editor)
        page.click("button:has-text('Sign in')")
        page.goto(f"{served}/dashboard/sites/acme/documents/new")
        page.fill("#body", "Our logo: ")  # the cursor ends after the text

        page.locator("[data-picker-open]").focus()
        page.keyboard.press("Enter")  # a keyboard opens it; the panel comes from the server, in place
        panel = page.locator("#media-picker section[aria-labelledby=picker-heading]")
        expect(panel.locator("h2")).to_have_text("Insert media")
        expect(page.locator("#picker-q")).to_be_focused()
        expect(panel.locator("li.media-item")).to_have_count(2)  # not the file in the trash
        found += describe("editor with the media picker open", axe_violations_under_csp(page))

        page.keyboard.type("logo")  # searched on the server as it is typed
        expect(panel.locator("li.media-item")).to_have_count(1)
        choose = panel.get_by_role("button", name="Insert logo.png")
        choose.focus()
        page.keyboard.press("Enter")

        code = f"![logo.png](media:{logo})"
        expect(page.locator("#body")).to_have_value(f"Our logo: {code}")
        expect(page.locator("#body")).to_be_focused()  # back at the cursor, after the inserted code
        assert page.evaluate("() => document.getElementById('body').selectionStart") == len(f"Our logo: {code}")
        expect(panel.locator("[role=status]")).to_have_text("Inserted “logo.png” into the body.")
        shown = page.locator("#preview-body img[alt='logo.png']")
        expect(shown).to_have_attribute("src", f"{dashboard.services.settings.runtime.site_url}/acme/media/{logo}")
        page.wait_for_function("() => document.querySelector('#preview-body img').naturalWidth === 4")

        page.locator("#picker-q").focus()
        page.keyboard.press("Escape")  # closes the panel, the focus goes back to what opened it
        expect(page.locator("#media-picker")).to_be_empty()
        expect(page.locator("[data-picker-open]")).to_be_focused()
    finally:
        context.close()
    assert blocked == []
    assert not found, f"{len(found)} serious/critical axe violations:\n" + "\n".join(found)
