"""The dashboard router: its pages, its session cookie, its form guard, its HTML errors.

Everything dashboard-specific is scoped to this router, so the JSON API beside it
sees no session middleware, no cookies and no HTML.
"""

from __future__ import annotations

from collections.abc import Mapping

from litestar import Router
from litestar.datastructures import ResponseHeader
from litestar.di import Provide

from control_plane.dashboard.auth_pages import AuthPages
from control_plane.dashboard.context import provide_signed_in
from control_plane.dashboard.document_pages import DocumentPages
from control_plane.dashboard.errors import EXCEPTION_HANDLERS
from control_plane.dashboard.operation_pages import OperationPages
from control_plane.dashboard.security import SECURITY_HEADERS, protect_forms
from control_plane.dashboard.session import session_middleware
from control_plane.dashboard.views import PREFIX


def build_dashboard(environ: Mapping[str, str] | None = None) -> Router:
    """The ``/dashboard`` router; reads ``PRESSROOM_SESSION_SECRET`` (and the cookie's Secure flag) once."""
    return Router(
        path=PREFIX,
        route_handlers=[AuthPages, DocumentPages, OperationPages],
        middleware=[session_middleware(environ)],
        guards=[protect_forms],
        dependencies={"signed_in": Provide(provide_signed_in, sync_to_thread=True)},
        exception_handlers=EXCEPTION_HANDLERS,
        response_headers=[ResponseHeader(name=name, value=value) for name, value in SECURITY_HEADERS.items()],
        include_in_schema=False,
    )


__all__ = ["build_dashboard"]
