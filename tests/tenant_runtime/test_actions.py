"""Actions on one workspace: permission, one transaction, revision and audit rows."""

from __future__ import annotations

import pytest
from sqlmodel import func, select

from tenant_runtime.actions import operations as operation_actions
from tenant_runtime.actions.documents import create_document, update_document
from tenant_runtime.actions.publishing import publish_document, unpublish_document
from tenant_runtime.errors import (
    AlreadyExists,
    BadRequest,
    ClaimRejected,
    Conflict,
    Forbidden,
    InvalidSlug,
    VersionConflict,
)
from tenant_runtime.workflows import Carried
from tenant_runtime.workspace import Actor, AuditEntry, Document, Operation, Revision, Workspace

OWNER = Actor.for_role("u-owner", "owner")
VIEWER = Actor.for_role("u-viewer", "viewer")


def _carried(operation: Operation, workflow: str | None = None, **fields: object) -> Carried:
    """What a run claiming ``operation`` says its record holds."""
    return Carried(operation_id=operation.id, workflow=workflow or operation.flow_name, fields=fields)


def _count(ws: Workspace, model: type) -> int:
    with ws.reader() as tx:
        return tx.exec(select(func.count()).select_from(model)).one()


def test_create_then_update_snapshots_every_version_and_audits(workspace: Workspace) -> None:
    with workspace.transaction() as tx:
        doc = create_document(tx, OWNER, slug="about", title="About", body="v1", kind="page")
    with workspace.transaction() as tx:
        doc = update_document(tx, OWNER, doc.id, expected_version=1, body="v2")

    assert doc.version == 2
    with workspace.reader() as tx:
        bodies = [
            r.body for r in tx.exec(select(Revision).where(Revision.document_id == doc.id).order_by(Revision.version))
        ]
        actions = [a.action for a in tx.exec(select(AuditEntry).order_by(AuditEntry.id))]
    assert bodies == ["v1", "v2"]
    assert actions == ["content.create", "content.edit"]


def test_a_stale_version_is_a_conflict_and_writes_nothing(workspace: Workspace) -> None:
    with workspace.transaction() as tx:
        doc = create_document(tx, OWNER, slug="about", title="About", body="v1", kind="page")
    with pytest.raises(VersionConflict) as raised, workspace.transaction() as tx:
        update_document(tx, OWNER, doc.id, expected_version=7, body="lost?")

    assert raised.value.details == {"expected_version": 7, "current_version": 1}
    assert _count(workspace, Revision) == 1 and _count(workspace, AuditEntry) == 1


@pytest.mark.parametrize("slug", ["", "Upper", "../etc", "a/b", "-lead", "trail-", "x" * 101, "search", "a\n"])
def test_bad_or_reserved_slugs_are_refused(workspace: Workspace, slug: str) -> None:
    with pytest.raises((InvalidSlug, BadRequest)), workspace.transaction() as tx:
        create_document(tx, OWNER, slug=slug, title="T", body="", kind="page")
    assert _count(workspace, Document) == 0


def test_duplicate_slug_and_viewer_edits_are_refused(workspace: Workspace) -> None:
    with workspace.transaction() as tx:
        create_document(tx, OWNER, slug="about", title="About", body="", kind="page")
    with pytest.raises(AlreadyExists), workspace.transaction() as tx:
        create_document(tx, OWNER, slug="about", title="Again", body="", kind="page")
    with pytest.raises(Forbidden), workspace.transaction() as tx:
        create_document(tx, VIEWER, slug="other", title="Other", body="", kind="page")
    assert _count(workspace, Document) == 1


def test_publish_commits_status_operation_outbox_and_audit_in_one_transaction(workspace: Workspace) -> None:
    with workspace.transaction() as tx:
        doc = create_document(tx, OWNER, slug="news", title="News", body="b", kind="post")
    with workspace.transaction() as tx:
        published, operation = publish_document(tx, "acme", OWNER, doc.id)

    assert published.status == "published" and published.published_version == 1
    assert operation.status == "queued" and operation.sent_at is None
    assert operation.idempotency_key == f"publish:{operation.id}"
    assert operation.parameters == {
        "tenant": "acme",
        "operation_id": operation.id,
        "document_id": doc.id,
        "version": 1,
        "generation": 1,
    }
    with workspace.reader() as tx:
        assert (
            tx.exec(select(AuditEntry).where(AuditEntry.action == "content.publish")).one().operation_id == operation.id
        )


def test_a_failed_publish_rolls_back_everything(workspace: Workspace) -> None:
    with workspace.transaction() as tx:
        doc = create_document(tx, OWNER, slug="news", title="News", body="b", kind="post")
    with pytest.raises(VersionConflict), workspace.transaction() as tx:
        publish_document(tx, "acme", OWNER, doc.id, expected_version=3)
    assert _count(workspace, Operation) == 0
    with workspace.reader() as tx:
        assert tx.get(Document, doc.id).status == "draft"  # type: ignore[union-attr]


def test_unpublish_requires_a_published_document(workspace: Workspace) -> None:
    with workspace.transaction() as tx:
        doc = create_document(tx, OWNER, slug="news", title="News", body="b", kind="post")
    with pytest.raises(Conflict) as raised, workspace.transaction() as tx:
        unpublish_document(tx, "acme", OWNER, doc.id)
    assert raised.value.code == "not_published" and raised.value.status == 409


def test_claim_checks_the_run_against_its_operation(workspace: Workspace) -> None:
    with workspace.transaction() as tx:
        doc = create_document(tx, OWNER, slug="news", title="News", body="b", kind="post")
        _, operation = publish_document(tx, "acme", OWNER, doc.id)
    with pytest.raises(ClaimRejected), workspace.transaction() as tx:
        operation_actions.claim(
            tx, _carried(operation, tenant="globex", operation_id=operation.id), flow_run_id="run-1"
        )
    with pytest.raises(ClaimRejected), workspace.transaction() as tx:
        operation_actions.claim(tx, _carried(operation, tenant="acme", version=2), flow_run_id="run-1")
    with workspace.transaction() as tx:
        attempt = operation_actions.claim(tx, _carried(operation, tenant="acme", version=1), flow_run_id="run-1")
    assert attempt is not None and attempt.number == 1
    with workspace.reader() as tx:
        assert tx.get(Operation, operation.id).status == "delivering"  # type: ignore[union-attr]


def test_failures_retry_five_times_then_dead_and_replay_resets_the_budget(workspace: Workspace) -> None:
    with workspace.transaction() as tx:
        doc = create_document(tx, OWNER, slug="news", title="News", body="b", kind="post")
        _, operation = publish_document(tx, "acme", OWNER, doc.id)
    statuses = []
    for _ in range(6):
        with workspace.transaction() as tx:
            operation_actions.claim(tx, _carried(operation, tenant="acme"), flow_run_id="run-1")
        with workspace.transaction() as tx:
            statuses.append(
                operation_actions.fail(
                    tx,
                    operation.id,
                    step="render_page",
                    error_code="ConnectionError",
                    error_message="boom",
                    max_retries=5,
                    next_attempt_at=None,
                ).status
            )
    assert statuses == ["failed"] * 5 + ["dead"]
    with workspace.transaction() as tx:
        replayed = operation_actions.requeue(tx, OWNER, operation.id)
    assert replayed.status == "queued" and replayed.retries == 0 and replayed.sent_at is None
    with workspace.reader() as tx:
        assert len(list(tx.exec(select(AuditEntry).where(AuditEntry.action == "operation.retry")))) == 1
