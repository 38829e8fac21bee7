"""Schemas of the members and tokens API: what crosses the HTTP edge, and nothing of a token but its id."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from control_plane.http.schemas import VISIBLE_TEXT, reject_control

Role = Literal["owner", "editor", "viewer"]
# A user id as the control plane makes them (``new_id("usr")``); anything else is simply not found.
MemberId = Annotated[str, Meta(min_length=1, max_length=40, pattern=r"^[A-Za-z0-9_]+$")]
Email = Annotated[str, Meta(min_length=3, max_length=320, pattern=r"^[^@\s\x00-\x1f\x7f]+@[^@\s\x00-\x1f\x7f]+$")]
Label = Annotated[str, Meta(max_length=200, pattern=r"^[^\x00-\x1f\x7f]*$")]


class MemberInvite(msgspec.Struct, forbid_unknown_fields=True):
    """A new member of the site with a role; the answer holds their first token, shown once."""

    name: Annotated[str, Meta(min_length=1, max_length=200, pattern=VISIBLE_TEXT)]
    role: Role
    email: Email | None = None

    def __post_init__(self) -> None:
        reject_control("name", self.name)
        reject_control("email", self.email)


class MemberUpdate(msgspec.Struct, forbid_unknown_fields=True):
    role: Role


class MemberRemove(msgspec.Struct, forbid_unknown_fields=True):
    confirm: bool = False


class MemberOut(msgspec.Struct):
    """A member of the site: its user, its role, how many unrevoked tokens it holds."""

    id: str  # the member's user id: the {member_id} of the member paths
    name: str
    email: str | None
    role: str
    created_at: datetime
    active_tokens: int


class MemberTokenCreate(msgspec.Struct, forbid_unknown_fields=True):
    """A new API token for ``member_id`` (default: the caller), with a label to tell it apart."""

    member_id: MemberId | None = None
    label: Label = ""

    def __post_init__(self) -> None:
        reject_control("label", self.label)


class TokenRevoke(msgspec.Struct, forbid_unknown_fields=True):
    confirm: bool = False


class ApiTokenOut(msgspec.Struct):
    """A token as listed: never its secret, never its hash."""

    id: str
    label: str
    member_id: str
    member_name: str
    role: str
    created_at: datetime
    revoked_at: datetime | None


class TokenIssued(msgspec.Struct):
    """A new token: ``token`` is its secret, shown in this answer only (``null`` in an idempotent repeat)."""

    id: str
    token: str | None
    label: str
    member_id: str
    role: str
    tenant: str
    created_at: datetime


class InviteOut(msgspec.Struct):
    member: MemberOut
    token: TokenIssued


__all__ = [
    "ApiTokenOut",
    "InviteOut",
    "MemberId",
    "MemberInvite",
    "MemberOut",
    "MemberRemove",
    "MemberTokenCreate",
    "MemberUpdate",
    "Role",
    "TokenIssued",
    "TokenRevoke",
]
