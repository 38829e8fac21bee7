"""The media library in the dashboard: upload (checked from the bytes), search, trash and restore."""

from __future__ import annotations

import io

from PIL import Image

from tests.dashboard.conftest import ORIGIN, Dashboard
from tests.dashboard.test_dashboard import _flash


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
