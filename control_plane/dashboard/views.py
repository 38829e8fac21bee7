"""Rendering dashboard pages: one autoescaping Jinja2 environment, HTML responses, flash messages."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from litestar import MediaType, Request, Response
from litestar.background_tasks import BackgroundTask
from litestar.response import Redirect

from control_plane.dashboard.local_time import local_and_utc
from control_plane.dashboard.session import csrf_token, flash, take_flashes
from tenant_runtime.errors import PressroomError
from tenant_runtime.media.references import embed_markdown

if TYPE_CHECKING:
    from dispatch.runtime import MediaOut

PREFIX = "/dashboard"

# Messages for people where the command layer's own message speaks to API clients.
FRIENDLY: dict[str, str] = {
    "confirmation_required": "Tick the confirmation box to go ahead: this changes the public site.",
    "version_conflict": "Someone saved this document after you opened it, so your change was not applied. "
    "Open the latest version and apply your edits again.",
    "idempotency_key_reused": "This form was already sent with other values; reload the page and try again.",
    "last_owner": "This is the site's last owner: make another member an owner first.",
    "last_owner_token": "This is the last token any owner holds: create another owner token first, "
    "or nobody could manage the site.",
    "member_exists": "This person is a member of the site already.",
}

environment = Environment(
    loader=PackageLoader("control_plane.dashboard", "templates"),
    autoescape=True,  # every template, whatever its name: user text lands in all of them
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def _when(value: datetime | None) -> str:
    """``2026-11-29 14:03 UTC`` (the dashboard speaks UTC, like the operation records)."""
    if value is None:
        return "—"
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _dollars(micros: int | None) -> str:
    """``$0.0123`` from millionths of a dollar (the ledger's unit)."""
    return "—" if micros is None else f"${micros / 1_000_000:,.4f}"


def _age(seconds: float | None) -> str:
    """``3 h 12 min``, ``2 d 4 h`` or ``45 s``: how long ago, or how late."""
    if seconds is None:
        return "—"
    whole = int(max(0.0, seconds))
    days, hours, minutes = whole // 86400, whole % 86400 // 3600, whole % 3600 // 60
    if days:
        return f"{days} d {hours} h"
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min" if minutes else f"{whole} s"


def _embed(item: MediaOut) -> str:
    """A file's embed code: what its page shows to copy and what the editor's media picker inserts."""
    return embed_markdown(item.id, item.name, item.content_type)


environment.filters["when"] = _when
environment.filters["age"] = _age
environment.filters["dollars"] = _dollars
environment.filters["embed"] = _embed  # {{ item | embed }}
environment.filters["local"] = local_and_utc  # {{ op.scheduled_for | local(settings.timezone) }}


def url(*parts: str | int) -> str:
    """A dashboard path from its segments, e.g. ``url("sites", "acme", "operations")``."""
    return "/".join([PREFIX, *map(str, parts)])


def is_htmx(request: Request[Any, Any, Any]) -> bool:
    """Whether htmx sent the request (it swaps part of the page instead of loading a new one)."""
    return request.headers.get("hx-request") == "true"


def fragment(template: str, **context: Any) -> Response[str]:
    """A piece of a page (``dashboard/_{name}.html``) for htmx to swap in."""
    context.setdefault("url", url)
    html = environment.get_template(f"dashboard/{template}").render(**context)
    return Response(html, status_code=200, media_type=MediaType.HTML)


def error_message(exc: PressroomError) -> dict[str, Any]:
    """A flash entry for an error of the command layer: a readable message and its stable code."""
    return {"level": "error", "message": FRIENDLY.get(exc.code, exc.message), "code": exc.code}


def flash_error(request: Request[Any, Any, Any], exc: PressroomError) -> None:
    """Queue ``exc`` for the next page."""
    entry = error_message(exc)
    flash(request.session, entry["level"], entry["message"], entry["code"])


def notice(request: Request[Any, Any, Any], message: str) -> None:
    """Queue a success message for the next page."""
    flash(request.session, "success", message)


def page(
    request: Request[Any, Any, Any],
    template: str,
    *,
    status_code: int = 200,
    errors: list[dict[str, Any]] | None = None,
    **context: Any,
) -> Response[str]:
    """Render ``dashboard/{template}`` with the session's CSRF token and queued messages."""
    context.setdefault("principal", None)
    context.setdefault("site", None)
    query = request.url.query
    context.setdefault("self_url", request.url.path + (f"?{query}" if query else ""))  # what live parts poll
    html = environment.get_template(f"dashboard/{template}").render(
        csrf_token=csrf_token(request.session),
        flashes=[*take_flashes(request.session), *(errors or [])],
        url=url,
        **context,
    )
    return Response(html, status_code=status_code, media_type=MediaType.HTML)


def error_page(status: int, code: str, message: str) -> Response[str]:
    """A standalone error page (no session: it may answer a request the session never reached)."""
    html = environment.get_template("dashboard/error.html").render(
        status=status,
        code=code,
        message=message,
        url=url,
        principal=None,
        site=None,
        flashes=[],
        csrf_token="",
        self_url="",
    )
    return Response(html, status_code=status, media_type=MediaType.HTML)


def see_other(path: str, *, background: BackgroundTask | None = None) -> Redirect:
    """A 303 to ``path`` (Post/Redirect/Get)."""
    return Redirect(path, status_code=303, background=background)


__all__ = [
    "FRIENDLY",
    "environment",
    "error_message",
    "error_page",
    "flash_error",
    "fragment",
    "is_htmx",
    "notice",
    "page",
    "see_other",
    "url",
]
