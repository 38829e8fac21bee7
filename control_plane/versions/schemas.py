"""Request and response schemas of versions."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from control_plane.http.schemas import Version
from dispatch.runtime.versions import RevisionDiffOut, RevisionOut


class RestoreRequest(msgspec.Struct, forbid_unknown_fields=True):
    """Restore as a new version; ``publish`` makes it public too (then ``confirm`` is needed)."""

    publish: bool = False
    confirm: bool = False
    version: Version | None = None  # the document's current version as the user saw it


EntityType = Literal["document", "site_resource"]


class RetentionPolicyIn(msgspec.Struct, forbid_unknown_fields=True):
    """Keep the last ``keep_last`` versions of each entity, and every version younger than ``keep_days``."""

    keep_last: Annotated[int, msgspec.Meta(ge=1, le=10_000)]
    keep_days: Annotated[int, msgspec.Meta(ge=0, le=3650)]


__all__ = ["EntityType", "RestoreRequest", "RetentionPolicyIn", "RevisionDiffOut", "RevisionOut"]
