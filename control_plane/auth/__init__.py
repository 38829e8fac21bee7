"""Who is asking: bearer tokens (stored hashed) and the principal they resolve to."""

from control_plane.auth.principals import Principal
from control_plane.auth.tokens import (
    MEMBER_ROLES,
    TokenService,
    hash_token,
    new_member_token,
    new_operator_token,
    new_token_for,
)

__all__ = [
    "MEMBER_ROLES",
    "Principal",
    "TokenService",
    "hash_token",
    "new_member_token",
    "new_operator_token",
    "new_token_for",
]
