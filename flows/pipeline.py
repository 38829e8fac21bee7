"""The one delivery pipeline: document versions made public, or taken down, then the site around them.

    each item to publish:   verify → render_page → public_record → index_search
    each item to withdraw:  verify_unpublished → remove_page → remove_record → unindex_search
    the site, once:         render_home → purge → refresh_aggregates → purge_aggregates
    plugins, last:          notify_plugins (each delivered item: what they hear of is public by now,
                            and an endpoint that is down delays only its own notification)

Every step is one task over all the run's items, cached per run (a retried run
takes finished steps from the cache), and every item inside a step is its own
idempotent unit (a deterministic key, written only when its bytes change). A
permanent failure sets an item aside (its operation ends ``dead``, the rest go
on); anything else fails the step, which retries, then the run. The callers
(``flows/publish.py``, ``flows/unpublish_document.py``) only say what to deliver.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, TypeVar

from prefect import task
from pydantic import JsonValue

from flows.caching import CACHE_BY_STEP
from flows.policies import RETRY_IO, WEBHOOK
from flows.runtime import webhook_sender, workspace
from flows.steps import Results, guard_result, run_each, run_step
from tenant_runtime import aggregates, delivery, public_records, search, webhooks
from tenant_runtime.workflows import (
    DEAD,
    SUCCEEDED,
    SUPERSEDED,
    DeliveryItem,
    Failure,
    MemberOutcome,
    RunOutcome,
)
from tenant_runtime.workflows.parameters import Frozen
from tenant_runtime.workspace import Workspace


class Withdrawal(Frozen):
    """A document taken off the public site (the command already removed its page)."""

    operation_id: str
    document_id: str
    slug: str

    @property
    def key(self) -> str:
        return f"{self.operation_id}/{self.document_id}"


Items = tuple[DeliveryItem, ...]
T = TypeVar("T")


# --- each item to publish --------------------------------------------------------------------------


@task(name="verify", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def verify(tenant: str, run_id: str, items: Items, set_aside: bool) -> Results[str]:
    """Which versions are still the ones that should be public (current, superseded or withdrawn)."""
    return await run_each(
        "verify", tenant, items, lambda ws, i: delivery.check_publish(ws, i.document_id, i.version), set_aside=set_aside
    )


@task(name="render_page", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def render_page(tenant: str, run_id: str, items: Items, set_aside: bool) -> Results[delivery.Rendered]:
    """Render each page at its version to its deterministic key."""
    return await run_each(
        "render_page",
        tenant,
        items,
        lambda ws, i: delivery.render_document_page(ws, i.document_id, i.version, i.operation_id),
        set_aside=set_aside,
    )


@task(name="public_record", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def public_record(tenant: str, run_id: str, items: Items, set_aside: bool) -> Results[delivery.Rendered]:
    """Store each version's sanitized public record."""
    return await run_each(
        "public_record",
        tenant,
        items,
        lambda ws, i: public_records.write_public_record(ws, i.document_id, i.version, i.operation_id),
        set_aside=set_aside,
    )


@task(name="index_search", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def index_search(tenant: str, run_id: str, items: Items, set_aside: bool) -> Results[bool]:
    """Index each version in the tenant's full-text search (True where the index changed)."""
    return await run_each(
        "index_search",
        tenant,
        items,
        lambda ws, i: search.index_document(ws, i.document_id, i.version),
        set_aside=set_aside,
    )


@task(name="notify_plugins", **WEBHOOK.task_options(), **CACHE_BY_STEP)
async def notify_plugins(tenant: str, run_id: str, items: Items, set_aside: bool) -> Results[dict[str, int]]:
    """after_publish webhooks for each delivered item; an endpoint acknowledges each one once."""
    return await run_each(
        "notify_plugins",
        tenant,
        items,
        lambda ws, i: webhooks.deliver_after_publish(ws, webhook_sender(), i.operation_id, i.document_id, i.version),
        set_aside=set_aside,
    )


# --- each item to withdraw -------------------------------------------------------------------------


async def _each_withdrawal(
    step: str, tenant: str, withdrawals: tuple[Withdrawal, ...], call: Callable[[Workspace, Withdrawal], T]
) -> dict[str, T]:
    """``call(ws, withdrawal)`` for each withdrawal, as one step; any failure fails the step (one operation)."""
    ws = workspace(tenant)
    done = {w.key: await run_step(step, tenant, partial(call, ws, w), item=w.operation_id) for w in withdrawals}
    return guard_result(step, done)


@task(name="verify_unpublished", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def verify_unpublished(tenant: str, run_id: str, withdrawals: tuple[Withdrawal, ...]) -> dict[str, str]:
    """Is each document still withdrawn (not published again since the command)?"""
    return await _each_withdrawal(
        "verify_unpublished", tenant, withdrawals, lambda ws, w: delivery.check_unpublish(ws, w.document_id)
    )


@task(name="remove_page", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def remove_page(tenant: str, run_id: str, withdrawals: tuple[Withdrawal, ...]) -> dict[str, bool]:
    """Make sure each page's object is gone (the request already tried); whether one was there."""
    return await _each_withdrawal(
        "remove_page", tenant, withdrawals, lambda ws, w: delivery.remove_document_page(ws, w.slug)
    )


@task(name="remove_record", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def remove_record(tenant: str, run_id: str, withdrawals: tuple[Withdrawal, ...]) -> dict[str, bool]:
    """Delete each document's stored public record; whether one was there."""
    return await _each_withdrawal(
        "remove_record", tenant, withdrawals, lambda ws, w: public_records.remove_public_record(ws, w.slug)
    )


@task(name="unindex_search", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def unindex_search(tenant: str, run_id: str, withdrawals: tuple[Withdrawal, ...]) -> dict[str, bool]:
    """Drop each document from the tenant's search index; whether it was there."""
    return await _each_withdrawal(
        "unindex_search", tenant, withdrawals, lambda ws, w: search.remove_document(ws, w.document_id)
    )


# --- the site, once per run ------------------------------------------------------------------------


@task(name="render_home", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def render_home(tenant: str, run_id: str, generation: int) -> list[str]:
    """Re-render the home listing; its surrogate keys."""
    rendered = await run_step(
        "render_home", tenant, lambda: delivery.render_home_page(workspace(tenant), generation, run_id)
    )
    return list(rendered.tags)


@task(name="purge", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def purge(tenant: str, run_id: str, names: list[str]) -> list[str]:
    """Purge exactly the surrogate keys this delivery changed."""
    return await run_step("purge", tenant, lambda: delivery.purge(workspace(tenant), *names))


@task(name="refresh_aggregates", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def refresh_aggregates(tenant: str, run_id: str) -> dict[str, Any]:
    """Regenerate home, sitemap and feeds unless current or left to a newer delivery (debounced)."""
    return await run_step(
        "refresh_aggregates", tenant, lambda: aggregates.refresh_aggregates(workspace(tenant), run_id)
    )


@task(name="purge_aggregates", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def purge_aggregates(tenant: str, run_id: str, names: list[str]) -> list[str]:
    """The second purge: only the aggregates whose bytes changed."""
    return await run_step("purge_aggregates", tenant, lambda: delivery.purge(workspace(tenant), *names))


async def refresh_site(tenant: str, run_id: str, generation: int, tags: Sequence[str]) -> dict[str, JsonValue]:
    """Home, one purge of ``tags`` and everything home and search show, the debounced aggregates (+ purge)."""
    home = await render_home(tenant, run_id, generation)
    purged = await purge(tenant, run_id, unique(tags, home, ["search"]))
    built = await refresh_aggregates(tenant, run_id)
    changed = built["changed"]
    second = await purge_aggregates(tenant, run_id, changed) if changed else []
    return {"purged": purged, "aggregates": built["outcome"], "aggregates_purged": second}


# --- the pipeline ----------------------------------------------------------------------------------


async def deliver(
    tenant: str,
    run_id: str,
    operations: Sequence[str],
    items: Items = (),
    *,
    withdrawals: tuple[Withdrawal, ...] = (),
    site_tags: Sequence[str] = (),
    generation: int = 0,
    notify: bool = True,
) -> RunOutcome:
    """Deliver ``items`` and ``withdrawals``, refresh the site, tell plugins; an outcome for each operation.

    An operation with no item of its own (a release of site resources only) succeeds
    when the site is refreshed. When every item turns out superseded and the run
    changes nothing site-wide, the site is left to the newer deliveries. ``notify=False``
    (a re-render of what is public already, e.g. a new theme) tells no plugin.
    """
    # Only a run of several operations sets a permanently failing item aside (see run_each).
    set_aside = len(operations) > 1
    failed: dict[str, Failure] = {}
    current: Items = ()
    tags: list[str] = []
    if items:
        checked = await verify(tenant, run_id, items, set_aside)
        failed.update(checked.failed)
        current = tuple(i for i in items if checked.done.get(i.key) == delivery.CURRENT)
        for step in (render_page, public_record):
            done = await step(tenant, run_id, current, set_aside)
            failed.update(done.failed)
            tags += [tag for rendered in done.done.values() for tag in rendered.tags]
            current = tuple(i for i in current if i.key not in failed)
        indexed = await index_search(tenant, run_id, current, set_aside)
        failed.update(indexed.failed)
        current = tuple(i for i in current if i.key not in failed)
    withdrawn: tuple[Withdrawal, ...] = ()
    if withdrawals:
        still = await verify_unpublished(tenant, run_id, withdrawals)
        # Published again since: that delivery owns the page, the record and the index entry now.
        withdrawn = tuple(w for w in withdrawals if still[w.key] == delivery.CURRENT)
        if withdrawn:
            await remove_page(tenant, run_id, withdrawn)
            await remove_record(tenant, run_id, withdrawn)
            await unindex_search(tenant, run_id, withdrawn)
            tags += [f"doc:{w.slug}" for w in withdrawn]
    facts: dict[str, JsonValue] = {"delivered": len(current), "withdrawn": len(withdrawn)}
    if current or withdrawn or site_tags or not (items or withdrawals):
        facts.update(await refresh_site(tenant, run_id, generation, unique(tags, site_tags)))
    if current and notify:
        notified = await notify_plugins(tenant, run_id, current, set_aside)
        failed.update(notified.failed)
        facts["webhooks"] = sum(n.get("delivered", 0) for n in notified.done.values())
    delivered = {i.key for i in current if i.key not in failed} | {w.key for w in withdrawn}
    owned = [(i.operation_id, i.key) for i in items] + [(w.operation_id, w.key) for w in withdrawals]
    return RunOutcome(members=_members(operations, owned, delivered, failed), facts=facts)


def _members(
    operations: Sequence[str], owned: Sequence[tuple[str, str]], delivered: set[str], failed: dict[str, Failure]
) -> dict[str, MemberOutcome]:
    """One outcome per operation: dead if an item of it failed, succeeded if one was delivered (or it had
    none), superseded otherwise."""
    members: dict[str, MemberOutcome] = {}
    for operation_id in operations:
        keys = [key for owner, key in owned if owner == operation_id]
        failure = next((failed[key] for key in keys if key in failed), None)
        if failure is not None:
            members[operation_id] = MemberOutcome(status=DEAD, failure=failure)
        elif not keys or any(key in delivered for key in keys):
            members[operation_id] = MemberOutcome(status=SUCCEEDED)
        else:
            members[operation_id] = MemberOutcome(status=SUPERSEDED)
    return members


def unique(*groups: Sequence[str]) -> list[str]:
    """Tag names in first-seen order, each once."""
    return list(dict.fromkeys(name for group in groups for name in group))
