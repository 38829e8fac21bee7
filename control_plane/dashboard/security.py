"""Browser-request protection for every dashboard form POST: same origin, then CSRF token.

Both checks run in one router-level guard, so no unsafe handler can forget them:
1. the ``Origin`` header (else ``Referer``) must name the host the request was sent
   to; a POST with neither, or with ``Origin: null``, is refused (``cross_origin``);
2. the form's ``csrf_token`` must equal the session's, compared in constant time
   (``csrf_failed``).
A refusal raises before the handler runs, so nothing is written.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from typing import Any, cast
from urllib.parse import urlsplit

from litestar import Request
from litestar.connection import ASGIConnection
from litestar.handlers.base import BaseRouteHandler

from tenant_runtime.errors import Forbidden

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CSRF_FIELD = "csrf_token"

# The only script is the dashboard's own copy of htmx (no inline script, no eval); it talks to this
# origin only. Previews may show authors' images from anywhere.
SECURITY_HEADERS: dict[str, str] = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; "
    "img-src 'self' https: http: data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


class CrossOrigin(Forbidden):
    """A state-changing request that does not come from a dashboard page."""

    code = "cross_origin"


class CsrfFailed(Forbidden):
    """A form without this session's CSRF token."""

    code = "csrf_failed"


def request_origin(headers: Mapping[str, str]) -> str | None:
    """``host[:port]`` of the page that sent the request: Origin first, else Referer."""
    origin = headers.get("origin")
    if origin is not None:
        return None if origin.strip().lower() == "null" else urlsplit(origin).netloc.lower() or None
    referer = headers.get("referer")
    if not referer:
        return None
    return urlsplit(referer).netloc.lower() or None


def check_same_origin(headers: Mapping[str, str]) -> None:
    """Refuse unless the sending page's host is the host the request was addressed to."""
    host = (headers.get("host") or "").lower()
    origin = request_origin(headers)
    if not host or origin is None or origin != host:
        raise CrossOrigin(
            "This form was not sent from a dashboard page; reload the page and try again.",
            details={"origin": origin, "host": host},
        )


def check_csrf(session: Mapping[str, Any], supplied: Any) -> None:
    """Refuse unless ``supplied`` is this session's CSRF token."""
    expected = session.get("csrf")
    valid = (
        isinstance(expected, str)
        and bool(expected)
        and isinstance(supplied, str)
        and hmac.compare_digest(expected.encode(), supplied.encode())
    )
    if not valid:
        raise CsrfFailed("Your session has expired or the form is stale; reload the page and try again.")


async def protect_forms(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """Router guard: every unsafe request passes the same-origin and CSRF checks."""
    if connection.scope.get("method", "GET") in SAFE_METHODS:
        return
    check_same_origin(connection.headers)
    request = cast("Request[Any, Any, Any]", connection)  # HTTP guards receive the Request itself
    form = await request.form()  # cached on the connection: the handler's ``data`` reuses it
    check_csrf(request.session, form.get(CSRF_FIELD))


__all__ = [
    "CSRF_FIELD",
    "SECURITY_HEADERS",
    "CrossOrigin",
    "CsrfFailed",
    "check_csrf",
    "check_same_origin",
    "protect_forms",
    "request_origin",
]
