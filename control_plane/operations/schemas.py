"""Schemas of operations."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from dispatch.runtime import AttemptOut, OperationOut, StepOut, TimelineEntry, WaitingOut

OperationStatus = Literal[
    "scheduled", "queued", "delivering", "paused", "waiting", "succeeded", "superseded", "failed", "dead", "cancelled"
]


class ControlRequest(msgspec.Struct, forbid_unknown_fields=True):
    """Pause, resume or terminate: it changes what the site will show, so it is confirmed."""

    confirm: bool = False


class RestartRequest(msgspec.Struct, forbid_unknown_fields=True):
    """Run a settled operation again, from the top or from ``from_step`` (the steps before it stay cached)."""

    from_step: Annotated[str, Meta(min_length=1, max_length=100)] | None = None
    confirm: bool = False


class EventRequest(msgspec.Struct, forbid_unknown_fields=True):
    """An event for the operation's ``wait_for_event``: ``type`` matches ``^[a-zA-Z0-9_][a-zA-Z0-9-_]*$``,
    ``payload`` is any JSON up to 1 MiB."""

    type: Annotated[str, Meta(max_length=200)]
    payload: Any = None


class TimelineOut(msgspec.Struct):
    """Content and engine events of one operation, oldest first; ``prefect`` says whether the engine's
    side is in it (``unavailable``: only the operation's own record)."""

    operation_id: str
    entries: list[TimelineEntry]
    prefect: str


__all__ = [
    "AttemptOut",
    "ControlRequest",
    "EventRequest",
    "OperationOut",
    "OperationStatus",
    "RestartRequest",
    "StepOut",
    "TimelineOut",
    "WaitingOut",
]
