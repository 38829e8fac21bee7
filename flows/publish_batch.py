"""publish_batch: the publish pipeline for several of one tenant's publish operations in one run.

The relay coalesces a tenant's publishes that wait while its earlier publish
runs are busy (``tenant_runtime/actions/outbox.py``). Each step is one task
over every operation of the batch, so the orchestrator records nine task runs
per batch instead of nine per publish; each item inside a step is an
idempotent unit (a deterministic key written only when its bytes change), so a
retried step redoes nothing that is done. Operations keep their own outcome:
a superseded version or a permanently failing document is set aside and the
rest are delivered.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from prefect import flow, task

from flows.delivery_steps import aggregates_with_purge, unique
from flows.presets import CACHE_BY_STEP, RETRY_IO
from flows.publish_document import purge, render_home
from flows.runtime import webhook_sender, workspace
from flows.steps import run_each
from tenant_runtime import delivery, public_records, search, webhooks
from tenant_runtime.workspace import Workspace

# (operation id, document id, version)
Entry = tuple[str, str, int]


async def _each(step: str, tenant: str, entries: list[Entry],
                call: Callable[[Workspace, str, str, int], Any]) -> tuple[dict[str, Any], dict[str, dict[str, str]]]:
    """``call(ws, operation, document, version)`` for every entry, as one step (see ``run_each``)."""
    ws = workspace(tenant)
    return await run_each(step, tenant, [(op, partial(call, ws, op, d, v)) for op, d, v in entries])


@task(name="verify", **RETRY_IO, **CACHE_BY_STEP)
async def verify_all(tenant: str, operation_id: str, entries: list[Entry]) -> dict[str, Any]:
    """Which versions are still the ones that should be public."""
    done, failed = await _each("verify", tenant, entries,
                               lambda ws, op, d, v: delivery.check_publish(ws, d, v))
    return {"status": done, "failed": failed}


@task(name="render_page", **RETRY_IO, **CACHE_BY_STEP)
async def render_pages(tenant: str, operation_id: str, entries: list[Entry]) -> dict[str, Any]:
    done, failed = await _each("render_page", tenant, entries,
                               lambda ws, op, d, v: delivery.render_document_page(ws, d, v, op))
    return {"tags": sorted({t for rendered in done.values() for t in rendered.tags}), "failed": failed}


@task(name="public_record", **RETRY_IO, **CACHE_BY_STEP)
async def public_record_all(tenant: str, operation_id: str, entries: list[Entry]) -> dict[str, Any]:
    done, failed = await _each("public_record", tenant, entries,
                               lambda ws, op, d, v: public_records.write_public_record(ws, d, v, op))
    return {"tags": sorted({t for stored in done.values() for t in stored.tags}), "failed": failed}


@task(name="index_search", **RETRY_IO, **CACHE_BY_STEP)
async def index_search_all(tenant: str, operation_id: str, entries: list[Entry]) -> dict[str, Any]:
    done, failed = await _each("index_search", tenant, entries,
                               lambda ws, op, d, v: search.index_document(ws, d, v))
    return {"changed": sum(1 for changed in done.values() if changed), "failed": failed}


@task(name="notify_plugins", **RETRY_IO, **CACHE_BY_STEP)
async def notify_plugins_all(tenant: str, operation_id: str, entries: list[Entry]) -> dict[str, Any]:
    """after_publish webhooks per operation; an endpoint acknowledges each operation once."""
    done, failed = await _each("notify_plugins", tenant, entries,
                               lambda ws, op, d, v: webhooks.deliver_after_publish(ws, webhook_sender(), op, d, v))
    return {"delivered": sum(n.get("delivered", 0) for n in done.values()), "failed": failed}


@flow(name="publish_batch", flow_run_name="publish {tenant} batch {operation_id}", persist_result=False)
async def publish_batch(
    tenant: str, operation_id: str, operations: list[str], documents: list[list[Any]], generation: int = 0
) -> dict[str, Any]:
    """verify → pages → records → search → home → purge → aggregates (+ purge) → plugin webhooks, once each."""
    entries: list[Entry] = [(op, str(d), int(v)) for op, (d, v) in zip(operations, documents, strict=True)]
    failed: dict[str, dict[str, str]] = {}

    def remaining(step: dict[str, Any], current: list[Entry]) -> list[Entry]:
        failed.update(step["failed"])
        return [entry for entry in current if entry[0] not in failed]

    checked = await verify_all(tenant, operation_id, entries)
    status = checked["status"]
    current = [e for e in remaining(checked, entries) if status.get(e[0]) == delivery.CURRENT]
    pages = await render_pages(tenant, operation_id, current)
    current = remaining(pages, current)
    records = await public_record_all(tenant, operation_id, current)
    current = remaining(records, current)
    current = remaining(await index_search_all(tenant, operation_id, current), current)
    home = await render_home(tenant, operation_id, 0, generation)
    purged = await purge(tenant, operation_id, 0, unique(pages["tags"], records["tags"], home["tags"], ["search"]))
    refreshed = await aggregates_with_purge(tenant, operation_id, 0)
    # Plugins last: what they are told about is public by now.
    notified = await notify_plugins_all(tenant, operation_id, current)
    current = remaining(notified, current)
    delivered = {op for op, _, _ in current}
    outcomes: dict[str, Any] = {}
    for op, _, _ in entries:
        if op in failed:
            outcomes[op] = {"outcome": "failed", **failed[op]}
        else:
            outcomes[op] = {"outcome": "succeeded" if op in delivered else "superseded"}
    return {"outcome": "succeeded", "operations": outcomes, "delivered": len(delivered), "purged": purged,
            **refreshed, "webhooks": notified["delivered"]}
