"""The publishing workflows: three thin callers of the one delivery pipeline, and the scheduled release.

publish_document   one document version
publish_batch      several of one tenant's publishes the relay coalesced into one run
deliver_release    a release the command already made public (documents + site resources)
scheduled_publish  at the scheduled time: apply the release whole or not at all, then deliver it
"""

from __future__ import annotations

from prefect import flow, task

from flows.caching import CACHE_BY_STEP
from flows.events import EventTimedOut, wait_for_event
from flows.pipeline import deliver
from flows.policies import RETRY_IO
from flows.rerender import rerender_site
from flows.runtime import workspace
from flows.steps import run_step
from tenant_runtime.actions.releases import Applied, apply_scheduled
from tenant_runtime.workflows import (
    FAILED,
    DeliverReleaseParameters,
    DeliveryItem,
    Failure,
    PublishBatchParameters,
    PublishDocumentParameters,
    ReleaseParameters,
    RunOutcome,
    ScheduledPublishParameters,
)


@flow(
    name="publish_document",
    flow_run_name="publish {params.tenant}/{params.document_id} v{params.version}",
    persist_result=False,
)
async def publish_document(params: PublishDocumentParameters) -> RunOutcome:
    """Deliver one document version (see flows/pipeline.py for the steps)."""
    item = DeliveryItem(operation_id=params.operation_id, document_id=params.document_id, version=params.version)
    return await deliver(
        params.tenant, params.operation_id, [params.operation_id], (item,), generation=params.generation
    )


@flow(name="publish_batch", flow_run_name="publish {params.tenant} batch {params.operation_id}", persist_result=False)
async def publish_batch(params: PublishBatchParameters) -> RunOutcome:
    """Deliver every member's document version in one run; each member keeps its own outcome."""
    return await deliver(
        params.tenant,
        params.operation_id,
        [m.operation_id for m in params.members],
        params.members,
        generation=params.generation,
    )


@flow(name="deliver_release", flow_run_name="release {params.tenant}/{params.operation_id}", persist_result=False)
async def deliver_release(params: DeliverReleaseParameters) -> RunOutcome:
    """Deliver a release the command made public: its documents, then the site around them."""
    return await _deliver_release(params, params.generation)


@task(name="apply_release", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def apply_release(tenant: str, run_id: str) -> Applied:
    """Re-check every expected version and apply the release in one transaction (or nothing)."""

    def apply() -> Applied:
        with workspace(tenant).transaction() as tx:
            return apply_scheduled(tx, run_id)

    return await run_step("apply_release", tenant, apply)


@flow(
    name="scheduled_publish",
    flow_run_name="scheduled release {params.tenant}/{params.operation_id}",
    persist_result=False,
)
async def scheduled_publish(params: ScheduledPublishParameters) -> RunOutcome:
    """[approval] → apply (version check) → the release delivery; a changed version fails the release, no
    retry. A release that needs an approval waits for it first (the run parks meanwhile); no approval in
    time, or one that says ``{"approved": false}``, fails it unapplied."""
    if params.approval is not None:
        try:
            decision = await wait_for_event("approval", params.approval.event_type, params.approval.timeout_seconds)
        except EventTimedOut as timed_out:
            return RunOutcome.of(params.operation_id, FAILED, timed_out.failure())
        if isinstance(decision, dict) and decision.get("approved") is False:
            reason = str(decision.get("reason") or "the release was not approved")
            return RunOutcome.of(params.operation_id, FAILED, Failure(step="approval", code="rejected", message=reason))
    applied = await apply_release(params.tenant, params.operation_id)
    if not applied.applied:
        conflict = applied.conflict or {}
        failure = Failure(
            step="apply_release",
            code=str(conflict.get("code", "version_conflict")),
            message=str(conflict.get("message", "")),
        )
        return RunOutcome.of(params.operation_id, FAILED, failure)
    return await _deliver_release(params, applied.generation)


async def _deliver_release(params: ReleaseParameters, generation: int) -> RunOutcome:
    items = tuple(
        DeliveryItem(operation_id=params.operation_id, document_id=d.document_id, version=d.version)
        for d in params.documents
    )
    # Redirect answers carry the ``redirects`` surrogate key: a release that changes them purges it.
    site_tags = ["redirects"] if params.redirects_version is not None else []
    outcome = await deliver(
        params.tenant, params.operation_id, [params.operation_id], items, site_tags=site_tags, generation=generation
    )
    if params.theme or params.navigation_version is not None:
        # Every page shows the theme and the navigation: the rest of the site is re-rendered too.
        rerendered = await rerender_site(
            params.tenant, params.operation_id, exclude={d.document_id for d in params.documents}
        )
        outcome = outcome.model_copy(update={"facts": {**outcome.facts, "rerendered": rerendered}})
    return outcome
