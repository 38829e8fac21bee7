"""Backups of a site: the command that asks for one, and the catalog."""

from __future__ import annotations

from control_plane.auth import Principal
from control_plane.commands import Command, CommandGate
from dispatch.runtime import CommandResult, RuntimeClient
from dispatch.runtime.backups import BackupOut, GetBackup, ListBackups, RequestBackup


class BackupService:
    def __init__(self, gate: CommandGate, runtime: RuntimeClient) -> None:
        self.gate = gate
        self.runtime = runtime

    def request(
        self, principal: Principal, tenant: str, *, confirm: bool, idempotency_key: str | None = None
    ) -> CommandResult:
        """A backup of the whole site now (site.admin, with confirmation)."""
        return self.gate.execute(
            principal,
            Command(
                tenant,
                "site.admin",
                "backups.request",
                RequestBackup(),
                confirm=confirm,
                idempotency_key=idempotency_key,
            ),
        )

    def list(self, principal: Principal, tenant: str, *, limit: int = 100, offset: int = 0) -> list[BackupOut]:
        """The site's backups, newest first."""
        actor = self.gate.reader(principal, tenant)
        result: list[BackupOut] = self.runtime.transport.query(tenant, actor, ListBackups(limit=limit, offset=offset))
        return result

    def get(self, principal: Principal, tenant: str, backup_id: str) -> BackupOut:
        actor = self.gate.reader(principal, tenant)
        result: BackupOut = self.runtime.transport.query(tenant, actor, GetBackup(backup_id=backup_id))
        return result


__all__ = ["BackupService"]
