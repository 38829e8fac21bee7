"""The media library's runtime handlers: its queries and its commands, each one tenant-runtime call."""

from __future__ import annotations

import msgspec
from sqlmodel import Session

from dispatch.runtime import messages as m
from dispatch.runtime.changes import accepted
from dispatch.runtime.handlers import Effect, command, query
from dispatch.runtime.views import MediaOut, MediaPolicyOut, MediaReferenceOut
from dispatch.settings import DispatchSettings
from tenant_runtime.actions import media as actions
from tenant_runtime.ids import as_utc
from tenant_runtime.media import library
from tenant_runtime.media.references import references_to
from tenant_runtime.workspace import Actor, Media, MediaPolicy, Workspace


def media_out(ws: Workspace, media: Media, retention_days: int) -> MediaOut:
    ends = library.purge_after(media, retention_days)
    return MediaOut(
        id=media.id,
        name=media.name,
        url=library.media_url(ws.site_url, media.id),
        content_type=media.content_type,
        bytes=media.bytes,
        sha256=media.sha256,
        width=media.width,
        height=media.height,
        status=media.status,
        created_at=as_utc(media.created_at),
        created_by=media.created_by,
        deleted_at=as_utc(media.deleted_at) if media.deleted_at is not None else None,
        purge_after=ends,
    )


def policy_out(row: MediaPolicy) -> MediaPolicyOut:
    return MediaPolicyOut(max_bytes=row.max_bytes, retention_days=row.retention_days)


def _answer(tx: Session, ws: Workspace, media: Media, status: int = 200) -> Effect:
    return Effect(status, msgspec.to_builtins(media_out(ws, media, library.policy(tx).retention_days)))


@query(m.ListMedia)
def _list(tx: Session, ws: Workspace, q: m.ListMedia, dispatch: DispatchSettings) -> list[MediaOut]:
    retention = library.policy(tx).retention_days
    found = library.list_media(tx, q=q.q, state=q.state, limit=q.limit, offset=q.offset)
    return [media_out(ws, media, retention) for media in found]


# References listed when reading one file (the same scan as the sweep's, so "unused" here means sweepable).
USED_BY_LIMIT = 50


@query(m.GetMedia)
def _get(tx: Session, ws: Workspace, q: m.GetMedia, dispatch: DispatchSettings) -> MediaOut:
    media = library.get_media(tx, q.media_id)
    found = references_to(tx, ws.store, [media.id], limit=USED_BY_LIMIT + 1)[media.id]
    out = media_out(ws, media, library.policy(tx).retention_days)
    out.used_by = [msgspec.convert(r.as_dict(), MediaReferenceOut) for r in found[:USED_BY_LIMIT]]
    out.used_by_more = len(found) > USED_BY_LIMIT
    return out


@query(m.GetMediaPolicy)
def _policy(tx: Session, ws: Workspace, q: m.GetMediaPolicy, dispatch: DispatchSettings) -> MediaPolicyOut:
    return policy_out(library.policy(tx))


@command(m.UploadMedia)
def _upload(tx: Session, ws: Workspace, actor: Actor, c: m.UploadMedia) -> Effect:
    return _answer(tx, ws, actions.upload_media(tx, ws.store, actor, name=c.name, data=c.data), 201)


@command(m.DeleteMedia)
def _delete(tx: Session, ws: Workspace, actor: Actor, c: m.DeleteMedia) -> Effect:
    return _answer(tx, ws, actions.delete_media(tx, actor, c.media_id))


@command(m.RestoreMedia)
def _restore(tx: Session, ws: Workspace, actor: Actor, c: m.RestoreMedia) -> Effect:
    return _answer(tx, ws, actions.restore_media(tx, actor, c.media_id))


@command(m.SetMediaPolicy)
def _set_policy(tx: Session, ws: Workspace, actor: Actor, c: m.SetMediaPolicy) -> Effect:
    row = actions.set_policy(tx, actor, max_bytes=c.max_bytes, retention_days=c.retention_days)
    return Effect(200, msgspec.to_builtins(policy_out(row)))


@command(m.SweepMedia)
def _sweep(tx: Session, ws: Workspace, actor: Actor, c: m.SweepMedia) -> Effect:
    return accepted(ws, actions.request_sweep(tx, ws.tenant, actor))


__all__ = ["USED_BY_LIMIT", "media_out", "policy_out"]
