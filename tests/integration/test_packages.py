"""install_package on the real Prefect server: a signed theme installed and pinned re-renders every page."""

from __future__ import annotations

import base64

import pytest

from tests.fixtures.stack import Pressroom
from tests.tenant_runtime.package_kit import Publisher

pytestmark = pytest.mark.integration


def test_installing_a_pinned_theme_rerenders_every_published_page(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    pages = [pressroom.create_document(acme, f"story-{n}", body=f"Story {n}") for n in range(3)]
    pressroom.start_worker(acme)
    for page in pages:
        pressroom.wait_operation(acme, pressroom.publish(acme, page["id"])["operation_id"])
    publisher = Publisher()
    api = pressroom.api
    assert (
        api.post(
            f"/api/tenants/{acme.slug}/package-keys", json={"public_key": publisher.public_key}, headers=acme.headers
        ).status_code
        == 201
    )

    archive = base64.b64encode(publisher.theme(marker="magazine-live")).decode()
    response = api.post(
        f"/api/tenants/{acme.slug}/packages",
        json={"archive": archive, "pin_theme": True, "confirm": True},
        headers=acme.headers,
    )
    assert response.status_code == 202, response.text
    operation = pressroom.wait_operation(acme, response.json()["operation_id"])

    assert operation["status"] == "succeeded", operation
    assert operation["outcome"]["package"] == "magazine@1.0.0" and operation["outcome"]["rerendered"] == 3
    for n in range(3):
        stored = pressroom.store.get(f"tenants/{acme.slug}/site/story-{n}/index.html")
        assert stored is not None and b'class="magazine-live"' in stored
        assert 'class="magazine-live"' in pressroom.site.get(f"/{acme.slug}/story-{n}").text
    assert "magazine-live-home" in pressroom.site.get(f"/{acme.slug}/").text
    listed = api.get(f"/api/tenants/{acme.slug}/packages", headers=acme.headers).json()
    assert [(p["name"], p["status"], p["pinned"]) for p in listed] == [("magazine", "active", True)]
