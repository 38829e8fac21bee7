"""The dashboard's browser session: an encrypted, HttpOnly, SameSite=Lax cookie.

The cookie holds only the signed-in token's *id* (never the token), a per-session
CSRF token, the sign-in time and pending flash messages. Litestar's cookie backend
encrypts and authenticates it with AES-GCM under a key derived from
``PRESSROOM_SESSION_SECRET`` (``ControlPlaneSettings.session_secret``); without it each
process draws a random key, so sessions end when it restarts and do not cross replicas
(a warning says so). ``make up`` keeps a secret in ``data/local-credentials.json`` and the
Helm chart one in its auth Secret, so neither runs without one.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Callable
from typing import Any

import structlog
from litestar.middleware.session.base import SessionMiddleware
from litestar.middleware.session.client_side import ClientSideSessionBackend, CookieBackendConfig
from litestar.types import ASGIApp
from pydantic import SecretStr

from control_plane.settings import ControlPlaneSettings

log = structlog.get_logger("pressroom.dashboard")

COOKIE_NAME = "pressroom_session"
COOKIE_PATH = "/dashboard"
MAX_AGE_SECONDS = 12 * 60 * 60  # idle and absolute lifetime of a sign-in
_MAX_FLASHES = 5


def session_key(configured: SecretStr | None) -> bytes:
    """The 32-byte cookie key: SHA-256 of the configured secret, else random for this process."""
    if configured is not None:
        return hashlib.sha256(b"pressroom-dashboard-session\0" + configured.get_secret_value().encode()).digest()
    log.warning(
        "dashboard.session_secret_random",
        message="PRESSROOM_SESSION_SECRET is not set: dashboard sign-ins end when this process restarts "
        "and are not shared between replicas.",
    )
    return secrets.token_bytes(32)


def session_config(settings: ControlPlaneSettings) -> CookieBackendConfig:
    """Cookie session settings, from the control plane's settings when the app is built."""
    return CookieBackendConfig(
        secret=session_key(settings.session_secret),
        key=COOKIE_NAME,
        path=COOKIE_PATH,
        max_age=MAX_AGE_SECONDS,
        httponly=True,
        samesite="lax",
        secure=settings.session_cookie_secure,
    )


def session_middleware(settings: ControlPlaneSettings) -> Callable[[ASGIApp], ASGIApp]:
    """The session middleware as a factory closure.

    Litestar deep-copies a router when it is registered, and the backend's AES-GCM
    key object cannot be copied; a function is copied by reference, so the closure
    keeps one backend (one key) for the process.
    """
    backend = ClientSideSessionBackend(config=session_config(settings))

    def middleware(app: ASGIApp) -> ASGIApp:
        return SessionMiddleware(app, backend=backend)

    return middleware


def csrf_token(session: dict[str, Any]) -> str:
    """This session's CSRF token, created on first use."""
    token = session.get("csrf")
    if not isinstance(token, str) or not token:
        token = session["csrf"] = secrets.token_urlsafe(32)
    return token


def sign_in(session: dict[str, Any], token_id: str) -> None:
    """Start a fresh session for ``token_id``: new CSRF token, nothing carried over."""
    session.clear()
    session.update({"token_id": token_id, "signed_in_at": int(time.time()), "csrf": secrets.token_urlsafe(32)})


def signed_in_token_id(session: dict[str, Any]) -> str | None:
    """The token id of a sign-in that is still within its lifetime, else None."""
    token_id, since = session.get("token_id"), session.get("signed_in_at")
    if not isinstance(token_id, str) or not isinstance(since, int):
        return None
    if time.time() - since > MAX_AGE_SECONDS:
        return None
    return token_id


def flash(session: dict[str, Any], level: str, message: str, code: str | None = None) -> None:
    """Queue a message for the next page this session sees."""
    queued = list(session.get("flash") or [])[-(_MAX_FLASHES - 1) :]
    queued.append({"level": level, "message": message, "code": code})
    session["flash"] = queued


def take_flashes(session: dict[str, Any]) -> list[dict[str, Any]]:
    """The queued messages, removed from the session."""
    return list(session.pop("flash", None) or [])


__all__ = [
    "COOKIE_NAME",
    "COOKIE_PATH",
    "csrf_token",
    "flash",
    "session_config",
    "session_key",
    "session_middleware",
    "sign_in",
    "signed_in_token_id",
    "take_flashes",
]
