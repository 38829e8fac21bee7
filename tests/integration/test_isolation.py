"""The isolation matrix: two tenants, every role, every tenant endpoint, and the runs behind them.

Endpoints are enumerated from the app's route table, so a new one is covered
the day it lands (and one whose path id, body or required query parameter the
matrix does not know fails loudly, asking to be taught). A token of tenant A
addressing B's resources must get 404, exactly like a missing resource, and B's
footprint (every workspace row, its objects, its purged tags) must not move.

Teaching it a new endpoint, one place per kind of value:
- a path id: seed the real resource in ``_seed_tenant`` and return its id under the parameter's name
  (``media_id``), or as ``segment/name`` when the name means different things (``site/name``,
  ``packages/name``); add the name to ``PRIVATE_IDS`` if one tenant's value means nothing in another;
- a body: ``tenant_bodies`` (an ``Upload`` for multipart endpoints) or ``OPS_BODIES``;
- a required query parameter: ``tenant_queries``;
- a read that needs more than ``content.view`` (a viewer gets 403 there): ``ADMIN_READS``.
Every value must be one the endpoint would accept, so that a 400 cannot hide what the tenant check answers.
"""

from __future__ import annotations

import asyncio
import base64
import io
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import PurePath
from typing import Any
from urllib.parse import quote

import pytest
from litestar.handlers import HTTPRouteHandler
from litestar.routes import HTTPRoute
from PIL import Image
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId
from prefect.context import FlowRunContext
from sqlmodel import Session, col, func, select

from control_plane.db.models import ApiToken, Membership
from control_plane.db.models import Tenant as TenantRow
from control_plane.http.guards import takes_multipart
from control_plane.local import PrefectServerHandle
from tenant_runtime.errors import Forbidden
from tenant_runtime.lanes.reference import RESEARCH_GRAPH
from tenant_runtime.workspace import ROLE_PERMISSIONS
from tests.fixtures.footprint import footprint
from tests.fixtures.http_errors import assert_error
from tests.fixtures.stack import Pressroom, Tenant, build_pressroom
from tests.tenant_runtime.lifecycle.helpers import write_backup
from tests.tenant_runtime.package_kit import Publisher

pytestmark = pytest.mark.integration

ROLES = ("owner", "editor", "viewer")
TENANT_PREFIX = "/api/tenants/{tenant:str}"
_PARAM = re.compile(r"\{(\w+):\w+\}")
# Handler parameters that are not the client's to send (dependencies, the body, the raw request).
_NOT_QUERY = frozenset({"principal", "services", "data", "request"})

# Path ids that name a resource of one tenant only: in another tenant they must be as missing as a made-up
# id. (Names such as a lane, a site resource or a revision number exist in every tenant and are not.)
PRIVATE_IDS = (
    "document_id",
    "operation_id",
    "endpoint_id",
    "media_id",
    "brief_id",
    "migration_id",
    "backup_id",
    "key_id",
    "member_id",
    "token_id",
)
# Reads only owners may do (``site.admin``): a viewer is refused them with 403, like a write.
ADMIN_READS = frozenset(
    {
        ("GET", "/api/tenants/{tenant}/members"),
        ("GET", "/api/tenants/{tenant}/tokens"),
        ("GET", "/api/tenants/{tenant}/audit"),
        ("GET", "/api/tenants/{tenant}/backups/{backup_id}/download"),
    }
)
LANE = "news"  # a reference lane every site has
# Fixed once, so that two tables built for different ids differ only where the ids do.
SOON = (datetime.now(UTC) + timedelta(days=2)).isoformat()
# A publisher no tenant trusts yet: its key is what a request to trust a new key sends.
NEWCOMER = Publisher()


@dataclass(frozen=True)
class Endpoint:
    method: str
    template: str  # as routed, e.g. /api/tenants/{tenant:str}/documents/{document_id:str}
    handler: HTTPRouteHandler

    @property
    def params(self) -> list[str]:
        return _PARAM.findall(self.template)

    @property
    def key(self) -> tuple[str, str]:
        """(method, path without parameter types), as the body and query tables name it."""
        return self.method, _PARAM.sub(r"{\1}", self.template)

    @property
    def takes_body(self) -> bool:
        return "data" in self.handler.parsed_fn_signature.parameters

    @property
    def takes_upload(self) -> bool:
        return takes_multipart(self.handler)

    @property
    def required_query(self) -> list[str]:
        """Query parameters the endpoint cannot answer without (a 400 before any tenant check)."""
        dependencies = set(self.handler.resolve_dependencies())
        names = []
        for name, field in self.handler.parsed_fn_signature.parameters.items():
            if name in _NOT_QUERY or name in dependencies or name in self.params or field.has_default:
                continue
            kwarg = field.kwarg_definition
            if getattr(kwarg, "header", None) or getattr(kwarg, "cookie", None):
                continue
            names.append(getattr(kwarg, "query", None) or name)
        return names

    @property
    def writes(self) -> bool:
        return self.method not in ("GET", "HEAD")

    @property
    def admin_read(self) -> bool:
        """A read only owners may do (``ADMIN_READS``)."""
        return not self.writes and self.key in ADMIN_READS

    def url(self, values: dict[str, str]) -> str:
        def fill(match: re.Match[str]) -> str:
            name = match.group(1)
            # The segment before a parameter tells apart names used twice: /site/{name}, /packages/{name}.
            segment = self.template[: match.start()].rstrip("/").rsplit("/", 1)[-1]
            for key in (f"{segment}/{name}", name):
                if key in values:
                    return quote(values[key], safe="")
            pytest.fail(
                f"{self.method} {self.template}: the isolation matrix does not know what another "
                f"tenant's {name!r} is; seed one in _seed_tenant and add it to World.ids as {name!r} "
                f"(or {segment + '/' + name!r})"
            )

        return _PARAM.sub(fill, self.template)

    def __str__(self) -> str:
        return f"{self.method} {self.template}"


def endpoints(room: Pressroom, prefix: str) -> list[Endpoint]:
    """Every routed method under ``prefix`` (OPTIONS and HEAD are Litestar's own)."""
    found = []
    for route in room.api.app.routes:
        if isinstance(route, HTTPRoute) and route.path.startswith(prefix):
            for method, (handler, _) in route.route_handler_map.items():
                if method not in ("OPTIONS", "HEAD"):
                    found.append(Endpoint(method, route.path, handler))
    return sorted(found, key=str)


@dataclass(frozen=True)
class Upload:
    """A multipart body (an upload endpoint takes no JSON): sent as ``files``."""

    files: dict[str, tuple[str, bytes, str]]


def png() -> bytes:
    """A real, tiny image: the media library tells a file's type from its bytes."""
    out = io.BytesIO()
    Image.new("RGB", (2, 2), (200, 30, 30)).save(out, format="PNG")
    return out.getvalue()


def tenant_bodies(ids: dict[str, str]) -> dict[tuple[str, str], Any]:
    """A body each tenant endpoint would accept, aimed at the tenant named by ``ids``."""
    t = "/api/tenants/{tenant}"
    current = int(ids["document_version"])  # the page's current version, as an edit or a release names it
    operation = f"{t}/operations/{{operation_id}}"
    lane = f"{t}/lanes/{{lane}}"
    return {
        ("POST", f"{t}/documents"): {"slug": "intruder", "title": "Intruder", "body": "pwned"},
        ("PUT", f"{t}/documents/{{document_id}}"): {"version": current, "title": "Defaced"},
        ("POST", f"{t}/documents/{{document_id}}/publish"): {"confirm": True},
        ("POST", f"{t}/documents/{{document_id}}/unpublish"): {"confirm": True},
        ("POST", f"{t}/documents/{{document_id}}/revisions/{{version}}/restore"): {
            "publish": True,
            "confirm": True,
            "version": current,
        },
        ("POST", f"{t}/releases"): {"documents": [{"id": ids["document_id"], "version": current}], "confirm": True},
        ("POST", f"{operation}/reschedule"): {"publish_at": SOON, "confirm": True},
        ("POST", f"{operation}/pause"): {"confirm": True},
        ("POST", f"{operation}/resume"): {"confirm": True},
        ("POST", f"{operation}/terminate"): {"confirm": True},
        ("POST", f"{operation}/restart"): {"from_step": "apply_release", "confirm": True},
        ("POST", f"{operation}/events"): {"type": "approval", "payload": {"decision": "approve"}},
        ("PUT", f"{t}/site/{{name}}"): {"version": 0, "content": [{"label": "Pwned", "href": "/x"}]},
        ("PUT", f"{t}/settings"): {"title": "Defaced", "timezone": "Europe/Berlin"},
        ("POST", f"{t}/webhooks"): {"url": "https://hooks.example/hook"},
        ("POST", f"{t}/search/rebuild"): {"force": True},
        ("POST", f"{t}/media"): Upload({"file": ("intruder.png", png(), "image/png")}),
        ("POST", f"{t}/media/sweep"): {"confirm": True},
        ("POST", f"{t}/briefs"): {"brief_id": "intruder-brief", "lane": ids["lane"], "title": "Intruder"},
        ("POST", f"{t}/lanes"): {"name": "intruder", "graph": list(RESEARCH_GRAPH)},
        ("PUT", f"{lane}/pack"): {"version": 1, "voice": "Pwned"},
        ("POST", f"{lane}/enabled"): {"enabled": False},
        ("PUT", f"{lane}/approval"): {"required": True},
        ("PUT", f"{lane}/budget"): {"budget_micros": 1},
        ("POST", f"{t}/fields/migrations"): {
            "kind": "post",
            "change": "add",
            "field": "intruder",
            "type": "text",
            "confirm": True,
        },
        ("POST", f"{t}/backups"): {"confirm": True},
        ("POST", f"{t}/imports"): {"backup": {"tenant": ids["tenant"], "id": ids["backup_id"]}, "confirm": True},
        ("POST", f"{t}/restores"): {"at": ids["restore_point"], "dry_run": False, "confirm": True},
        ("POST", f"{t}/restores/undo"): {"confirm": True},
        ("POST", f"{t}/retention/prune"): {"confirm": True},
        ("PUT", f"{t}/retention/{{entity_type}}"): {"keep_last": 1, "keep_days": 0},
        ("POST", f"{t}/packages"): {"archive": ids["package_archive"], "confirm": True},
        ("POST", f"{t}/packages/{{name}}/rollback"): {"confirm": True},
        ("POST", f"{t}/packages/{{name}}/uninstall"): {"confirm": True},
        ("POST", f"{t}/package-keys"): {"public_key": NEWCOMER.public_key, "name": "newcomer"},
        ("POST", f"{t}/package-keys/{{key_id}}/revoke"): {},
        ("POST", f"{t}/package-keys/{{key_id}}/expire"): {"at": SOON},
        ("POST", f"{t}/members"): {"name": "Intruder", "role": "owner"},
        ("PATCH", f"{t}/members/{{member_id}}"): {"role": "owner"},
        ("DELETE", f"{t}/members/{{member_id}}"): {"confirm": True},
        ("POST", f"{t}/tokens"): {"member_id": ids["member_id"], "label": "intruder"},
        ("POST", f"{t}/tokens/{{token_id}}/revoke"): {"confirm": True},
    }


def tenant_queries(ids: dict[str, str]) -> dict[tuple[str, str], dict[str, Any]]:
    """Query parameters an endpoint requires (like the bodies: values it would accept)."""
    return {
        ("GET", "/api/tenants/{tenant}/documents/{document_id}/revisions/diff"): {
            "from": 1,
            "to": int(ids["document_version"]),
        },
    }


OPS_BODIES: dict[tuple[str, str], Any] = {
    ("POST", "/ops/tenants"): {"slug": "hijack", "name": "Hijack"},
    ("POST", "/ops/tenants/{slug}/tokens"): {"role": "owner"},
    ("PATCH", "/ops/tenants/{slug}/quota"): {"publishes_per_hour": 0},
    ("PATCH", "/ops/tenants/{slug}/retention"): {"succeeded_days": 1, "failed_days": None},
    ("PUT", "/ops/tenants/{slug}/media-policy"): {"max_bytes": 1, "retention_days": 0},
    ("POST", "/ops/tenants/{slug}/move"): {"to": "default", "confirm": True},
    ("POST", "/ops/tenants/{slug}/suspend"): {"reason": "Unpaid invoice"},
    ("POST", "/ops/package-keys"): {"public_key": NEWCOMER.public_key, "name": "newcomer"},
    ("POST", "/ops/package-keys/{key_id}/revoke"): {},
    ("POST", "/ops/package-keys/{key_id}/expire"): {"at": "2030-01-01T00:00:00+00:00"},
}


def body_for(endpoint: Endpoint, bodies: dict[tuple[str, str], Any]) -> Any:
    if not endpoint.takes_body:
        return None
    if endpoint.key not in bodies:
        pytest.fail(
            f"{endpoint}: the isolation matrix has no valid body for this endpoint; add one, or a 400 "
            f"would hide what the tenant check answers"
        )
    body = bodies[endpoint.key]
    if endpoint.takes_upload != isinstance(body, Upload):
        pytest.fail(f"{endpoint}: an upload endpoint takes an Upload (multipart) body, any other one JSON")
    return body


def query_for(endpoint: Endpoint, queries: dict[tuple[str, str], dict[str, Any]]) -> dict[str, Any] | None:
    missing = [name for name in endpoint.required_query if name not in queries.get(endpoint.key, {})]
    if missing:
        pytest.fail(
            f"{endpoint}: the isolation matrix has no valid value for the required query parameter(s) "
            f"{missing}; add them to tenant_queries, or a 400 would hide what the tenant check answers"
        )
    return queries.get(endpoint.key)


def request(
    room: Pressroom,
    endpoint: Endpoint,
    values: dict[str, str],
    headers: dict[str, str],
    bodies: dict[tuple[str, str], Any],
    queries: dict[tuple[str, str], dict[str, Any]],
) -> Any:
    """``endpoint`` on the resources named by ``values``, with a body and query it would accept."""
    url, body, params = endpoint.url(values), body_for(endpoint, bodies), query_for(endpoint, queries)
    if isinstance(body, Upload):
        return room.api.request(endpoint.method, url, files=body.files, params=params, headers=headers)
    return room.api.request(endpoint.method, url, json=body, params=params, headers=headers)


def call(room: Pressroom, endpoint: Endpoint, ids: dict[str, str], headers: dict[str, str]) -> Any:
    """A tenant ``endpoint`` on the resources named by ``ids``."""
    return request(room, endpoint, ids, headers, tenant_bodies(ids), tenant_queries(ids))


@contextmanager
def noted(problems: list[str]) -> Iterator[None]:
    """Record a failed expectation and go on, so that one run names every endpoint that answers wrong."""
    try:
        yield
    except AssertionError as exc:
        problems.append(str(exc)[:500])


@dataclass
class World:
    """Two seeded tenants, a token of A for every role and a viewer of B. Nothing delivers: no worker."""

    room: Pressroom
    a: Tenant
    b: Tenant
    a_roles: dict[str, dict[str, str]]
    b_viewer: dict[str, str]
    ids: dict[str, dict[str, str]]
    ops_ids: dict[str, str]  # the operator API's path ids, besides the tenant's slug

    def call(self, endpoint: Endpoint, ids: dict[str, str], headers: dict[str, str]) -> Any:
        return call(self.room, endpoint, ids, headers)


def _accepted(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    return dict(response.json())


def _seed_tenant(room: Pressroom, tenant: Tenant) -> dict[str, str]:
    """One real resource of every kind a tenant endpoint names, and the ids to address them.

    A published page, a release scheduled a day ahead, a disabled webhook, an uploaded image, a brief on
    a reference lane, a field migration, a backup, a trusted publisher key and a package install: ids
    that commands could really act on. Nothing delivers them (no worker), so they stay as they are.
    """
    api, headers, t = room.api, tenant.headers, f"/api/tenants/{tenant.slug}"
    hook = _accepted(api.post(f"{t}/webhooks", headers=headers, json={"url": "https://hooks.example/private"}), 201)
    api.post(f"{t}/webhooks/{hook['id']}/disable", headers=headers)
    page = room.create_document(tenant, "about", title="About", body="Private to this tenant")
    published = room.publish(tenant, page["id"])
    edited = api.put(f"{t}/documents/{page['id']}", headers=headers, json={"version": 1, "body": "Private, and edited"})
    assert edited.status_code == 200, edited.text  # a second version, for the revisions diff
    draft = room.create_document(tenant, "draft", title="Draft")
    release = api.post(
        f"{t}/releases",
        headers=headers,
        json={
            "documents": [{"id": draft["id"], "version": 1}],
            "confirm": True,
            "publish_at": (datetime.now(UTC) + timedelta(days=1)).isoformat(),
        },
    )
    assert _accepted(release, 202)["status"] == "scheduled"
    media = _accepted(api.post(f"{t}/media", headers=headers, files={"file": ("logo.png", png(), "image/png")}), 201)
    # Brief ids are the client's: each tenant's own, so that B's means nothing in A.
    brief_id = f"brief-{tenant.slug}"
    _accepted(
        api.post(f"{t}/briefs", headers=headers, json={"brief_id": brief_id, "lane": LANE, "title": "Brief"}), 202
    )
    migration = _accepted(
        api.post(
            f"{t}/fields/migrations",
            headers=headers,
            json={"kind": "post", "change": "add", "field": "subtitle", "type": "text", "confirm": True},
        ),
        202,
    )
    backup = _accepted(api.post(f"{t}/backups", headers=headers, json={"confirm": True}), 202)
    # Written below the engine, as its run would (no worker delivers here), so that it downloads.
    write_backup(room.factory.open(tenant.slug), backup["backup_id"])
    # A publisher per tenant: a key's id is its digest, so one key trusted by both would be both tenants'.
    publisher = Publisher()
    key = _accepted(api.post(f"{t}/package-keys", headers=headers, json={"public_key": publisher.public_key}), 201)
    theme = base64.b64encode(publisher.theme()).decode()
    _accepted(api.post(f"{t}/packages", headers=headers, json={"archive": theme, "confirm": True}), 202)
    # A viewer invited by the owner, and a second token of theirs: the members and tokens paths' ids.
    member = _accepted(api.post(f"{t}/members", headers=headers, json={"name": "Seeded", "role": "viewer"}), 201)
    token = _accepted(
        api.post(f"{t}/tokens", headers=headers, json={"member_id": member["member"]["id"], "label": "seeded"}), 201
    )
    restore_point = datetime.now(UTC).isoformat()
    return {
        "tenant": tenant.slug,
        "slug": tenant.slug,
        "document_id": page["id"],
        "version": "1",  # a revision of the page (it has two: published, then edited)
        "document_version": str(edited.json()["version"]),
        "operation_id": release.json()["operation_id"],
        "publish_operation_id": published["operation_id"],
        "endpoint_id": hook["id"],
        "media_id": media["id"],
        "brief_id": brief_id,
        "lane": LANE,
        "migration_id": migration["operation_id"],
        "backup_id": backup["backup_id"],
        "key_id": key["key_id"],
        "member_id": member["member"]["id"],
        "token_id": token["id"],
        "site/name": "navigation",
        "packages/name": "magazine",
        "entity_type": "document",
        "restore_point": restore_point,  # within the site's history: a restore to it is valid
        # A signed theme the tenant trusts: what an install request would really send.
        "package_archive": base64.b64encode(publisher.theme(version="1.0.1")).decode(),
    }


@pytest.fixture(scope="module")
def world(prefect_server: PrefectServerHandle, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """Shared by the HTTP matrix tests: each compares footprints around its own requests only."""
    with build_pressroom(tmp_path_factory.mktemp("isolation")) as room:
        a, b = room.new_tenant("a"), room.new_tenant("b")
        ids = {"a": _seed_tenant(room, a), "b": _seed_tenant(room, b)}
        roles = {role: room.token(a, role) for role in ROLES}
        platform_key = _accepted(
            room.api.post("/ops/package-keys", headers=room.operator, json={"public_key": Publisher().public_key}),
            201,
        )
        yield World(room, a, b, roles, room.token(b, "viewer"), ids, {"key_id": platform_key["key_id"]})


@dataclass
class Pair:
    room: Pressroom
    a: Tenant
    b: Tenant


@pytest.fixture
def two_tenants(pressroom: Pressroom) -> Pair:
    """Two fresh tenants on a stack of their own, for tests that run a worker."""
    return Pair(pressroom, pressroom.new_tenant("a"), pressroom.new_tenant("b"))


def _refusal(response: Any, role: str, label: str) -> None:
    """404 not_found (or a resource's own code for a missing row, e.g. ``media_not_found``: the same answer a
    made-up id gets); or 403 forbidden for a permission the role lacks, which is checked before any lookup."""
    if response.status_code == 403:
        error = assert_error(response, 403, "forbidden", label)
        assert error["details"]["permission"] not in ROLE_PERMISSIONS[role], label
        return
    code = response.json().get("error", {}).get("code", "") if response.status_code == 404 else ""
    assert_error(response, 404, code if code.endswith("_not_found") else "not_found", label)


def _read(answer: Any, label: str) -> None:
    assert answer.status_code == 200, f"{label}: expected 200, got {answer.status_code}: {answer.text[:300]}"


def _viewer_read(answer: Any, endpoint: Endpoint, label: str) -> None:
    """A viewer reads every tenant endpoint but the owners' (``ADMIN_READS``: 403 for ``site.admin``)."""
    if endpoint.key in ADMIN_READS:
        error = assert_error(answer, 403, "forbidden", label)
        assert error["details"] == {"permission": "site.admin", "role": "viewer"}, f"{label}: {error}"
    else:
        _read(answer, label)


# --- the HTTP matrix ------------------------------------------------------------------------------


def test_every_tenant_endpoint_answers_another_tenants_token_404_and_changes_nothing(world: World) -> None:
    room = world.room
    matrix = endpoints(room, "/api/tenants/{tenant")
    assert len(matrix) >= 12, [str(e) for e in matrix]
    b_before, rows_before = footprint(room, world.b.slug), _control_plane_rows(room)
    problems: list[str] = []
    # Not vacuous: each URL is real for B itself (its viewer reads it, and is refused only by permission).
    for endpoint in matrix:
        with noted(problems):
            answer = world.call(endpoint, world.ids["b"], world.b_viewer)
            if endpoint.writes:
                assert_error(answer, 403, "forbidden", f"B's viewer {endpoint}")
            else:
                _viewer_read(answer, endpoint, f"B's viewer {endpoint}")
            if endpoint.admin_read:
                _read(world.call(endpoint, world.ids["b"], world.b.headers), f"B's owner {endpoint}")

    for role, headers in world.a_roles.items():
        for endpoint in matrix:
            with noted(problems):
                answer = world.call(endpoint, world.ids["b"], headers)
                # Always 404, whatever A's role: the tenant check comes before permissions, so not even a
                # viewer learns that B's resource exists from a 403.
                assert_error(answer, 404, "not_found", f"A's {role} → B: {endpoint}")
    assert not problems, "\n".join(problems)
    assert footprint(room, world.b.slug) == b_before, footprint(room, world.b.slug).diff(b_before)
    assert _control_plane_rows(room) == rows_before  # members and tokens live there


def test_a_token_with_its_own_tenant_and_b_ids_gets_404_and_changes_nothing(world: World) -> None:
    room = world.room
    a_ids = world.ids["a"]
    mixed = {**a_ids, **{name: world.ids["b"][name] for name in PRIVATE_IDS}}
    # Every endpoint that names one of B's private ids: in its path, or in its body (a release of B's page).
    matrix = [
        e
        for e in endpoints(room, "/api/tenants/{tenant")
        if set(PRIVATE_IDS) & set(e.params) or body_for(e, tenant_bodies(mixed)) != body_for(e, tenant_bodies(a_ids))
    ]
    assert len(matrix) >= 20, [str(e) for e in matrix]
    a_before, b_before = footprint(room, world.a.slug), footprint(room, world.b.slug)
    rows_before = _control_plane_rows(room)
    problems: list[str] = []
    for role, headers in world.a_roles.items():
        for endpoint in matrix:
            with noted(problems):
                _refusal(world.call(endpoint, mixed, headers), role, f"A's {role}, A's slug, B's ids: {endpoint}")
    assert not problems, "\n".join(problems)
    assert footprint(room, world.b.slug) == b_before, footprint(room, world.b.slug).diff(b_before)
    assert footprint(room, world.a.slug) == a_before, footprint(room, world.a.slug).diff(a_before)
    assert _control_plane_rows(room) == rows_before


def test_a_viewer_can_read_but_never_write_in_its_own_tenant(world: World) -> None:
    room = world.room
    matrix = endpoints(room, "/api/tenants/{tenant")
    before, rows_before = footprint(room, world.a.slug), _control_plane_rows(room)
    problems: list[str] = []
    for endpoint in matrix:
        with noted(problems):
            answer = world.call(endpoint, world.ids["a"], world.a_roles["viewer"])
            if endpoint.writes:
                error = assert_error(answer, 403, "forbidden", f"A's viewer {endpoint}")
                assert error["details"].get("role") == "viewer", f"A's viewer {endpoint}: {error}"
            else:
                _viewer_read(answer, endpoint, f"A's viewer {endpoint}")
    assert not problems, "\n".join(problems)
    assert footprint(room, world.a.slug) == before, footprint(room, world.a.slug).diff(before)
    assert _control_plane_rows(room) == rows_before


def test_an_editor_publishes_but_cannot_do_site_admin_things(world: World) -> None:
    room = world.room
    editor = world.a_roles["editor"]
    doc = room.api.post(
        f"/api/tenants/{world.a.slug}/documents", json={"slug": "by-editor", "title": "E"}, headers=editor
    )
    assert doc.status_code == 201
    published = room.api.post(
        f"/api/tenants/{world.a.slug}/documents/{doc.json()['id']}/publish", json={"confirm": True}, headers=editor
    )
    assert published.status_code == 202
    before = footprint(room, world.a.slug)
    # The command layer refuses it, whoever asks (API, dashboard, CLI): prove it there with the editor's own
    # principal, and through the API on a site.admin endpoint.
    principal = room.services.tokens.resolve(editor["Authorization"])
    with pytest.raises(Forbidden) as refused:
        room.services.site.seed(principal, world.a.slug)
    assert refused.value.details == {"permission": "site.admin", "role": "editor"}
    assert_error(room.api.post(f"/ops/tenants/{world.a.slug}/seed", headers=editor), 403, "forbidden")
    backup = room.api.post(f"/api/tenants/{world.a.slug}/backups", json={"confirm": True}, headers=editor)
    assert assert_error(backup, 403, "forbidden")["details"] == {"permission": "site.admin", "role": "editor"}
    assert footprint(room, world.a.slug) == before


def _control_plane_rows(room: Pressroom) -> tuple[Any, ...]:
    with Session(room.services.engine) as session:
        tenants = tuple(
            session.exec(
                select(TenantRow.slug, TenantRow.status, TenantRow.publishes_per_hour).order_by(TenantRow.slug)
            ).all()
        )
        tokens = session.exec(select(func.count()).select_from(ApiToken)).one()
        revoked = session.exec(select(func.count()).where(col(ApiToken.revoked_at).is_not(None))).one()
        members = tuple(
            session.exec(
                select(Membership.user_id, Membership.tenant_id, Membership.role).order_by(col(Membership.user_id))
            ).all()
        )
    return tenants, tokens, revoked, members


def test_member_tokens_of_every_role_get_403_from_every_operator_endpoint(world: World) -> None:
    room = world.room
    matrix = endpoints(room, "/ops/")
    assert len(matrix) >= 8, [str(e) for e in matrix]
    keys_before = room.api.get("/ops/package-keys", headers=room.operator).json()
    before = (_control_plane_rows(room), footprint(room, world.a.slug), footprint(room, world.b.slug))
    problems: list[str] = []
    for role, headers in world.a_roles.items():
        for target in (world.a.slug, world.b.slug):
            for endpoint in matrix:
                with noted(problems):
                    values = {**world.ops_ids, "slug": target}
                    answer = request(room, endpoint, values, headers, OPS_BODIES, {})
                    assert_error(answer, 403, "forbidden", f"A's {role} → {endpoint} ({target})")
    assert not problems, "\n".join(problems)
    after = (_control_plane_rows(room), footprint(room, world.a.slug), footprint(room, world.b.slug))
    assert after == before
    assert room.api.get("/ops/package-keys", headers=room.operator).json() == keys_before
    for endpoint in matrix:  # the operator is let through (reads only, to change nothing)
        if not endpoint.writes:
            values = {**world.ops_ids, "slug": world.a.slug}
            answer = request(room, endpoint, values, room.operator, OPS_BODIES, {})
            _read(answer, f"the operator: {endpoint}")


# --- suspension -----------------------------------------------------------------------------------


async def _queue_paused(room: Pressroom, slug: str) -> bool:
    async with get_client() as client:
        queue = await client.read_work_queue_by_name(
            room.settings.dispatch.queue_for(slug), work_pool_name=room.settings.dispatch.work_pool
        )
        return bool(queue.is_paused)


async def _run_state(run_id: str) -> Any:
    async with get_client() as client:
        return (await client.read_flow_run(run_id)).state


def _wait_sent(room: Pressroom, tenant: Tenant, operation_id: str, timeout: float = 20) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while (operation := room.operation(tenant, operation_id))["flow_run_id"] is None:
        assert time.monotonic() < deadline, f"never sent to Prefect: {operation}"
        time.sleep(0.05)
    return operation


def test_a_suspended_tenant_answers_423_and_its_queue_runs_nothing_until_resumed(two_tenants: Pair) -> None:
    room, a, b = two_tenants.room, two_tenants.a, two_tenants.b
    doc = room.create_document(a, "before-suspension")
    committed = room.publish(a, doc["id"])
    run_id = _wait_sent(room, a, committed["operation_id"])["flow_run_id"]
    # Real resources for every path id (queued after `committed`, so it is still the first A's queue runs).
    a_ids = _seed_tenant(room, a)

    suspended = room.api.post(f"/ops/tenants/{a.slug}/suspend", headers=room.operator)
    assert suspended.status_code == 200 and suspended.json()["status"] == "suspended"
    assert asyncio.run(_queue_paused(room, a.slug)) is True

    before = footprint(room, a.slug)
    commands = [e for e in endpoints(room, "/api/tenants/{tenant") if e.writes]
    assert len(commands) >= 8
    problems: list[str] = []
    for endpoint in commands:
        with noted(problems):
            assert_error(call(room, endpoint, a_ids, a.headers), 423, "tenant_suspended", str(endpoint))
    assert not problems, "\n".join(problems)
    assert_error(room.api.post(f"/ops/tenants/{a.slug}/seed", headers=room.operator), 423, "tenant_suspended")
    assert footprint(room, a.slug) == before, footprint(room, a.slug).diff(before)

    room.start_worker(a, b)
    started = time.monotonic()
    # The worker is alive and polling: B's publish goes through while A's waits.
    other = room.publish(b, room.create_document(b, "meanwhile")["id"])
    assert room.wait_operation(b, other["operation_id"])["status"] == "succeeded"
    time.sleep(max(0.0, 2.0 - (time.monotonic() - started)))  # ≥ 20 poll intervals
    waiting = room.operation(a, committed["operation_id"])
    assert waiting["status"] == "queued" and waiting["attempts"] == [], waiting
    state = asyncio.run(_run_state(run_id))
    assert state is not None and state.is_scheduled(), state  # Scheduled, or Late: never picked up
    assert footprint(room, a.slug) == before, footprint(room, a.slug).diff(before)

    resumed = room.api.post(f"/ops/tenants/{a.slug}/resume", headers=room.operator)
    assert resumed.status_code == 200 and resumed.json()["status"] == "active"
    assert asyncio.run(_queue_paused(room, a.slug)) is False
    assert room.wait_operation(a, committed["operation_id"])["status"] == "succeeded"
    assert asyncio.run(_run_state(run_id)).is_completed()


# --- runs -----------------------------------------------------------------------------------------


async def _create_hostile_run(room: Pressroom, queue_tenant: str, parameters: dict[str, Any]) -> str:
    """A publish_document run made straight through the Prefect API, as a confused or hostile client could."""
    async with get_client() as client:
        deployment = await client.read_deployment_by_name("publish_document/pressroom")
        run = await client.create_flow_run_from_deployment(
            deployment.id,
            parameters={"params": parameters},
            work_queue_name=room.settings.dispatch.queue_for(queue_tenant),
            tags=["test:hostile"],
        )
        return str(run.id)


def _wait_final(run_id: str, timeout: float = 30) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        state = asyncio.run(_run_state(run_id))
        if state is not None and state.is_final():
            return state
        assert time.monotonic() < deadline, f"run {run_id} still {state}"
        time.sleep(0.1)


def _own_record(operation: dict[str, Any]) -> dict[str, Any]:
    """The operation as B's runtime records it, which is all a claim could touch.

    Its ``steps`` are joined from Prefect's task runs when it is read, and Prefect records them
    eventually (a finished step's ``duration_ms`` was seen to go from 0 to 14 after the run ended):
    comparing them would test Prefect's bookkeeping, not the claim.
    """
    return {name: value for name, value in operation.items() if name != "steps"}


def test_a_run_on_a_queue_naming_b_is_rejected_at_claim_time_and_touches_nothing(two_tenants: Pair) -> None:
    room, a, b = two_tenants.room, two_tenants.a, two_tenants.b
    room.start_worker(a, b)
    b_doc = room.create_document(b, "target", title="B's page")["id"]
    b_op = room.publish(b, b_doc)["operation_id"]
    assert room.wait_operation(b, b_op)["status"] == "succeeded"
    b_before, a_before = footprint(room, b.slug), footprint(room, a.slug)
    b_operation = room.operation(b, b_op)

    forged = {"operation_id": b_op, "document_id": b_doc, "version": 1, "generation": 99}
    cases = [  # (parameters, what the claim must have said); all on A's queue
        ({"tenant": b.slug, **forged}, "queue"),  # B's run smuggled onto A's queue
        ({"tenant": a.slug, **forged}, "operation"),  # A's queue and name, B's operation
    ]
    runs = [(asyncio.run(_create_hostile_run(room, a.slug, parameters)), reason) for parameters, reason in cases]
    for run_id, reason in runs:
        state = _wait_final(run_id)
        assert state.is_failed(), (reason, state)
        assert state.message.startswith("claim_rejected"), state.message
        assert reason in state.message.lower(), state.message

    # A runtime dedicated to A holds nothing of B: it refuses before opening anything.
    room.stop_workers()
    room.start_worker(a)
    state = _wait_final(asyncio.run(_create_hostile_run(room, a.slug, {"tenant": b.slug, **forged})))
    assert state.is_failed() and state.message.startswith("claim_rejected"), state
    assert "serve" in state.message, state.message

    assert _own_record(room.operation(b, b_op)) == _own_record(b_operation)
    assert footprint(room, b.slug) == b_before, footprint(room, b.slug).diff(b_before)
    assert footprint(room, a.slug) == a_before, footprint(room, a.slug).diff(a_before)


@pytest.fixture
def opened_by_runs(two_tenants: Pair, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, str]]]:
    """(tenant parameter of the flow run, tenant whose workspace it opened) for every open inside a run."""
    factory = two_tenants.room.factory
    original: Callable[[str], Any] = factory.open
    opened: list[tuple[str, str]] = []

    def spying_open(tenant: str) -> Any:
        run = FlowRunContext.get()
        if run is not None and run.flow_run is not None:
            opened.append((str(run.flow_run.parameters["params"]["tenant"]), tenant))
        return original(tenant)

    monkeypatch.setattr(factory, "open", spying_open)
    yield opened


async def _task_cache_keys(run_ids: list[str]) -> list[str]:
    """The Prefect cache keys of the runs' tasks: a cached result is stored under its key."""
    async with get_client() as client:
        runs = await client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=run_ids)))
    keys = []
    for run in runs:
        storage_key = getattr(run.state.data, "storage_key", None) if run.state is not None else None
        if storage_key:
            keys.append(PurePath(storage_key).name)
    return keys


def test_a_runs_touch_only_a_database_keys_cache_tags_and_prefect_cache_keys(
    two_tenants: Pair, opened_by_runs: list[tuple[str, str]]
) -> None:
    room, a, b = two_tenants.room, two_tenants.a, two_tenants.b
    room.start_worker(a, b)
    b_op = room.publish(b, room.create_document(b, "b-post", title="B's post")["id"])["operation_id"]
    assert room.wait_operation(b, b_op)["status"] == "succeeded"
    b_before = footprint(room, b.slug)
    writes, deletes, purges = Counter(room.store.writes), Counter(room.store.deletes), len(room.purger.purged)
    opened_by_runs.clear()

    post = room.create_document(a, "a-post", title="A's post")
    operations = [room.publish(a, post["id"])["operation_id"]]
    assert room.wait_operation(a, operations[0])["status"] == "succeeded"
    unpublished = room.api.post(
        f"/api/tenants/{a.slug}/documents/{post['id']}/unpublish", json={"confirm": True}, headers=a.headers
    )
    assert unpublished.status_code == 202
    operations.append(unpublished.json()["operation_id"])
    assert room.wait_operation(a, operations[-1])["status"] == "succeeded"

    prefix = f"tenants/{a.slug}/"
    new_writes = sorted((Counter(room.store.writes) - writes).keys())
    new_deletes = sorted((Counter(room.store.deletes) - deletes).keys())
    assert new_writes and all(key.startswith(prefix) for key in new_writes), new_writes
    assert new_deletes and all(key.startswith(prefix) for key in new_deletes), new_deletes
    new_tags = [tag for batch in room.purger.purged[purges:] for tag in batch]
    assert new_tags and all(tag == a.slug or tag.startswith(f"{a.slug}:") for tag in new_tags), new_tags
    # Reads too: inside a run, the only workspace ever opened is the run's own tenant's.
    assert {run_tenant for run_tenant, _ in opened_by_runs} == {a.slug}, set(opened_by_runs)
    assert all(run_tenant == tenant for run_tenant, tenant in opened_by_runs), set(opened_by_runs)
    assert footprint(room, b.slug) == b_before, footprint(room, b.slug).diff(b_before)

    run_ids = [room.operation(a, op)["flow_run_id"] for op in operations]
    cache_keys = asyncio.run(_task_cache_keys(run_ids))
    assert cache_keys, "A's runs recorded no task cache keys"
    assert all(key.startswith(f"{a.slug}:op_") and b.slug not in key for key in cache_keys), cache_keys
