"""Step results stay small: the 64 KiB guard, and spilling a large result to the tenant's store."""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

import pytest
from prefect import flow, task

from control_plane.local import PrefectServerHandle
from flows import runtime
from flows.policies import RETRY_IO
from flows.probes import PROBES
from flows.steps import (
    MAX_RESULT_BYTES,
    RESULT_TOO_LARGE,
    StepFailed,
    guard_result,
    result_size,
    run_each,
    run_step,
    spill,
    unspill,
)
from tenant_runtime.errors import Permanent
from tenant_runtime.storage import MemoryStore
from tenant_runtime.workflows import DeliveryItem
from tenant_runtime.workspace import Workspace, WorkspaceFactory
from tests.fixtures.metrics import this_process, value

BIG = b"x" * (MAX_RESULT_BYTES + 1)


@pytest.fixture
def steps_see(workspace_factory: WorkspaceFactory, monkeypatch: pytest.MonkeyPatch) -> WorkspaceFactory:
    """Steps open the test's workspaces (flows.runtime's factory, put back afterwards)."""
    monkeypatch.setattr(runtime, "_factory", workspace_factory)
    return workspace_factory


def test_a_small_result_passes_and_a_large_one_is_refused_naming_its_step() -> None:
    small = {"key": "site/a/index.html", "sha256": "0" * 64, "bytes": 12}
    assert guard_result("render_page", small) is small

    with pytest.raises(StepFailed) as raised:
        guard_result("render_page", {"html": BIG})

    error = raised.value
    assert error.step == "render_page" and error.code == RESULT_TOO_LARGE and error.permanent
    assert str(result_size({"html": BIG})) in error.message


def test_the_limit_is_on_the_pickled_size() -> None:
    at_limit = b"x" * (MAX_RESULT_BYTES - 64)
    assert result_size(at_limit) <= MAX_RESULT_BYTES
    guard_result("s", at_limit)
    with pytest.raises(StepFailed):
        guard_result("s", [at_limit, b"y" * 128])


def test_run_step_refuses_a_large_return_value() -> None:
    with pytest.raises(StepFailed) as raised:
        asyncio.run(run_step("export_tables", "acme", lambda: BIG))
    assert raised.value.code == RESULT_TOO_LARGE and raised.value.step == "export_tables"


def test_every_call_of_a_step_is_timed_with_its_outcome() -> None:
    def transient() -> None:
        raise OSError("disk busy")

    def permanent() -> None:
        raise Permanent("bad input")

    before = this_process()
    asyncio.run(run_step("render_page", "acme", lambda: 1))
    for call in (transient, permanent):
        with pytest.raises(StepFailed):
            asyncio.run(run_step("render_page", "acme", call))
    after = this_process()

    for outcome in ("ok", "failed", "permanent"):
        name, labels = "pressroom_step_seconds_count", {"step": "render_page", "outcome": outcome}
        assert value(after, name, **labels) - value(before, name, **labels) == 1, outcome


def _items(n: int) -> tuple[DeliveryItem, ...]:
    return tuple(DeliveryItem(operation_id=f"op_{i}", document_id=f"doc_{i}", version=1) for i in range(n))


def test_in_a_batch_the_item_with_a_large_result_is_set_aside(
    steps_see: WorkspaceFactory, workspace: Workspace
) -> None:
    def call(ws: Workspace, item: DeliveryItem) -> bytes:
        return BIG if item.document_id == "doc_1" else b"ok"

    results = asyncio.run(run_each("render_page", "acme", _items(3), call, set_aside=True))

    assert sorted(results.done) == ["op_0/doc_0", "op_2/doc_2"]
    assert results.failed["op_1/doc_1"].code == RESULT_TOO_LARGE


def test_results_that_are_large_together_fail_the_whole_step(steps_see: WorkspaceFactory, workspace: Workspace) -> None:
    each = b"x" * (MAX_RESULT_BYTES // 4)

    with pytest.raises(StepFailed) as raised:
        asyncio.run(run_each("render_page", "acme", _items(5), lambda ws, i: each + i.key.encode(), set_aside=True))
    assert raised.value.code == RESULT_TOO_LARGE


def test_spill_stores_under_the_content_hash_in_the_tenants_prefix_once(
    workspace_factory: WorkspaceFactory, workspace: Workspace
) -> None:
    store = workspace_factory.store
    assert isinstance(store, MemoryStore)
    data = b"large export " * 10_000
    digest = hashlib.sha256(data).hexdigest()

    first = spill(workspace, data, "tables.jsonl")
    second = spill(workspace, data, "the same tables again")
    other = spill(workspace, data + b"!", "tables.jsonl")

    assert first == second == {"key": f"results/{digest}", "sha256": digest, "bytes": len(data)}
    assert store.writes[f"tenants/acme/results/{digest}"] == 1  # the second call wrote nothing
    assert other["key"] != first["key"] and len(store.writes) == 2
    assert result_size(first) < 1024
    assert unspill(workspace, first) == data


def test_a_missing_or_changed_spilled_result_is_permanent(
    workspace_factory: WorkspaceFactory, workspace: Workspace
) -> None:
    reference = spill(workspace, b"payload" * 100, "p")
    workspace.store.put(str(reference["key"]), b"tampered")
    with pytest.raises(Permanent):
        unspill(workspace, reference)
    with pytest.raises(Permanent):
        unspill(workspace, {**reference, "key": "results/" + "0" * 64})


# --- on a real Prefect server: the mistake fails the step the first time it runs ------------------


@task(name="oversized_step", persist_result=False, **RETRY_IO.task_options())
async def oversized_step(tenant: str, run_id: str) -> bytes:
    return await run_step("oversized_step", tenant, lambda: BIG)


@task(name="spilling_step", persist_result=False, **RETRY_IO.task_options())
async def spilling_step(tenant: str, run_id: str) -> dict[str, Any]:
    return await run_step("spilling_step", tenant, lambda: spill(runtime.workspace(tenant), BIG, "big"))


@flow(name="result_size_probe", persist_result=False)
async def result_size_probe(tenant: str) -> dict[str, Any]:
    refused = await oversized_step(tenant, "op_probe", return_state=True)
    error = await refused.aresult(raise_on_failure=False)
    reference = await spilling_step(tenant, "op_probe")
    return {"state": refused.name, "error": error, "reference": reference}


@pytest.mark.integration
def test_a_step_returning_too_much_fails_at_once_and_a_spilled_one_completes(
    prefect_server: PrefectServerHandle, steps_see: WorkspaceFactory, workspace: Workspace
) -> None:
    PROBES.reset()

    outcome = asyncio.run(result_size_probe("acme"))

    assert outcome["state"] == "Failed"
    error = outcome["error"]
    assert isinstance(error, StepFailed) and error.code == RESULT_TOO_LARGE and error.step == "oversized_step"
    assert PROBES.count("acme", "oversized_step") == 1  # permanent: no retry
    reference = outcome["reference"]
    assert reference["bytes"] == len(BIG) and unspill(workspace, reference) == BIG
    PROBES.reset()
