"""How dashboard requests fail: HTML pages with the stable error code, never a traceback.

A client that asks for JSON only (``Accept: application/json`` without
``text/html``) gets the contract's ``{"error": {...}}`` body instead. A missing or
expired sign-in is not an error page but a redirect to the sign-in form.
"""

from __future__ import annotations

from typing import Any

import structlog
from litestar import MediaType, Request, Response
from litestar.exceptions import HTTPException, NotFoundException, ValidationException

from control_plane.dashboard.security import SECURITY_HEADERS
from control_plane.dashboard.views import PREFIX, error_page, see_other, url
from control_plane.http.errors import HTTP_CODES
from tenant_runtime.errors import PressroomError, Unauthorized

log = structlog.get_logger("pressroom.dashboard")


class SignInRequired(Unauthorized):
    """No valid dashboard session."""

    code = "sign_in_required"


def _wants_json(request: Request[Any, Any, Any]) -> bool:
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/html" not in accept


def _answer(
    request: Request[Any, Any, Any],
    status: int,
    code: str,
    message: str,
    details: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> Response[Any]:
    # Responses built here skip the router's response headers, so they carry them explicitly.
    headers = {**SECURITY_HEADERS, **(headers or {})}
    if _wants_json(request):
        return Response(
            {"error": {"code": code, "message": message, "details": details or {}}},
            status_code=status,
            media_type=MediaType.JSON,
            headers=headers,
        )
    response = error_page(status, code, message)
    response.headers.update(headers)
    return response


def pressroom_error(request: Request[Any, Any, Any], exc: PressroomError) -> Response[Any]:
    """Sign-in problems redirect to the form; everything else is an error page with its code."""
    if isinstance(exc, SignInRequired) and not _wants_json(request):
        redirect = see_other(url("login"))
        redirect.headers.update(SECURITY_HEADERS)
        return redirect
    if exc.status >= 500:
        log.error("dashboard.failed", code=exc.code, message=exc.message)
    return _answer(request, exc.status, exc.code, exc.message, exc.details)


def http_error(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    """Litestar's own refusals (bad form, wrong method, body too large) in the same shape."""
    status = exc.status_code
    if status >= 500:
        return unexpected_error(request, exc)
    headers = dict(exc.headers) if exc.headers else None  # a 405 keeps its Allow header
    code = HTTP_CODES.get(status, "invalid_request")
    message = "The form is not valid." if isinstance(exc, ValidationException) else (exc.detail or code)
    return _answer(request, status, code, message, headers=headers)


def unexpected_error(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    """A bug: logged with its traceback, shown as a plain apology."""
    log.exception("dashboard.unexpected_error", path=request.url.path, error_type=type(exc).__name__)
    return _answer(request, 500, "internal_error", "Something went wrong on our side; it has been logged.")


def not_routed(api_handler: Any) -> Any:
    """The app's answer to a path no route matches: under /dashboard a page like any other 404 (a mistyped
    address in the browser), elsewhere the API's JSON error. (No router's handlers see an unmatched path.)"""

    def handle(request: Request[Any, Any, Any], exc: NotFoundException) -> Response[Any]:
        path = request.url.path
        if path == PREFIX or path.startswith(f"{PREFIX}/"):
            return http_error(request, exc)
        return api_handler(request, exc)

    return handle


EXCEPTION_HANDLERS: dict[Any, Any] = {
    PressroomError: pressroom_error,
    HTTPException: http_error,
    Exception: unexpected_error,
}

__all__ = ["EXCEPTION_HANDLERS", "SignInRequired", "not_routed"]
