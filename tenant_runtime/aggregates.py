"""Site-wide aggregates (home, sitemap, Atom and RSS feeds), regenerated once per burst.

Every publish or unpublish bumps the site generation in its command's
transaction. The aggregates step of each delivery then decides, under the
workspace write lock (BEGIN IMMEDIATE, so one decision at a time):

1. after a short settle delay (only while another delivery of the tenant is
   still due: a burst is under way; a lone publish decides at once), if the
   stored aggregates already reflect the current generation, there is nothing
   to do (``current``);
2. if the operation that made the current generation (or a later one) is a
   delivery still due to run its own aggregates step, leave the work to it
   (``deferred``): its decision comes after this one and will see at least
   this generation;
3. otherwise render all four from one snapshot at the current generation and
   store each at its deterministic key (``built``).

So a burst of N publishes whose deliveries overlap regenerates once (by the
newest), never more than once per distinct generation, and the newest
delivery always leaves the aggregates current (if it dies, the public server
keeps rendering them live until the next delivery or a retry). Meanwhile the public server renders an
aggregate live whenever its stored generation is behind. Only outputs whose
bytes changed are reported, so the caller purges only those surrogate keys.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlmodel import Session

from tenant_runtime import queries
from tenant_runtime.delivery import HOME_KEY, HTML, site_view, store_object
from tenant_runtime.ids import as_utc, utcnow
from tenant_runtime.packages.themes import site_theme
from tenant_runtime.rendering import ListingItem, plain_text, render_atom, render_home, render_rss, render_sitemap
from tenant_runtime.workspace.open import Workspace

BUILT, CURRENT, DEFERRED = "built", "current", "deferred"
# An empty feed still needs an <updated>; a fixed instant keeps its bytes (and hash) stable.
_EMPTY_FEED_UPDATED = datetime(2000, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Aggregate:
    name: str
    key: str
    content_type: str
    tag: str  # surrogate-key name, namespaced by tenant when purged
    shows_settings: bool = False  # carries the site's title, description or language (purged with them)


AGGREGATES: dict[str, Aggregate] = {
    "home": Aggregate("home", HOME_KEY, HTML, "home", shows_settings=True),
    "sitemap": Aggregate("sitemap", "site/sitemap.xml", "application/xml; charset=utf-8", "sitemap"),
    "atom": Aggregate("atom", "site/feed.xml", "application/atom+xml; charset=utf-8", "feeds", shows_settings=True),
    "rss": Aggregate("rss", "site/rss.xml", "application/rss+xml; charset=utf-8", "feeds", shows_settings=True),
}


def _snapshot(tx: Session) -> tuple[list[ListingItem], list[tuple[str, datetime]]]:
    """Listing items and sitemap entries from one read of the published documents."""
    items, entries = [], []
    for document, revision in queries.published_listing(tx):
        published = as_utc(document.published_at or revision.created_at)
        items.append(
            ListingItem(
                slug=revision.slug,
                title=revision.title,
                kind=revision.kind,  # type: ignore[arg-type]
                published_at=published,
                summary=plain_text(revision.body, 200),
            )
        )
        entries.append((revision.slug, max(published, as_utc(revision.created_at))))
    return items, entries


def render_aggregates(ws: Workspace, tx: Session, names: tuple[str, ...] = tuple(AGGREGATES)) -> dict[str, bytes]:
    """Render the named aggregates from the transaction's snapshot; deterministic for the same data."""
    site = site_view(ws, tx)
    items, entries = _snapshot(tx)
    posts = [item.published_at for item in items if item.kind == "post"]
    updated = max(posts) if posts else _EMPTY_FEED_UPDATED
    renderers: dict[str, Callable[[], bytes]] = {
        "home": lambda: render_home(site, items, theme=site_theme(ws, tx)).encode(),
        "sitemap": lambda: render_sitemap(site, entries),
        "atom": lambda: render_atom(site, items, updated),
        "rss": lambda: render_rss(site, items, updated),
    }
    return {name: renderers[name]() for name in names}


def refresh_aggregates(
    ws: Workspace,
    operation_id: str,
    *,
    settle_seconds: float | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, Any]:
    """Regenerate the aggregates unless they are current or a newer delivery will; see the module doc."""
    settle = ws.settings.aggregate_settle_seconds if settle_seconds is None else settle_seconds
    if settle > 0 and (ws.settings.aggregate_settle_lone or _burst_under_way(ws, operation_id)):
        sleep(settle)  # let the rest of a burst commit first, so one build covers it
    with ws.transaction() as tx:
        current = queries.site_state(tx).generation
        state = queries.aggregate_state(tx)
        if state.generation >= current:
            return {"outcome": CURRENT, "generation": state.generation, "changed": []}
        newer = queries.pending_aggregate_operation(tx, current, operation_id)
        if newer is not None:
            return {"outcome": DEFERRED, "generation": state.generation, "changed": [], "deferred_to": newer.id}
        changed: set[str] = set()
        for name, data in render_aggregates(ws, tx).items():
            spec = AGGREGATES[name]
            stored = store_object(
                ws,
                tx,
                spec.key,
                data,
                document_id=None,
                version=current,
                operation_id=operation_id,
                tags=(spec.tag,),
                content_type=spec.content_type,
            )
            if stored.written:
                changed.add(spec.tag)
        state.generation, state.builds = current, state.builds + 1
        state.changes += 1 if changed else 0
        state.operation_id, state.built_at = operation_id, utcnow()
        tx.add(state)
    ws.log.info("aggregates.built", generation=current, operation_id=operation_id, changed=sorted(changed))
    return {"outcome": BUILT, "generation": current, "changed": sorted(changed)}


def _burst_under_way(ws: Workspace, operation_id: str) -> bool:
    """Whether another delivery of the tenant that refreshes the aggregates is still due (one read)."""
    with ws.reader() as tx:
        return queries.pending_aggregate_operation(tx, 0, operation_id) is not None


def serve_aggregate(ws: Workspace, name: str) -> tuple[bytes, str, bool]:
    """(bytes, content type, from-store?) of one aggregate: stored when current, else rendered live."""
    spec = AGGREGATES[name]
    with ws.reader() as tx:
        generation = queries.site_state(tx).generation
        row = queries.rendered(tx, spec.key)
        if row is not None and row.version >= generation:
            data = ws.store.get(spec.key)
            if data is not None:
                return data, spec.content_type, True
        return render_aggregates(ws, tx, (name,))[name], spec.content_type, False


__all__ = [
    "AGGREGATES",
    "BUILT",
    "CURRENT",
    "DEFERRED",
    "Aggregate",
    "refresh_aggregates",
    "render_aggregates",
    "serve_aggregate",
]
