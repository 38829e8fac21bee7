"""Schemas of operations."""

from __future__ import annotations

from typing import Literal

from dispatch.runtime import AttemptOut, OperationOut

OperationStatus = Literal["scheduled", "queued", "delivering", "succeeded", "superseded", "failed", "dead", "cancelled"]

__all__ = ["AttemptOut", "OperationOut", "OperationStatus"]
