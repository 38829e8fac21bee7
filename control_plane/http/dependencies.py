"""Dependencies every controller takes: the process's services and the request's principal."""

from __future__ import annotations

from typing import Any

import anyio
from litestar import Request
from litestar.connection import ASGIConnection
from litestar.datastructures import State

from control_plane.auth import Principal
from control_plane.container import Services

_PRINCIPAL = "pressroom.principal"


def provide_services(state: State) -> Services:
    return state.services


def principal_of(connection: ASGIConnection[Any, Any, Any, Any]) -> Principal:
    """The bearer token's principal, resolved once per request (guards and handlers share it)."""
    cached = connection.scope.get(_PRINCIPAL)
    if isinstance(cached, Principal):
        return cached
    services: Services = connection.app.state.services
    principal = services.tokens.resolve(connection.headers.get("authorization"))
    connection.scope[_PRINCIPAL] = principal  # type: ignore[literal-required]
    return principal


async def provide_principal(request: Request[Any, Any, Any], services: Services) -> Principal:
    """The request's principal: from the token cache on the event loop when it is there (no thread hop, no
    query), else resolved on a worker thread (it reads the control-plane database).

    It takes ``services`` so that Litestar resolves the two one after the other: two dependencies of one
    level are resolved in an anyio task group, a task each, on every request."""
    cached = request.scope.get(_PRINCIPAL)
    if isinstance(cached, Principal):
        return cached
    principal = services.tokens.resolve_cached(request.headers.get("authorization"))
    if principal is None:
        return await anyio.to_thread.run_sync(principal_of, request)
    request.scope[_PRINCIPAL] = principal  # type: ignore[literal-required]
    return principal


__all__ = ["principal_of", "provide_principal", "provide_services"]
