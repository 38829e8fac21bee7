"""Which documents point at a media file, and the check that keeps a document from pointing at nothing.

A document embeds media in Markdown as ``![alt](media:med_…)`` (or links it with
``[label](media:med_…)``); rendering resolves the id to the file's public URL.
The reference scan is deliberately wider than the syntax: any appearance of the
id in a body counts (a pasted ``/t/media/med_…`` URL, raw HTML), so the sweep
errs on the side of keeping a file, never of breaking a page.

What is scanned: every document's current body and custom field values, and every
revision still kept (``revision`` rows: their field values, their bodies inline or
spilled into the store; versions past their retention are pruned by
``prune_policies`` and stop counting once gone). A field of type ``media`` holds a
bare id; the scan matches the id anywhere in a document's field values, so a value
left by a migration in progress (a rename, a type change) counts as well. So does a
field definition whose default names the file (every new document would get it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import String, cast
from sqlmodel import Session, col, or_, select

from tenant_runtime.errors import BadRequest
from tenant_runtime.storage import ObjectStore
from tenant_runtime.versions.bodies import revision_body
from tenant_runtime.workspace.field_models import FieldDefinition
from tenant_runtime.workspace.media_models import PURGING, Media
from tenant_runtime.workspace.models import Document, Revision

MEDIA_ID = re.compile(r"med_[0-9a-z]{26}")
EMBED = re.compile(r"media:(med_[0-9a-z]{26})")
# What a file's name may hold that Markdown would read as syntax inside ``[…]`` (brackets, emphasis, code,
# raw HTML, entities); a backslash makes each one itself.
_LABEL_SYNTAX = re.compile(r"[\\\[\]*_`<>&]")


def embed_markdown(media_id: str, name: str, content_type: str) -> str:
    """The Markdown that puts a file in a body: ``![name](media:…)`` shows an image, ``[name](media:…)``
    links any other file (an ``<img>`` of a PDF or a video shows nothing)."""
    label = _LABEL_SYNTAX.sub(lambda found: "\\" + found.group(0), name)
    return f"{'!' if content_type.startswith('image/') else ''}[{label}](media:{media_id})"


def embedded_ids(body: str) -> list[str]:
    """The media ids a body embeds with the ``media:`` scheme, in order, once each."""
    return list(dict.fromkeys(EMBED.findall(body)))


@dataclass(frozen=True)
class Reference:
    """A document version naming a media file (``version`` None: the document as it is now), in its body
    (``in_body``) and/or in the custom fields ``fields`` names; or, with ``default_of`` (``kind.field``) and
    no document, a field definition whose default names it."""

    document_id: str | None
    slug: str | None
    version: int | None
    in_body: bool = True
    fields: tuple[str, ...] = field(default=())
    default_of: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "document_id": self.document_id,
            "slug": self.slug,
            "version": self.version,
            "in_body": self.in_body,
            "fields": list(self.fields),
            "default_of": self.default_of,
        }


def _naming_fields(values: dict[str, Any], media_id: str) -> tuple[str, ...]:
    """The custom fields whose value names ``media_id`` (a media field, or any value holding the id)."""
    return tuple(name for name, value in sorted(values.items()) if media_id in json.dumps(value))


def _reference(media_id: str, document_id: str, slug: str, version: int | None, body: str, values: Any) -> Reference:
    named = _naming_fields(values, media_id) if isinstance(values, dict) else ()
    return Reference(document_id, slug, version, in_body=media_id in body, fields=named)


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
        current = tx.exec(
            select(Document.id, Document.slug, Document.body, Document.fields)
            .where(or_(col(Document.body).like(pattern), cast(col(Document.fields), String).like(pattern)))
            .order_by(col(Document.id))
            .limit(limit)
        ).all()
        found[media_id].extend(_reference(media_id, d, slug, None, body, values) for d, slug, body, values in current)
        kept = tx.exec(
            select(Revision)
            .where(or_(col(Revision.body).like(pattern), cast(col(Revision.fields), String).like(pattern)))
            .order_by(col(Revision.document_id), col(Revision.version))
            .limit(limit)
        ).all()
        found[media_id].extend(_reference(media_id, r.document_id, r.slug, r.version, r.body, r.fields) for r in kept)
        defaults = tx.exec(
            select(FieldDefinition)
            .where(cast(col(FieldDefinition.default), String).like(pattern))
            .order_by(col(FieldDefinition.kind), col(FieldDefinition.name))
            .limit(limit)
        ).all()
        found[media_id].extend(
            Reference(None, None, None, in_body=False, fields=(d.name,), default_of=f"{d.kind}.{d.name}")
            for d in defaults
        )
    if media_ids:
        spilled = tx.exec(select(Revision).where(col(Revision.body_key).is_not(None)).order_by(col(Revision.id)))
        bodies: dict[str, str] = {}
        for revision in spilled:
            if all(len(refs) >= limit for refs in found.values()):
                break  # every file already has its report's worth: reading more bodies proves nothing new
            key = str(revision.body_key)
            if key not in bodies:
                bodies[key] = revision_body(store, revision)
            for media_id in media_ids:
                if media_id in bodies[key] and len(found[media_id]) < limit:
                    ref = _reference(
                        media_id, revision.document_id, revision.slug, revision.version, bodies[key], revision.fields
                    )
                    # Its field values may have named it already (matched in SQL, the inline body empty).
                    refs = found[media_id]
                    same = [
                        i for i, r in enumerate(refs) if (r.document_id, r.version) == (ref.document_id, ref.version)
                    ]
                    if same:
                        refs[same[0]] = ref
                    else:
                        refs.append(ref)
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


__all__ = ["EMBED", "MEDIA_ID", "Reference", "check_embeds", "embed_markdown", "embedded_ids", "references_to"]
