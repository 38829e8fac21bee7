"""Schemas of site resources and the search index."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from msgspec import Meta

from dispatch.runtime import ResourceOut, SiteSettingsOut


class ResourceUpdate(msgspec.Struct, forbid_unknown_fields=True):
    version: Annotated[int, Meta(ge=0, le=2**31)]
    content: Any


class SettingsUpdate(msgspec.Struct, forbid_unknown_fields=True):
    title: Annotated[str, Meta(min_length=1, max_length=200)] | None = None
    timezone: Annotated[str, Meta(min_length=1, max_length=64)] | None = None
    description: Annotated[str, Meta(max_length=500)] | None = None
    language: Annotated[str, Meta(min_length=2, max_length=35)] | None = None


class RebuildRequest(msgspec.Struct, forbid_unknown_fields=True):
    force: bool = False


__all__ = ["RebuildRequest", "ResourceOut", "ResourceUpdate", "SettingsUpdate", "SiteSettingsOut"]
