"""The sanitized public record: deterministic key, idempotent, never replaced by an older version."""

from __future__ import annotations

import json

from tenant_runtime import public_records
from tenant_runtime.storage import MemoryStore
from tenant_runtime.workspace import Workspace
from tests.tenant_runtime.content import publish, republish, unpublish

EVIL = "Hello <script>alert(1)</script> <img src=x onerror=alert(2)> [x](javascript:alert(3)) **bold**"


def _stored(ws: Workspace, slug: str) -> dict[str, object]:
    data = ws.store.get(public_records.record_key(slug))
    assert data is not None
    return dict(json.loads(data))


def test_record_is_sanitized_json_at_its_key(workspace: Workspace) -> None:
    document, operation = publish(workspace, "launch", title="Launch <b>day</b>", body=EVIL)

    stored = public_records.write_public_record(workspace, document.id, 1, operation.id)

    assert stored.key == "public/launch.json" and stored.written and stored.tags == ("doc:launch",)
    record = _stored(workspace, "launch")
    assert set(record) == {"tenant", "permalink", "title", "kind", "version", "published_at", "html", "summary", "url"}
    assert record["tenant"] == "acme" and record["permalink"] == "launch" and record["version"] == 1
    assert record["title"] == "Launch <b>day</b>"  # a title is text; readers escape it like any text
    assert record["url"] == "http://site.test/acme/launch" and record["kind"] == "post"
    html = str(record["html"])
    assert "<strong>bold</strong>" in html
    for forbidden in ("<script", "alert(1)", "onerror", 'href="javascript:'):
        assert forbidden not in html
    assert "<" not in str(record["summary"])
    store = workspace.store.store
    assert isinstance(store, MemoryStore)
    assert store.content_type("tenants/acme/public/launch.json") == "application/json"


def test_writing_twice_writes_once(workspace: Workspace) -> None:
    document, operation = publish(workspace, "same")

    first = public_records.write_public_record(workspace, document.id, 1, operation.id)
    second = public_records.write_public_record(workspace, document.id, 1, operation.id)

    assert first.written and not second.written and first.sha256 == second.sha256
    store = workspace.store.store
    assert isinstance(store, MemoryStore) and store.writes["tenants/acme/public/same.json"] == 1


def test_an_older_version_never_replaces_a_newer_record(workspace: Workspace) -> None:
    document, first_op = publish(workspace, "news", body="first")
    _, second_op = republish(workspace, document.id, body="second")
    public_records.write_public_record(workspace, document.id, 2, second_op.id)

    late = public_records.write_public_record(workspace, document.id, 1, first_op.id)

    assert not late.written
    assert _stored(workspace, "news")["version"] == 2 and "second" in str(_stored(workspace, "news")["html"])


def test_the_stored_record_is_served_only_while_current(workspace: Workspace) -> None:
    document, operation = publish(workspace, "page", body="v1 text")
    public_records.write_public_record(workspace, document.id, 1, operation.id)

    served = public_records.live_record(workspace, "page")
    assert served is not None and served[1] is True
    republish(workspace, document.id, body="v2 text")  # published, not delivered yet
    live = public_records.live_record(workspace, "page")
    assert live is not None and live[1] is False and json.loads(live[0])["version"] == 2


def test_unpublished_documents_have_no_record(workspace: Workspace) -> None:
    document, operation = publish(workspace, "bye")
    public_records.write_public_record(workspace, document.id, 1, operation.id)
    unpublish(workspace, document.id)

    assert public_records.live_record(workspace, "bye") is None  # even before the stored one is removed
    assert public_records.remove_public_record(workspace, "bye") is True
    assert workspace.store.get("public/bye.json") is None
    assert public_records.remove_public_record(workspace, "bye") is False
