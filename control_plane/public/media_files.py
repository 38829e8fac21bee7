"""Serving a media file on the public site: its stored bytes, streamed, with year-long cache headers."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import quote

from tenant_runtime.media import library
from tenant_runtime.media.references import MEDIA_ID
from tenant_runtime.storage import Readable
from tenant_runtime.storage.base import CHUNK_BYTES
from tenant_runtime.workspace import Workspace

# A file's bytes never change under its id: browsers and the edge may keep it for a year without asking
# again; when the sweep removes it, it purges the file's surrogate key.
CACHE_CONTROL = "public, max-age=31536000, immutable"


@dataclass
class MediaResponse:
    content_type: str
    headers: dict[str, str]
    source: Readable

    def chunks(self) -> Iterator[bytes]:
        try:
            while chunk := self.source.read(CHUNK_BYTES):
                yield chunk
        finally:
            self.source.close()


def open_media(ws: Workspace, media_id: str) -> MediaResponse | None:
    """The file ``media_id`` opened for serving, or None (unknown, being swept, or its bytes gone)."""
    if not MEDIA_ID.fullmatch(media_id):
        return None
    with ws.reader() as tx:
        media = library.servable(tx, media_id)
    if media is None:
        return None
    source = ws.store.reader(media.key)
    if source is None:
        ws.log.warning("media.bytes_missing", media_id=media_id, key=media.key)
        return None
    headers = {
        "cache-control": CACHE_CONTROL,
        "xkey": " ".join((ws.tenant, *ws.cache.tags(library.media_tag(media_id)))),
        "etag": f'"{media.sha256}"',
        "content-length": str(media.bytes),
        "content-disposition": f"inline; filename*=UTF-8''{quote(media.name, safe='')}",
        # Served from the site's own origin: never let a browser read it as anything but its sniffed type.
        "x-content-type-options": "nosniff",
        "content-security-policy": "default-src 'none'; sandbox",
    }
    return MediaResponse(media.content_type, headers, source)


__all__ = ["CACHE_CONTROL", "MediaResponse", "open_media"]
