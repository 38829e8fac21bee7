"""Schemas of site resources and the search index."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from msgspec import Meta

from dispatch.runtime import ResourceOut


class ResourceUpdate(msgspec.Struct, forbid_unknown_fields=True):
    version: Annotated[int, Meta(ge=0, le=2**31)]
    content: Any


class RebuildRequest(msgspec.Struct, forbid_unknown_fields=True):
    force: bool = False


__all__ = ["RebuildRequest", "ResourceOut", "ResourceUpdate"]
