"""A command's answer as an HTTP response."""

from __future__ import annotations

from typing import Any

from litestar import Response

from dispatch.runtime import CommandResult


def respond(result: CommandResult) -> Response[dict[str, Any]]:
    """The command's status and body (committed work is already on its way to the relay)."""
    return Response(result.body, status_code=result.status_code)


__all__ = ["respond"]
