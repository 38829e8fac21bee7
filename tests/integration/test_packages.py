"""install_package on the real Prefect server: a signed theme installed, then a release switches the site to it
(and publishes navigation), and every page's HTML changes."""

from __future__ import annotations

import base64

import pytest

from tests.fixtures.stack import Pressroom
from tests.tenant_runtime.package_kit import Publisher

pytestmark = pytest.mark.integration


def test_a_release_switching_to_an_installed_theme_rerenders_every_page(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    api, base = pressroom.api, f"/api/tenants/{acme.slug}"
    pages = [pressroom.create_document(acme, f"story-{n}", body=f"Story {n}") for n in range(3)]
    pressroom.start_worker(acme)
    for page in pages:
        pressroom.wait_operation(acme, pressroom.publish(acme, page["id"])["operation_id"])
    before = [pressroom.store.get(f"tenants/{acme.slug}/site/story-{n}/index.html") for n in range(3)]
    publisher = Publisher()
    key = api.post(f"{base}/package-keys", json={"public_key": publisher.public_key}, headers=acme.headers)
    assert key.status_code == 201, key.text

    archive = base64.b64encode(publisher.theme(marker="magazine-live")).decode()
    response = api.post(f"{base}/packages", json={"archive": archive, "confirm": True}, headers=acme.headers)
    assert response.status_code == 202, response.text
    installed = pressroom.wait_operation(acme, response.json()["operation_id"])
    assert installed["status"] == "succeeded", installed
    assert installed["outcome"]["package"] == "magazine@1.0.0" and installed["outcome"]["site_changed"] is False
    assert [pressroom.store.get(f"tenants/{acme.slug}/site/story-{n}/index.html") for n in range(3)] == before

    navigation = [{"label": "Front page", "href": "/story-0"}]
    saved = api.put(f"{base}/site/navigation", json={"version": 0, "content": navigation}, headers=acme.headers)
    assert saved.status_code == 200, saved.text
    release = api.post(
        f"{base}/releases",
        json={"theme": "magazine", "navigation_version": 1, "confirm": True},
        headers=acme.headers,
    )
    assert release.status_code == 202, release.text
    released = pressroom.wait_operation(acme, release.json()["operation_id"])

    assert released["status"] == "succeeded", released
    assert released["outcome"]["rerendered"] == 3
    for n in range(3):
        stored = pressroom.store.get(f"tenants/{acme.slug}/site/story-{n}/index.html")
        assert stored is not None and stored != before[n]
        assert b'class="magazine-live"' in stored and b">Front page</a>" in stored
        live = pressroom.site.get(f"/{acme.slug}/story-{n}").text
        assert 'class="magazine-live"' in live and f"http://site.test/{acme.slug}/story-0" in live
    assert "magazine-live-home" in pressroom.site.get(f"/{acme.slug}/").text
    listed = api.get(f"{base}/packages", headers=acme.headers).json()
    assert [(p["name"], p["status"], p["pinned"]) for p in listed] == [("magazine", "active", True)]
