"""Versions on the real stack: restore-and-publish changes what readers see; prune_policies keeps exactly
the policy's versions and every restore point, and deletes the spillover it frees."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlmodel import select

from tenant_runtime.ids import utcnow
from tenant_runtime.versions import SPILL_THRESHOLD
from tenant_runtime.workspace import Backup, Revision
from tests.fixtures.stack import Pressroom

pytestmark = pytest.mark.integration


def test_restoring_an_old_version_and_publishing_it_changes_the_page(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    doc = pressroom.create_document(acme, "story", body="The original story")
    pressroom.start_worker(acme)
    pressroom.wait_operation(acme, pressroom.publish(acme, doc["id"])["operation_id"])
    edited = pressroom.api.put(
        f"/api/tenants/{acme.slug}/documents/{doc['id']}",
        json={"version": 1, "body": "A bad rewrite"},
        headers=acme.headers,
    ).json()
    pressroom.wait_operation(acme, pressroom.publish(acme, doc["id"], version=edited["version"])["operation_id"])
    assert "A bad rewrite" in pressroom.site.get(f"/{acme.slug}/story").text

    restored = pressroom.api.post(
        f"/api/tenants/{acme.slug}/documents/{doc['id']}/revisions/1/restore",
        json={"publish": True, "confirm": True, "version": 2},
        headers=acme.headers,
    )

    assert restored.status_code == 202, restored.text
    operation = pressroom.wait_operation(acme, restored.json()["operation_id"])
    assert operation["status"] == "succeeded" and operation["document_version"] == 3
    page = pressroom.site.get(f"/{acme.slug}/story").text
    assert "The original story" in page and "A bad rewrite" not in page
    stored = pressroom.store.get(f"tenants/{acme.slug}/site/story/index.html")
    assert stored is not None and b"The original story" in stored


def test_prune_policies_runs_as_a_flow_and_keeps_the_policy_and_the_restore_points(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    big = "spilled words " * (SPILL_THRESHOLD // 10)
    doc = pressroom.create_document(acme, "long-lived", body=f"{big} 1")
    url = f"/api/tenants/{acme.slug}/documents/{doc['id']}"
    for n in range(2, 9):
        edited = pressroom.api.put(url, json={"version": n - 1, "body": f"{big} {n}"}, headers=acme.headers)
        assert edited.status_code == 200, edited.text
    ws = pressroom.factory.open(acme.slug)
    with ws.transaction() as tx:
        for revision in tx.exec(select(Revision).where(Revision.document_id == doc["id"])):
            revision.created_at = utcnow() - timedelta(days=200, minutes=100 - revision.version)
            tx.add(revision)
        # a backup taken when version 3 was the newest: a restore to it needs version 3
        tx.add(
            Backup(id="bak_restore_point", status="succeeded", snapshot_at=utcnow() - timedelta(days=200, minutes=96.5))
        )
    policy = pressroom.api.put(
        f"/api/tenants/{acme.slug}/retention/document", json={"keep_last": 2, "keep_days": 30}, headers=acme.headers
    )
    assert policy.status_code == 200, policy.text
    pressroom.start_worker(acme)

    response = pressroom.api.post(
        f"/api/tenants/{acme.slug}/retention/prune", json={"confirm": True}, headers=acme.headers
    )

    assert response.status_code == 202, response.text
    operation = pressroom.wait_operation(acme, response.json()["operation_id"])
    assert operation["status"] == "succeeded", operation
    assert operation["kind"] == "prune" and operation["workflow"] == "prune_policies"
    facts = operation["outcome"]
    versions = pressroom.api.get(f"{url}/revisions", headers=acme.headers).json()
    # versions 1-7 are cold and large, but 3 is the restore point's: pinned, so neither spilled nor pruned
    assert (facts["spilled"], facts["documents_pruned"], facts["spillover_deleted"]) == (6, 5, 5), (facts, versions)
    assert [(v["version"], v["spilled"]) for v in versions] == [(8, False), (7, True), (3, False)]
    assert len(ws.store.list("versions/")) == 1
    old = pressroom.api.get(f"{url}/revisions/3", headers=acme.headers).json()
    assert old["body"] == f"{big} 3"
