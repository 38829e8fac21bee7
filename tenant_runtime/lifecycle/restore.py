"""Point-in-time restore: every versioned entity's state at T, what would change, and putting it back.

The state at T of each entity is its last ``entity_history`` row at or before T
(``tenant_runtime.workspace.history``); the content it names comes from the
immutable revisions. Restoring never rewinds a version number: versions are
immutable and delivery never lets an older one overwrite a newer one, so what
was public at T is published again as a *new* version with that content (and
the draft at T, when it differed, becomes the newest draft). Documents that did
not exist at T are taken off the site but kept as drafts (nothing a user wrote
is deleted); one whose slug a restored document needs moves aside.

``plan_restore`` is the dry run (a read); ``apply_restore`` applies the same
plan in the caller's transaction and returns what to deliver, as one release.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select, text

from tenant_runtime import audit, queries
from tenant_runtime.actions.publishing import bump_generation
from tenant_runtime.actions.site import SETTINGS as SITE_SETTINGS
from tenant_runtime.actions.site_resources import RESOURCES, get_resource, resource_content
from tenant_runtime.errors import BadRequest, NotFound
from tenant_runtime.ids import as_utc, utcnow
from tenant_runtime.storage import ObjectStore
from tenant_runtime.versions.bodies import revision_body
from tenant_runtime.workspace import AuditEntry, Document, EntityHistory, Revision, SiteResourceRevision, SiteState
from tenant_runtime.workspace.history import HISTORY_START, format_time, parse_time

RESTORE_AUDIT = "site.restore"
SITE_DEFAULTS = {"description": "", "language": "en"}
DELIVERY_BATCH = 50  # documents per pass of the delivery pipeline (each step's result stays small)

_LAST_AT = text(
    "SELECT h.entity_type, h.entity_id, h.state FROM entity_history h JOIN (SELECT max(id) AS id FROM entity_history "
    "WHERE at <= :at GROUP BY entity_type, entity_id) last ON last.id = h.id"
)


def history_start(tx: Session) -> datetime:
    row = tx.exec(
        select(EntityHistory).where(
            EntityHistory.entity_type == HISTORY_START[0], EntityHistory.entity_id == HISTORY_START[1]
        )
    ).first()
    if row is None:  # a workspace always has it from revision 0003 on
        raise NotFound("This site has no history to restore from.", code="restore_point_unavailable")
    return as_utc(row.at)


def check_point(tx: Session, at: datetime) -> datetime:
    """T in UTC, if the site's history covers it: aware, not in the future, not before the history starts."""
    if at.tzinfo is None or at.utcoffset() is None:
        raise BadRequest("at needs a timezone offset (e.g. 2026-12-01T09:00:00+01:00).", details={"field": "at"})
    at = as_utc(at)
    if at > utcnow():
        raise BadRequest("at is in the future.", details={"field": "at"}, code="restore_point_unavailable")
    start = history_start(tx)
    if at < start:
        raise BadRequest(
            "The site's history starts later than that.",
            details={"field": "at", "history_starts_at": start.isoformat()},
            code="restore_point_unavailable",
        )
    return at


Content = tuple[str, str, str, str]  # slug, title, body, kind


def _content(revision: Revision, store: ObjectStore | None) -> Content:
    # A cold version's large body may have been spilled into the store (tenant_runtime.versions.bodies).
    body = revision_body(store, revision) if store is not None else revision.body
    return (revision.slug, revision.title, body, revision.kind)


@dataclass
class DocumentPlan:
    """One document's change: what is public and drafted now, what should be after."""

    document: Document
    draft_now: Content
    published_now: Content | None
    draft: Content  # the newest draft after the restore
    published: Content | None  # what is public after it (None: nothing)
    published_at: datetime | None = None


@dataclass
class ResourcePlan:
    name: str
    published: Any  # the content public at T
    was_published: bool  # False: nothing of it was public at T
    draft: Any  # its newest draft at T (None: none)
    published_now: Any
    draft_now: Any


@dataclass
class Plan:
    at: datetime
    changes: list[dict[str, Any]] = field(default_factory=list)
    documents: list[DocumentPlan] = field(default_factory=list)
    resources: list[ResourcePlan] = field(default_factory=list)
    site: dict[str, str] | None = None  # the settings at T (SITE_SETTINGS) when they differ from now
    store: ObjectStore | None = None  # where spilled version bodies are read from


def _states(tx: Session, at: datetime) -> dict[tuple[str, str], dict[str, Any]]:
    rows = tx.connection().execute(_LAST_AT, {"at": format_time(at)})
    return {(kind, key): (json.loads(state) if isinstance(state, str) else state) for kind, key, state in rows}


def _revision(tx: Session, document_id: str, version: int | None) -> Revision | None:
    if not version:
        return None
    return tx.exec(select(Revision).where(Revision.document_id == document_id, Revision.version == version)).first()


def _view(
    status: str, draft: Content, version: int, published: Content | None, published_version: int | None
) -> dict[str, Any]:
    return {
        "status": status,
        "slug": draft[0],
        "title": draft[1],
        "kind": draft[3],
        "body_sha256": hashlib.sha256(draft[2].encode()).hexdigest()[:12],
        "version": version,
        "published_version": published_version,
        "published_title": published[1] if published else None,
    }


def plan_restore(tx: Session, at: datetime, store: ObjectStore | None = None) -> Plan:
    """What putting the site back to T changes, entity by entity (before → after); writes nothing."""
    at = check_point(tx, at)
    states = _states(tx, at)
    plan = Plan(at=at, store=store)
    wanted_slugs: set[str] = set()
    absent: list[Document] = []
    for document in tx.exec(select(Document).order_by(col(Document.created_at), col(Document.id))):
        state = states.get(("document", document.id))
        if state is None:
            absent.append(document)
            continue
        _plan_document(tx, plan, document, state)
        wanted_slugs.add(str(state["slug"]))
    for document in absent:
        _plan_absent(tx, plan, document, wanted_slugs)
    for name in RESOURCES:
        _plan_resource(tx, plan, name, states.get(("site_resource", name)))
    site = states.get(("site", "site"))
    current = queries.site_state(tx)
    before = {name: str(getattr(current, name)) for name in SITE_SETTINGS}
    # History rows from before description and language were settings hold neither: they were the defaults.
    after = {name: str(site.get(name, SITE_DEFAULTS.get(name, ""))) for name in SITE_SETTINGS} if site else None
    if after is not None and after != before:
        plan.site = after
        plan.changes.append({"entity": "site", "id": "site", "before": before, "after": after})
    return plan


def _current(tx: Session, plan: Plan, document: Document) -> tuple[Content, Content | None]:
    draft = (document.slug, document.title, document.body, document.kind)
    published = _revision(tx, document.id, document.published_version) if document.status == "published" else None
    return draft, (_content(published, plan.store) if published else None)


def _plan_document(tx: Session, plan: Plan, document: Document, state: dict[str, Any]) -> None:
    draft_now, published_now = _current(tx, plan, document)
    draft_rev = _revision(tx, document.id, int(state["version"]))
    published_rev = _revision(tx, document.id, state["published_version"]) if state["status"] == "published" else None
    if draft_rev is None or (state["status"] == "published" and published_rev is None):
        raise NotFound(
            "A version this restore needs is gone.",
            details={"document_id": document.id, "version": state["version"]},
            code="restore_point_unavailable",
        )
    draft_then = _content(draft_rev, plan.store)
    published_then = _content(published_rev, plan.store) if published_rev else None
    if (draft_then, published_then) == (draft_now, published_now):
        return
    plan.documents.append(
        DocumentPlan(
            document,
            draft_now,
            published_now,
            draft=draft_then,
            published=published_then,
            published_at=parse_time(state.get("published_at")),
        )
    )
    plan.changes.append(
        {
            "entity": "document",
            "id": document.id,
            "before": _view(document.status, draft_now, document.version, published_now, document.published_version),
            "after": _view(
                str(state["status"]), draft_then, int(state["version"]), published_then, state["published_version"]
            ),
        }
    )


def _plan_absent(tx: Session, plan: Plan, document: Document, wanted: set[str]) -> None:
    """A document created after T: off the site, kept as a draft (moved aside if its slug is needed)."""
    draft_now, published_now = _current(tx, plan, document)
    rename = None
    if document.slug in wanted:
        n = 2
        while (
            f"{document.slug}-{n}" in wanted
            or tx.exec(select(Document).where(Document.slug == f"{document.slug}-{n}")).first()
        ):
            n += 1
        rename = f"{document.slug}-{n}"
        wanted.add(rename)
    if published_now is None and rename is None:
        return
    after_draft: Content = (rename or document.slug, draft_now[1], draft_now[2], draft_now[3])
    plan.documents.append(DocumentPlan(document, draft_now, published_now, draft=after_draft, published=None))
    plan.changes.append(
        {
            "entity": "document",
            "id": document.id,
            "before": _view(document.status, draft_now, document.version, published_now, document.published_version),
            "after": {
                **_view("draft", after_draft, document.version, None, None),
                "note": "created after T: kept as a draft",
            },
        }
    )


def _plan_resource(tx: Session, plan: Plan, name: str, state: dict[str, Any] | None) -> None:
    resource = get_resource(tx, name)
    version, published = (state["version"], state["published_version"]) if state else (0, None)
    draft_then, published_then = resource_content(tx, name, version), resource_content(tx, name, published)
    draft_now = resource_content(tx, name, resource.version)
    published_now = resource_content(tx, name, resource.published_version)
    if (draft_then, published_then, published is None) == (
        draft_now,
        published_now,
        resource.published_version is None,
    ):
        return
    plan.resources.append(
        ResourcePlan(name, published_then, published is not None, draft_then, published_now, draft_now)
    )
    plan.changes.append(
        {
            "entity": name,
            "id": name,
            "before": {
                "version": resource.version,
                "published_version": resource.published_version,
                "published": published_now,
            },
            "after": {"version": version, "published_version": published, "published": published_then},
        }
    )


@dataclass(frozen=True)
class Applied:
    generation: int
    changes: int
    items: list[tuple[str, int]]  # (document, version) to deliver
    withdrawals: list[tuple[str, str]]  # (document, slug) taken off the site
    site_tags: list[str]

    def batches(self) -> int:
        return -(-max(len(self.items), len(self.withdrawals)) // DELIVERY_BATCH)


def apply_restore(
    tx: Session, actor: str, operation_id: str, at: datetime, snapshot_id: str, store: ObjectStore | None = None
) -> Applied:
    """Apply the plan in this transaction (once per operation: a rerun returns what the first one did)."""
    done = recorded(tx, operation_id)
    if done is not None:
        return done
    plan = plan_restore(tx, at, store)
    # Slugs are unique: every document whose slug changes moves to one of its own first.
    for p in plan.documents:
        if p.draft[0] != p.document.slug:
            p.document.slug = f"restoring-{p.document.id.lower().replace('_', '-')}"
            tx.add(p.document)
    tx.flush()
    items: list[tuple[str, int]] = []
    withdrawals: list[tuple[str, str]] = []
    for p in plan.documents:
        item, withdrawal = _apply_document(tx, actor, p)
        items += [item] if item else []
        withdrawals += [withdrawal] if withdrawal else []
    site_tags = _apply_resources(tx, actor, plan.resources)
    if plan.site is not None:
        state = tx.get(SiteState, 1) or SiteState()
        for name, value in plan.site.items():
            setattr(state, name, value)
        state.settings_version += 1  # stored pages show the settings of before: the public server renders live
        tx.add(state)
        # The site's title is on every page: every published page is delivered again.
        delivered = {doc for doc, _ in items}
        items += [
            (d.id, int(d.published_version or 0)) for d, _ in queries.published_listing(tx) if d.id not in delivered
        ]
    generation = bump_generation(tx) if plan.changes else queries.site_state(tx).generation
    audit.record(
        tx,
        RESTORE_AUDIT,
        actor,
        "site",
        "site",
        operation_id=operation_id,
        at=plan.at.isoformat(),
        snapshot=snapshot_id,
        changes=plan.changes,
        generation=generation,
        items=[list(i) for i in items],
        withdrawals=[list(w) for w in withdrawals],
        site_tags=site_tags,
    )
    return Applied(generation, len(plan.changes), items, withdrawals, site_tags)


def recorded(tx: Session, operation_id: str) -> Applied | None:
    """What the restore ``operation_id`` applied, from its audit row (None: not applied yet)."""
    entry = tx.exec(
        select(AuditEntry).where(AuditEntry.action == RESTORE_AUDIT, AuditEntry.operation_id == operation_id)
    ).first()
    if entry is None:
        return None
    data = entry.data
    return Applied(
        int(data["generation"]),
        len(data["changes"]),
        [(str(d), int(v)) for d, v in data["items"]],
        [(str(d), str(s)) for d, s in data["withdrawals"]],
        list(data["site_tags"]),
    )


def _new_revision(tx: Session, document: Document, content: Content, actor: str) -> int:
    document.version += 1
    slug, title, body, kind = content
    tx.add(
        Revision(
            document_id=document.id, version=document.version, slug=slug, title=title, body=body, kind=kind, actor=actor
        )
    )
    return document.version


def _apply_document(tx: Session, actor: str, p: DocumentPlan) -> tuple[tuple[str, int] | None, tuple[str, str] | None]:
    """New versions with the restored content (public first, then the draft if it differs); what to deliver."""
    document = p.document
    item = withdrawal = None
    if p.published is not None:
        version = _new_revision(tx, document, p.published, actor)
        document.status, document.published_version = "published", version
        document.published_at = p.published_at or document.published_at or utcnow()
        item, newest = (document.id, version), p.published
    else:
        if p.published_now is not None:
            document.status, document.published_version = "draft", None
            withdrawal = (document.id, p.published_now[0])
        newest = p.draft_now
    if p.draft != newest:
        _new_revision(tx, document, p.draft, actor)
    document.slug, document.title, document.body, document.kind = p.draft
    document.updated_at = utcnow()
    tx.add(document)
    return item, withdrawal


def _apply_resources(tx: Session, actor: str, plans: list[ResourcePlan]) -> list[str]:
    """Navigation, redirects, theme: what was public at T published again as a new version; the surrogate keys."""
    tags = []
    for p in plans:
        resource = get_resource(tx, p.name)
        tx.add(resource)
        tx.flush()  # a resource first written by the restore needs its row before its revisions
        newest = p.draft_now
        if p.was_published:
            resource.version += 1
            tx.add(SiteResourceRevision(name=p.name, version=resource.version, content=p.published, actor=actor))
            resource.published_version, newest = resource.version, p.published
        else:
            resource.published_version = None
        if p.draft is not None and p.draft != newest:
            resource.version += 1
            tx.add(SiteResourceRevision(name=p.name, version=resource.version, content=p.draft, actor=actor))
        resource.updated_at = utcnow()
        tx.add(resource)
        tags.append(p.name)
    return tags


__all__ = [
    "DELIVERY_BATCH",
    "RESTORE_AUDIT",
    "Applied",
    "Plan",
    "apply_restore",
    "check_point",
    "history_start",
    "plan_restore",
    "recorded",
]
