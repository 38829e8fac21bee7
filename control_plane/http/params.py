"""Request parameters several areas take."""

from __future__ import annotations

from typing import Annotated

from litestar.params import Parameter

# 1-200 printable ASCII characters (what tenant_runtime.actions.idempotency accepts that a header can carry).
IdempotencyKey = Annotated[
    str | None,
    Parameter(
        header="Idempotency-Key",
        required=False,
        min_length=1,
        max_length=200,
        pattern=r"^[\x20-\x7e]+$",
        description="Repeat a command safely: the same key returns the first answer; "
        "the same key with another body is a 409.",
    ),
]
Limit = Annotated[int, Parameter(ge=1, le=500, required=False)]
Offset = Annotated[int, Parameter(ge=0, le=1_000_000, required=False)]

__all__ = ["IdempotencyKey", "Limit", "Offset"]
