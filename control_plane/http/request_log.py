"""One JSON log line per request, and the ids every log line of the request carries.

``RequestLog`` (ASGI middleware, outermost) binds ``request_id`` (the caller's
``X-Request-ID``, else a new one; echoed in the response), ``method`` and
``path`` into structlog's context variables, and logs ``request.served`` with
the status and duration once the response is sent. ``bind_tenant`` (a
``before_request`` hook: path parameters exist only once the route is matched)
adds ``tenant``. Every line logged while the request runs, and by the relay pass
its commit hands off, carries them (``structlog.contextvars.merge_contextvars``
in ``tenant_runtime/logs.py``).
"""

from __future__ import annotations

import re
import time
import uuid
from typing import Any

import structlog
from litestar import Request
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

log = structlog.get_logger("pressroom.http")
REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")  # a caller's id is logged as given only if it is this tame


class RequestLog:
    """ASGI middleware: the request's ids in the log context, and one ``request.served`` line."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self.app(scope, receive, send)
            return
        given = _header(scope, b"x-request-id")
        request_id = given if given is not None and REQUEST_ID.match(given) else uuid.uuid4().hex
        structlog.contextvars.clear_contextvars()
        method = scope.get("method", "")
        structlog.contextvars.bind_contextvars(request_id=request_id, method=method, path=scope["path"])
        status = 500  # what the server answers if the app raises before it starts a response
        started = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", ()), (b"x-request-id", request_id.encode())]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            log.info("request.served", status=status, duration_ms=round((time.perf_counter() - started) * 1000, 2))
            structlog.contextvars.clear_contextvars()


async def bind_tenant(request: Request[Any, Any, Any]) -> None:
    """Add the tenant the route names (``/api/tenants/{tenant}``, ``/ops/tenants/{slug}``, the dashboard's)."""
    params = request.path_params
    tenant = params.get("tenant")
    if tenant is None and request.url.path.startswith("/ops/tenants/"):
        tenant = params.get("slug")
    if isinstance(tenant, str):
        structlog.contextvars.bind_contextvars(tenant=tenant)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


__all__ = ["RequestLog", "bind_tenant"]
