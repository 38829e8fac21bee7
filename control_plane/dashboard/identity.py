"""Who a dashboard session is: the session holds a token id, resolved again on every request.

Resolving per request means a revoked token or a removed membership ends the
browser session at once, exactly as it ends API access.
"""

from __future__ import annotations

from sqlalchemy import Engine

from control_plane.services.auth import Principal, TokenService


def principal_for_token_id(engine: Engine, token_id: str) -> Principal | None:
    """The principal of an unrevoked token, or None."""
    return TokenService(engine).resolve_id(token_id)


__all__ = ["principal_for_token_id"]
