"""Schemas of webhook endpoints."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

from dispatch.runtime import WebhookOut


class WebhookCreate(msgspec.Struct, forbid_unknown_fields=True):
    url: Annotated[str, Meta(min_length=8, max_length=2000, pattern=r"^https?://[^\s]+$")]
    events: Annotated[list[str], Meta(min_length=1, max_length=10)] = msgspec.field(
        default_factory=lambda: ["after_publish"]
    )
    secret: Annotated[str, Meta(min_length=16, max_length=200)] | None = None


__all__ = ["WebhookCreate", "WebhookOut"]
