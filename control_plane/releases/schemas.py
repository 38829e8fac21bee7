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


class ApprovalRequest(msgspec.Struct, forbid_unknown_fields=True):
    """Wait at the release's time for an ``approval`` event (POST …/operations/{op}/events), at most
    ``timeout_seconds``; one sent earlier is kept. No approval in time: the release fails, unapplied."""

    timeout_seconds: Annotated[float, Meta(gt=0, le=90 * 24 * 3600)]
    type: Annotated[str, Meta(pattern=r"^[a-zA-Z0-9_][a-zA-Z0-9-_]*$", max_length=200)] = "approval"


class ReleaseCreate(msgspec.Struct, forbid_unknown_fields=True):
    documents: Annotated[list[ReleaseDocument], Meta(max_length=100)] = []
    navigation_version: Version | None = None
    redirects_version: Version | None = None
    theme: Annotated[str, Meta(min_length=1, max_length=64)] | None = None
    publish_at: datetime | None = None
    approval: ApprovalRequest | None = None
    confirm: bool = False


class Reschedule(msgspec.Struct, forbid_unknown_fields=True):
    publish_at: datetime
    confirm: bool = False


__all__ = ["ApprovalRequest", "ReleaseCreate", "ReleaseDocument", "Reschedule"]
