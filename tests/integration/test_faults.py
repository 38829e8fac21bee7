"""Faults: a flaky object store, a dead one, and many writers on one tenant database."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from control_plane.documents.schemas import DocumentCreate
from tests.fixtures.stack import Pressroom

pytestmark = pytest.mark.integration


def test_an_object_store_that_fails_a_few_times_is_retried_to_success(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    doc = pressroom.create_document(acme, "flaky-store")
    pressroom.start_worker(acme)
    # Three failures exhaust the first attempt (one try + two task retries); the next attempt succeeds.
    pressroom.store.fail_next(3, TimeoutError("S3 read timed out"))

    operation = pressroom.wait_operation(acme, pressroom.publish(acme, doc["id"])["operation_id"])

    assert operation["status"] == "succeeded"
    assert len(operation["attempts"]) == 2
    assert "timed out" in operation["attempts"][0]["error"]
    assert pressroom.store.get(f"tenants/{acme.slug}/site/flaky-store/index.html") is not None


def test_an_object_store_that_never_recovers_ends_dead_with_the_error_visible(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    doc = pressroom.create_document(acme, "no-store")
    pressroom.store.fail_next(10_000, ConnectionError("503 Service Unavailable"))
    pressroom.start_worker(acme)

    operation = pressroom.wait_operation(acme, pressroom.publish(acme, doc["id"])["operation_id"], timeout=120)
    pressroom.store.fail_next(0)

    assert operation["status"] == "dead"
    assert len(operation["attempts"]) == 6  # the first attempt and five retries
    assert operation["error"]["code"] == "ConnectionError"
    assert "503" in operation["error"]["message"]
    dead = pressroom.api.get("/ops/operations?status=dead", headers=pressroom.operator).json()
    assert operation["id"] in {op["id"] for op in dead}


def test_concurrent_writers_on_one_tenant_database_never_fail_a_command(pressroom: Pressroom) -> None:
    acme = pressroom.new_tenant("acme")
    principal = pressroom.services.tokens.resolve(acme.headers["Authorization"])
    pressroom.start_worker(acme)  # delivery writes to the same database meanwhile

    def write(n: int) -> list[int]:
        codes = []
        data = DocumentCreate(slug=f"w-{n}", title=f"W {n}", body="x" * 2000, kind="post")
        outcome = pressroom.services.documents.create(principal, acme.slug, data)
        codes.append(outcome.status_code)
        document_id = outcome.body["id"]
        codes.append(
            pressroom.services.documents.publish(
                principal, acme.slug, document_id, version=None, confirm=True
            ).status_code
        )
        return codes

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(write, range(40)))

    assert all(codes == [201, 202] for codes in results)
    documents = pressroom.api.get(f"/api/tenants/{acme.slug}/documents?limit=500", headers=acme.headers).json()
    assert len(documents) == 40 and all(d["status"] == "published" for d in documents)
