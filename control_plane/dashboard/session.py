"""The dashboard's browser session: an encrypted, HttpOnly, SameSite=Lax cookie.

The cookie holds only the signed-in token's *id* (never the token), a per-session
CSRF token, the sign-in time and pending flash messages. Litestar's cookie backend
encrypts and authenticates it with AES-GCM under a key derived from
``PRESSROOM_SESSION_SECRET``; without that variable each process draws a random
key, so sessions end when it restarts and do not cross replicas (a warning says so).
"""

from __future__ import annotations

import hashlib
import os
import secrets
import time
from collections.abc import Callable, Mapping
from typing import Any

import structlog
from litestar.middleware.session.base import SessionMiddleware
from litestar.middleware.session.client_side import ClientSideSessionBackend, CookieBackendConfig
from litestar.types import ASGIApp

log = structlog.get_logger("pressroom.dashboard")

SECRET_VAR = "PRESSROOM_SESSION_SECRET"
SECURE_VAR = "PRESSROOM_SESSION_COOKIE_SECURE"
COOKIE_NAME = "pressroom_session"
COOKIE_PATH = "/dashboard"
MAX_AGE_SECONDS = 12 * 60 * 60  # idle and absolute lifetime of a sign-in
MIN_SECRET_LENGTH = 16
_MAX_FLASHES = 5


def session_secret(environ: Mapping[str, str] | None = None) -> bytes:
    """The 32-byte cookie key: SHA-256 of the configured secret, else random for this process."""
    env = os.environ if environ is None else environ
    configured = env.get(SECRET_VAR, "")
    if configured:
        if len(configured) < MIN_SECRET_LENGTH:
            raise ValueError(f"{SECRET_VAR} must be at least {MIN_SECRET_LENGTH} characters")
        return hashlib.sha256(b"pressroom-dashboard-session\0" + configured.encode()).digest()
    log.warning("dashboard.session_secret_random",
                message=f"{SECRET_VAR} is not set: dashboard sign-ins end when this process restarts "
                        "and are not shared between replicas.")
    return secrets.token_bytes(32)


def session_config(environ: Mapping[str, str] | None = None) -> CookieBackendConfig:
    """Cookie session settings, read from the environment once when the app is built."""
    env = os.environ if environ is None else environ
    return CookieBackendConfig(
        secret=session_secret(env),
        key=COOKIE_NAME,
        path=COOKIE_PATH,
        max_age=MAX_AGE_SECONDS,
        httponly=True,
        samesite="lax",
        secure=env.get(SECURE_VAR, "") in {"1", "true", "yes"},
    )


def session_middleware(environ: Mapping[str, str] | None = None) -> Callable[[ASGIApp], ASGIApp]:
    """The session middleware as a factory closure.

    Litestar deep-copies a router when it is registered, and the backend's AES-GCM
    key object cannot be copied; a function is copied by reference, so the closure
    keeps one backend (one key) for the process.
    """
    backend = ClientSideSessionBackend(config=session_config(environ))

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
    session.update({"token_id": token_id, "signed_in_at": int(time.time()),
                    "csrf": secrets.token_urlsafe(32)})


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
    queued = list(session.get("flash") or [])[-(_MAX_FLASHES - 1):]
    queued.append({"level": level, "message": message, "code": code})
    session["flash"] = queued


def take_flashes(session: dict[str, Any]) -> list[dict[str, Any]]:
    """The queued messages, removed from the session."""
    return list(session.pop("flash", None) or [])


__all__ = ["COOKIE_NAME", "COOKIE_PATH", "csrf_token", "flash", "session_config", "session_middleware",
           "session_secret", "sign_in",
           "signed_in_token_id", "take_flashes"]
