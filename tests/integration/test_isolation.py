"""The isolation matrix: two tenants, every role, every tenant endpoint, and the runs behind them.

Endpoints are enumerated from the app's route table, so a new one is covered
the day it lands (and one whose body or path parameter the matrix does not
know fails loudly, asking to be taught). A token of tenant A addressing B's
resources must get 404, exactly like a missing resource, and B's footprint
(every workspace row, its objects, its purged tags) must not move.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import PurePath
from typing import Any
from urllib.parse import quote

import pytest
from litestar.handlers import HTTPRouteHandler
from litestar.routes import HTTPRoute
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId
from prefect.context import FlowRunContext
from sqlmodel import Session, func, select

from control_plane.db.models import ApiToken
from control_plane.db.models import Tenant as TenantRow
from control_plane.local import PrefectServerHandle
from tenant_runtime.errors import Forbidden
from tenant_runtime.workspace import ROLE_PERMISSIONS
from tests.fixtures.footprint import footprint
from tests.fixtures.http_errors import assert_error
from tests.fixtures.stack import Pressroom, Tenant, build_pressroom

pytestmark = pytest.mark.integration

ROLES = ("owner", "editor", "viewer")
TENANT_PREFIX = "/api/tenants/{tenant:str}"
_PARAM = re.compile(r"\{(\w+):\w+\}")


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
        """(method, path without parameter types), as the body tables name it."""
        return self.method, _PARAM.sub(r"{\1}", self.template)

    @property
    def takes_body(self) -> bool:
        return "data" in self.handler.parsed_fn_signature.parameters

    @property
    def writes(self) -> bool:
        return self.method not in ("GET", "HEAD")

    def url(self, values: dict[str, str]) -> str:
        def fill(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in values:
                pytest.fail(
                    f"{self.method} {self.template}: the isolation matrix does not know what another "
                    f"tenant's {name!r} is; add it to World.ids"
                )
            return quote(values[name], safe="")

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


def tenant_bodies(ids: dict[str, str]) -> dict[tuple[str, str], Any]:
    """A body each tenant endpoint would accept, aimed at the tenant named by ``ids``."""
    soon = (datetime.now(UTC) + timedelta(days=2)).isoformat()
    return {
        ("POST", "/api/tenants/{tenant}/documents"): {"slug": "intruder", "title": "Intruder", "body": "pwned"},
        ("PUT", "/api/tenants/{tenant}/documents/{document_id}"): {"version": 1, "title": "Defaced"},
        ("POST", "/api/tenants/{tenant}/documents/{document_id}/publish"): {"confirm": True},
        ("POST", "/api/tenants/{tenant}/documents/{document_id}/unpublish"): {"confirm": True},
        ("POST", "/api/tenants/{tenant}/releases"): {
            "documents": [{"id": ids["document_id"], "version": 1}],
            "confirm": True,
        },
        ("POST", "/api/tenants/{tenant}/operations/{operation_id}/reschedule"): {"publish_at": soon, "confirm": True},
        ("PUT", "/api/tenants/{tenant}/site/{name}"): {"version": 0, "content": [{"label": "Pwned", "href": "/x"}]},
        ("POST", "/api/tenants/{tenant}/webhooks"): {"url": "http://127.0.0.1:9/hook"},
        ("POST", "/api/tenants/{tenant}/search/rebuild"): {"force": True},
    }


OPS_BODIES: dict[tuple[str, str], Any] = {
    ("POST", "/ops/tenants"): {"slug": "hijack", "name": "Hijack"},
    ("POST", "/ops/tenants/{slug}/tokens"): {"role": "owner"},
    ("PATCH", "/ops/tenants/{slug}/quota"): {"publishes_per_hour": 0},
}


def body_for(endpoint: Endpoint, bodies: dict[tuple[str, str], Any]) -> Any:
    if not endpoint.takes_body:
        return None
    if endpoint.key not in bodies:
        pytest.fail(
            f"{endpoint}: the isolation matrix has no valid body for this endpoint; add one, or a 400 "
            f"would hide what the tenant check answers"
        )
    return bodies[endpoint.key]


def call(room: Pressroom, endpoint: Endpoint, ids: dict[str, str], headers: dict[str, str]) -> Any:
    """``endpoint`` on the resources named by ``ids``, with a body it would accept."""
    body = body_for(endpoint, tenant_bodies(ids))
    return room.api.request(endpoint.method, endpoint.url(ids), json=body, headers=headers)


@dataclass
class World:
    """Two seeded tenants, a token of A for every role and a viewer of B. Nothing delivers: no worker."""

    room: Pressroom
    a: Tenant
    b: Tenant
    a_roles: dict[str, dict[str, str]]
    b_viewer: dict[str, str]
    ids: dict[str, dict[str, str]]

    def call(self, endpoint: Endpoint, ids: dict[str, str], headers: dict[str, str]) -> Any:
        return call(self.room, endpoint, ids, headers)


def _seed_tenant(room: Pressroom, tenant: Tenant) -> dict[str, str]:
    """A published page and a release scheduled two days ahead: ids that commands could really act on."""
    hook = room.api.post(
        f"/api/tenants/{tenant.slug}/webhooks", headers=tenant.headers, json={"url": "http://127.0.0.1:9/private-hook"}
    )
    assert hook.status_code == 201, hook.text
    room.api.post(f"/api/tenants/{tenant.slug}/webhooks/{hook.json()['id']}/disable", headers=tenant.headers)
    page = room.create_document(tenant, "about", title="About", body="Private to this tenant")
    published = room.publish(tenant, page["id"])
    draft = room.create_document(tenant, "draft", title="Draft")
    release = room.api.post(
        f"/api/tenants/{tenant.slug}/releases",
        headers=tenant.headers,
        json={
            "documents": [{"id": draft["id"], "version": 1}],
            "confirm": True,
            "publish_at": (datetime.now(UTC) + timedelta(days=1)).isoformat(),
        },
    )
    assert release.status_code == 202, release.text
    assert release.json()["status"] == "scheduled"
    return {
        "tenant": tenant.slug,
        "slug": tenant.slug,
        "document_id": page["id"],
        "operation_id": release.json()["operation_id"],
        "name": "navigation",
        "publish_operation_id": published["operation_id"],
        "endpoint_id": hook.json()["id"],
    }


@pytest.fixture(scope="module")
def world(prefect_server: PrefectServerHandle, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """Shared by the HTTP matrix tests: each compares footprints around its own requests only."""
    with build_pressroom(tmp_path_factory.mktemp("isolation")) as room:
        a, b = room.new_tenant("a"), room.new_tenant("b")
        ids = {"a": _seed_tenant(room, a), "b": _seed_tenant(room, b)}
        roles = {role: room.token(a, role) for role in ROLES}
        yield World(room, a, b, roles, room.token(b, "viewer"), ids)


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
    """404 not_found; or 403 forbidden for a permission the role lacks, which is checked before any lookup."""
    if response.status_code == 403:
        error = assert_error(response, 403, "forbidden", label)
        assert error["details"]["permission"] not in ROLE_PERMISSIONS[role], label
        return
    assert_error(response, 404, "not_found", label)


# --- the HTTP matrix ------------------------------------------------------------------------------


def test_every_tenant_endpoint_answers_another_tenants_token_404_and_changes_nothing(world: World) -> None:
    room = world.room
    matrix = endpoints(room, "/api/tenants/{tenant")
    assert len(matrix) >= 12, [str(e) for e in matrix]
    b_before = footprint(room, world.b.slug)
    # Not vacuous: each URL is real for B itself (its viewer reads it, and is refused only by permission).
    for endpoint in matrix:
        answer = world.call(endpoint, world.ids["b"], world.b_viewer)
        if endpoint.writes:
            assert_error(answer, 403, "forbidden", f"B's viewer {endpoint}")
        else:
            assert answer.status_code == 200, (str(endpoint), answer.text[:300])

    for role, headers in world.a_roles.items():
        for endpoint in matrix:
            answer = world.call(endpoint, world.ids["b"], headers)
            # Always 404, whatever A's role: the tenant check comes before permissions, so not even a
            # viewer learns that B's resource exists from a 403.
            assert_error(answer, 404, "not_found", f"A's {role} → B: {endpoint}")
    assert footprint(room, world.b.slug) == b_before, footprint(room, world.b.slug).diff(b_before)


def test_a_token_with_its_own_tenant_and_b_ids_gets_404_and_changes_nothing(world: World) -> None:
    room = world.room
    matrix = [e for e in endpoints(room, "/api/tenants/{tenant") if {"document_id", "operation_id"} & set(e.params)]
    assert len(matrix) >= 7, [str(e) for e in matrix]
    mixed = {
        **world.ids["a"],
        "document_id": world.ids["b"]["document_id"],
        "operation_id": world.ids["b"]["operation_id"],
    }
    a_before, b_before = footprint(room, world.a.slug), footprint(room, world.b.slug)
    for role, headers in world.a_roles.items():
        for endpoint in matrix:
            _refusal(world.call(endpoint, mixed, headers), role, f"A's {role}, A's slug, B's ids: {endpoint}")
    assert footprint(room, world.b.slug) == b_before
    assert footprint(room, world.a.slug) == a_before


def test_a_viewer_can_read_but_never_write_in_its_own_tenant(world: World) -> None:
    room = world.room
    matrix = endpoints(room, "/api/tenants/{tenant")
    before = footprint(room, world.a.slug)
    for endpoint in matrix:
        answer = world.call(endpoint, world.ids["a"], world.a_roles["viewer"])
        if endpoint.writes:
            error = assert_error(answer, 403, "forbidden", f"A's viewer {endpoint}")
            assert error["details"]["role"] == "viewer"
        else:
            assert answer.status_code == 200, (str(endpoint), answer.text[:300])
    assert footprint(room, world.a.slug) == before


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
    # No tenant endpoint needs site.admin today; the command layer is where any future one will be
    # refused, so prove it there with the editor's own principal.
    principal = room.services.tokens.resolve(editor["Authorization"])
    with pytest.raises(Forbidden) as refused:
        room.services.site.seed(principal, world.a.slug)
    assert refused.value.details == {"permission": "site.admin", "role": "editor"}
    assert_error(room.api.post(f"/ops/tenants/{world.a.slug}/seed", headers=editor), 403, "forbidden")
    assert footprint(room, world.a.slug) == before


def _control_plane_rows(room: Pressroom) -> tuple[Any, ...]:
    with Session(room.services.engine) as session:
        tenants = tuple(
            session.exec(
                select(TenantRow.slug, TenantRow.status, TenantRow.publishes_per_hour).order_by(TenantRow.slug)
            ).all()
        )
        tokens = session.exec(select(func.count()).select_from(ApiToken)).one()
    return tenants, tokens


def test_member_tokens_of_every_role_get_403_from_every_operator_endpoint(world: World) -> None:
    room = world.room
    matrix = endpoints(room, "/ops/")
    assert len(matrix) >= 8, [str(e) for e in matrix]
    before = (_control_plane_rows(room), footprint(room, world.a.slug), footprint(room, world.b.slug))
    for role, headers in world.a_roles.items():
        for target in (world.a.slug, world.b.slug):
            for endpoint in matrix:
                answer = room.api.request(
                    endpoint.method,
                    endpoint.url({"slug": target}),
                    json=body_for(endpoint, OPS_BODIES),
                    headers=headers,
                )
                assert_error(answer, 403, "forbidden", f"A's {role} → {endpoint} ({target})")
    after = (_control_plane_rows(room), footprint(room, world.a.slug), footprint(room, world.b.slug))
    assert after == before
    for endpoint in matrix:  # the operator is let through (reads only, to change nothing)
        if not endpoint.writes:
            answer = room.api.request(endpoint.method, endpoint.url({"slug": world.a.slug}), headers=room.operator)
            assert answer.status_code == 200, (str(endpoint), answer.text[:300])


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
    hook = room.api.post(f"/api/tenants/{a.slug}/webhooks", headers=a.headers, json={"url": "http://127.0.0.1:9/h"})
    # Disabled: it exists for the endpoint ids, but no delivery waits on a port nobody listens on.
    room.api.post(f"/api/tenants/{a.slug}/webhooks/{hook.json()['id']}/disable", headers=a.headers)
    a_ids = {
        "tenant": a.slug,
        "document_id": doc["id"],
        "operation_id": committed["operation_id"],
        "name": "navigation",
        "endpoint_id": hook.json()["id"],
    }

    suspended = room.api.post(f"/ops/tenants/{a.slug}/suspend", headers=room.operator)
    assert suspended.status_code == 200 and suspended.json()["status"] == "suspended"
    assert asyncio.run(_queue_paused(room, a.slug)) is True

    before = footprint(room, a.slug)
    commands = [e for e in endpoints(room, "/api/tenants/{tenant") if e.writes]
    assert len(commands) >= 8
    for endpoint in commands:
        assert_error(call(room, endpoint, a_ids, a.headers), 423, "tenant_suspended", str(endpoint))
    assert_error(room.api.post(f"/ops/tenants/{a.slug}/seed", headers=room.operator), 423, "tenant_suspended")
    assert footprint(room, a.slug) == before

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
    assert footprint(room, a.slug) == before

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

    assert room.operation(b, b_op) == b_operation
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
