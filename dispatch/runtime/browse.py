"""The dashboard's reads (searchable pages of documents, a document's delivery, a release's contents, site settings)
and the site-settings command, as one runtime area."""

from __future__ import annotations

from sqlmodel import Session

from dispatch.runtime import messages as m
from dispatch.runtime.handlers import Effect, command, query
from dispatch.runtime.reads import document_out, operation_out
from dispatch.runtime.views import (
    DeliveryOut,
    DocumentPage,
    DocumentRow,
    ReleaseContents,
    ReleaseItem,
    SiteSettingsOut,
)
from dispatch.settings import DispatchSettings
from tenant_runtime import delivery, queries
from tenant_runtime.actions.site import configure_site
from tenant_runtime.ids import as_utc
from tenant_runtime.operation_states import CANCELLED, DEAD, FAILED, SCHEDULED, SUCCEEDED, SUPERSEDED
from tenant_runtime.workspace import Actor, Document, Workspace

MAX_PAGE = 200


@query(m.FindDocuments)
def _find(tx: Session, ws: Workspace, q: m.FindDocuments, dispatch: DispatchSettings) -> DocumentPage:
    schedules = queries.scheduled_documents(tx)
    found, total = queries.find_documents(
        tx,
        q=q.q.strip()[:200],
        state=q.status,
        kind=q.kind,
        scheduled=set(schedules),
        limit=max(1, min(q.limit, MAX_PAGE)),
        offset=max(0, q.offset),
    )
    rows = []
    for document in found:
        operation_id, when = schedules.get(document.id, (None, None))
        rows.append(
            DocumentRow(
                document=document_out(ws, document),
                scheduled_for=as_utc(when) if when is not None else None,
                scheduled_operation=operation_id,
            )
        )
    return DocumentPage(items=rows, total=total)


@query(m.GetDocumentDelivery)
def _delivery(tx: Session, ws: Workspace, q: m.GetDocumentDelivery, dispatch: DispatchSettings) -> DeliveryOut:
    document = queries.get_document(tx, q.document_id)
    operation = queries.latest_operation_for_document(tx, document.id)
    published = document.status == "published"
    if operation is None:
        return DeliveryOut(state="published" if published else "draft")
    out = operation_out(tx, operation, dispatch)
    if operation.status == SCHEDULED:
        state = "scheduled"
    elif operation.status == DEAD or (operation.status == FAILED and operation.next_attempt_at is None):
        state = "failed"
    elif operation.status == FAILED:
        state = "retrying"
    elif operation.status == CANCELLED:
        state = "published" if published else "draft"
    elif operation.status in (SUCCEEDED, SUPERSEDED):
        # The run ends after its last step (the aggregates' purge): what is public has landed.
        state = "published" if published else ("unpublished" if operation.kind == "unpublish" else "draft")
    else:  # queued or delivering: public through live rendering, the static render and purges follow
        state = "rendering" if published else "unpublishing"
    return DeliveryOut(state=state, operation=out)


@query(m.GetReleaseContents)
def _release(tx: Session, ws: Workspace, q: m.GetReleaseContents, dispatch: DispatchSettings) -> ReleaseContents:
    parameters = queries.get_operation(tx, q.operation_id).parameters
    items = []
    for item in parameters.get("documents") or ():
        document = tx.get(Document, item.get("document_id"))
        items.append(
            ReleaseItem(
                document_id=str(item.get("document_id")),
                version=int(item.get("version") or 0),
                title=document.title if document is not None else None,
            )
        )
    return ReleaseContents(
        documents=items,
        navigation_version=parameters.get("navigation_version"),
        redirects_version=parameters.get("redirects_version"),
        theme=parameters.get("theme"),
    )


@query(m.GetSiteSettings)
def _settings(tx: Session, ws: Workspace, q: m.GetSiteSettings, dispatch: DispatchSettings) -> SiteSettingsOut:
    state = queries.site_state(tx)
    return SiteSettingsOut(
        title=state.title or ws.tenant,
        timezone=state.timezone or "UTC",
        description=state.description,
        language=state.language or "en",
    )


@command(m.ConfigureSite)
def _configure(tx: Session, ws: Workspace, actor: Actor, c: m.ConfigureSite) -> Effect:
    state, changed = configure_site(
        tx, actor, title=c.title, timezone=c.timezone, description=c.description, language=c.language
    )
    body = {
        "title": state.title or ws.tenant,
        "timezone": state.timezone,
        "description": state.description,
        "language": state.language,
        "changed": changed,
    }
    effect = Effect(200, body)
    if changed:
        # Bounded, regenerates no stored file: every cached response showing the settings goes now; the
        # public server renders stored pages live from here on (delivery.SETTINGS_TAG, settings_version).
        effect.after_commit.append(lambda: ws.log.info("settings.purged", tags=delivery.purge_settings(ws)))
    return effect


__all__ = ["MAX_PAGE"]
