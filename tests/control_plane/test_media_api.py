"""The media library over HTTP, without Prefect: upload checks, list and search, trash and restore, serving."""

from __future__ import annotations

import dataclasses
import io
import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from litestar.testing import TestClient
from PIL import Image

from control_plane.app import create_app
from control_plane.container import Services
from control_plane.public.app import create_site_app
from dispatch.prefect_twin import RecordingPrefect
from tenant_runtime.storage import MemoryStore
from tenant_runtime.workspace import WorkspaceFactory
from tests.fixtures.http_errors import assert_error
from tests.fixtures.stack import OPERATOR_TOKEN, make_settings

OPERATOR = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}
HARD_CAP = 200_000


def png(width: int = 3, height: int = 2) -> bytes:
    out = io.BytesIO()
    Image.frombytes("RGB", (width, height), os.urandom(width * height * 3)).save(out, format="PNG")
    return out.getvalue()


@dataclass
class Library:
    api: TestClient[Any]
    site: TestClient[Any]
    store: MemoryStore

    def new_tenant(self, role: str = "owner") -> tuple[str, dict[str, str]]:
        slug = f"m-{secrets.token_hex(4)}"
        assert self.api.post("/ops/tenants", json={"slug": slug, "name": slug}, headers=OPERATOR).status_code == 201
        token = self.api.post(f"/ops/tenants/{slug}/tokens", json={"role": role}, headers=OPERATOR).json()["token"]
        return slug, {"Authorization": f"Bearer {token}"}

    def token(self, slug: str, role: str) -> dict[str, str]:
        token = self.api.post(f"/ops/tenants/{slug}/tokens", json={"role": role}, headers=OPERATOR).json()["token"]
        return {"Authorization": f"Bearer {token}"}

    def upload(self, slug: str, headers: dict[str, str], data: bytes, name: str = "logo.png", **extra: Any) -> Any:
        return self.api.post(
            f"/api/tenants/{slug}/media", files={"file": (name, data, "application/octet-stream")}, headers=headers
        )

    def objects(self, slug: str) -> list[str]:
        return self.store.list(f"tenants/{slug}/media/")


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    base = make_settings(tmp_path_factory.mktemp("media-api") / "data")
    control = base.control_plane.model_copy(update={"media_max_body_bytes": HARD_CAP})
    settings = dataclasses.replace(base, control_plane=control)
    store = MemoryStore()
    factory = WorkspaceFactory(settings.runtime, store=store)
    services = Services.build(settings, factory=factory, prefect=RecordingPrefect(), relay_prefect=RecordingPrefect())
    site_factory = WorkspaceFactory(settings.runtime, store=store, read_only=True)
    with (
        TestClient(create_app(settings, services=services)) as api,
        TestClient(create_site_app(settings, factory=site_factory)) as site,
    ):
        yield Library(api, site, store)


def test_upload_tells_the_type_from_the_bytes_and_measures_images(library: Library) -> None:
    slug, owner = library.new_tenant()
    response = library.upload(slug, owner, png(3, 2), name="../../Brand Logo.txt")
    assert response.status_code == 201, response.text
    media = response.json()
    assert media["id"].startswith("med_")
    assert media["url"] == f"http://site.test/{slug}/media/{media['id']}"
    assert (media["content_type"], media["width"], media["height"]) == ("image/png", 3, 2)
    assert media["name"] == "Brand Logo.txt" and media["status"] == "active"
    assert library.objects(slug) == [f"tenants/{slug}/media/{media['id']}"]

    pdf = library.upload(slug, owner, b"%PDF-1.7\n...", name="report.png")
    assert pdf.status_code == 201 and pdf.json()["content_type"] == "application/pdf"
    assert pdf.json()["width"] is None

    listed = library.api.get(f"/api/tenants/{slug}/media", headers=owner).json()
    assert [m["id"] for m in listed] == [pdf.json()["id"], media["id"]]
    found = library.api.get(f"/api/tenants/{slug}/media", params={"q": "LOGO"}, headers=owner).json()
    assert [m["id"] for m in found] == [media["id"]]
    assert library.api.get(f"/api/tenants/{slug}/media", params={"q": "%"}, headers=owner).json() == []


@pytest.mark.parametrize(
    ("data", "status", "code"),
    [
        (b"<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>", 415, "media_type_not_allowed"),
        (b"just text, named like a picture", 415, "media_type_not_allowed"),
        (b"\x89PNG\r\n\x1a\n" + b"\x00" * 64, 400, "invalid_media"),
        (b"", 400, "empty_file"),
    ],
)
def test_a_refused_file_is_a_4xx_with_its_code_and_nothing_is_written(
    library: Library, data: bytes, status: int, code: str
) -> None:
    slug, owner = library.new_tenant()
    assert_error(library.upload(slug, owner, data, name="photo.png"), status, code)
    assert library.objects(slug) == []
    assert library.api.get(f"/api/tenants/{slug}/media?status=all", headers=owner).json() == []


def test_over_the_tenants_limit_or_the_request_cap_is_a_413_and_nothing_is_written(library: Library) -> None:
    slug, owner = library.new_tenant()
    assert_error(
        library.api.put(f"/ops/tenants/{slug}/media-policy", json={"max_bytes": 0}, headers=OPERATOR),
        400,
        "invalid_request",
    )
    assert_error(
        library.api.put(f"/ops/tenants/{slug}/media-policy", json={"max_bytes": 500}, headers=owner), 403, "forbidden"
    )
    policy = library.api.put(f"/ops/tenants/{slug}/media-policy", json={"max_bytes": 500}, headers=OPERATOR)
    assert policy.status_code == 200 and policy.json() == {"max_bytes": 500, "retention_days": 30}
    big = png(64, 64)
    assert len(big) > 500
    error = assert_error(library.upload(slug, owner, big), 413, "media_too_large")
    assert error["details"]["max_bytes"] == 500
    assert_error(library.upload(slug, owner, b"\xff\xd8\xff" + b"\x00" * HARD_CAP), 413, "payload_too_large")
    assert library.objects(slug) == []
    audit = library.api.get(
        "/ops/audit", params={"action": "tenant.media_policy.set", "tenant": slug}, headers=OPERATOR
    )
    assert audit.status_code == 200 and len(audit.json()) == 1


def test_the_upload_takes_a_multipart_file_from_an_editor_only(library: Library) -> None:
    slug, owner = library.new_tenant()
    url = f"/api/tenants/{slug}/media"
    assert_error(library.api.post(url, json={"file": "x"}, headers=owner), 415, "unsupported_media_type")
    assert_error(library.api.post(url, files={"other": ("a.png", png())}, headers=owner), 400, "invalid_request")
    viewer = library.token(slug, "viewer")
    assert_error(library.upload(slug, viewer, png()), 403, "forbidden")
    other, _ = library.new_tenant()
    assert_error(library.upload(other, owner, png()), 404, "not_found")
    assert library.objects(slug) == [] and library.objects(other) == []


def test_an_idempotency_key_makes_a_repeated_upload_one_file(library: Library) -> None:
    slug, owner = library.new_tenant()
    headers = {**owner, "Idempotency-Key": "upload-1"}
    data = png()
    first = library.upload(slug, headers, data)
    again = library.upload(slug, headers, data)
    assert first.status_code == again.status_code == 201
    assert again.json()["id"] == first.json()["id"] and again.json()["replayed"] is True
    assert_error(library.upload(slug, headers, png()), 409, "idempotency_key_reused")
    assert len(library.objects(slug)) == 1


def test_an_idempotency_key_makes_a_repeated_sweep_or_search_rebuild_one_operation(library: Library) -> None:
    slug, owner = library.new_tenant()
    for path, body in (
        (f"/api/tenants/{slug}/media/sweep", {"confirm": True}),
        (f"/api/tenants/{slug}/search/rebuild", {"force": True}),
    ):
        headers = {**owner, "Idempotency-Key": f"again-{path.rsplit('/', 1)[-1]}"}
        first = library.api.post(path, json=body, headers=headers)
        again = library.api.post(path, json=body, headers=headers)
        assert first.status_code == again.status_code == 202, first.text
        assert again.json()["operation_id"] == first.json()["operation_id"] and again.json()["replayed"] is True
        fresh = library.api.post(path, json=body, headers={**owner, "Idempotency-Key": "another"})
        assert fresh.json()["operation_id"] != first.json()["operation_id"]
    operations = library.api.get(f"/api/tenants/{slug}/operations", headers=owner).json()
    assert sorted(o["kind"] for o in operations) == ["media_sweep", "media_sweep", "search_rebuild", "search_rebuild"]


def test_the_site_serves_a_file_for_a_year_with_its_surrogate_key_until_it_is_swept(library: Library) -> None:
    slug, owner = library.new_tenant()
    data = png()
    media = library.upload(slug, owner, data).json()
    served = library.site.get(f"/{slug}/media/{media['id']}")
    assert served.status_code == 200 and served.content == data
    assert served.headers["content-type"] == "image/png"
    assert served.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert slug in served.headers["xkey"].split() and any(
        key.endswith(f"media:{media['id']}") for key in served.headers["xkey"].split()
    )
    assert served.headers["x-content-type-options"] == "nosniff"
    assert served.headers["etag"] == f'"{media["sha256"]}"'

    deleted = library.api.delete(f"/api/tenants/{slug}/media/{media['id']}", headers=owner)
    assert deleted.status_code == 200 and deleted.json()["status"] == "deleted" and deleted.json()["purge_after"]
    assert library.site.get(f"/{slug}/media/{media['id']}").content == data  # pages keep working until swept
    assert library.api.get(f"/api/tenants/{slug}/media", headers=owner).json() == []
    trash = library.api.get(f"/api/tenants/{slug}/media?status=deleted", headers=owner).json()
    assert [m["id"] for m in trash] == [media["id"]]

    restored = library.api.post(f"/api/tenants/{slug}/media/{media['id']}/restore", headers=owner)
    assert restored.status_code == 200 and restored.json()["status"] == "active"
    assert restored.json()["deleted_at"] is None

    assert_error(library.site.get(f"/{slug}/media/med_00000000000000000000000000"), 404, "media_not_found")
    assert_error(library.site.get(f"/{slug}/media/nonsense"), 404, "media_not_found")
    assert_error(library.api.delete(f"/api/tenants/{slug}/media/med_nope", headers=owner), 404, "media_not_found")


def test_restore_is_refused_once_the_retention_window_has_passed(library: Library) -> None:
    slug, owner = library.new_tenant()
    library.api.put(f"/ops/tenants/{slug}/media-policy", json={"retention_days": 0}, headers=OPERATOR)
    media = library.upload(slug, owner, png()).json()
    library.api.delete(f"/api/tenants/{slug}/media/{media['id']}", headers=owner)
    response = library.api.post(f"/api/tenants/{slug}/media/{media['id']}/restore", headers=owner)
    assert_error(response, 409, "media_retention_passed")


def test_markdown_embeds_media_by_id_and_a_body_cannot_embed_what_the_site_lacks(library: Library) -> None:
    slug, owner = library.new_tenant()
    media = library.upload(slug, owner, png()).json()
    body = f"Our logo: ![logo](media:{media['id']}) and [the file](media:{media['id']})"
    created = library.api.post(
        f"/api/tenants/{slug}/documents", json={"slug": "about", "title": "About", "body": body}, headers=owner
    )
    assert created.status_code == 201, created.text
    published = library.api.post(
        f"/api/tenants/{slug}/documents/{created.json()['id']}/publish", json={"confirm": True}, headers=owner
    )
    assert published.status_code == 202, published.text
    page = library.site.get(f"/{slug}/about")
    assert page.status_code == 200
    assert f'<img src="{media["url"]}" alt="logo">' in page.text
    assert f'href="{media["url"]}"' in page.text
    record = library.site.get(f"/api/public/{slug}/content/about").json()
    assert f'src="{media["url"]}"' in record["html"]

    missing = "med_00000000000000000000000000"
    response = library.api.post(
        f"/api/tenants/{slug}/documents",
        json={"slug": "broken", "title": "Broken", "body": f"![x](media:{missing})"},
        headers=owner,
    )
    error = assert_error(response, 400, "media_not_found")
    assert error["details"]["media"] == [missing]


def test_reading_a_file_says_where_it_is_used_now_and_in_kept_versions(library: Library) -> None:
    slug, owner = library.new_tenant()
    media = library.upload(slug, owner, png()).json()
    unused = library.upload(slug, owner, png()).json()
    created = library.api.post(
        f"/api/tenants/{slug}/documents",
        json={"slug": "about", "title": "About", "body": f"![logo](media:{media['id']})"},
        headers=owner,
    ).json()
    edited = library.api.put(
        f"/api/tenants/{slug}/documents/{created['id']}",
        json={"slug": "about", "title": "About", "body": "no logo now", "version": 1},
        headers=owner,
    )
    assert edited.status_code == 200, edited.text

    item = library.api.get(f"/api/tenants/{slug}/media/{media['id']}", headers=owner).json()
    assert item["used_by"] == [
        {"document_id": created["id"], "slug": "about", "version": 1, "in_body": True, "fields": [], "default_of": None}
    ]
    assert item["used_by_more"] is False
    assert library.api.get(f"/api/tenants/{slug}/media/{unused['id']}", headers=owner).json()["used_by"] == []
    listed = library.api.get(f"/api/tenants/{slug}/media", headers=owner).json()
    assert {m["used_by"] for m in listed} == {None}  # computed for one file only
    _, other_owner = library.new_tenant()
    assert library.api.get(f"/api/tenants/{slug}/media/{media['id']}", headers=other_owner).status_code == 404
