"""Who is acting, and what their role lets them do."""

from __future__ import annotations

from dataclasses import dataclass, field

from tenant_runtime.errors import Forbidden

ROLE_PERMISSIONS: dict[str, frozenset[str]] = {
    "owner": frozenset({"content.view", "content.edit", "content.publish", "site.admin"}),
    "editor": frozenset({"content.view", "content.edit", "content.publish"}),
    "viewer": frozenset({"content.view"}),
    "system": frozenset({"content.view", "content.edit", "content.publish", "site.admin"}),
}


@dataclass(frozen=True)
class Actor:
    """The authenticated principal behind a command, as the audit log names it."""

    id: str
    role: str
    permissions: frozenset[str] = field(default=frozenset())

    @classmethod
    def for_role(cls, actor_id: str, role: str) -> Actor:
        return cls(id=actor_id, role=role, permissions=ROLE_PERMISSIONS.get(role, frozenset()))

    def require(self, permission: str) -> None:
        if permission not in self.permissions:
            raise Forbidden(
                f"Your role ({self.role}) does not allow {permission}.",
                details={"permission": permission, "role": self.role},
            )


SYSTEM = Actor.for_role("system", "system")
