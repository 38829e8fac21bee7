"""Accept a brief: validate it, bind its brief_id to its payload, pin its lane's graph and pack, queue its run.

The run's idempotency key is derived from the brief_id alone (``WriteArticleParameters.run_key``),
and the brief table holds one row per brief_id with the hash of its payload: the same brief again
finds its row and answers its operation (nothing new is written); the same brief_id with another
payload is ``brief_id_reused``.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import Table, bindparam, union_all
from sqlalchemy import select as select_rows
from sqlmodel import Session, col, or_, select

from tenant_runtime import audit
from tenant_runtime.actions.operations import new_operation_id, operation_values
from tenant_runtime.errors import AlreadyExists, BadRequest, Conflict, NotFound
from tenant_runtime.ids import check_document_slug
from tenant_runtime.workflows import WriteArticleParameters
from tenant_runtime.workspace.access import Actor
from tenant_runtime.workspace.lane_models import Brief, Lane
from tenant_runtime.workspace.models import AuditEntry, Document, Operation
from tenant_runtime.workspace.rows import insert_values, row_values

BRIEF_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}\Z")
MAX_TITLE = 300
MAX_AUDIENCE = 500
MAX_NOTES = 20_000
MAX_SOURCES = 20
MAX_URL = 2000
RESERVED_SLUGS = frozenset({"search", "api", "static", "feed", "rss", "sitemap", "admin"})
BRIEF: Table = Brief.__table__  # type: ignore[attr-defined]
LANE: Table = Lane.__table__  # type: ignore[attr-defined]
DOCUMENT: Table = Document.__table__  # type: ignore[attr-defined]
# Intake's reads, built once with bound parameters: building a statement per request (its comparisons, its
# cache key) cost more than running it.
_BRIEF_BY_ID = select_rows(BRIEF).where(BRIEF.c.brief_id == bindparam("brief_id"))
_LANE_BY_NAME = select_rows(LANE).where(LANE.c.name == bindparam("lane"))
_SLUG_TAKEN = union_all(
    select_rows(DOCUMENT.c.id).where(DOCUMENT.c.slug == bindparam("slug")),
    select_rows(BRIEF.c.brief_id).where(BRIEF.c.slug == bindparam("slug")),
).limit(1)


class BriefIdReused(Conflict):
    code = "brief_id_reused"


class LaneDisabled(Conflict):
    code = "lane_disabled"


@dataclass(frozen=True)
class BriefInput:
    brief_id: str
    lane: str
    title: str
    slug: str | None = None
    audience: str | None = None
    sources: tuple[str, ...] = ()
    notes: str = ""

    def payload(self) -> dict[str, Any]:
        """The brief as stored and hashed (the slug as given: None when it is derived from the title)."""
        return {
            "brief_id": self.brief_id,
            "lane": self.lane,
            "title": self.title,
            "slug": self.slug,
            "audience": self.audience,
            "sources": list(self.sources),
            "notes": self.notes,
        }


@dataclass(frozen=True, slots=True)
class Accepted:
    """What accepting a brief did, as plain values: intake builds no mapped instances (a transient
    ``Operation`` and ``Brief`` cost about a sixth of the request's CPU; benchmarks/analysis.md)."""

    operation_id: str
    lane: str
    slug: str
    graph: list[dict[str, Any]]
    created: bool  # False: the same brief was accepted before; nothing was written
    status: str = ""  # the new operation's status ("" when not ``created``: the earlier one is not read)


def payload_hash(payload: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def slugify(title: str) -> str:
    """A document slug from a title: ASCII, lowercase, words joined by '-', at most 100 characters."""
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", ascii_title.lower())
    slug = "-".join(words)[:100].strip("-")
    return slug or "article"


def check_brief(brief: BriefInput) -> str:
    """Schema checks beyond types; the slug the article will have."""
    if not isinstance(brief.brief_id, str) or not BRIEF_ID.match(brief.brief_id):
        raise BadRequest(
            "brief_id is 1-128 letters, digits, '.', '_', ':' or '-', starting with a letter or digit.",
            details={"field": "brief_id", "pattern": BRIEF_ID.pattern},
            code="invalid_brief",
        )
    title = brief.title
    if not isinstance(title, str) or not title.strip() or len(title) > MAX_TITLE:
        raise BadRequest(f"title is 1-{MAX_TITLE} characters.", details={"field": "title"}, code="invalid_brief")
    if any(ord(c) < 32 or ord(c) == 127 for c in title):
        raise BadRequest("title cannot hold control characters.", details={"field": "title"}, code="invalid_brief")
    if brief.audience is not None and len(brief.audience) > MAX_AUDIENCE:
        raise BadRequest(f"audience is at most {MAX_AUDIENCE} characters.", details={"field": "audience"})
    if len(brief.notes) > MAX_NOTES:
        raise BadRequest(f"notes are at most {MAX_NOTES} characters.", details={"field": "notes"})
    if len(brief.sources) > MAX_SOURCES:
        raise BadRequest(f"A brief cites at most {MAX_SOURCES} sources.", details={"field": "sources"})
    for index, url in enumerate(brief.sources):
        parts = urlsplit(url) if isinstance(url, str) and len(url) <= MAX_URL else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            raise BadRequest(
                "Each source is an http(s) URL.", details={"field": f"sources.{index}"}, code="invalid_source"
            )
    slug = brief.slug if brief.slug is not None else slugify(title)
    check_document_slug(slug)
    if slug in RESERVED_SLUGS:
        raise BadRequest("This slug is reserved.", details={"slug": slug}, code="invalid_slug")
    return slug


def submit_brief(tx: Session, tenant: str, actor: Actor, brief: BriefInput) -> Accepted:
    """Accept ``brief`` and queue its run, or answer the run of the same brief accepted before.

    Agents post at machine speed, so this is plain Core statements (benchmarks/analysis.md, brief intake): a
    primary-key read of the brief, the lane's row, one query for the slug, and three INSERTs (operation, brief,
    audit) in the caller's transaction; a repeat is the first read alone.
    """
    actor.require("content.publish")
    slug = check_brief(brief)
    payload = brief.payload()
    digest = payload_hash(payload)
    db = tx.connection()
    existing = db.execute(_BRIEF_BY_ID, {"brief_id": brief.brief_id}).mappings().first()
    if existing is not None:
        if existing["payload_sha256"] != digest:
            raise BriefIdReused(
                "This brief_id was accepted with another payload.",
                details={"brief_id": brief.brief_id, "operation_id": existing["operation_id"]},
            )
        return Accepted(existing["operation_id"], existing["lane"], existing["slug"], existing["graph"], created=False)
    known = isinstance(brief.lane, str) and brief.lane
    lane = db.execute(_LANE_BY_NAME, {"lane": brief.lane}).mappings().first() if known else None
    if lane is None:
        raise BadRequest("No such lane in this site.", details={"lane": brief.lane}, code="unknown_lane")
    if not lane["enabled"]:
        raise LaneDisabled("This lane is disabled.", details={"lane": lane["name"]})
    if db.execute(_SLUG_TAKEN, {"slug": slug}).first() is not None:
        raise AlreadyExists(
            "Another document or brief already uses this slug.", details={"slug": slug}, code="slug_taken"
        )
    parameters = WriteArticleParameters(
        tenant=tenant,
        operation_id=new_operation_id(),
        brief_id=brief.brief_id,
        lane=lane["name"],
        pack_version=lane["pack_version"],
        graph_digest=lane["graph_digest"],
    )
    operation = operation_values(actor, parameters)
    row = row_values(
        Brief,
        brief_id=brief.brief_id,
        lane=lane["name"],
        payload=payload,
        payload_sha256=digest,
        slug=slug,
        graph=list(lane["graph"]),
        graph_digest=lane["graph_digest"],
        pack_version=lane["pack_version"],
        operation_id=operation["id"],
        actor=actor.id,
    )
    entry = audit.entry_values(
        "brief.accept", actor, "brief", brief.brief_id, operation_id=operation["id"], lane=lane["name"], slug=slug
    )
    insert_values(tx, Operation, operation)
    insert_values(tx, Brief, row)
    insert_values(tx, AuditEntry, entry)
    return Accepted(operation["id"], row["lane"], slug, row["graph"], created=True, status=operation["status"])


def get_brief(tx: Session, brief_id: str) -> Brief:
    brief = tx.get(Brief, brief_id)
    if brief is None:
        raise NotFound("No such brief.", details={"brief_id": brief_id})
    return brief


def list_briefs(
    tx: Session, *, lane: str | None = None, q: str = "", limit: int = 50, offset: int = 0
) -> list[tuple[Brief, str]]:
    """One page of briefs, newest first, each with its operation's status; ``q`` matches brief_id or slug."""
    query = select(Brief, Operation.status).join(Operation, col(Operation.id) == col(Brief.operation_id))
    if lane is not None:
        query = query.where(Brief.lane == lane)
    if q:
        query = query.where(
            or_(col(Brief.brief_id).icontains(q, autoescape=True), col(Brief.slug).icontains(q, autoescape=True))
        )
    query = query.order_by(col(Brief.created_at).desc(), col(Brief.brief_id).desc()).offset(offset).limit(limit)
    return [(brief, status) for brief, status in tx.exec(query)]


def brief_of_operation(tx: Session, operation_id: str) -> Brief | None:
    """The brief whose run ``operation_id`` is, if it is one."""
    return tx.exec(select(Brief).where(Brief.operation_id == operation_id)).first()


__all__ = [
    "Accepted",
    "BriefIdReused",
    "BriefInput",
    "LaneDisabled",
    "brief_of_operation",
    "check_brief",
    "get_brief",
    "list_briefs",
    "submit_brief",
]
