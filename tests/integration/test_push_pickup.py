"""Push pickup on the real stack: a worker that would poll only every 30 s takes each new run at once."""

from __future__ import annotations

import time

import pytest

from tests.fixtures.stack import Pressroom, WorkerThread

pytestmark = pytest.mark.integration


def test_a_lone_publish_is_picked_up_without_waiting_for_the_poll(pressroom: Pressroom) -> None:
    tenant = pressroom.new_tenant("push")
    settings = pressroom.settings.dispatch.model_copy(update={"poll_interval": 30.0, "sweep_interval": 3600.0})
    worker = WorkerThread(settings, pressroom.factory, frozenset({tenant.slug})).start()
    try:
        waited = []
        for n in range(2):  # the second one arrives while the worker idles after the first
            doc = pressroom.create_document(tenant, f"pushed-{n}")
            started = time.monotonic()
            op = pressroom.publish(tenant, doc["id"])["operation_id"]
            assert pressroom.wait_operation(tenant, op, timeout=25)["status"] == "succeeded"
            waited.append(time.monotonic() - started)
        bell = worker.worker.doorbell
        assert bell is not None and bell.rings >= 2  # the control plane's relay, and the finished runs
    finally:
        worker.stop()
    assert max(waited) < 25, waited  # the 30 s poll would have been the only way in
