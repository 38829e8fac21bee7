"""Schemas of the tenant audit log."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

import msgspec
from litestar.params import Parameter

# A dotted action name (``content.publish``, ``member.invite``).
AuditAction = Annotated[
    str | None,
    Parameter(
        required=False,
        min_length=1,
        max_length=80,
        pattern=r"^[a-z][a-z0-9_.]*$",
        description="Only rows of this dotted action, e.g. `content.publish` or `member.invite`.",
    ),
]
AuditLimit = Annotated[int, Parameter(ge=1, le=500, required=False, description="At most this many rows (1-500).")]
AuditOffset = Annotated[
    int,
    Parameter(ge=0, le=1_000, required=False, description="Skip this many rows (0-1000; deeper pages go by `before`)."),
]
AuditBefore = Annotated[
    str | None,
    Parameter(
        required=False,
        max_length=40,
        pattern=r"^\d{1,19}\.\d{1,19}$",
        description='The cursor of the next page, as the previous page\'s `Link: <…>; rel="next"` gives it.',
    ),
]


class AuditEntryOut(msgspec.Struct):
    """One write to the site: ``source`` says where it is kept (the site's workspace, or the control
    plane for members, tokens and operator changes); ``id`` is unique within its source."""

    source: Literal["site", "control_plane"]
    id: int
    action: str
    actor: str  # a user id, operator:<token id>, or system
    actor_name: str | None  # the member's name, when the actor is a member the control plane knows
    object_type: str
    object_id: str
    operation_id: str | None
    data: dict[str, Any]
    created_at: datetime


__all__ = ["AuditAction", "AuditBefore", "AuditEntryOut", "AuditLimit", "AuditOffset"]
