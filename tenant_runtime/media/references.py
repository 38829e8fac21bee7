"""Which documents point at a media file, and the check that keeps a document from pointing at nothing.

A document embeds media in Markdown as ``![alt](media:med_…)`` (or links it with
``[label](media:med_…)``); rendering resolves the id to the file's public URL.
The reference scan is deliberately wider than the syntax: any appearance of the
id in a body counts (a pasted ``/t/media/med_…`` URL, raw HTML), so the sweep
errs on the side of keeping a file, never of breaking a page.

What is scanned: every document's current body and every revision still kept
(``revision`` rows, their bodies inline or spilled into the store; versions past
their retention are pruned by ``prune_policies`` and stop counting once gone).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from sqlmodel import Session, col, select

from tenant_runtime.errors import BadRequest
from tenant_runtime.storage import ObjectStore
from tenant_runtime.versions.bodies import revision_body
from tenant_runtime.workspace.media_models import PURGING, Media
from tenant_runtime.workspace.models import Document, Revision

MEDIA_ID = re.compile(r"med_[0-9a-z]{26}")
EMBED = re.compile(r"media:(med_[0-9a-z]{26})")


def embedded_ids(body: str) -> list[str]:
    """The media ids a body embeds with the ``media:`` scheme, in order, once each."""
    return list(dict.fromkeys(EMBED.findall(body)))


@dataclass(frozen=True)
class Reference:
    """A document version whose body names a media file (``version`` None: its current body)."""

    document_id: str
    slug: str
    version: int | None

    def as_dict(self) -> dict[str, str | int | None]:
        return {"document_id": self.document_id, "slug": self.slug, "version": self.version}


def references_to(
    tx: Session, store: ObjectStore, media_ids: Sequence[str], *, limit: int = 20
) -> dict[str, list[Reference]]:
    """For each of ``media_ids``, up to ``limit`` document versions (and current bodies) naming it.

    An empty list proves nothing points at that file. Inline bodies are matched in SQL; a spilled
    body (``versions/{sha256}`` in the store) is read once and matched against every id. A spilled
    body that is missing or altered fails the scan (``version_body_missing``): a sweep that cannot
    read every kept version deletes nothing.
    """
    found: dict[str, list[Reference]] = {media_id: [] for media_id in media_ids}
    for media_id in media_ids:
        pattern = f"%{media_id}%"
        current = tx.exec(select(Document.id, Document.slug).where(col(Document.body).like(pattern)).limit(limit)).all()
        found[media_id].extend(Reference(doc_id, slug, None) for doc_id, slug in current)
        kept = tx.exec(
            select(Revision.document_id, Revision.slug, Revision.version)
            .where(col(Revision.body).like(pattern))
            .order_by(col(Revision.document_id), col(Revision.version))
            .limit(limit)
        ).all()
        found[media_id].extend(Reference(doc_id, slug, version) for doc_id, slug, version in kept)
    if media_ids:
        spilled = tx.exec(select(Revision).where(col(Revision.body_key).is_not(None)).order_by(col(Revision.id)))
        bodies: dict[str, str] = {}
        for revision in spilled:
            key = str(revision.body_key)
            if key not in bodies:
                bodies[key] = revision_body(store, revision)
            for media_id in media_ids:
                if media_id in bodies[key] and len(found[media_id]) < limit:
                    found[media_id].append(Reference(revision.document_id, revision.slug, revision.version))
    return {media_id: refs[:limit] for media_id, refs in found.items()}


def check_embeds(tx: Session, body: str) -> None:
    """Every media id ``body`` names names a file of this site not being swept (else 400 ``media_not_found``).

    Any mention counts, not only ``media:`` embeds, as in the reference scan: a body can never name a file
    the sweep has proven free (it would point at nothing once the bytes are gone).
    """
    ids = list(dict.fromkeys(MEDIA_ID.findall(body)))
    if not ids:
        return
    usable = set(tx.exec(select(Media.id).where(col(Media.id).in_(ids), Media.status != PURGING)).all())
    missing = [media_id for media_id in ids if media_id not in usable]
    if missing:
        raise BadRequest(
            "The body embeds media this site does not have.",
            details={"field": "body", "media": missing},
            code="media_not_found",
        )


__all__ = ["EMBED", "MEDIA_ID", "Reference", "check_embeds", "embedded_ids", "references_to"]
