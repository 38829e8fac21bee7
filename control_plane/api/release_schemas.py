"""Schemas of releases and site resources."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec
from msgspec import Meta
from typing_extensions import Annotated

Version = Annotated[int, Meta(ge=1, le=2**31)]


class ReleaseDocument(msgspec.Struct, forbid_unknown_fields=True):
    id: Annotated[str, Meta(min_length=1, max_length=64)]
    version: Version


class ReleaseCreate(msgspec.Struct, forbid_unknown_fields=True):
    documents: Annotated[list[ReleaseDocument], Meta(max_length=100)] = []
    navigation_version: Version | None = None
    redirects_version: Version | None = None
    theme: Annotated[str, Meta(min_length=1, max_length=64)] | None = None
    publish_at: datetime | None = None
    confirm: bool = False


class Reschedule(msgspec.Struct, forbid_unknown_fields=True):
    publish_at: datetime
    confirm: bool = False


class ResourceUpdate(msgspec.Struct, forbid_unknown_fields=True):
    version: Annotated[int, Meta(ge=0, le=2**31)]
    content: Any


class ResourceOut(msgspec.Struct):
    name: str
    version: int
    published_version: int | None
    content: Any
    published_content: Any
