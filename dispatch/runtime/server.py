"""The internal HTTP API of a shard's runtime (``pressroom runtime --shard NAME``).

    GET  /healthz                          liveness, the shard's name and tenant count (no credential)
    GET  /metrics                          this process's Prometheus registry: relay, sweep, steps (no
                                           credential, like /healthz: no label names a tenant)
    POST /v1/tenants/{t}/query             {"actor", "query"} → the query's view
    POST /v1/tenants/{t}/command           a Command → CommandResult
    POST /v1/tenants/{t}/drain?timeout=    stop its commands and runs; 200 once nothing is in flight
    POST /v1/tenants/{t}/export            the drained workspace's snapshot (X-Sha256); no longer served
    PUT  /v1/tenants/{t}/import            a snapshot (X-Sha256) → held and served here
    POST /v1/tenants/{t}/release|resume    forget the hand-over copy | call the move off

Every ``/v1`` request needs ``Authorization: Bearer <the shard's secret>``
(compared in constant time); another credential is a 401 and nothing runs. A
tenant this shard does not hold is a 403 ``tenant_not_on_shard``. Errors are the
one error body with the error tree's status.
"""

from __future__ import annotations

import hmac
from typing import Any

import msgspec
import structlog
from litestar import Litestar, MediaType, Request, Response, get, post, put
from litestar.exceptions import HTTPException
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

from dispatch.runtime import wire
from dispatch.runtime.shard import ShardHost
from tenant_runtime.errors import BadRequest, PressroomError, Unauthorized

log = structlog.get_logger("pressroom.runtime.server")
MAX_SNAPSHOT_BYTES = 2_000_000_000


def _json(value: Any, status: int = 200) -> Response[bytes]:
    return Response(msgspec.json.encode(value), status_code=status, media_type=MediaType.JSON)


def _error(exc: PressroomError) -> Response[bytes]:
    headers = {"Retry-After": str(exc.details["retry_after"])} if "retry_after" in exc.details else None
    if exc.status >= 500:
        log.warning("runtime.request_failed", code=exc.code, message=exc.message)
    return Response(wire.encode_error(exc), status_code=exc.status, media_type=MediaType.JSON, headers=headers)


def create_runtime_app(host: ShardHost, secret: str) -> Litestar:
    """The runtime's ASGI app over ``host``, accepting only ``secret``."""
    expected = f"Bearer {secret}".encode()

    async def authenticate(request: Request[Any, Any, Any]) -> None:
        if not request.url.path.startswith("/v1/"):
            return
        given = request.headers.get("authorization", "").encode()
        if not hmac.compare_digest(given, expected):
            raise Unauthorized("This runtime does not accept that credential.", details={"shard": host.name})

    @get("/healthz", sync_to_thread=False)
    def healthz() -> Response[bytes]:
        return _json({"status": "ok", "shard": host.name, "tenants": len(host.tenants)})

    @get("/metrics", sync_to_thread=False)
    def metrics() -> Response[bytes]:
        return Response(generate_latest(REGISTRY), media_type=CONTENT_TYPE_LATEST)

    @post("/v1/tenants/{tenant:str}/query", sync_to_thread=True, status_code=200)
    def query(tenant: str, body: bytes) -> Response[bytes]:
        actor, message = _decoded(wire.decode_query, body)
        return _json(host.query(tenant, actor, message))

    @post("/v1/tenants/{tenant:str}/command", sync_to_thread=True, status_code=200)
    def command(tenant: str, body: bytes) -> Response[bytes]:
        return _json(host.execute(tenant, _decoded(wire.decode_command, body)))

    @post("/v1/tenants/{tenant:str}/drain", sync_to_thread=True, status_code=200)
    def drain(tenant: str, timeout: float = 60.0) -> Response[bytes]:
        return _json(host.drain(tenant, max(0.0, min(timeout, 600.0))))

    @post("/v1/tenants/{tenant:str}/export", sync_to_thread=True, status_code=200)
    def export(tenant: str) -> Response[bytes]:
        data, digest = host.export(tenant)
        return Response(data, media_type="application/octet-stream", headers={"X-Sha256": digest})

    @put("/v1/tenants/{tenant:str}/import", sync_to_thread=True, request_max_body_size=MAX_SNAPSHOT_BYTES)
    def import_(tenant: str, body: bytes, request: Request[Any, Any, Any]) -> Response[bytes]:
        return _json(host.import_(tenant, body, request.headers.get("x-sha256", "")))

    @post("/v1/tenants/{tenant:str}/release", sync_to_thread=True, status_code=200)
    def release(tenant: str) -> Response[bytes]:
        return _json(host.release(tenant))

    @post("/v1/tenants/{tenant:str}/resume", sync_to_thread=True, status_code=200)
    def resume(tenant: str) -> Response[bytes]:
        return _json(host.resume(tenant))

    def pressroom_error(_: Request[Any, Any, Any], exc: PressroomError) -> Response[bytes]:
        return _error(exc)

    def http_error(_: Request[Any, Any, Any], exc: HTTPException) -> Response[bytes]:
        error = PressroomError(exc.detail or "The request is not valid.", code="invalid_request")
        error.status = exc.status_code
        return _error(error)

    def unexpected(request: Request[Any, Any, Any], exc: Exception) -> Response[bytes]:
        log.exception("runtime.unexpected_error", path=request.url.path)
        return _error(PressroomError("Something went wrong in the tenant runtime; it has been logged."))

    return Litestar(
        route_handlers=[healthz, metrics, query, command, drain, export, import_, release, resume],
        before_request=authenticate,
        exception_handlers={PressroomError: pressroom_error, HTTPException: http_error, Exception: unexpected},
        openapi_config=None,
        debug=False,
    )


def _decoded(decode: Any, body: bytes) -> Any:
    try:
        return decode(body)
    except wire.WireError as exc:
        raise BadRequest(f"The runtime cannot read this request: {exc}") from None


__all__ = ["create_runtime_app"]
