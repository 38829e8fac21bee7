"""Who a request is: an operator, or a member of exactly one tenant with a role."""

from __future__ import annotations

from dataclasses import dataclass

from dispatch.runtime.messages import ActorRef
from tenant_runtime.errors import NotFound
from tenant_runtime.workspace import Actor


@dataclass(frozen=True)
class Principal:
    """Who a request is: an operator, or a member of exactly one tenant with a role."""

    token_id: str
    kind: str  # operator | member
    user_id: str | None = None
    tenant_slug: str | None = None
    role: str | None = None

    @property
    def is_operator(self) -> bool:
        return self.kind == "operator"

    def actor(self) -> Actor:
        if self.is_operator:
            return Actor.for_role(f"operator:{self.token_id}", "owner")
        return Actor.for_role(self.user_id or self.token_id, self.role or "viewer")

    def tenant_actor(self, tenant: str) -> Actor:
        """The actor for ``tenant``; another tenant's token gets NotFound, exactly like a missing tenant."""
        if not self.is_operator and self.tenant_slug != tenant:
            raise NotFound(f"Tenant {tenant!r} not found.", details={"tenant": tenant})
        return self.actor()

    def actor_ref(self, tenant: str) -> ActorRef:
        """What a tenant runtime is told of this principal (after the same tenant check)."""
        actor = self.tenant_actor(tenant)
        return ActorRef(id=actor.id, role=actor.role)


__all__ = ["Principal"]
