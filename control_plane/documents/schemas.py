"""Request and response schemas of documents."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from control_plane.http.schemas import Body, Slug, Title, Version, reject_control
from dispatch.runtime import DocumentOut

DocumentKind = Literal["page", "post"]
DocumentStatus = Literal["draft", "published"]


class DocumentCreate(msgspec.Struct, forbid_unknown_fields=True):
    slug: Slug
    title: Title
    body: Body = ""
    kind: DocumentKind = "page"
    fields: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        reject_control("title", self.title)


class DocumentUpdate(msgspec.Struct, forbid_unknown_fields=True):
    version: Version
    slug: Slug | None = None
    title: Title | None = None
    body: Body | None = None
    kind: DocumentKind | None = None
    fields: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        reject_control("title", self.title)


class PublishRequest(msgspec.Struct, forbid_unknown_fields=True):
    confirm: bool = False
    version: Version | None = None


__all__ = ["DocumentCreate", "DocumentKind", "DocumentOut", "DocumentStatus", "DocumentUpdate", "PublishRequest"]
