"""The history of versioned state: every change of a tracked entity's state becomes an ``entity_history`` row.

Recorded by one ``before_flush`` listener on the ORM session, in the same
transaction as the change, so no action has to remember it and none can skip
it: a document's versions, status and publication, a site resource's draft and
published versions, the site's settings, a webhook's endpoint. Content is not
copied: a document's state names versions, and revisions hold what they say.
A point-in-time restore (``tenant_runtime.lifecycle.restore``) reads the last
row of each entity at or before T; a nightly backup is skipped while no row is
newer than the last good backup's mark.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import event, inspect
from sqlalchemy.orm import Session as OrmSession
from sqlalchemy.orm import UOWTransaction

from tenant_runtime.ids import as_utc, utcnow
from tenant_runtime.workspace.delivery_models import WebhookEndpoint
from tenant_runtime.workspace.lifecycle_models import EntityHistory
from tenant_runtime.workspace.models import Document, SiteResource, SiteState

# How the history writes datetimes: SQLAlchemy's own format for DATETIME columns on SQLite
# (what revision 0003's backfill wrote too), naive UTC.
_DATETIME = "%Y-%m-%d %H:%M:%S.%f"
HISTORY_START = ("workspace", "history")  # the row that says since when the history is complete


def format_time(value: datetime | None) -> str | None:
    return None if value is None else as_utc(value).replace(tzinfo=None).strftime(_DATETIME)


def parse_time(value: str | None) -> datetime | None:
    return None if value is None else as_utc(datetime.fromisoformat(value))


@dataclass(frozen=True)
class Tracked:
    """What of a model's rows the history follows."""

    entity_type: str
    key: Callable[[Any], str]
    fields: tuple[str, ...]
    state: Callable[[Any], dict[str, Any]]


def _document(d: Document) -> dict[str, Any]:
    return {
        "slug": d.slug,
        "version": d.version,
        "status": d.status,
        "published_version": d.published_version,
        "published_at": format_time(d.published_at),
    }


TRACKED: dict[type, Tracked] = {
    Document: Tracked(
        "document",
        lambda d: d.id,
        ("slug", "version", "status", "published_version", "published_at"),
        _document,
    ),
    SiteResource: Tracked(
        "site_resource",
        lambda r: r.name,
        ("version", "published_version"),
        lambda r: {"version": r.version, "published_version": r.published_version},
    ),
    SiteState: Tracked(
        "site",
        lambda s: "site",
        ("title", "timezone", "description", "language"),
        lambda s: {"title": s.title, "timezone": s.timezone, "description": s.description, "language": s.language},
    ),
    WebhookEndpoint: Tracked(
        "webhook",
        lambda w: w.id,
        ("url", "enabled", "events"),
        lambda w: {"url": w.url, "enabled": bool(w.enabled), "events": list(w.events)},
    ),
}


def _changed(instance: Any, fields: tuple[str, ...]) -> bool:
    """Whether a tracked field now differs from what the row held (setting an equal value is no change)."""
    state = inspect(instance)
    for name in fields:
        history = state.attrs[name].history
        if not history.has_changes():
            continue
        before = history.deleted[0] if history.deleted else None
        after = history.added[0] if history.added else None
        if before != after:
            return True
    return False


@event.listens_for(OrmSession, "before_flush")
def _record_history(session: OrmSession, _flush: UOWTransaction, _instances: object) -> None:
    at = utcnow()
    for instance in [*session.new, *session.dirty]:
        tracked = TRACKED.get(type(instance))
        if tracked is None:
            continue
        if instance not in session.new and not _changed(instance, tracked.fields):
            continue
        session.add(
            EntityHistory(
                entity_type=tracked.entity_type, entity_id=tracked.key(instance), at=at, state=tracked.state(instance)
            )
        )


__all__ = ["HISTORY_START", "TRACKED", "Tracked", "format_time", "parse_time"]
