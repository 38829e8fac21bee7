"""What each backbone step does to one brief's article, as tenant-runtime calls (the flow's tasks wrap them).

Every call takes the workspace and the brief_id, is idempotent (a repeat finds
what the first one wrote), and returns something small: bodies travel through
the tenant's store (``spill``-style references), never as step results.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from sqlmodel import select

from tenant_runtime import audit
from tenant_runtime.actions.briefs import get_brief
from tenant_runtime.actions.documents import create_document
from tenant_runtime.actions.lanes import get_pack
from tenant_runtime.actions.publishing import bump_generation
from tenant_runtime.errors import Permanent
from tenant_runtime.ids import utcnow
from tenant_runtime.lanes import grounding
from tenant_runtime.lanes.cover import CoverProvider
from tenant_runtime.lanes.embeddings import Embedder, index_related
from tenant_runtime.lanes.ledger import pay_once
from tenant_runtime.lanes.providers import TextProvider, TextRequest
from tenant_runtime.lanes.settings import LaneSettings
from tenant_runtime.rendering.markdown import plain_text, render_markdown
from tenant_runtime.workspace import SYSTEM, Workspace
from tenant_runtime.workspace.lane_models import Brief
from tenant_runtime.workspace.models import Document, SiteState

ARTICLES_PREFIX = "lanes/articles/"
COVERS_PREFIX = "media/covers/"
# Directives a generated body may hold (``::: note`` … ``:::``); any other is dropped by clean.
DIRECTIVES = frozenset({"note", "warning", "tip", "quote"})
_DIRECTIVE = re.compile(r"^:::\s*([A-Za-z0-9_-]*)\s*$")


def put_text(ws: Workspace, kind: str, text: str) -> dict[str, Any]:
    """Store ``text`` under its hash; the reference a step returns."""
    data = text.encode()
    digest = hashlib.sha256(data).hexdigest()
    key = f"{ARTICLES_PREFIX}{kind}/{digest}"
    if not ws.store.exists(key):
        ws.store.put(key, data, content_type="text/plain; charset=utf-8")
    return {"key": key, "sha256": digest, "bytes": len(data)}


def get_text(ws: Workspace, ref: dict[str, Any]) -> str:
    data = ws.store.get(str(ref["key"]))
    if data is None or hashlib.sha256(data).hexdigest() != ref["sha256"]:
        raise Permanent("A step's stored text is missing or changed.", details={"key": ref["key"]}, code="text_missing")
    return data.decode()


def _brief(ws: Workspace, brief_id: str) -> Brief:
    with ws.reader() as tx:
        return get_brief(tx, brief_id)


def validate(ws: Workspace, brief_id: str) -> dict[str, Any]:
    """The slug is still free (or already this brief's own document)."""
    brief = _brief(ws, brief_id)
    with ws.reader() as tx:
        holder = tx.exec(select(Document).where(Document.slug == brief.slug)).first()
    if holder is not None and holder.id != brief.document_id:
        raise Permanent(
            "Another document took this slug since the brief was accepted.",
            details={"slug": brief.slug, "document_id": holder.id},
            code="slug_taken",
        )
    return {"slug": brief.slug}


def ground(ws: Workspace, brief_id: str, settings: LaneSettings, earlier: dict[str, Any] | None) -> dict[str, Any]:
    """Fetch every source the brief cites (a further round: the pages they link to); a reference to the records."""
    if earlier is None:
        records = grounding.ground(_brief(ws, brief_id).payload.get("sources", []), settings)
    else:
        records = grounding.ground_further(json.loads(get_text(ws, earlier)), settings)
    ref = put_text(ws, "sources", json.dumps(records, sort_keys=True))
    return {**ref, "count": len(records)}


def _prompt(brief: Brief, pack: dict[str, Any], sources: list[dict[str, Any]]) -> TextRequest:
    payload = brief.payload
    system = (
        f"You write for the '{brief.lane}' lane. Voice: {pack['voice']} Audience: {pack['audience']} "
        f"Avoid: {'; '.join(pack['avoid'])}. Guidance: {pack['guidance']} Answer with the article in Markdown."
    )
    lines = [f"Title: {payload['title']}"]
    if payload.get("audience"):
        lines.append(f"Audience: {payload['audience']}")
    lines += [f"Note: {line.strip()}" for line in str(payload.get("notes", "")).splitlines() if line.strip()]
    for source in sources:
        label = source.get("title") or source["url"]
        lines.append(f"Source: [{label}]({source['url']})")
        if source.get("excerpt"):
            lines.append(f"Excerpt: {source['excerpt'][:600]}")
    return TextRequest(system=system, prompt="\n".join(lines))


def generate(
    ws: Workspace,
    brief_id: str,
    node: str,
    sources_ref: dict[str, Any] | None,
    provider: TextProvider,
    settings: LaneSettings,
) -> dict[str, Any]:
    """The draft, through the provider, paid once per (brief, node); its pack is the version pinned on the brief."""
    brief = _brief(ws, brief_id)
    with ws.reader() as tx:
        row = get_pack(tx, brief.lane, brief.pack_version)
        pack = {"voice": row.voice, "audience": row.audience, "avoid": list(row.avoid), "guidance": row.guidance}
    sources = json.loads(get_text(ws, sources_ref)) if sources_ref else []
    request = _prompt(brief, pack, sources)
    request = TextRequest(request.system, request.prompt, settings.lanes_max_tokens)

    def call() -> tuple[dict[str, Any], int, int]:
        result = provider.generate(request)
        ref = put_text(ws, "drafts", result.text)
        return (
            {**ref, "model": result.model, "pack_version": brief.pack_version},
            result.input_tokens + result.output_tokens,
            result.cost_micros,
        )

    return pay_once(
        ws,
        brief_id,
        node,
        provider.name,
        provider.estimate_micros(request),
        settings.lanes_run_budget_micros,
        call,
    )


def fact_check(ws: Workspace, brief_id: str, draft_ref: dict[str, Any], sources_ref: dict[str, Any]) -> dict[str, Any]:
    """Each source's words the draft uses; a draft that names no source at all when sources were cited fails."""
    draft = get_text(ws, draft_ref).lower()
    sources = json.loads(get_text(ws, sources_ref))
    supported = [s["url"] for s in sources if s["url"].lower() in draft or (s.get("title") or "\0").lower() in draft]
    if sources and not supported:
        raise Permanent("The draft cites none of the brief's sources.", details={}, code="fact_check_failed")
    return {"supported": supported, "sources": len(sources)}


def clean(ws: Workspace, draft_ref: dict[str, Any]) -> dict[str, Any]:
    """Valid Markdown with only known directives and no raw HTML comments; empty is a permanent failure."""
    kept: list[str] = []
    dropped: list[str] = []
    inside: str | None = None
    for line in get_text(ws, draft_ref).splitlines():
        match = _DIRECTIVE.match(line.strip())
        if match is not None:
            name = match.group(1)
            if name and inside is None:
                inside = name
                if name not in DIRECTIVES:
                    dropped.append(name)
                    continue
            elif not name and inside is not None:
                known, inside = inside in DIRECTIVES, None
                if not known:
                    continue
        kept.append(line)
    text = re.sub(r"<!--.*?-->", "", "\n".join(kept), flags=re.DOTALL).strip() + "\n"
    if not plain_text(render_markdown(text), markdown=False).strip():
        raise Permanent("The generated body is empty once cleaned.", details={}, code="empty_body")
    return {**put_text(ws, "bodies", text), "dropped_directives": dropped}


def persist(ws: Workspace, brief_id: str, body_ref: dict[str, Any]) -> dict[str, Any]:
    """The brief's document (a draft post) and its first revision; a repeat returns the same document."""
    body = get_text(ws, body_ref)
    with ws.transaction() as tx:
        brief = get_brief(tx, brief_id)
        if brief.document_id is not None:
            document = tx.get(Document, brief.document_id)
            if document is not None:
                return {"id": document.id, "version": document.version, "slug": document.slug}
        document = create_document(
            tx, SYSTEM, slug=brief.slug, title=str(brief.payload["title"]), body=body, kind="post"
        )
        brief.document_id = document.id
        tx.add(brief)
        audit.record(tx, "brief.persist", SYSTEM, "document", document.id, operation_id=brief.operation_id)
        return {"id": document.id, "version": document.version, "slug": document.slug}


def index(ws: Workspace, document: dict[str, Any], embedder: Embedder) -> dict[str, Any]:
    """Related articles through the embedder (full-text search is indexed by the publish path)."""
    with ws.reader() as tx:
        row = tx.get(Document, document["id"])
        if row is None:
            raise Permanent("The article's document is gone.", details=document, code="not_found")
        text = f"{row.title}\n{row.body}"
    return {"related": index_related(ws, document["id"], document["slug"], text, embedder)}


def cover(ws: Workspace, brief_id: str, document: dict[str, Any], provider: CoverProvider) -> dict[str, Any]:
    """The cover image in the tenant's store (written once)."""
    brief = _brief(ws, brief_id)
    key = f"{COVERS_PREFIX}{document['id']}.png"
    if not ws.store.exists(key):
        ws.store.put(key, provider.render(str(brief.payload["title"]), brief.lane), content_type="image/png")
    return {"key": key, "provider": provider.name}


def make_public(ws: Workspace, brief_id: str, document: dict[str, Any]) -> dict[str, Any]:
    """Flip the article to published at its version, as a publish does; the delivery follows in the same run."""
    with ws.transaction() as tx:
        brief = get_brief(tx, brief_id)
        row = tx.get(Document, document["id"])
        if row is None:
            raise Permanent("The article's document is gone.", details=document, code="not_found")
        if row.status == "published" and row.published_version == row.version:
            state = tx.get(SiteState, 1)
            generation = state.generation if state is not None else 0
        else:
            row.status = "published"
            row.published_version = row.version
            row.published_at = row.published_at or utcnow()
            tx.add(row)
            generation = bump_generation(tx)
            audit.record(
                tx, "content.publish", SYSTEM, "document", row.id, operation_id=brief.operation_id, version=row.version
            )
        return {"document_id": row.id, "version": row.version, "generation": generation}


__all__ = [
    "clean",
    "cover",
    "fact_check",
    "generate",
    "get_text",
    "ground",
    "index",
    "make_public",
    "persist",
    "put_text",
    "validate",
]
