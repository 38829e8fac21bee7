"""The control plane's half of the command layer: one path for every effect a user asks for.

authenticate (the edge) → tenant access (404 for other tenants) → tenant active
(423) → permission (403) → confirmation (400) → the tenant runtime, which binds
the idempotency key to the request hash (repeat = first answer, other body =
409), checks the quota (429) and runs the tenant-runtime action, its audit row
and the idempotency record in ONE transaction, then hands committed work to
the relay. Area services build each command once; the API, the dashboard and
the CLI pass only the principal, the idempotency key and the confirmation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from control_plane.auth import Principal
from control_plane.db.models import Tenant
from control_plane.metrics.instruments import observe_command
from control_plane.tenants.services import TenantService
from dispatch.runtime import CommandResult, RuntimeClient
from dispatch.runtime import messages as m
from tenant_runtime.errors import ConfirmationRequired, TenantSuspended
from tenant_runtime.workspace import Actor

_EFFECT = "This changes the public site"
# What counts against a tenant's publishes per hour.
PUBLISH_QUOTA_KINDS = ("publish", "release")


@dataclass(frozen=True)
class Command:
    """A tenant command as an area service builds it."""

    tenant: str
    permission: str
    scope: str  # the route it stands for, e.g. "documents.publish:doc_x"
    message: m.Message
    confirm: bool | None = None  # None: no confirmation needed
    idempotency_key: str | None = None
    counts_as_publish: bool = False


class CommandGate:
    """Checks what only the control plane knows, then runs the command in the tenant's runtime."""

    def __init__(self, tenants: TenantService, runtime: RuntimeClient) -> None:
        self.tenants = tenants
        self.runtime = runtime

    def execute(self, principal: Principal, command: Command) -> CommandResult:
        """Run ``command`` for ``principal``, counted by kind and result (``pressroom_commands_total``)."""
        with observe_command(command.message) as outcome:
            outcome.result = self._execute(principal, command)
            return outcome.result

    def admit(
        self,
        principal: Principal,
        tenant_slug: str,
        permission: str,
        confirm: bool | None = None,
        *,
        effect: str = _EFFECT,
    ) -> tuple[Actor, Tenant]:
        """The checks every command passes in this order: tenant access (404), active (423), permission
        (403), confirmation (400, ``effect`` says what it would do); the actor and the tenant's row."""
        return self._admit(principal, tenant_slug, permission, confirm, effect, self.tenants.get)

    def _admit(
        self,
        principal: Principal,
        tenant_slug: str,
        permission: str,
        confirm: bool | None,
        effect: str,
        tenant_row: Callable[[str], Tenant],
    ) -> tuple[Actor, Tenant]:
        actor = principal.tenant_actor(tenant_slug)
        tenant = tenant_row(tenant_slug)
        if tenant.status != "active":
            why = f" {tenant.status_reason}" if tenant.status_reason else ""
            raise TenantSuspended(
                f"This site is suspended by the platform's operator.{why}",
                details={"tenant": tenant.slug, "reason": tenant.status_reason},
            )
        actor.require(permission)
        if confirm is False:
            raise ConfirmationRequired(f'{effect}: send {{"confirm": true}} to go ahead.', details={"field": "confirm"})
        return actor, tenant

    def _execute(self, principal: Principal, command: Command) -> CommandResult:
        # The tenant's row as of the last control-plane change (it is only read here).
        actor, tenant = self._admit(
            principal, command.tenant, command.permission, command.confirm, _EFFECT, self.tenants.current
        )
        quota = m.Quota(PUBLISH_QUOTA_KINDS, tenant.publishes_per_hour) if command.counts_as_publish else None
        return self.runtime.execute(
            command.tenant,
            m.Command(
                actor=m.ActorRef(id=actor.id, role=actor.role),
                scope=command.scope,
                message=command.message,
                idempotency_key=command.idempotency_key,
                quota=quota,
            ),
        )

    def reader(self, principal: Principal, tenant: str, permission: str = "content.view") -> m.ActorRef:
        """Who reads ``tenant``'s data: tenant access and ``permission`` (the runtime checks ``content.view``
        again)."""
        ref = principal.actor_ref(tenant)
        self.tenants.current(tenant)
        principal.tenant_actor(tenant).require(permission)
        return ref


__all__ = ["PUBLISH_QUOTA_KINDS", "Command", "CommandGate"]
