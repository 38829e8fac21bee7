"""Schemas of releases."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec
from msgspec import Meta

from control_plane.http.schemas import Version


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


__all__ = ["ReleaseCreate", "ReleaseDocument", "Reschedule"]
