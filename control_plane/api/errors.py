"""Every error becomes ``{"error": {"code", "message", "details"}}``, in this one place."""

from __future__ import annotations

from typing import Any

import structlog
from litestar import MediaType, Request, Response
from litestar.exceptions import HTTPException, ValidationException

from tenant_runtime.errors import PressroomError, QuotaExceeded

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


def _error(status: int, code: str, message: str, details: dict[str, Any] | None = None,
           headers: dict[str, str] | None = None) -> Response[dict[str, Any]]:
    return Response(
        {"error": {"code": code, "message": message, "details": details or {}}},
        status_code=status,
        media_type=MediaType.JSON,
        headers=headers,
    )


def pressroom_error(_: Request[Any, Any, Any], exc: PressroomError) -> Response[dict[str, Any]]:
    headers = None
    if isinstance(exc, QuotaExceeded):
        headers = {"Retry-After": str(exc.details.get("retry_after", 60))}
    if exc.status >= 500:
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
    return _error(status, HTTP_CODES.get(status, "invalid_request"), exc.detail or "The request is not valid.")


def unexpected_error(request: Request[Any, Any, Any], exc: Exception) -> Response[dict[str, Any]]:
    log.exception("request.unexpected_error", path=request.url.path)
    return _error(500, "internal_error", "Something went wrong on our side; it has been logged.")


EXCEPTION_HANDLERS: dict[Any, Any] = {
    PressroomError: pressroom_error,
    ValidationException: validation_error,
    HTTPException: http_error,
    Exception: unexpected_error,
}
