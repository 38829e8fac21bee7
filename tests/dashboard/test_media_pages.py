"""The media library in the dashboard: upload (checked from the bytes), search, trash and restore."""

from __future__ import annotations

import io

from PIL import Image

from tenant_runtime.actions.fields import request_field_change
from tenant_runtime.workspace import SYSTEM
from tests.dashboard.conftest import OPERATOR, ORIGIN, Dashboard
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
