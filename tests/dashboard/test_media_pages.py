"""The media library in the dashboard: upload (checked from the bytes), search, trash and restore."""

from __future__ import annotations

import io
import re

from PIL import Image

from tenant_runtime.actions.fields import request_field_change
from tenant_runtime.workspace import SYSTEM
from tests.dashboard.conftest import OPERATOR, ORIGIN, Browser, Dashboard
from tests.dashboard.test_dashboard import _create, _flash


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (3, 2), "red").save(out, format="PNG")
    return out.getvalue()


def test_a_file_is_uploaded_found_trashed_and_restored(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    browser.get("/dashboard/sites/acme/media")

    def upload(name: str, data: bytes):  # type: ignore[no-untyped-def]
        return browser.client.post(
            "/dashboard/sites/acme/media",
            data={"csrf_token": browser.csrf},
            files={"file": (name, data, "application/octet-stream")},
            headers={"Origin": ORIGIN},
        )

    refused = upload("notes.png", b"plain text, not an image")
    assert refused.status_code == 415 and "media_type_not_allowed" in refused.text
    done = upload("logo.png", _png())
    assert done.status_code == 200 and "Uploaded “logo.png”" in _flash(done.text)
    assert 'width="3" height="2"' in done.text and "media:med_" in done.text
    assert "logo.png" in browser.get("/dashboard/sites/acme/media?q=logo").text
    assert "No media yet matching" in browser.get("/dashboard/sites/acme/media?q=banner").text

    media_id = done.text.split('id="media-')[1].split('"')[0]
    trashed = browser.post(f"/dashboard/sites/acme/media/{media_id}/delete", {})
    assert "in the trash" in _flash(trashed.text) and f'id="media-{media_id}"' not in trashed.text
    trash = browser.get("/dashboard/sites/acme/media?state=deleted")
    assert f'id="media-{media_id}"' in trash.text and "restorable until" in trash.text
    restored = browser.post(f"/dashboard/sites/acme/media/{media_id}/restore", {})
    assert "is restored" in _flash(restored.text)
    assert f'id="media-{media_id}"' in browser.get("/dashboard/sites/acme/media").text

    viewer = dashboard.browser(dashboard.tenant("acme", role="viewer"))
    page = viewer.get("/dashboard/sites/acme/media")
    assert "logo.png" in page.text and 'type="file"' not in page.text and "Move to trash" not in page.text


def test_an_upload_sent_twice_from_one_page_adds_one_file_and_the_scripts_uploads_each_add_one(
    dashboard: Dashboard,
) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    library = browser.get("/dashboard/sites/acme/media")
    assert f'name="form_key" value="{browser.form_key}"' in library.text

    def upload(name: str, **form: str):  # type: ignore[no-untyped-def]
        return browser.client.post(
            "/dashboard/sites/acme/media",
            data={"csrf_token": browser.csrf, **form},
            files={"file": (name, _png(), "image/png")},
            headers={"Origin": ORIGIN},
        )

    key = browser.form_key
    first, second = upload("logo.png", form_key=key), upload("logo.png", form_key=key)  # a double click
    assert "Uploaded “logo.png”" in _flash(first.text) and "Uploaded “logo.png”" in _flash(second.text)
    assert [m.name for m in dashboard.services.media.list(OPERATOR, "acme")] == ["logo.png"]
    other = upload("banner.png", form_key=key)  # the same page sent again with another file
    assert other.status_code == 409 and "already sent with other values" in other.text
    upload("a.png"), upload("b.png")  # media-upload.js sends each file on its own, without the page's key
    assert sorted(m.name for m in dashboard.services.media.list(OPERATOR, "acme")) == ["a.png", "b.png", "logo.png"]


def test_a_files_page_says_where_it_is_used_and_the_library_offers_drag_and_drop(dashboard: Dashboard) -> None:
    token = dashboard.tenant("acme")
    media = dashboard.services.media.upload(OPERATOR, "acme", "hero.png", _png()).body["id"]
    unused = dashboard.services.media.upload(OPERATOR, "acme", "spare.png", _png()).body["id"]
    doc = _create(dashboard.browser(token), "acme", body=f"![hero](media:{media})")
    owner = dashboard.browser(token)

    library = owner.get("/dashboard/sites/acme/media")
    assert "data-upload" in library.text and "data-dropzone" in library.text and "media-upload.js" in library.text
    script = owner.get("/dashboard/static/media-upload.js")
    assert script.status_code == 200 and "upload.addEventListener" in script.text
    assert f'href="/dashboard/sites/acme/media/{media}"' in library.text

    used = owner.get(f"/dashboard/sites/acme/media/{media}")
    assert used.status_code == 200 and "Where it is used" in used.text
    assert f'href="/dashboard/sites/acme/documents/{doc}"' in used.text and "version 1" in used.text
    assert "Nothing uses this file" in owner.get(f"/dashboard/sites/acme/media/{unused}").text
    with dashboard.factory.open("acme").transaction() as tx:  # a media field whose default is ``media``
        request_field_change(tx, "acme", SYSTEM, kind="post", change="add", field="hero", type="media", default=media)
    assert "field post.hero" in owner.get(f"/dashboard/sites/acme/media/{media}").text

    trashed = owner.post(f"/dashboard/sites/acme/media/{unused}/delete", {})
    assert "in the trash" in _flash(trashed.text)
    item = owner.get(f"/dashboard/sites/acme/media/{unused}")
    assert "restorable until" in item.text and "the sweep deletes it once its retention passes" in item.text
    assert "is restored" in _flash(owner.post(f"/dashboard/sites/acme/media/{unused}/restore", {}).text)
    assert "No such media" in _flash(owner.post("/dashboard/sites/acme/media/med_nope/restore", {}).text)

    viewer = dashboard.browser(dashboard.tenant("acme", role="viewer"))
    seen = viewer.get(f"/dashboard/sites/acme/media/{media}")
    assert seen.status_code == 200 and "Move to trash" not in seen.text
    denied = viewer.post(f"/dashboard/sites/acme/media/{media}/delete", {})
    assert "does not allow content.edit" in _flash(denied.text)

    stranger = dashboard.browser(dashboard.tenant("globex"))
    assert stranger.get(f"/dashboard/sites/acme/media/{media}").status_code == 404
    assert stranger.get(f"/dashboard/sites/globex/media/{media}").status_code == 404  # not its file either
    assert stranger.post(f"/dashboard/sites/acme/media/{media}/delete", {}).status_code == 404
    assert dashboard.services.media.get(OPERATOR, "acme", media).status == "active"


def _picked(html: str) -> list[str]:
    """The media ids a picker panel offers, in order."""
    return re.findall(r'<li class="media-item" id="pick-([^"]+)">', html)


def test_the_editors_media_picker_offers_live_files_searched_on_the_server_and_none_to_a_viewer(
    dashboard: Dashboard,
) -> None:
    editor = dashboard.browser(dashboard.tenant("acme", role="editor"))
    upload = dashboard.services.media.upload
    logo = upload(OPERATOR, "acme", "logo.png", _png()).body["id"]
    banner = upload(OPERATOR, "acme", "banner [wide].png", _png()).body["id"]
    terms = upload(OPERATOR, "acme", "terms.pdf", b"%PDF-1.4\n" + b"\x00" * 32).body["id"]
    gone = upload(OPERATOR, "acme", "old logo.png", _png()).body["id"]
    dashboard.services.media.delete(OPERATOR, "acme", gone)
    picker, htmx = "/dashboard/sites/acme/media/picker", {"HX-Request": "true"}

    form = editor.get("/dashboard/sites/acme/documents/new")
    assert f'hx-get="{picker}" hx-target="#media-picker"' in form.text and 'id="media-picker"' in form.text
    assert "media-picker.js" in form.text
    script = editor.get("/dashboard/static/media-picker.js")
    assert script.status_code == 200 and "setRangeText" in script.text

    panel = editor.get(picker, headers=htmx)
    assert panel.status_code == 200 and "<html" not in panel.text and 'aria-labelledby="picker-heading"' in panel.text
    assert _picked(panel.text) == [terms, banner, logo]  # newest first; the trashed file is not offered
    assert f'data-embed="![logo.png](media:{logo})"' in panel.text  # the code the file's page shows
    assert f'data-embed="![banner \\[wide\\].png](media:{banner})"' in panel.text  # the name stays text
    assert f'data-embed="[terms.pdf](media:{terms})"' in panel.text  # a PDF is linked, not an <img>
    assert f"<code>{_embed(editor, logo)}</code>" in panel.text

    assert _picked(editor.get(f"{picker}?q=LOGO", headers=htmx).text) == [logo]  # not the trashed "old logo"
    assert _picked(editor.get(f"{picker}?q=[wide]", headers=htmx).text) == [banner]
    nothing = editor.get(f"{picker}?q=50%25", headers=htmx)
    assert _picked(nothing.text) == [] and "No media matching “50%”" in nothing.text

    more = [upload(OPERATOR, "acme", f"shot {n}.png", _png()).body["id"] for n in range(10)]  # 13 live .png/.pdf
    first = editor.get(f"{picker}?q=.p", headers=htmx)
    assert _picked(first.text) == [*reversed(more), terms, banner] and "Newer" not in first.text
    assert f'href="{picker}?q=.p&amp;page=2" hx-get="{picker}?q=.p&amp;page=2" rel="next"' in first.text
    second = editor.get(f"{picker}?q=.p&page=2", headers=htmx)
    assert _picked(second.text) == [logo] and f'href="{picker}?q=.p" hx-get="{picker}?q=.p" rel="prev"' in second.text

    # Without JavaScript the link opens the picker as a page of its own: the codes to copy, no Insert to press.
    plain = editor.get(picker)
    assert plain.status_code == 200 and "<h1" in plain.text and f"<code>[terms.pdf](media:{terms})</code>" in plain.text
    assert plain.text.count("data-embed=") == plain.text.count(" hidden>Insert") == 12

    viewer = dashboard.browser(dashboard.tenant("acme", role="viewer"))
    page = viewer.get("/dashboard/sites/acme/documents/new")
    assert "Insert media" not in page.text and "media-picker" not in page.text
    refused = viewer.get(picker, headers=htmx)
    assert refused.status_code == 403 and "does not allow content.edit" in refused.text and logo not in refused.text
    stranger = dashboard.browser(dashboard.tenant("globex"))
    assert stranger.get(picker, headers=htmx).status_code == 404


def _embed(browser: Browser, media_id: str) -> str:
    """The embed code a file's own page shows."""
    return re.findall(
        r"<dt>Embed</dt><dd><code>([^<]+)</code>", browser.get(f"/dashboard/sites/acme/media/{media_id}").text
    )[0]


def test_the_live_preview_shows_an_embedded_file_from_the_site(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme", role="editor"))
    media = dashboard.services.media.upload(OPERATOR, "acme", "logo.png", _png()).body["id"]
    browser.get("/dashboard/sites/acme/documents/new")

    preview = browser.post(
        "/dashboard/sites/acme/preview", {"body": f"![logo.png](media:{media})"}, headers={"HX-Request": "true"}
    )

    site = dashboard.services.settings.runtime.site_url
    assert f'<img src="{site}/acme/media/{media}" alt="logo.png">' in preview.text
