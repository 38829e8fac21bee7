"""Request and response schemas of versions."""

from __future__ import annotations

import msgspec

from control_plane.http.schemas import Version
from dispatch.runtime.versions import RevisionDiffOut, RevisionOut


class RestoreRequest(msgspec.Struct, forbid_unknown_fields=True):
    """Restore as a new version; ``publish`` makes it public too (then ``confirm`` is needed)."""

    publish: bool = False
    confirm: bool = False
    version: Version | None = None  # the document's current version as the user saw it


__all__ = ["RestoreRequest", "RevisionDiffOut", "RevisionOut"]
