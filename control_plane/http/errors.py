"""Every error becomes ``{"error": {"code", "message", "details"}}``, in this one place.

``document_errors`` makes the OpenAPI document say the same: every handler that
authenticates declares the error statuses it can answer, with that shape, and
the bearer scheme it needs.
"""

from __future__ import annotations

from typing import Any

import structlog
from litestar import Litestar, MediaType, Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import Reference, SecurityScheme
from litestar.routes import HTTPRoute

from control_plane.http.schemas import ErrorBody
from tenant_runtime.errors import PressroomError, QuotaExceeded, RuntimeUnavailable

log = structlog.get_logger("pressroom.http")

HTTP_CODES = {
    400: "invalid_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "invalid_request",
    429: "too_many_requests",
}


def _error(
    status: int, code: str, message: str, details: dict[str, Any] | None = None, headers: dict[str, str] | None = None
) -> Response[dict[str, Any]]:
    return Response(
        {"error": {"code": code, "message": message, "details": details or {}}},
        status_code=status,
        media_type=MediaType.JSON,
        headers=headers,
    )


def pressroom_error(_: Request[Any, Any, Any], exc: PressroomError) -> Response[dict[str, Any]]:
    headers = None
    if isinstance(exc, QuotaExceeded | RuntimeUnavailable):
        headers = {"Retry-After": str(exc.details.get("retry_after", 60))}
    if isinstance(exc, RuntimeUnavailable):  # expected while a runtime restarts or a tenant moves
        log.warning("request.runtime_unavailable", code=exc.code, details=exc.details)
    elif exc.status >= 500:
        log.error("request.failed", code=exc.code, message=exc.message)
    return _error(exc.status, exc.code, exc.message, exc.details, headers)


def validation_error(_: Request[Any, Any, Any], exc: ValidationException) -> Response[dict[str, Any]]:
    details: dict[str, Any] = {"errors": exc.extra} if exc.extra else {}
    message = exc.detail or "The request is not valid."
    return _error(400, "invalid_request", message, details)


def http_error(_: Request[Any, Any, Any], exc: HTTPException) -> Response[dict[str, Any]]:
    status = exc.status_code
    if status >= 500:
        log.error("request.http_error", status=status, detail=exc.detail)
        return _error(status, "unavailable" if status == 503 else "internal_error", "The server could not answer.")
    # Keep the exception's headers: a 405 must say which methods are allowed (RFC 9110 `Allow`).
    headers = dict(exc.headers) if exc.headers else None
    return _error(
        status, HTTP_CODES.get(status, "invalid_request"), exc.detail or "The request is not valid.", headers=headers
    )


def unexpected_error(request: Request[Any, Any, Any], exc: Exception) -> Response[dict[str, Any]]:
    log.exception("request.unexpected_error", path=request.url.path)
    return _error(500, "internal_error", "Something went wrong on our side; it has been logged.")


EXCEPTION_HANDLERS: dict[Any, Any] = {
    PressroomError: pressroom_error,
    ValidationException: validation_error,
    HTTPException: http_error,
    Exception: unexpected_error,
}


BEARER = "bearer"
SECURITY_SCHEMES: dict[str, SecurityScheme | Reference] = {
    BEARER: SecurityScheme(
        type="http", scheme="bearer", description="An operator token, or a member token of one tenant with a role."
    ),
}
_DESCRIPTIONS = {
    400: "Invalid request (bad JSON, a field out of range, a missing confirmation)",
    401: "Missing or invalid bearer token",
    403: "The token's role does not allow this",
    404: "No such tenant or resource, or it belongs to another tenant",
    409: "Conflict: stale version, reused idempotency key, illegal transition, already exists",
    413: "Request body larger than the configured maximum",
    415: "The request body is not declared as JSON",
    423: "The tenant is suspended",
    422: "Refused as it stands: a package that is not signed, not trusted or not safe, or one that "
    "cannot be fetched from its address; nothing was written",
    429: "The tenant's quota is spent (see Retry-After)",
    503: "Prefect or the site's runtime is unreachable, or the site is moving; nothing changed (see Retry-After)",
}
# Every tenant read and command may find the tenant's runtime down or the tenant moving (503).
READ_ERRORS = (400, 401, 403, 404, 503)
WRITE_ERRORS = (*READ_ERRORS, 409, 413, 415, 423, 429)  # tenant commands: the command layer's answers
OPERATOR_WRITE_ERRORS = (*READ_ERRORS, 409, 413, 415)  # operator writes may need Prefect


def error_responses(*statuses: int) -> dict[int, ResponseSpec]:
    """OpenAPI responses for ``statuses``, all with the one error body."""
    return {
        status: ResponseSpec(data_container=ErrorBody, description=_DESCRIPTIONS[status], generate_examples=False)
        for status in statuses
    }


def _statuses_for(path: str, handler: HTTPRouteHandler) -> tuple[int, ...]:
    if handler.http_methods <= {"GET", "HEAD"}:
        return READ_ERRORS
    return OPERATOR_WRITE_ERRORS if path.startswith("/ops/") else WRITE_ERRORS


def document_errors(app: Litestar) -> None:
    """Declare error responses and bearer auth on every handler that takes a ``principal``.

    Runs once after the app is built and before its schema is first rendered
    (Litestar builds it lazily), so new endpoints are covered without repeating
    ``responses=`` on each; a handler's own ``responses`` win.
    """
    for route in app.routes:
        if not isinstance(route, HTTPRoute):
            continue
        for handler in route.route_handlers:
            if "principal" not in handler.parsed_fn_signature.parameters:
                continue
            handler.responses = {**error_responses(*_statuses_for(route.path, handler)), **(handler.responses or {})}
            security = list(handler.security or [])
            handler.security = security if {BEARER: []} in security else [*security, {BEARER: []}]
