"""Backups of a site: the command that asks for one, and the catalog."""

from __future__ import annotations

from datetime import datetime

from control_plane.auth import Principal, TokenService
from control_plane.commands import Command, CommandGate
from dispatch.runtime import CommandResult, RuntimeClient
from dispatch.runtime.backups import (
    BackupHealthOut,
    BackupOut,
    GetBackup,
    GetBackupHealth,
    ListBackups,
    PlanRestore,
    RequestBackup,
    RequestImport,
    RequestRestore,
    RestorePlanOut,
    ShareBackup,
    UndoRestore,
)
from tenant_runtime.errors import ConfirmationRequired, NotFound
from tenant_runtime.lifecycle.download import Download, open_download
from tenant_runtime.storage import ObjectStore


class BackupService:
    def __init__(self, gate: CommandGate, runtime: RuntimeClient, tokens: TokenService, store: ObjectStore) -> None:
        self.gate = gate
        self.runtime = runtime
        self.tokens = tokens
        self.store = store  # the shared object store, read for downloads only (through the tenant's prefix)

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

    def import_backup(
        self,
        principal: Principal,
        tenant: str,
        *,
        source_tenant: str,
        backup_id: str,
        confirm: bool,
        idempotency_key: str | None = None,
    ) -> CommandResult:
        """Replace the site with a backup of its own or of another tenant; 202 with the operation.

        Another tenant's backup needs an operator, or a member holding ``site.admin`` on both tenants (the
        same user, a member of each). A member lacking it on the source gets the 404 of a tenant that does
        not exist: an import never tells who cannot read them that another tenant or its backup exists.
        The source's runtime shares the backup first (audited there as ``backup.share``, by the same user)
        and answers its manifest's digest: the import is pinned to it.
        """
        digest = None
        if source_tenant != tenant:
            # This tenant's checks first (its own 404 and 403), then the source's; nothing is written before.
            principal.tenant_actor(tenant).require("site.admin")
            source = principal if principal.is_operator else self._admin_of_source(principal, source_tenant)
            if not confirm:
                raise ConfirmationRequired(
                    'This replaces the whole site: send {"confirm": true} to go ahead.', details={"field": "confirm"}
                )
            shared = self.gate.execute(
                source,
                Command(source_tenant, "site.admin", f"backups.share:{backup_id}", ShareBackup(backup_id, tenant)),
            )
            digest = shared.body["manifest_sha256"]
        message = RequestImport(source_tenant=source_tenant, backup_id=backup_id, manifest_sha256=digest)
        return self.gate.execute(
            principal,
            Command(
                tenant,
                "site.admin",
                f"imports.request:{source_tenant}:{backup_id}",
                message,
                confirm=confirm,
                idempotency_key=idempotency_key,
            ),
        )

    def _admin_of_source(self, principal: Principal, source_tenant: str) -> Principal:
        """The member as a member of the source with ``site.admin`` there, or the 404 of a missing tenant."""
        member = self.tokens.as_member_of(principal, source_tenant)
        if member is None or "site.admin" not in member.actor().permissions:
            raise NotFound(f"Tenant {source_tenant!r} not found.", details={"tenant": source_tenant})
        return member

    def plan_restore(self, principal: Principal, tenant: str, at: datetime) -> RestorePlanOut:
        """The dry run: what a restore to ``at`` would change (site.admin); nothing is written."""
        actor = self.gate.reader(principal, tenant)
        principal.tenant_actor(tenant).require("site.admin")
        result: RestorePlanOut = self.runtime.transport.query(tenant, actor, PlanRestore(at=at))
        return result

    def restore(
        self, principal: Principal, tenant: str, at: datetime, *, confirm: bool, idempotency_key: str | None = None
    ) -> CommandResult:
        """Put the site back to ``at``; its snapshot (a backup) is taken first, so the restore can be undone."""
        return self.gate.execute(
            principal,
            Command(
                tenant,
                "site.admin",
                "restores.request",
                RequestRestore(at=at),
                confirm=confirm,
                idempotency_key=idempotency_key,
            ),
        )

    def undo_restore(
        self, principal: Principal, tenant: str, *, confirm: bool, idempotency_key: str | None = None
    ) -> CommandResult:
        """Import the snapshot the last restore took: the site as it was before it."""
        return self.gate.execute(
            principal,
            Command(
                tenant, "site.admin", "restores.undo", UndoRestore(), confirm=confirm, idempotency_key=idempotency_key
            ),
        )

    def list(self, principal: Principal, tenant: str, *, limit: int = 100, offset: int = 0) -> list[BackupOut]:
        """The site's backups, newest first."""
        actor = self.gate.reader(principal, tenant)
        result: list[BackupOut] = self.runtime.transport.query(tenant, actor, ListBackups(limit=limit, offset=offset))
        return result

    def health(self, principal: Principal, tenant: str) -> BackupHealthOut:
        """The nightly chores (last fire, lateness, next fire), the last good backup's age and its alarm."""
        actor = self.gate.reader(principal, tenant)
        result: BackupHealthOut = self.runtime.transport.query(tenant, actor, GetBackupHealth())
        return result

    def download(self, principal: Principal, tenant: str, backup_id: str) -> Download:
        """A whole backup of the site, ready to stream as one tar (site.admin: it is all of the site's data)."""
        actor = self.gate.reader(principal, tenant)
        principal.tenant_actor(tenant).require("site.admin")
        backup: BackupOut = self.runtime.transport.query(tenant, actor, GetBackup(backup_id=backup_id, whole=True))
        assert backup.manifest_sha256 is not None  # a backup written whole has its digest
        return open_download(self.store, tenant, backup_id, backup.manifest_sha256)

    def get(self, principal: Principal, tenant: str, backup_id: str) -> BackupOut:
        actor = self.gate.reader(principal, tenant)
        result: BackupOut = self.runtime.transport.query(tenant, actor, GetBackup(backup_id=backup_id))
        return result


__all__ = ["BackupService"]
