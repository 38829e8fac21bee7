"""Custom fields: each query and command built once, for the API and the CLI alike."""

from __future__ import annotations

import builtins
from typing import Any

from control_plane.auth import Principal
from control_plane.commands import Command, CommandGate
from dispatch.runtime import CommandResult, RuntimeClient
from dispatch.runtime import fields as f


class FieldService:
    def __init__(self, gate: CommandGate, runtime: RuntimeClient) -> None:
        self.gate = gate
        self.runtime = runtime

    def list(self, principal: Principal, tenant: str, *, kind: str | None = None) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = self.runtime.query(
            tenant, self.gate.reader(principal, tenant), f.ListFields(kind=kind)
        )
        return found

    def migration(self, principal: Principal, tenant: str, migration_id: str) -> dict[str, Any]:
        reader = self.gate.reader(principal, tenant)
        found: dict[str, Any] = self.runtime.query(tenant, reader, f.GetFieldMigration(migration_id=migration_id))
        return found

    def migrations(self, principal: Principal, tenant: str, *, limit: int = 20) -> builtins.list[dict[str, Any]]:
        """The most recent migrations, newest first, each with its progress and what could not convert."""
        reader = self.gate.reader(principal, tenant)
        found: builtins.list[dict[str, Any]] = self.runtime.query(tenant, reader, f.ListFieldMigrations(limit=limit))
        return found

    def change(
        self,
        principal: Principal,
        tenant: str,
        message: f.ChangeField,
        *,
        confirm: bool,
        idempotency_key: str | None = None,
    ) -> CommandResult:
        """Queue migrate_field: the change applies to every document before the definition switches over."""
        return self.gate.execute(
            principal,
            Command(
                tenant,
                "site.admin",
                f"fields.change:{message.kind}:{message.field}",
                message,
                confirm=confirm,
                idempotency_key=idempotency_key,
            ),
        )


__all__ = ["FieldService"]
