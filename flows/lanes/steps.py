"""The registered lane steps: one Prefect task per step, each with its policy and cache, and its node runner.

A node runner takes the run's ``NodeCall`` (tenant, operation, node id, graph
digest, brief) and the state so far, picks the fields its contract needs
(``tenant_runtime.lanes.graph.STEPS``) and returns the fields it gives. Every
task takes ``node`` and ``graph_digest`` beside its inputs, so its cache key
(``flows/caching.py``) holds the graph node and the graph pinned on the brief.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from prefect import task

from flows.caching import CACHE_BY_STEP
from flows.events import EventTimedOut, wait_for_event
from flows.lanes import runtime as lane_runtime
from flows.pipeline import deliver
from flows.policies import RETRY_IO, WEBHOOK
from flows.runtime import workspace
from flows.steps import run_step
from tenant_runtime.lanes import article
from tenant_runtime.workflows import FAILED, DeliveryItem, Failure, RunOutcome

State = dict[str, Any]


@dataclass(frozen=True)
class NodeCall:
    tenant: str
    run_id: str
    node: str
    graph_digest: str
    brief_id: str


NodeRunner = Callable[[NodeCall, State], Awaitable[State | RunOutcome]]


@task(name="validate", task_run_name="{node}", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def validate(tenant: str, run_id: str, node: str, graph_digest: str, brief_id: str) -> dict[str, Any]:
    """Schema checked at intake; here: the slug is still free."""
    return await run_step("validate", tenant, lambda: article.validate(workspace(tenant), brief_id))


@task(name="ground", task_run_name="{node}", **WEBHOOK.task_options(), **CACHE_BY_STEP)
async def ground(
    tenant: str, run_id: str, node: str, graph_digest: str, brief_id: str, earlier: dict[str, Any] | None
) -> dict[str, Any]:
    """Fetch the cited sources (allow-list; private addresses only if the operator allows); a further
    round (``earlier`` set) adds the pages they link to."""
    return await run_step(
        "ground", tenant, lambda: article.ground(workspace(tenant), brief_id, lane_runtime.settings(), earlier)
    )


@task(name="generate", task_run_name="{node}", **WEBHOOK.task_options(), **CACHE_BY_STEP)
async def generate(
    tenant: str, run_id: str, node: str, graph_digest: str, brief_id: str, sources: dict[str, Any] | None
) -> dict[str, Any]:
    """The draft through the text provider, paid once per (brief, node) (the ledger holds the result)."""
    return await run_step(
        "generate",
        tenant,
        lambda: article.generate(
            workspace(tenant), brief_id, node, sources, lane_runtime.text_provider(), lane_runtime.settings()
        ),
    )


@task(name="fact_check", task_run_name="{node}", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def fact_check(
    tenant: str,
    run_id: str,
    node: str,
    graph_digest: str,
    brief_id: str,
    draft: dict[str, Any],
    sources: dict[str, Any],
) -> dict[str, Any]:
    """The draft's claims against the grounded sources."""
    return await run_step("fact_check", tenant, lambda: article.fact_check(workspace(tenant), brief_id, draft, sources))


@task(name="clean", task_run_name="{node}", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def clean(tenant: str, run_id: str, node: str, graph_digest: str, draft: dict[str, Any]) -> dict[str, Any]:
    """Valid Markdown, known directives only (markdown-it + nh3)."""
    return await run_step("clean", tenant, lambda: article.clean(workspace(tenant), draft))


@task(name="persist", task_run_name="{node}", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def persist(
    tenant: str, run_id: str, node: str, graph_digest: str, brief_id: str, body: dict[str, Any]
) -> dict[str, Any]:
    """The document (a draft post) and its revision."""
    return await run_step("persist", tenant, lambda: article.persist(workspace(tenant), brief_id, body))


@task(name="index", task_run_name="{node}", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def index(tenant: str, run_id: str, node: str, graph_digest: str, document: dict[str, Any]) -> dict[str, Any]:
    """Related articles through the embedder."""
    return await run_step("index", tenant, lambda: article.index(workspace(tenant), document, lane_runtime.embedder()))


@task(name="cover", task_run_name="{node}", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def cover(
    tenant: str, run_id: str, node: str, graph_digest: str, brief_id: str, document: dict[str, Any]
) -> dict[str, Any]:
    """The cover image, rendered to the tenant's store."""
    return await run_step(
        "cover", tenant, lambda: article.cover(workspace(tenant), brief_id, document, lane_runtime.cover_provider())
    )


@task(name="make_public", task_run_name="{node}", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def make_public(
    tenant: str, run_id: str, node: str, graph_digest: str, brief_id: str, document: dict[str, Any]
) -> dict[str, Any]:
    """The article's status flip to published (as a publish command does)."""
    return await run_step("make_public", tenant, lambda: article.make_public(workspace(tenant), brief_id, document))


# --- node runners: what each registered step reads from the state and adds to it -----------------


async def _validate(c: NodeCall, s: State) -> State:
    return await validate(c.tenant, c.run_id, c.node, c.graph_digest, c.brief_id)


async def _ground(c: NodeCall, s: State) -> State:
    return {"sources": await ground(c.tenant, c.run_id, c.node, c.graph_digest, c.brief_id, s.get("sources"))}


async def _generate(c: NodeCall, s: State) -> State:
    return {"draft": await generate(c.tenant, c.run_id, c.node, c.graph_digest, c.brief_id, s.get("sources"))}


async def _fact_check(c: NodeCall, s: State) -> State:
    checked = await fact_check(c.tenant, c.run_id, c.node, c.graph_digest, c.brief_id, s["draft"], s["sources"])
    return {"checked": checked}


async def _clean(c: NodeCall, s: State) -> State:
    return {"body": await clean(c.tenant, c.run_id, c.node, c.graph_digest, s["draft"])}


async def _persist(c: NodeCall, s: State) -> State:
    return {"document": await persist(c.tenant, c.run_id, c.node, c.graph_digest, c.brief_id, s["body"])}


async def _index(c: NodeCall, s: State) -> State:
    return await index(c.tenant, c.run_id, c.node, c.graph_digest, s["document"])


async def _cover(c: NodeCall, s: State) -> State:
    return {"cover": await cover(c.tenant, c.run_id, c.node, c.graph_digest, c.brief_id, s["document"])}


async def _approve(c: NodeCall, s: State) -> State | RunOutcome:
    """Park the run (no process held) until an ``approval`` event: approved goes on to publish; rejected,
    or no decision before the timeout, ends the run ``failed`` with the article left a draft."""
    timeout = lane_runtime.settings().lanes_approval_timeout_seconds
    try:
        payload = await wait_for_event("approve", "approval", timeout)
    except EventTimedOut:
        failure = Failure(step=c.node, code="approval_timeout", message=f"No approval within {timeout:g} s.")
        return RunOutcome.of(c.run_id, FAILED, failure, document_id=s["document"]["id"], draft=True)
    decision = payload if isinstance(payload, dict) else {}
    if decision.get("approved") is True or decision.get("decision") == "approve":
        return {"approval": {"approved": True, "by": decision.get("by")}}
    failure = Failure(step=c.node, code="approval_rejected", message=str(decision.get("reason") or "Rejected."))
    return RunOutcome.of(c.run_id, FAILED, failure, document_id=s["document"]["id"], draft=True)


async def _publish(c: NodeCall, s: State) -> RunOutcome:
    """The status flip, then the one delivery pipeline (render, record, search, site, purges, plugins)."""
    public = await make_public(c.tenant, c.run_id, c.node, c.graph_digest, c.brief_id, s["document"])
    item = DeliveryItem(operation_id=c.run_id, document_id=public["document_id"], version=public["version"])
    return await deliver(c.tenant, c.run_id, [c.run_id], (item,), generation=public["generation"])


RUNNERS: dict[str, NodeRunner] = {
    "validate": _validate,
    "ground": _ground,
    "generate": _generate,
    "fact_check": _fact_check,
    "clean": _clean,
    "persist": _persist,
    "index": _index,
    "cover": _cover,
    "approve": _approve,
    "publish": _publish,
}

__all__ = ["RUNNERS", "NodeCall", "NodeRunner", "State"]
