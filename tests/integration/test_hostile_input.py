"""Hostile input: schemathesis over the OpenAPI document, then hand-written attacks on every edge.

Every rejected request must answer a 4xx ``{"error": {"code", "message", "details"}}``
with a stable code and leave the tenant's footprint (every workspace row, its
objects, its purged tags) exactly as it was. Active content must come out
inert in every public output.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar.routes import HTTPRoute

from control_plane.app import create_app
from control_plane.container import Services
from control_plane.local import PrefectServerHandle
from tenant_runtime.errors import InvalidObjectKey
from tenant_runtime.storage import MemoryStore, TenantStore
from tests.fixtures.footprint import footprint
from tests.fixtures.http_errors import assert_error
from tests.fixtures.live_server import serve
from tests.fixtures.stack import OPERATOR_TOKEN, Pressroom, Tenant, make_settings

pytestmark = pytest.mark.integration


# --- schemathesis ---------------------------------------------------------------------------------

FUZZ_TENANT = "fuzz-site"
# Checks that cannot apply here, and why:
# - allow_header_conformance: Litestar 2's automatic OPTIONS handler answers with the methods of the
#   first handler registered on a path only (litestar-org/litestar#4169, fixed in v3 only); OPTIONS is
#   not part of Pressroom's contract and no CORS is served.
EXCLUDED_CHECKS = "allow_header_conformance"
# Schema-valid bodies these paths refuse on purpose, each with a stable code (see FUZZ_CONFIG); every
# path whose body has a "confirm" flag is added from the OpenAPI itself (_confirming_paths).
_REFUSED_ON_PURPOSE = [
    "publish",
    "unpublish",
    "releases",
    "reschedule",
    "documents",
    "documents/[^/]+",
    "site/[^/]+",
    "webhooks",
    "packages",
    "restores",
    "retention/[^/]+",
    "lanes",
    "lanes/[^/]+/pack",
    "events",
    "tokens",
    "package-keys",
    "media-policy",
    "ops/tenants",
    "ops/tenants/[^/]+/move",
    "ops/tenants/[^/]+/(retention|quota)",
    "briefs",
    "media",
    "settings",
]


def _confirming_paths(openapi: dict[str, Any]) -> list[str]:
    """Paths with a JSON body that carries ``confirm``: without ``"confirm": true`` they answer 400."""
    schemas = openapi.get("components", {}).get("schemas", {})

    def properties(schema: dict[str, Any]) -> set[str]:
        if "$ref" in schema:
            schema = schemas.get(schema["$ref"].rsplit("/", 1)[1], {})
        found = set(schema.get("properties", {}))
        for part in (*schema.get("oneOf", []), *schema.get("anyOf", []), *schema.get("allOf", [])):
            found |= properties(part)
        return found

    paths = []
    for path, item in openapi.get("paths", {}).items():
        for operation in item.values():
            if not isinstance(operation, dict):
                continue
            body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
            if body and "confirm" in properties(body):
                paths.append(path)
    return sorted(set(paths))


FUZZ_CONFIG = """
[parameters]
"path.tenant" = "{tenant}"
"path.slug" = "{tenant}"
"path.document_id" = "{document_id}"
"path.operation_id" = "{operation_id}"
"path.name" = "navigation"

# 423 is a state answer like 409: schemathesis' operator run suspends the tenant at random.
[checks.positive_data_acceptance]
expected-statuses = ["2xx", "401", "403", "404", "409", "423", "429"]

[checks.negative_data_rejection]
expected-statuses = ["400", "401", "403", "404", "405", "409", "413", "415", "423", "429"]

# Schema-valid but refused on purpose, with a stable code the schema cannot express:
# confirmation_required (every body with a "confirm" flag needs "confirm": true; those paths are read
# from the OpenAPI), reserved document slugs, slug_locked (a published document keeps its slug),
# not_published, site resources whose `content` is checked per resource name (navigation, redirects,
# theme), webhook URLs that match ^https?:// but are not absolute URLs with a host,
# restore_point_unavailable (a time before the site's history), a public key that is not 32 Ed25519
# bytes in base64, a shard name the deployment does not have, lane graphs over unknown steps, package
# archives that are not signed packages, briefs on a lane the site does not have, a settings patch
# that names no setting, an upload whose bytes are no allowed type
# (415), an unknown timezone, event types
# outside their pattern, an operator's token without member_id, a package refused as it stands (422:
# unsigned, untrusted, an address off the allow-list), and integers sent as 178.0 (JSON Schema counts
# an integral float as an integer; the API never coerces, so it is 400), or an empty pattern inside a
# pack's list.
[[operations]]
include-path-regex = 'REFUSED_ON_PURPOSE'
[operations.checks.positive_data_acceptance]
expected-statuses = ["2xx", "400", "401", "403", "404", "409", "415", "422", "423", "429"]

# Suspend takes an optional body (the reason its editors are told); Litestar documents every declared
# body as required, so a POST without one is not a schema violation here but the plain suspend.
[[operations]]
include-path-regex = "/ops/tenants/[^/]+/suspend$"
[operations.checks.negative_data_rejection]
expected-statuses = ["200", "400", "401", "403", "404", "405", "409", "413", "415", "423", "429"]

# Members and tokens: confirmation_required (remove, revoke), an operator's token with no member_id.
[[operations]]
include-path-regex = "/(members|members/[^/]+|tokens|tokens/[^/]+/revoke)$"
[operations.checks.positive_data_acceptance]
expected-statuses = ["2xx", "400", "401", "403", "404", "409", "423", "429"]
"""


@pytest.fixture(scope="module")
def live_api(prefect_server: PrefectServerHandle, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The real control plane under uvicorn, with one tenant, an owner token, a document and an operation."""
    root = tmp_path_factory.mktemp("live-api")
    settings = make_settings(root / "data")
    with serve(create_app(settings, services=Services.build(settings))) as url:
        operator = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}
        created = httpx.post(f"{url}/ops/tenants", json={"slug": FUZZ_TENANT, "name": "Fuzz"}, headers=operator)
        assert created.status_code == 201, created.text
        token = httpx.post(f"{url}/ops/tenants/{FUZZ_TENANT}/tokens", json={"role": "owner"}, headers=operator).json()[
            "token"
        ]
        owner = {"Authorization": f"Bearer {token}"}
        doc = httpx.post(
            f"{url}/api/tenants/{FUZZ_TENANT}/documents", json={"slug": "hello", "title": "Hello"}, headers=owner
        ).json()
        op = httpx.post(
            f"{url}/api/tenants/{FUZZ_TENANT}/documents/{doc['id']}/publish", json={"confirm": True}, headers=owner
        ).json()
        yield {
            "url": url,
            "root": root,
            "operator": OPERATOR_TOKEN,
            "owner": token,
            "document_id": doc["id"],
            "operation_id": op["operation_id"],
        }


def _schemathesis(live: dict[str, Any], name: str, token: str, phases: str, *extra: str) -> tuple[int, str]:
    workdir = live["root"] / name
    workdir.mkdir()
    config = workdir / "schemathesis.toml"
    openapi = httpx.get(f"{live['url']}/schema/openapi.json").json()
    refused = [f"^{path}$" for path in _confirming_paths(openapi)] + [f"/({'|'.join(_REFUSED_ON_PURPOSE)})$"]
    config.write_text(
        FUZZ_CONFIG.format(
            tenant=FUZZ_TENANT, document_id=live["document_id"], operation_id=live["operation_id"]
        ).replace("REFUSED_ON_PURPOSE", "|".join(refused))
    )
    command = [
        str(Path(sys.executable).parent / "schemathesis"),
        "--config-file",
        str(config),
        "run",
        f"{live['url']}/schema/openapi.json",
        "--checks",
        "all",
        "--exclude-checks",
        EXCLUDED_CHECKS,
        "--phases",
        phases,
        "--max-examples",
        os.environ.get("PRESSROOM_FUZZ_EXAMPLES", "15"),
        "--seed",
        os.environ.get("PRESSROOM_FUZZ_SEED", "20261130"),
        # One worker: hypothesis' lambda descriptions trip CPython 3.11's ast in concurrent threads.
        "--generation-database",
        "none",
        "--workers",
        "1",
        "--no-color",
        "-H",
        f"Authorization: Bearer {token}",
        *extra,
    ]
    # Its own working directory: nothing (.hypothesis, reports) lands in the repository.
    done = subprocess.run(command, capture_output=True, text=True, timeout=240, cwd=workdir, check=False)
    output = done.stdout + done.stderr
    (workdir / "output.txt").write_text(output)
    return done.returncode, output


def test_openapi_fuzzing_finds_no_server_error_and_every_response_matches_the_schema(live_api: dict[str, Any]) -> None:
    # Two identities at once: the operator reaches every operation, with the deterministic coverage
    # phase (boundaries, wrong types, missing parts, undeclared methods); an owner token fuzzes the
    # tenant API as a site would, and chains calls through the OpenAPI links (stateful phase).
    with ThreadPoolExecutor(2) as pool:
        operator = pool.submit(_schemathesis, live_api, "operator", live_api["operator"], "coverage,fuzzing")
        owner = pool.submit(
            _schemathesis,
            live_api,
            "owner",
            live_api["owner"],
            "fuzzing,stateful",
            "--include-path-regex",
            "^/api/tenants/",
        )
        results = {"operator": operator.result(), "owner": owner.result()}
    for name, (code, output) in results.items():
        assert "Test cases:" in output, f"{name}: schemathesis did not run:\n{output[-3000:]}"
        assert code == 0, f"schemathesis ({name} token) found problems:\n{output[-12000:]}"


# --- request bodies -------------------------------------------------------------------------------


def _documents(tenant: Tenant) -> str:
    return f"/api/tenants/{tenant.slug}/documents"


def test_oversized_bodies_are_413_payload_too_large_and_write_nothing(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    limit = pressroom.settings.control_plane.max_body_bytes
    before = footprint(pressroom, acme.slug)
    url = _documents(acme)
    huge = {"slug": "huge", "title": "Huge", "body": "x" * (limit + 10)}

    assert_error(pressroom.api.post(url, json=huge, headers=acme.headers), 413, "payload_too_large", "content-length")

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit must hold while streaming
        yield b'{"slug": "huge", "title": "Huge", "body": "'
        for _ in range(limit // 65536 + 2):
            yield b"y" * 65536
        yield b'"}'

    streamed = pressroom.api.post(url, content=chunks(), headers={**acme.headers, "content-type": "application/json"})
    assert_error(streamed, 413, "payload_too_large", "chunked")
    doc = pressroom.create_document(acme, "small")
    before = footprint(pressroom, acme.slug)
    update = {"version": doc["version"], "body": "z" * (limit + 1)}
    assert_error(pressroom.api.put(f"{url}/{doc['id']}", json=update, headers=acme.headers), 413, "payload_too_large")
    assert footprint(pressroom, acme.slug) == before


MALFORMED: list[tuple[str, dict[str, Any], int, str]] = [
    # label, request kwargs for POST /documents, status, code
    (
        "truncated JSON",
        {"content": b'{"slug": "a", "title": ', "headers": {"content-type": "application/json"}},
        400,
        "invalid_request",
    ),
    (
        "not JSON at all",
        {"content": b"slug=a&title=b", "headers": {"content-type": "application/json"}},
        400,
        "invalid_request",
    ),
    ("JSON array", {"json": [{"slug": "a", "title": "b"}]}, 400, "invalid_request"),
    ("JSON string", {"json": "slug"}, 400, "invalid_request"),
    ("JSON null", {"json": None}, 400, "invalid_request"),
    ("empty body", {"content": b"", "headers": {"content-type": "application/json"}}, 400, "invalid_request"),
    (
        "invalid UTF-8",
        {"content": b'{"slug": "a", "title": "\xff\xfe"}', "headers": {"content-type": "application/json"}},
        400,
        "invalid_request",
    ),
    (
        "text/plain JSON",
        {"content": b'{"slug": "a", "title": "b"}', "headers": {"content-type": "text/plain"}},
        415,
        "unsupported_media_type",
    ),
    ("form post", {"data": {"slug": "a", "title": "b"}}, 415, "unsupported_media_type"),
    ("multipart", {"files": {"slug": ("a.txt", b"a")}}, 415, "unsupported_media_type"),
    ("missing title", {"json": {"slug": "a"}}, 400, "invalid_request"),
    ("missing slug", {"json": {"title": "A"}}, 400, "invalid_request"),
    ("extra field", {"json": {"slug": "a", "title": "A", "status": "published"}}, 400, "invalid_request"),
    (
        "prototype pollution",
        {"json": {"slug": "a", "title": "A", "__proto__": {"admin": True}}},
        400,
        "invalid_request",
    ),
    ("title is a number", {"json": {"slug": "a", "title": 7}}, 400, "invalid_request"),
    ("empty title", {"json": {"slug": "a", "title": ""}}, 400, "invalid_request"),
    ("whitespace title", {"json": {"slug": "a", "title": " \t "}}, 400, "invalid_request"),
    ("NUL in title", {"json": {"slug": "a", "title": "a\u0000b"}}, 400, "invalid_request"),
    ("escape in title", {"json": {"slug": "a", "title": "bell\u0007 \u001b[31mred"}}, 400, "invalid_request"),
    ("newline in title", {"json": {"slug": "a", "title": "Title\n"}}, 400, "invalid_request"),
    ("title too long", {"json": {"slug": "a", "title": "t" * 301}}, 400, "invalid_request"),
    ("unknown kind", {"json": {"slug": "a", "title": "A", "kind": "script"}}, 400, "invalid_request"),
    ("body not a string", {"json": {"slug": "a", "title": "A", "body": {"$ne": None}}}, 400, "invalid_request"),
    ("reserved slug", {"json": {"slug": "search", "title": "A"}}, 400, "invalid_request"),
]


def test_malformed_bodies_and_wrong_content_types_are_refused_and_write_nothing(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    before = footprint(pressroom, acme.slug)
    for label, kwargs, status, code in MALFORMED:
        headers = {**acme.headers, **kwargs.pop("headers", {})}
        response = pressroom.api.post(_documents(acme), headers=headers, **kwargs)
        assert_error(response, status, code, label)
    assert footprint(pressroom, acme.slug) == before


def test_bad_versions_and_fields_on_update_and_publish_are_refused_and_write_nothing(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    doc = pressroom.create_document(acme, "target")
    url = f"{_documents(acme)}/{doc['id']}"
    before = footprint(pressroom, acme.slug)
    updates: list[tuple[str, Any, int, str]] = [
        # (Litestar 2 converts bodies non-strictly: "1" would be taken as 1, so only non-numbers here.)
        ("version as a word", {"version": "one", "title": "X"}, 400, "invalid_request"),
        ("version as a list", {"version": [1], "title": "X"}, 400, "invalid_request"),
        ("version as float", {"version": 1.5, "title": "X"}, 400, "invalid_request"),
        ("version as bool", {"version": True, "title": "X"}, 400, "invalid_request"),
        ("version null", {"version": None, "title": "X"}, 400, "invalid_request"),
        ("version missing", {"title": "X"}, 400, "invalid_request"),
        ("version zero", {"version": 0, "title": "X"}, 400, "invalid_request"),
        ("version negative", {"version": -1, "title": "X"}, 400, "invalid_request"),
        ("version 2**31+1", {"version": 2**31 + 1, "title": "X"}, 400, "invalid_request"),
        ("version 10**30", {"version": 10**30, "title": "X"}, 400, "invalid_request"),
        ("version 2**64", {"version": 2**64, "title": "X"}, 400, "invalid_request"),
        ("stale version", {"version": doc["version"] + 1, "title": "X"}, 409, "version_conflict"),
        ("extra field", {"version": doc["version"], "published_version": 9}, 400, "invalid_request"),
        ("NUL title", {"version": doc["version"], "title": "\u0000"}, 400, "invalid_request"),
        ("traversal slug", {"version": doc["version"], "slug": "../../etc"}, 400, "invalid_request"),
    ]
    for label, body, status, code in updates:
        assert_error(pressroom.api.put(url, json=body, headers=acme.headers), status, code, label)
    publishes: list[tuple[str, Any, int, str]] = [
        ("no confirmation", None, 400, "confirmation_required"),
        ("confirm false", {"confirm": False}, 400, "confirmation_required"),
        ("confirm as string", {"confirm": "yes"}, 400, "invalid_request"),
        ("version as a word", {"confirm": True, "version": "latest"}, 400, "invalid_request"),
        ("huge version", {"confirm": True, "version": 10**40}, 400, "invalid_request"),
        ("stale version", {"confirm": True, "version": 99}, 409, "version_conflict"),
        ("extra field", {"confirm": True, "tenant": "other"}, 400, "invalid_request"),
    ]
    for label, body, status, code in publishes:
        response = pressroom.api.post(f"{url}/publish", json=body, headers=acme.headers)
        assert_error(response, status, code, f"publish: {label}")
    for query, label in (
        ("limit=0", "limit 0"),
        ("limit=10000000000000000000000", "huge limit"),
        ("offset=-1", "negative offset"),
        ("limit=abc", "limit not a number"),
        ("status=bogus", "unknown status"),
        ("kind=%00", "NUL kind"),
    ):
        response = pressroom.api.get(f"{_documents(acme)}?{query}", headers=acme.headers)
        assert_error(response, 400, "invalid_request", label)
    operations = f"/api/tenants/{acme.slug}/operations"
    assert_error(pressroom.api.get(f"{operations}?status=delivering'--", headers=acme.headers), 400, "invalid_request")
    assert footprint(pressroom, acme.slug) == before


# --- slugs, tenants and paths --------------------------------------------------------------------

HOSTILE_DOCUMENT_SLUGS = [
    "../etc",
    "..",
    ".",
    "a/../b",
    "a/b",
    "..%2fetc",
    "%2e%2e",
    "%2e%2e%2fx",
    "..\\x",
    "a\\b",
    "/abs",
    "a\u0000b",
    "a\nb",
    "trail\n",
    "a b",
    "UPPER",
    "-lead",
    "trail-",
    "x" * 101,
    "",
    "\u0430bc",  # Cyrillic a, a lookalike of "abc"
    "\uff41\uff42\uff43",  # fullwidth abc
    "a\u2024\u2024b",  # one-dot leaders, a lookalike of ".."
    "\u0430dmin",
    "caf\u00e9",
    "a\u200bb",  # zero-width space
    "a.html",
    "index.html",
]


def test_hostile_document_slugs_are_refused_and_write_nothing(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    doc = pressroom.create_document(acme, "kept")
    before = footprint(pressroom, acme.slug)
    keys_before = pressroom.store.list("")
    for slug in HOSTILE_DOCUMENT_SLUGS:
        created = pressroom.api.post(_documents(acme), json={"slug": slug, "title": "T"}, headers=acme.headers)
        error = assert_error(created, 400, ("invalid_request", "invalid_slug"), f"create {slug!r}")
        assert "slug" in json.dumps(error["details"]), error
        renamed = pressroom.api.put(
            f"{_documents(acme)}/{doc['id']}", json={"version": doc["version"], "slug": slug}, headers=acme.headers
        )
        assert_error(renamed, 400, ("invalid_request", "invalid_slug"), f"rename {slug!r}")
    assert footprint(pressroom, acme.slug) == before
    assert pressroom.store.list("") == keys_before


@pytest.mark.parametrize(
    "key",
    [
        "../other/site/index.html",
        "site/../../other/x",
        "%2e%2e/other/x",
        "/tenants/other/x",
        "..",
        "site/\u2024\u2024/x",
        "site/\uff0e\uff0e/x",
        "site/a\u0000",
        "site\\..\\x",
        "site//x",
        "tenants/other/../x",
    ],
)
def test_object_keys_cannot_leave_the_tenant_prefix(key: str) -> None:
    store = MemoryStore()
    view = TenantStore(store, "acme")
    for attempt in (
        lambda: view.put(key, b"x"),
        lambda: view.get(key),
        lambda: view.delete(key),
        lambda: view.exists(key),
    ):
        with pytest.raises(InvalidObjectKey) as raised:
            attempt()
        assert raised.value.status == 400 and raised.value.code == "invalid_object_key"
    assert store.list("") == [] and not store.writes and not store.deletes


HOSTILE_TENANT_SEGMENTS = [
    "..%2F..%2Fetc",
    "%2e%2e",
    "ACME",
    "a",
    "-acme",
    "acme%00",
    "acme%0A",
    "\u0430cme",
    "acme%20",
    "x" * 40,
    "%252e%252e",
    "nope-404",
]


def test_unknown_and_hostile_tenants_are_4xx_everywhere_and_create_nothing(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    doc = pressroom.create_document(acme, "page")
    before = footprint(pressroom, acme.slug)
    tenants_before = sorted(t["slug"] for t in pressroom.api.get("/ops/tenants", headers=pressroom.operator).json())
    data_dir = pressroom.settings.runtime.data_dir
    tree_before = sorted(p.relative_to(data_dir).as_posix() for p in data_dir.rglob("*") if "tenants" in p.parts)
    for segment in HOSTILE_TENANT_SEGMENTS:
        for headers, who in ((pressroom.operator, "operator"), (acme.headers, "member")):
            requests = [
                ("GET", f"/api/tenants/{segment}/documents", None),
                ("POST", f"/api/tenants/{segment}/documents", {"slug": "x", "title": "X"}),
                ("GET", f"/api/tenants/{segment}/documents/{doc['id']}", None),
                ("POST", f"/api/tenants/{segment}/documents/{doc['id']}/publish", {"confirm": True}),
                ("GET", f"/api/tenants/{segment}/operations", None),
            ]
            for method, url, body in requests:
                response = pressroom.api.request(method, url, json=body, headers=headers)
                assert_error(response, 404, "not_found", f"{who} {method} {url}")
        for url in (f"/ops/tenants/{segment}", f"/ops/tenants/{segment}/suspend", f"/ops/tenants/{segment}/seed"):
            method = "GET" if url.endswith(segment) else "POST"
            response = pressroom.api.request(method, url, headers=pressroom.operator)
            assert_error(response, 404, "not_found", f"operator {method} {url}")
        for url in (f"/{segment}/", f"/{segment}/page", f"/api/public/{segment}/content/page", f"/{segment}/feed.xml"):
            response = pressroom.site.get(url)
            assert response.status_code == 404, (url, response.status_code)
    for slug in ("ACME", "a", "-x", "x" * 40, "../x", "a/b", "\u0430cme", "evil\n", "evil\u0000", " acme", "acme "):
        created = pressroom.api.post("/ops/tenants", json={"slug": slug, "name": "Evil"}, headers=pressroom.operator)
        assert_error(created, 400, ("invalid_request", "invalid_slug"), f"create tenant {slug!r}")
    named = pressroom.api.post(
        "/ops/tenants", json={"slug": "named-nul", "name": "A\u0000B"}, headers=pressroom.operator
    )
    assert_error(named, 400, "invalid_request", "tenant name with NUL")
    after = sorted(t["slug"] for t in pressroom.api.get("/ops/tenants", headers=pressroom.operator).json())
    assert after == tenants_before
    assert (
        sorted(p.relative_to(data_dir).as_posix() for p in data_dir.rglob("*") if "tenants" in p.parts) == tree_before
    )
    assert footprint(pressroom, acme.slug) == before


def test_traversal_in_public_site_paths_is_404_and_reads_nothing_outside(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    other = pressroom.new_tenant("other")
    pressroom.publish(other, pressroom.create_document(other, "secret", title="Other's secret")["id"])
    for path in (
        f"/{acme.slug}/..%2F{other.slug}%2Fsecret",
        f"/{acme.slug}/%2e%2e",
        f"/{acme.slug}/..",
        f"/{acme.slug}/secret%00",
        f"/{acme.slug}/SECRET",
        f"/{acme.slug}/secret%2F..%2F..",
        f"/api/public/{acme.slug}/content/..%2F{other.slug}%2Fsecret",
        f"/api/public/{acme.slug}/content/%2e%2e",
        f"/{acme.slug}/\u0455ecret",
        f"/{acme.slug}/site/index.html",
        f"/{acme.slug}/..%5C..%5Cworkspace.db",
    ):
        response = pressroom.site.get(path)
        assert response.status_code == 404, (path, response.status_code, response.text[:200])
        assert "Other's secret" not in response.text and "Other&#39;s secret" not in response.text, path
    assert pressroom.site.get(f"/{acme.slug}/secret").status_code == 404
    assert pressroom.site.get(f"/{other.slug}/secret").status_code == 200


# --- authentication --------------------------------------------------------------------------------


def test_bad_authorization_headers_are_401_unauthorized_and_write_nothing(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    token = acme.token
    before = footprint(pressroom, acme.slug)
    bad: list[tuple[str, dict[str, Any]]] = [
        ("missing", {}),
        ("empty", {"Authorization": ""}),
        ("scheme only", {"Authorization": "Bearer"}),
        ("scheme and blank", {"Authorization": "Bearer    "}),
        ("basic", {"Authorization": f"Basic {token}"}),
        ("token without scheme", {"Authorization": token}),
        ("wrong token", {"Authorization": "Bearer prt_not-a-real-token"}),
        ("token plus junk", {"Authorization": f"Bearer {token} junk"}),
        ("truncated token", {"Authorization": f"Bearer {token[:-1]}"}),
        ("huge token", {"Authorization": "Bearer " + "x" * 8000}),
        ("latin-1 token", {"Authorization": b"Bearer caf\xe9"}),
        ("SQL in token", {"Authorization": "Bearer ' OR '1'='1"}),
        ("operator token as prefix", {"Authorization": f"Bearer {OPERATOR_TOKEN}x"}),
    ]
    for label, headers in bad:
        for method, url, body in (
            ("GET", f"/api/tenants/{acme.slug}/documents", None),
            ("POST", f"/api/tenants/{acme.slug}/documents", {"slug": "x", "title": "X"}),
            ("GET", "/ops/tenants", None),
            ("POST", "/ops/tenants", {"slug": "intruder", "name": "X"}),
        ):
            response = pressroom.api.request(method, url, json=body, headers=headers)
            assert_error(response, 401, "unauthorized", f"{label}: {method} {url}")
    # The scheme is case-insensitive (RFC 9110); the token itself is not.
    assert (
        pressroom.api.get(
            f"/api/tenants/{acme.slug}/documents", headers={"Authorization": f"bearer {token}"}
        ).status_code
        == 200
    )
    assert_error(
        pressroom.api.get(f"/api/tenants/{acme.slug}/documents", headers={"Authorization": f"Bearer {token.upper()}"}),
        401,
        "unauthorized",
    )
    assert footprint(pressroom, acme.slug) == before
    assert "intruder" not in {t["slug"] for t in pressroom.api.get("/ops/tenants", headers=pressroom.operator).json()}


def test_idempotency_keys_are_bounded_and_bound_to_their_payload(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    url = _documents(acme)
    before = footprint(pressroom, acme.slug)
    for label, key in (("too long", "k" * 201), ("latin-1", b"cl\xe9"), ("control", "a\tb")):
        response = pressroom.api.post(
            url, json={"slug": "a", "title": "A"}, headers={**acme.headers, "Idempotency-Key": key}
        )
        assert_error(response, 400, ("invalid_request", "invalid_idempotency_key"), label)
    assert footprint(pressroom, acme.slug) == before
    first = pressroom.api.post(
        url, json={"slug": "once", "title": "Once"}, headers={**acme.headers, "Idempotency-Key": "k1"}
    )
    assert first.status_code == 201
    after_first = footprint(pressroom, acme.slug)
    again = pressroom.api.post(
        url, json={"slug": "once", "title": "Once"}, headers={**acme.headers, "Idempotency-Key": "k1"}
    )
    assert again.status_code == 201 and again.json()["id"] == first.json()["id"] and again.json()["replayed"] is True
    other = pressroom.api.post(
        url, json={"slug": "twice", "title": "Other"}, headers={**acme.headers, "Idempotency-Key": "k1"}
    )
    assert_error(other, 409, "idempotency_key_reused")
    assert footprint(pressroom, acme.slug) == after_first


def test_schedules_without_timezone_in_the_past_or_too_far_ahead_are_refused(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    doc = pressroom.create_document(acme, "scheduled")
    url = f"/api/tenants/{acme.slug}/releases"
    if not any(
        isinstance(r, HTTPRoute) and r.path == "/api/tenants/{tenant:str}/releases" for r in pressroom.api.app.routes
    ):
        pytest.xfail("POST /api/tenants/{t}/releases is not served yet")
    before = footprint(pressroom, acme.slug)
    release = {"documents": [{"id": doc["id"], "version": doc["version"]}], "confirm": True}
    cases = [
        ("no timezone", "2030-01-05T09:00:00", 400, "invalid_schedule"),
        ("in the past", "2001-01-01T00:00:00+00:00", 400, "invalid_schedule"),
        ("91 days ahead", "2999-01-01T00:00:00Z", 400, "invalid_schedule"),
        ("not a date", "next tuesday", 400, "invalid_request"),
        ("date only", "2030-13-45", 400, "invalid_request"),
        ("huge year", "99999-01-01T00:00:00Z", 400, "invalid_request"),
        ("a number", 1893456000, 400, ("invalid_schedule", "invalid_request")),
    ]
    for label, publish_at, status, code in cases:
        response = pressroom.api.post(url, json={**release, "publish_at": publish_at}, headers=acme.headers)
        assert_error(response, status, code, label)
    assert footprint(pressroom, acme.slug) == before


# --- active content comes out inert -------------------------------------------------------------

HOSTILE_BODY = """Safe **bold** text and [a good link](https://example.com/ok).

<script>alert('s1')</script>
<img src="x.png" onerror="alert('s2')">
<a href="javascript:alert('s3')">click</a>
[markdown link](javascript:alert('s4'))
<svg onload="alert('s5')"><circle r="1"/></svg>
<iframe src="https://evil.example/"></iframe>
<a href="JaVaScRiPt:alert('s6')">mixed case</a>
<a href="&#106;avascript:alert('s7')">entity</a>
<a href=" javascript:alert('s7b')">leading space</a>
<p style="color:red" onclick="alert('s8')">para</p>
![image](javascript:alert('s9'))
<object data="javascript:alert('s10')"></object>
<form action="javascript:alert('s11')"><button formaction="javascript:alert('s12')">go</button></form>
<math><mtext><style><img src=x onerror="alert('s13')"></style></mtext></math>
<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">data url</a>
<meta http-equiv="refresh" content="0;url=javascript:alert('s14')">
<base href="https://evil.example/">
"""
HOSTILE_TITLE = "Hostile <script>alert('t1')</script> & <img src=x onerror=alert('t2')> \"quoted\""
_URL_ATTRIBUTES = {
    "href",
    "src",
    "action",
    "formaction",
    "data",
    "srcset",
    "poster",
    "background",
    "xlink:href",
    "codebase",
    "cite",
}
_ACTIVE_TAGS = {
    "script",
    "iframe",
    "object",
    "embed",
    "svg",
    "math",
    "base",
    "frame",
    "frameset",
    "applet",
    "link",
    "style",
}
_BAD_SCHEMES = ("javascript:", "vbscript:", "data:")


class _ActiveContentFinder(HTMLParser):
    """Collects what a browser would execute: script-ish tags, on* handlers, javascript:/data: URLs."""

    def __init__(self, allowed_tags: frozenset[str]) -> None:
        super().__init__(convert_charrefs=True)
        self.allowed_tags = allowed_tags
        self.found: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag in _ACTIVE_TAGS and tag not in self.allowed_tags:
            self.found.append(f"<{tag}>")
        for name, value in attrs:
            if name.startswith("on"):
                self.found.append(f"<{tag} {name}=…>")
            if name in _URL_ATTRIBUTES and value is not None:
                squeezed = "".join(ch for ch in value if ch > " ").lower()
                if squeezed.startswith(_BAD_SCHEMES):
                    self.found.append(f"<{tag} {name}={value!r}>")
            if name == "http-equiv" and (value or "").lower() == "refresh":
                self.found.append("<meta http-equiv=refresh>")


def active_content(html: str, *, allowed_tags: frozenset[str] = frozenset()) -> list[str]:
    finder = _ActiveContentFinder(allowed_tags)
    finder.feed(html)
    finder.close()
    return finder.found


def _theme_tags(room: Pressroom, slug: str) -> frozenset[str]:
    """Active tags the theme itself uses on an empty page (so only injected ones count)."""
    finder = _ActiveContentFinder(frozenset())
    finder.feed(room.site.get(f"/{slug}/").text)
    return frozenset(tag for tag, _ in finder.tags if tag in _ACTIVE_TAGS)


def _site_route(room: Pressroom, path: str) -> bool:
    return any(isinstance(r, HTTPRoute) and r.path == path for r in room.site.app.routes)


def _feed_texts(xml: bytes) -> tuple[list[str], list[str]]:
    """(every text node, the text of elements feed readers render as HTML).

    Atom marks HTML with type="html"/"xhtml"; RSS readers render <description>
    (and content:encoded) as HTML by convention. Atom/RSS titles are text.
    """
    root = ET.fromstring(xml)
    texts, html = [], []
    for element in root.iter():
        tag = element.tag.rsplit("}", 1)[-1]
        assert tag.lower() not in _ACTIVE_TAGS - {"link"}, f"<{tag}> element in a feed"  # Atom <link> is metadata
        for name, value in element.attrib.items():
            assert not value.strip().lower().startswith(_BAD_SCHEMES), (tag, name, value)
        if element.text:
            texts.append(element.text)
            if element.get("type") in ("html", "xhtml") or tag in ("description", "encoded"):
                html.append(element.text)
    return texts, html


def test_active_content_comes_out_inert_in_every_public_output(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    theme = _theme_tags(pressroom, acme.slug)
    pressroom.start_worker(acme)
    doc = pressroom.create_document(acme, "hostile", title=HOSTILE_TITLE, body=HOSTILE_BODY, kind="post")
    stored = pressroom.api.get(f"{_documents(acme)}/{doc['id']}", headers=acme.headers).json()
    assert stored["title"] == HOSTILE_TITLE and stored["body"] == HOSTILE_BODY  # kept verbatim, made safe on output

    accepted = pressroom.publish(acme, doc["id"])
    live = pressroom.site.get(f"/{acme.slug}/hostile")
    assert live.status_code == 200 and live.headers["x-pressroom-source"] == "live"
    assert pressroom.wait_operation(acme, accepted["operation_id"])["status"] == "succeeded"

    outputs: dict[str, str] = {"page (live render)": live.text}
    page = pressroom.site.get(f"/{acme.slug}/hostile")
    assert page.status_code == 200 and page.headers["x-pressroom-source"] == "object"
    outputs["page (stored render)"] = page.text
    outputs["home listing"] = pressroom.site.get(f"/{acme.slug}/").text
    record = pressroom.site.get(f"/api/public/{acme.slug}/content/hostile")
    assert record.status_code == 200 and record.headers["content-type"].startswith("application/json")
    outputs["public record html"] = record.json()["html"]
    # The record's title is plain text (JSON data, to be escaped by whoever embeds it), kept exact.
    assert record.json()["title"] == HOSTILE_TITLE

    for label, html in outputs.items():
        assert active_content(html, allowed_tags=theme) == [], f"{label}: {active_content(html, allowed_tags=theme)}"
    # The sanitizer keeps what is safe, so the checks above are not vacuous.
    for label in ("page (live render)", "page (stored render)", "public record html"):
        assert "<strong>bold</strong>" in outputs[label], label
        assert 'href="https://example.com/ok"' in outputs[label], label
    for label in ("page (live render)", "page (stored render)", "home listing"):
        assert "Hostile &lt;script&gt;" in outputs[label] or "Hostile &#60;script" in outputs[label], label

    missing = []
    for route, path in (
        ("/{tenant:str}/feed.xml", f"/{acme.slug}/feed.xml"),
        ("/{tenant:str}/rss.xml", f"/{acme.slug}/rss.xml"),
    ):
        if not _site_route(pressroom, route):
            missing.append(route)
            continue
        feed = pressroom.site.get(path)
        assert feed.status_code == 200, (path, feed.status_code, feed.text[:300])
        texts, html = _feed_texts(feed.content)
        assert any("Hostile <script>" in text for text in texts), f"{path}: the post is not in the feed"
        for text in html:
            assert active_content(text) == [], (path, text[:300])
    if _site_route(pressroom, "/{tenant:str}/search"):
        results = pressroom.site.get(f"/{acme.slug}/search", params={"q": "bold"})
        assert results.status_code == 200, results.text[:300]
        assert active_content(results.text, allowed_tags=theme) == [], active_content(results.text)
        assert "/hostile" in results.text, "search does not find the published post"
        for query in ("<script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "javascript:alert(1)"):
            echoed = pressroom.site.get(f"/{acme.slug}/search", params={"q": query})
            assert echoed.status_code == 200
            assert active_content(echoed.text, allowed_tags=theme) == [], (query, active_content(echoed.text))
    else:
        missing.append("/{tenant:str}/search")
    if missing:
        pytest.xfail(f"site routes not served yet, their outputs are unchecked: {missing}")


def test_unicode_titles_are_kept_exactly_and_escaped_on_output(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    title = "Café — ☕ 日本語 «quotes» <b>not bold</b> 🚀 \u202eRTL"
    doc = pressroom.create_document(acme, "unicode", title=title, body="Ünïcödé **body** \u0000 NUL in body")
    assert doc["title"] == title
    pressroom.publish(acme, doc["id"])
    page = pressroom.site.get(f"/{acme.slug}/unicode")
    assert page.status_code == 200
    assert "Café — ☕ 日本語" in page.text and "&lt;b&gt;not bold&lt;/b&gt;" in page.text
    assert "\u0000" not in page.text  # CommonMark replaces NUL with U+FFFD
    assert pressroom.site.get(f"/api/public/{acme.slug}/content/unicode").json()["title"] == title
