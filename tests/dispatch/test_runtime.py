"""The tenant-runtime seam in process: queries, commands run exactly once, quota, and the hand-off to the relay."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest
import structlog

from dispatch.prefect_twin import RecordingPrefect
from dispatch.relay import Relay
from dispatch.runtime import InProcessRuntime, RelayHandoff, RuntimeClient
from dispatch.runtime import messages as m
from dispatch.settings import DispatchSettings
from tenant_runtime.actions.outbox import Coalescing
from tenant_runtime.edge import MemoryPurger
from tenant_runtime.errors import Forbidden, IdempotencyKeyReused, NotFound, QuotaExceeded
from tenant_runtime.workspace import Workspace, WorkspaceFactory

OWNER = m.ActorRef(id="u-owner", role="owner")
VIEWER = m.ActorRef(id="u-viewer", role="viewer")


@pytest.fixture
def prefect() -> RecordingPrefect:
    return RecordingPrefect()


@pytest.fixture
def client(
    workspace_factory: WorkspaceFactory, workspace: Workspace, prefect: RecordingPrefect
) -> Iterator[RuntimeClient]:
    relay = Relay(workspace_factory, prefect, Coalescing())
    handoff = RelayHandoff(relay.relay_tenant, close=prefect.close)
    runtime = InProcessRuntime(workspace_factory, DispatchSettings(ui_url="http://prefect.test"), handoff)
    yield RuntimeClient(runtime)
    handoff.close()


def _command(
    message: m.Message,
    *,
    key: str | None = None,
    quota: m.Quota | None = None,
    actor: m.ActorRef = OWNER,
    scope: str = "test",
) -> m.Command:
    return m.Command(actor=actor, scope=scope, message=message, idempotency_key=key, quota=quota)


def _draft(client: RuntimeClient, slug: str = "news") -> str:
    created = client.execute("acme", _command(m.CreateDocument(slug=slug, title=slug.title(), kind="post")))
    assert created.status_code == 201
    return str(created.body["id"])


def test_a_publish_commits_answers_at_once_and_reaches_prefect_through_the_hand_off(
    client: RuntimeClient, prefect: RecordingPrefect, workspace_factory: WorkspaceFactory
) -> None:
    document_id = _draft(client)

    result = client.execute("acme", _command(m.PublishDocument(document_id=document_id), key="k1"))

    assert result.status_code == 202 and result.body["status"] == "queued" and not result.replayed
    operation_id = result.body["operation_id"]
    assert client.transport.handoff.flush(10)  # type: ignore[attr-defined]
    [call] = prefect.called("create_run")
    assert call["request"].parameters.operation_id == operation_id
    operation = client.operation("acme", VIEWER, operation_id)
    assert (
        operation.sent
        and operation.flow_run_id
        and operation.run_url == f"http://prefect.test/runs/flow-run/{operation.flow_run_id}"
    )
    assert operation.workflow == "publish_document" and operation.document_title == "News"
    # After commit, the page's cached render is purged so the new version shows at once.
    purger = workspace_factory.purger
    assert isinstance(purger, MemoryPurger) and ["acme:doc:news"] in purger.purged


def test_a_repeated_key_answers_the_first_answer_and_another_body_under_it_is_refused(
    client: RuntimeClient, prefect: RecordingPrefect
) -> None:
    document_id = _draft(client)
    first = client.execute("acme", _command(m.PublishDocument(document_id=document_id), key="k1"))
    again = client.execute("acme", _command(m.PublishDocument(document_id=document_id), key="k1"))

    assert again.replayed and again.body["operation_id"] == first.body["operation_id"]
    with pytest.raises(IdempotencyKeyReused):
        client.execute("acme", _command(m.PublishDocument(document_id=document_id, version=1), key="k1"))
    assert len(client.operations("acme", VIEWER)) == 1


def test_the_quota_refuses_once_spent_and_writes_nothing(client: RuntimeClient) -> None:
    quota = m.Quota(("publish", "release"), 1)
    first, second = _draft(client, "one"), _draft(client, "two")
    client.execute("acme", _command(m.PublishDocument(document_id=first), quota=quota))

    with pytest.raises(QuotaExceeded) as refused:
        client.execute("acme", _command(m.PublishDocument(document_id=second), quota=quota))

    assert refused.value.details["limit"] == 1 and 1 <= refused.value.details["retry_after"] <= 3601
    assert [d.status for d in client.documents("acme", VIEWER, status="published")] == ["published"]


def test_roles_are_checked_by_the_runtime_too(client: RuntimeClient) -> None:
    with pytest.raises(Forbidden):
        client.execute("acme", _command(m.CreateDocument(slug="x", title="X"), actor=VIEWER))
    with pytest.raises(Forbidden):
        client.documents("acme", m.ActorRef(id="nobody", role="stranger"))
    with pytest.raises(NotFound):
        client.documents("globex", OWNER)  # no such workspace on this runtime


def test_creating_a_workspace_is_idempotent_and_titles_the_site(client: RuntimeClient) -> None:
    made = client.execute("newco", _command(m.CreateWorkspace(title="New Co")))
    again = client.execute("newco", _command(m.CreateWorkspace(title="New Co")))

    assert made.status_code == again.status_code == 201 and made.body == {"tenant": "newco", "title": "New Co"}
    assert client.documents("newco", OWNER) == []


def test_the_hand_off_relays_each_notice_once_more_after_a_running_pass_and_survives_failures() -> None:
    passes: list[str] = []
    started, release = threading.Event(), threading.Event()

    async def relay_tenant(tenant: str) -> int:
        passes.append(tenant)
        if tenant == "slow" and len(passes) == 1:
            started.set()
            await asyncio.to_thread(release.wait, 10)
        if tenant == "broken":
            raise ConnectionError("Prefect is down")
        return 1

    handoff = RelayHandoff(relay_tenant)
    try:
        handoff.notify("slow")
        assert started.wait(10)
        for _ in range(5):  # notices while the first pass runs coalesce into one more pass
            handoff.notify("slow")
        release.set()
        handoff.notify("broken")
        assert handoff.flush(10)
        assert passes.count("slow") == 2 and passes.count("broken") == 1
        handoff.notify("later")
        assert handoff.flush(10) and passes[-1] == "later"
    finally:
        handoff.close()
    handoff.close()  # closing twice is harmless
    assert handoff.flush(0)  # nothing is pending after a close


def test_a_relay_pass_logs_under_its_tenant_never_under_the_request_that_notified_it() -> None:
    """A notice from request B that coalesces into the pass after request A's must not carry A's (or B's)
    request id: passes serve many commands, so they run in a context of their own, bound to the tenant."""
    seen: list[dict[str, object]] = []
    started, release = threading.Event(), threading.Event()

    async def relay_tenant(tenant: str) -> int:
        seen.append(dict(structlog.contextvars.get_contextvars()))
        if len(seen) == 1:
            started.set()
            await asyncio.to_thread(release.wait, 10)
        return 1

    handoff = RelayHandoff(relay_tenant)
    try:
        for request_id in ("req-a", "req-b"):
            with structlog.contextvars.bound_contextvars(request_id=request_id, path="/api/tenants/acme/documents"):
                handoff.notify("acme")
            if request_id == "req-a":
                assert started.wait(10)
        release.set()
        assert handoff.flush(10)
    finally:
        handoff.close()
    assert seen == [{"tenant": "acme"}, {"tenant": "acme"}]
