"""Sign in with a token, sign out, and the landing page (a member's site, an operator's site picker)."""

from __future__ import annotations

from importlib.resources import files
from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.datastructures import ResponseHeader

from control_plane.auth import Principal
from control_plane.container import Services
from control_plane.dashboard.forms import FormData, text
from control_plane.dashboard.session import sign_in
from control_plane.dashboard.views import notice, page, see_other, url
from tenant_runtime.errors import Unauthorized

_STATIC = files("control_plane.dashboard").joinpath("static")
_CSS = _STATIC.joinpath("dashboard.css").read_text(encoding="utf-8")
# htmx 2.0.11 (0BSD, static/htmx.LICENSE), vendored: the dashboard loads nothing from elsewhere.
_HTMX = _STATIC.joinpath("htmx.min.js").read_text(encoding="utf-8")
# Drag-and-drop upload with a progress bar (plain JS, no framework); without it the form posts as usual.
_UPLOAD = _STATIC.joinpath("media-upload.js").read_text(encoding="utf-8")
# The editor's media picker: its Insert buttons put an embed code at the body's cursor (the panel is htmx's).
_PICKER = _STATIC.joinpath("media-picker.js").read_text(encoding="utf-8")


class AuthPages(Controller):
    """``/dashboard/``, ``/dashboard/login``, ``/dashboard/logout``."""

    path = "/"

    @get("/login")
    async def login_form(self, request: Request[Any, Any, Any]) -> Response[str]:
        """The sign-in form (it also starts the session that holds the CSRF token)."""
        return page(request, "login.html")

    @post("/login", sync_to_thread=True)
    def login(self, request: Request[Any, Any, Any], data: FormData, services: Services) -> Response[Any]:
        """Check the pasted token; the session keeps only its id."""
        try:
            principal = services.tokens.resolve(f"Bearer {text(data, 'token').strip()}")
        except Unauthorized as exc:
            error = {"level": "error", "message": "That token is not valid (or was revoked).", "code": exc.code}
            return page(request, "login.html", status_code=401, errors=[error])
        sign_in(request.session, principal.token_id)
        if principal.tenant_slug is not None:
            return see_other(url("sites", principal.tenant_slug))
        return see_other(url(""))

    @post("/logout")
    async def logout(self, request: Request[Any, Any, Any]) -> Response[Any]:
        """Forget the sign-in: the session keeps nothing but the goodbye message."""
        request.session.clear()
        notice(request, "You are signed out.")
        return see_other(url("login"))

    @get("/", sync_to_thread=True)
    def index(self, request: Request[Any, Any, Any], signed_in: Principal, services: Services) -> Response[Any]:
        """A member goes to their site; an operator picks one."""
        if signed_in.tenant_slug is not None:
            return see_other(url("sites", signed_in.tenant_slug))
        return page(request, "sites.html", principal=signed_in, tenants=services.tenants.list())

    @get(
        "/static/dashboard.css",
        media_type="text/css",
        opt={"skip_session": True},
        response_headers=[ResponseHeader(name="Cache-Control", value="public, max-age=3600")],
    )
    async def stylesheet(self) -> str:
        """The one stylesheet (served from the package: the dashboard works offline)."""
        return _CSS

    @get(
        "/static/htmx.min.js",
        media_type="text/javascript",
        opt={"skip_session": True},
        response_headers=[ResponseHeader(name="Cache-Control", value="public, max-age=86400")],
    )
    async def htmx(self) -> str:
        """htmx, for partial updates (search as you type, live preview, live delivery status)."""
        return _HTMX

    @get(
        "/static/media-upload.js",
        media_type="text/javascript",
        opt={"skip_session": True},
        response_headers=[ResponseHeader(name="Cache-Control", value="public, max-age=3600")],
    )
    async def media_upload(self) -> str:
        """The media library's drag-and-drop upload with progress (an enhancement of the plain form)."""
        return _UPLOAD

    @get(
        "/static/media-picker.js",
        media_type="text/javascript",
        opt={"skip_session": True},
        response_headers=[ResponseHeader(name="Cache-Control", value="public, max-age=3600")],
    )
    async def picker_script(self) -> str:
        """The editor's media picker: insert a file's embed code at the cursor (an enhancement of the panel)."""
        return _PICKER


__all__ = ["AuthPages"]
