"""The HTTP edge of the control plane, without Prefect: error shapes, the OpenAPI document, body rules."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
from litestar.testing import TestClient

from control_plane.app import create_app
from control_plane.container import Services
from control_plane.documents.schemas import DocumentCreate, DocumentUpdate
from control_plane.tenants.schemas import TenantCreate, TokenCreate
from dispatch.prefect_twin import RecordingPrefect
from tests.fixtures.http_errors import assert_error
from tests.fixtures.stack import OPERATOR_TOKEN, make_settings

OPERATOR = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient[Any]]:
    """The control plane over the recording twin of Prefect: enough for everything that does not deliver.

    Shared by the module (tests use their own slugs).
    """
    settings = make_settings(tmp_path_factory.mktemp("api-edges") / "data")
    services = Services.build(settings, prefect=RecordingPrefect(), relay_prefect=RecordingPrefect())
    with TestClient(create_app(settings, services=services)) as client:
        yield client


@pytest.fixture(scope="module")
def owner(api: TestClient[Any]) -> dict[str, str]:
    assert api.post("/ops/tenants", json={"slug": "acme", "name": "Acme"}, headers=OPERATOR).status_code == 201
    token = api.post("/ops/tenants/acme/tokens", json={"role": "owner"}, headers=OPERATOR).json()["token"]
    return {"Authorization": f"Bearer {token}"}


def test_405_keeps_the_allow_header_and_the_error_shape(api: TestClient[Any]) -> None:
    response = api.delete("/api/tenants/acme/documents", headers=OPERATOR)
    assert_error(response, 405, "method_not_allowed")
    assert set(response.headers["allow"].replace(" ", "").split(",")) == {"GET", "POST", "OPTIONS"}


def test_unknown_paths_are_json_404s(api: TestClient[Any]) -> None:
    assert_error(api.get("/api/nothing-here"), 404, "not_found")


@pytest.mark.parametrize(
    ("content_type", "status", "code"),
    [
        ("text/plain", 415, "unsupported_media_type"),
        ("application/x-www-form-urlencoded", 415, "unsupported_media_type"),
        ("multipart/form-data; boundary=x", 415, "unsupported_media_type"),
        ("text/html", 415, "unsupported_media_type"),
        ("application/xml", 415, "unsupported_media_type"),
        ("", 415, "unsupported_media_type"),
        ("application/json; charset=utf-8", 201, None),
        ("Application/JSON", 201, None),
        ("application/vnd.pressroom+json", 201, None),
    ],
)
def test_bodies_must_be_declared_json(
    api: TestClient[Any], owner: dict[str, str], content_type: str, status: int, code: str | None
) -> None:
    headers = {**owner, "content-type": content_type}
    slug = f"ct-{abs(hash(content_type))}"
    response = api.post(
        "/api/tenants/acme/documents", content=f'{{"slug": "{slug}", "title": "A"}}'.encode(), headers=headers
    )
    if code is None:
        assert response.status_code == status, response.text
    else:
        assert_error(response, status, code)
        assert slug not in {d["slug"] for d in api.get("/api/tenants/acme/documents", headers=owner).json()}


def test_a_command_without_a_body_needs_no_content_type(api: TestClient[Any], owner: dict[str, str]) -> None:
    doc = api.post("/api/tenants/acme/documents", json={"slug": "no-body", "title": "A"}, headers=owner).json()
    # Past the content-type rule, to the command's own answer.
    assert_error(
        api.post(f"/api/tenants/acme/documents/{doc['id']}/publish", headers=owner), 400, "confirmation_required"
    )


def test_the_openapi_document_declares_the_error_shape_and_bearer_auth(api: TestClient[Any]) -> None:
    schema = api.get("/schema/openapi.json").json()
    assert schema["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    error_ref = {"$ref": "#/components/schemas/ErrorBody"}
    operations = [
        (path, method, op)
        for path, item in schema["paths"].items()
        for method, op in item.items()
        if path.startswith(("/api/", "/ops/"))
    ]
    assert len(operations) >= 17
    for path, method, op in operations:
        assert op["security"] == [{"bearer": []}], (method, path)
        errors = {status: spec for status, spec in op["responses"].items() if int(status) >= 400}
        assert {"400", "401", "403", "404"} <= set(errors), (method, path, sorted(errors))
        if method != "get":
            assert {"409", "413", "415"} <= set(errors), (method, path, sorted(errors))
        for status, spec in errors.items():
            assert spec["content"]["application/json"]["schema"] == error_ref, (method, path, status)
    components = schema["components"]["schemas"]
    assert components["ErrorBody"]["required"] == ["error"]
    assert components["ErrorDetail"]["required"] == ["code", "details", "message"]
    assert "security" not in schema["paths"]["/healthz"]["get"]
    # Unknown fields are refused, so the document says so; response shapes stay open.
    assert components["DocumentCreate"]["additionalProperties"] is False
    assert components["DocumentUpdate"]["additionalProperties"] is False
    assert "additionalProperties" not in components["DocumentOut"]
    status = next(
        p for p in schema["paths"]["/api/tenants/{tenant}/operations"]["get"]["parameters"] if p["name"] == "status"
    )
    assert "dead" in status["schema"]["enum"]


def test_the_openapi_document_says_which_bodies_may_be_left_out_and_they_may(
    api: TestClient[Any], owner: dict[str, str]
) -> None:
    paths = api.get("/schema/openapi.json").json()["paths"]
    bodies = {
        (method, path): op["requestBody"].get("required", False)
        for path, item in paths.items()
        for method, op in item.items()
        if "requestBody" in op
    }
    optional = sorted(key for key, required in bodies.items() if not required)
    assert ("post", "/api/tenants/{tenant}/media/sweep") in optional
    assert ("post", "/api/tenants/{tenant}/documents/{document_id}/publish") in optional
    assert len(optional) == 8  # every handler whose data has a default, and only those
    assert bodies[("post", "/api/tenants/{tenant}/documents")] is True
    # Left out, a body is its default (test_a_command_without_a_body_needs_no_content_type): here, a sweep.
    swept = api.post("/api/tenants/acme/media/sweep", headers=owner)
    assert_error(swept, 400, "confirmation_required")


def test_each_declared_error_status_is_answered_in_the_declared_shape(
    api: TestClient[Any], owner: dict[str, str]
) -> None:
    viewer = api.post("/ops/tenants/acme/tokens", json={"role": "viewer"}, headers=OPERATOR).json()["token"]
    doc = api.post("/api/tenants/acme/documents", json={"slug": "statuses", "title": "A"}, headers=owner).json()
    url = "/api/tenants/acme/documents"
    assert_error(api.get(url), 401, "unauthorized")
    assert_error(
        api.post(url, json={"slug": "b", "title": "B"}, headers={"Authorization": f"Bearer {viewer}"}), 403, "forbidden"
    )
    assert_error(api.get(f"{url}/doc_missing", headers=owner), 404, "not_found")
    assert_error(
        api.put(f"{url}/{doc['id']}", json={"version": 9, "title": "B"}, headers=owner), 409, "version_conflict"
    )
    assert_error(api.post(url, json={"slug": "statuses", "title": "again"}, headers=owner), 409, "already_exists")
    assert_error(
        api.post(url, json={"slug": "c", "title": "C", "body": "x" * 2_000_001}, headers=owner),
        413,
        "payload_too_large",
    )


@pytest.mark.parametrize("title", ["a\u0000b", "Title\n", "tab\there", "\u001b[31m", "   ", "", "x" * 301])
def test_titles_with_control_characters_or_nothing_visible_are_refused(title: str) -> None:
    payload = msgspec.json.encode({"slug": "a", "title": title})
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(payload, type=DocumentCreate)
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(msgspec.json.encode({"version": 1, "title": title}), type=DocumentUpdate)


@pytest.mark.parametrize("title", ["Café — ☕", "日本語のタイトル", "<b>not bold</b>", "a", "🚀 \u202e"])
def test_visible_unicode_titles_are_accepted(title: str) -> None:
    decoded = msgspec.json.decode(msgspec.json.encode({"slug": "a", "title": title}), type=DocumentCreate)
    assert decoded.title == title


def test_tenant_and_token_names_refuse_control_characters() -> None:
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'{"slug": "acme", "name": "A\\u0000"}', type=TenantCreate)
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'{"role": "owner", "name": "x\\n"}', type=TokenCreate)
    assert msgspec.json.decode(b'{"role": "owner"}', type=TokenCreate).name == ""


# ("a\n" passes msgspec's re.search; tenant_runtime.ids refuses it with invalid_slug, see test_hostile_input.)
@pytest.mark.parametrize("slug", ["../x", "a/b", "-a", "a-", "A", "\u0430", "a\nb", "x" * 101, ""])
def test_document_slugs_follow_the_action_layer_rule(slug: str) -> None:
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(msgspec.json.encode({"slug": slug, "title": "T"}), type=DocumentCreate)
