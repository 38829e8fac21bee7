"""Dependencies every controller takes: the process's services and the request's principal."""

from __future__ import annotations

from typing import Any

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


def provide_principal(request: Request[Any, Any, Any]) -> Principal:
    return principal_of(request)


__all__ = ["principal_of", "provide_principal", "provide_services"]
