"""write_article: one flow interprets the lane graph pinned on a brief and calls the registered steps.

    load_graph → each node in order (its registered task: own retries, timeout, cache) → the outcome

The graph comes from the brief's row (pinned, with its digest, when the brief
was accepted), so a lane upgraded between retries never changes a run in
flight; every step's cache key holds its node id and that digest. A budget
that would be crossed ends the run ``failed`` with ``budget_exceeded`` before
the call, nothing published.
"""

from __future__ import annotations

from typing import Any

from prefect import flow, task
from pydantic import JsonValue

from flows.caching import CACHE_BY_STEP
from flows.lanes.steps import RUNNERS, NodeCall, State
from flows.policies import RETRY_IO
from flows.runtime import workspace
from flows.steps import StepFailed, run_step
from tenant_runtime.actions.briefs import get_brief
from tenant_runtime.errors import Permanent
from tenant_runtime.lanes import graph as graphs
from tenant_runtime.lanes.ledger import BudgetExceeded
from tenant_runtime.workflows import FAILED, Failure, MemberStatus, RunOutcome, WriteArticleParameters
from tenant_runtime.workspace import Workspace

# Failures that end the article for good (no operation retry): the run says why.
FINAL_CODES = frozenset({BudgetExceeded.code})


def _pinned_graph(ws: Workspace, brief_id: str, graph_digest: str) -> list[dict[str, Any]]:
    with ws.reader() as tx:
        brief = get_brief(tx, brief_id)
    if graphs.digest(brief.graph) != graph_digest or brief.graph_digest != graph_digest:
        raise Permanent(
            "The brief's pinned graph does not match the run's digest.",
            details={"brief_id": brief_id, "graph_digest": graph_digest},
            code="graph_mismatch",
        )
    return [{"id": n.id, "step": n.step} for n in graphs.check(brief.graph)]


@task(name="load_graph", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def load_graph(tenant: str, run_id: str, brief_id: str, graph_digest: str) -> list[dict[str, Any]]:
    """The brief's pinned graph, checked again, in run order."""
    return await run_step("load_graph", tenant, lambda: _pinned_graph(workspace(tenant), brief_id, graph_digest))


@flow(
    name="write_article",
    flow_run_name="article {params.tenant}/{params.lane}: {params.brief_id}",
    persist_result=False,
)
async def write_article(params: WriteArticleParameters) -> RunOutcome:
    """Run the brief's lane graph, node by node; the publish node's delivery outcome is the run's."""
    nodes = await load_graph(params.tenant, params.operation_id, params.brief_id, params.graph_digest)
    state: State = {
        "brief": {"brief_id": params.brief_id, "lane": params.lane},
        "pack": {"lane": params.lane, "version": params.pack_version},
    }
    ran: list[str] = []
    for node in nodes:
        call = NodeCall(params.tenant, params.operation_id, node["id"], params.graph_digest, params.brief_id)
        try:
            result = await RUNNERS[node["step"]](call, state)
        except StepFailed as exc:
            if exc.code in FINAL_CODES:
                failure = Failure(step=node["id"], code=exc.code, message=exc.message)
                return RunOutcome.of(params.operation_id, FAILED, failure, lane=params.lane, steps=list[JsonValue](ran))
            raise
        ran.append(node["id"])
        if isinstance(result, RunOutcome):
            return _with_facts(result, params, state, ran)
        state.update(result)
    # A graph without a publish node ends with the article persisted, not public.
    return RunOutcome.of(params.operation_id, MemberStatus.SUCCEEDED, **_facts(params, state, ran))


def _facts(params: WriteArticleParameters, state: State, ran: list[str]) -> dict[str, Any]:
    document = state.get("document") or {}
    return {
        "lane": params.lane,
        "brief_id": params.brief_id,
        "pack_version": params.pack_version,
        "steps": ran,
        "document_id": document.get("id"),
        "slug": document.get("slug"),
        "related": state.get("related", []),
        "cover": (state.get("cover") or {}).get("key"),
    }


def _with_facts(outcome: RunOutcome, params: WriteArticleParameters, state: State, ran: list[str]) -> RunOutcome:
    return RunOutcome(members=outcome.members, facts={**outcome.facts, **_facts(params, state, ran)})


__all__ = ["load_graph", "write_article"]
