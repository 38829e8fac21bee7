"""Two shard runtimes on 127.0.0.1 behind one control plane: routing, isolation, a runtime down, moves.

The runtimes are the real internal HTTP API (``create_runtime_app``) under
uvicorn, each over its own data directory; Prefect is the recording twin
(``tests/integration/test_shards.py`` runs the same with real runtime
processes and a real Prefect server).
"""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx
import pytest

from dispatch.runtime import messages as m
from dispatch.runtime.http_transport import HttpRuntime
from tenant_runtime.errors import NotOnShard, Unauthorized
from tests.fixtures.http_errors import assert_error
from tests.fixtures.shards import TwoShards

OWNER = m.ActorRef(id="u-owner", role="owner")


def _document(shards: TwoShards, tenant: str, headers: dict[str, str], slug: str) -> dict[str, Any]:
    response = shards.api.post(
        f"/api/tenants/{tenant}/documents", json={"slug": slug, "title": slug.title(), "kind": "post"}, headers=headers
    )
    assert response.status_code == 201, response.text
    return dict(response.json())


def _publish(shards: TwoShards, tenant: str, headers: dict[str, str], document_id: str) -> Any:
    return shards.api.post(
        f"/api/tenants/{tenant}/documents/{document_id}/publish", json={"confirm": True}, headers=headers
    )


def _holds(shard: Any, tenant: str) -> bool:
    return bool(shard.factory.settings.workspace_path(tenant).exists())


def test_each_tenant_is_served_by_its_shard_and_the_control_plane_opens_no_workspace(two_shards: TwoShards) -> None:
    acme = two_shards.tenant("acme")  # the default shard, a
    globex = two_shards.tenant("globex", shard="b")
    for tenant, headers in (("acme", acme), ("globex", globex)):
        document = _document(two_shards, tenant, headers, "hello")
        assert _publish(two_shards, tenant, headers, document["id"]).status_code == 202

    assert _holds(two_shards.a, "acme") and not _holds(two_shards.a, "globex")
    assert _holds(two_shards.b, "globex") and not _holds(two_shards.b, "acme")
    # The control plane has only remote transports and never made a tenant directory of its own.
    assert all(isinstance(t, HttpRuntime) for t in two_shards.services.router.transports.values())
    assert two_shards.services.factory is None
    assert not (two_shards.settings.runtime.data_dir / "tenants").exists()
    # Each shard's own relay handed its own tenant's publish to Prefect.
    assert two_shards.a.handoff.flush(10) and two_shards.b.handoff.flush(10)
    assert {c["request"].tenant for c in two_shards.a.prefect.called("create_run")} == {"acme"}
    assert {c["request"].tenant for c in two_shards.b.prefect.called("create_run")} == {"globex"}
    listed = two_shards.api.get("/ops/tenants", headers=two_shards.operator).json()
    assert {t["slug"]: t["shard"] for t in listed} == {"acme": "a", "globex": "b"}
    shards = two_shards.api.get("/ops/shards", headers=two_shards.operator).json()
    assert [(s["name"], s["tenants"], s["status"], s["default"]) for s in shards] == [
        ("a", 1, "ok", True),
        ("b", 1, "ok", False),
    ]


def test_a_runtime_refuses_another_shards_tenant_and_any_other_credential(two_shards: TwoShards) -> None:
    two_shards.tenant("acme")
    two_shards.tenant("globex", shard="b")
    a = HttpRuntime("a", two_shards.a.url, two_shards.a.secret)
    with pytest.raises(NotOnShard) as refused:
        a.query("globex", OWNER, m.ListDocuments())
    assert refused.value.status == 403 and refused.value.code == "tenant_not_on_shard"
    with pytest.raises(NotOnShard):
        a.execute("globex", m.Command(actor=OWNER, scope="t", message=m.CreateDocument(slug="x", title="X")))
    assert a.query("acme", OWNER, m.ListDocuments()) == []
    with pytest.raises(Unauthorized):
        HttpRuntime("a", two_shards.a.url, two_shards.b.secret).query("acme", OWNER, m.ListDocuments())
    garbage = httpx.post(
        f"{two_shards.a.url}/v1/tenants/acme/command",
        content=b'{"actor": {"id": "u", "role": "owner"}, "scope": "x", "message": {"type": "DropTables"}}',
        headers={"Authorization": f"Bearer {two_shards.a.secret}"},
    )
    assert garbage.status_code == 400 and garbage.json()["error"]["code"] == "invalid_request"
    assert not _holds(two_shards.a, "globex")  # nothing of b's tenant was ever created on a


def test_a_runtime_that_is_down_answers_503_with_retry_after_and_the_other_shard_carries_on(
    two_shards: TwoShards,
) -> None:
    acme = two_shards.tenant("acme")
    globex = two_shards.tenant("globex", shard="b")
    two_shards.b.stop()

    started = time.monotonic()
    response = two_shards.api.post(
        "/api/tenants/globex/documents", json={"slug": "lost", "title": "Lost"}, headers=globex
    )
    assert_error(response, 503, "runtime_unavailable")
    assert int(response.headers["retry-after"]) > 0 and time.monotonic() - started < 5
    assert_error(two_shards.api.get("/api/tenants/globex/documents", headers=globex), 503, "runtime_unavailable")
    assert two_shards.api.get("/ops/shards", headers=two_shards.operator).json()[1]["status"] == "unavailable"
    _document(two_shards, "acme", acme, "still-here")  # shard a is unaffected

    two_shards.b.start()
    assert two_shards.api.get("/api/tenants/globex/documents", headers=globex).json() == []  # nothing half-written
    _document(two_shards, "globex", globex, "back")


def test_a_move_hands_the_tenant_over_with_its_outbox_and_refuses_commands_meanwhile(two_shards: TwoShards) -> None:
    acme = two_shards.tenant("acme")
    _document(two_shards, "acme", acme, "first")
    second = _document(two_shards, "acme", acme, "second")
    # The publish commits on a but its relay never sends it: it must travel in the outbox.
    two_shards.a.handoff.notify = lambda tenant: None  # type: ignore[method-assign]
    unsent = _publish(two_shards, "acme", acme, second["id"]).json()["operation_id"]

    # A flow run of acme is "running" on a: the drain waits for it, and commands are refused meanwhile.
    running = threading.Event()
    running.set()
    two_shards.a.host.busy = lambda tenant: running.is_set()
    moved: dict[str, Any] = {}
    mover = threading.Thread(
        target=lambda: moved.update(
            two_shards.api.post(
                "/ops/tenants/acme/move", json={"to": "b", "confirm": True}, headers=two_shards.operator
            ).json()
        )
    )
    mover.start()
    deadline = time.monotonic() + 5
    while two_shards.services.router.shard_of("acme")[1] is None and time.monotonic() < deadline:
        time.sleep(0.02)
    refused = two_shards.api.post(
        "/api/tenants/acme/documents", json={"slug": "during", "title": "During"}, headers=acme
    )
    assert_error(refused, 503, "tenant_moving")
    assert int(refused.headers["retry-after"]) > 0
    # Reads are still served by the source while it drains.
    assert len(two_shards.api.get("/api/tenants/acme/documents", headers=acme).json()) == 2
    running.clear()
    mover.join(20)

    assert moved["from_shard"] == "a" and moved["to_shard"] == "b" and moved["bytes"] > 0, moved
    assert not _holds(two_shards.a, "acme") and _holds(two_shards.b, "acme")
    assert not (two_shards.a.host.handover_dir / "acme").exists()  # released
    assert {d["slug"] for d in two_shards.api.get("/api/tenants/acme/documents", headers=acme).json()} == {
        "first",
        "second",
    }
    # b relayed what a left unsent, once; a sent nothing.
    assert two_shards.b.handoff.flush(10)
    [sent_by_b] = two_shards.b.prefect.called("create_run")
    assert sent_by_b["request"].parameters.operation_id == unsent
    assert two_shards.a.prefect.called("create_run") == []
    _document(two_shards, "acme", acme, "after")  # commands flow to b now
    actions = [e["action"] for e in two_shards.api.get("/ops/audit", headers=two_shards.operator).json()]
    assert actions[:2] == ["tenant.move", "tenant.move.start"]


def test_the_site_server_reads_each_tenant_from_the_shard_that_holds_it_across_a_move(two_shards: TwoShards) -> None:
    from litestar.testing import TestClient

    from control_plane.public.app import create_site_app
    from tenant_runtime.workspace import WorkspaceFactory

    acme = two_shards.tenant("acme")
    document = _document(two_shards, "acme", acme, "hello")
    assert _publish(two_shards, "acme", acme, document["id"]).status_code == 202
    dirs = (two_shards.a.factory.settings.data_dir, two_shards.b.factory.settings.data_dir)
    settings = type(two_shards.settings)(
        runtime=two_shards.settings.runtime,
        dispatch=two_shards.settings.dispatch,
        control_plane=two_shards.settings.control_plane.model_copy(update={"site_data_dirs": dirs}),
    )
    own = WorkspaceFactory(settings.runtime, store=two_shards.a.factory.store, read_only=True)
    with TestClient(create_site_app(settings, factory=own)) as site:
        assert site.get("/acme/hello").status_code == 200
        moved = two_shards.api.post(
            "/ops/tenants/acme/move", json={"to": "b", "confirm": True}, headers=two_shards.operator
        )
        assert moved.status_code == 200, moved.text
        assert site.get("/acme/hello").status_code == 200  # now read from b's directory
        assert site.get("/nobody/hello").status_code == 404


def test_a_move_that_cannot_drain_is_called_off_and_the_tenant_stays_where_it_was(two_shards: TwoShards) -> None:
    acme = two_shards.tenant("acme")
    _document(two_shards, "acme", acme, "kept")
    unconfirmed = two_shards.api.post("/ops/tenants/acme/move", json={"to": "b"}, headers=two_shards.operator)
    assert_error(unconfirmed, 400, "confirmation_required")
    to_nowhere = two_shards.api.post(
        "/ops/tenants/acme/move", json={"to": "zz", "confirm": True}, headers=two_shards.operator
    )
    assert_error(to_nowhere, 400, "invalid_request")
    two_shards.a.host.busy = lambda tenant: True  # a run that never finishes within the drain timeout
    two_shards.services.placement.drain_seconds = 1

    response = two_shards.api.post(
        "/ops/tenants/acme/move", json={"to": "b", "confirm": True}, headers=two_shards.operator
    )

    assert_error(response, 503, "unavailable")
    assert two_shards.services.router.shard_of("acme") == ("a", None)
    assert _holds(two_shards.a, "acme") and not _holds(two_shards.b, "acme")
    _document(two_shards, "acme", acme, "served-again")
    actions = [e["action"] for e in two_shards.api.get("/ops/audit", headers=two_shards.operator).json()]
    assert actions[0] == "tenant.move.failed"


def test_every_query_of_every_area_has_a_typed_answer_and_every_message_crosses_the_wire() -> None:
    from dispatch.runtime import wire
    from dispatch.runtime.areas import CHANGES, READS

    untyped = [q.__name__ for q in READS if wire.answer_type(q) is Any]
    assert not untyped, f"queries whose handler declares no return type cannot be decoded over HTTP: {untyped}"
    for message in (*READS, *CHANGES):
        assert message.__struct_config__.tag == message.__name__  # tagged: the union of messages decodes them
    command = m.Command(actor=OWNER, scope="s", message=m.PublishDocument(document_id="d", version=3), quota=None)
    assert wire.decode_command(wire.encode_command(command)) == command


def test_a_move_cut_short_after_the_import_is_finished_by_running_it_again(two_shards: TwoShards) -> None:
    from sqlmodel import Session

    from control_plane.db.models import Placement

    acme = two_shards.tenant("acme")
    _document(two_shards, "acme", acme, "kept")
    a = HttpRuntime("a", two_shards.a.url, two_shards.a.secret)
    b = HttpRuntime("b", two_shards.b.url, two_shards.b.secret)
    # What a control plane that died right after the import had done: the placement still says a, moving.
    with Session(two_shards.services.engine) as session:
        placement = session.get(Placement, "acme")
        assert placement is not None
        placement.moving_to = "b"
        session.add(placement)
        session.commit()
    a.drain("acme", 5)
    b.import_("acme", *a.export("acme"))
    assert_error(
        two_shards.api.post("/api/tenants/acme/documents", json={"slug": "x", "title": "X"}, headers=acme),
        503,
        "tenant_moving",
    )

    again = two_shards.api.post(
        "/ops/tenants/acme/move", json={"to": "b", "confirm": True}, headers=two_shards.operator
    )

    assert again.status_code == 200, again.text
    assert two_shards.services.router.shard_of("acme") == ("b", None)
    assert [d["slug"] for d in two_shards.api.get("/api/tenants/acme/documents", headers=acme).json()] == ["kept"]
    assert not (two_shards.a.host.handover_dir / "acme").exists()
    _document(two_shards, "acme", acme, "after")


def test_a_tenant_moves_from_sqlite_to_postgresql_workspaces_and_back_with_its_outbox(
    sqlite_and_postgres_shards: TwoShards,
) -> None:
    from tenant_runtime.lifecycle.handover import held_schema
    from tenant_runtime.workspace import list_tenants, postgres
    from tenant_runtime.workspace.open import workspace_url

    shards = sqlite_and_postgres_shards
    acme = shards.tenant("acme")
    _document(shards, "acme", acme, "first")
    second = _document(shards, "acme", acme, "second")
    shards.a.handoff.notify = lambda tenant: None  # type: ignore[method-assign]
    unsent = _publish(shards, "acme", acme, second["id"]).json()["operation_id"]
    url = workspace_url(shards.b.factory.settings)

    there = shards.api.post("/ops/tenants/acme/move", json={"to": "b", "confirm": True}, headers=shards.operator)

    assert there.status_code == 200, there.text
    assert not _holds(shards.a, "acme") and list_tenants(shards.b.factory.settings) == ["acme"]
    assert postgres.schema_exists(url, "ws_acme")
    docs = shards.api.get("/api/tenants/acme/documents", headers=acme).json()
    assert {d["slug"] for d in docs} == {"first", "second"}
    assert shards.b.handoff.flush(10)
    [sent_by_b] = shards.b.prefect.called("create_run")
    assert sent_by_b["request"].parameters.operation_id == unsent  # the outbox travelled, sent once
    _document(shards, "acme", acme, "on-postgres")

    back = shards.api.post("/ops/tenants/acme/move", json={"to": "a", "confirm": True}, headers=shards.operator)

    assert back.status_code == 200, back.text
    assert _holds(shards.a, "acme") and list_tenants(shards.b.factory.settings) == []
    assert not postgres.schema_exists(url, "ws_acme") and not postgres.schema_exists(url, held_schema("acme"))
    docs = shards.api.get("/api/tenants/acme/documents", headers=acme).json()
    assert {d["slug"] for d in docs} == {"first", "second", "on-postgres"}
    _document(shards, "acme", acme, "home-again")


def test_the_site_server_reads_a_tenant_from_a_postgresql_shard_pages_and_search(
    sqlite_and_postgres_shards: TwoShards, postgres_url: str
) -> None:
    from litestar.testing import TestClient
    from pydantic import SecretStr

    from control_plane.public.app import create_site_app
    from tenant_runtime import search
    from tenant_runtime.workspace import WorkspaceFactory

    shards = sqlite_and_postgres_shards
    acme = shards.tenant("acme", shard="b")
    document = _document(shards, "acme", acme, "zeppelin-news")
    assert _publish(shards, "acme", acme, document["id"]).status_code == 202
    writer = shards.b.factory.open("acme")
    assert search.index_document(writer, document["id"], 1)  # what the delivery's index_search step does
    control = shards.settings.control_plane.model_copy(
        update={
            "site_data_dirs": (shards.a.factory.settings.data_dir,),
            "site_workspace_databases": (SecretStr(postgres_url),),
        }
    )
    settings = type(shards.settings)(
        runtime=shards.settings.runtime, dispatch=shards.settings.dispatch, control_plane=control
    )
    own = WorkspaceFactory(settings.runtime, store=shards.a.factory.store, read_only=True)
    with TestClient(create_site_app(settings, factory=own)) as site:
        assert site.get("/acme/zeppelin-news").status_code == 200
        found = site.get("/acme/search", params={"q": "zeppelin"})
        assert found.status_code == 200 and 'href="' in found.text and "zeppelin-news" in found.text
        assert site.get("/nobody/zeppelin-news").status_code == 404
