"""Tenant API: backups (CONTRACT.md, "Backups and restores")."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Response, get, post
from litestar.openapi import ResponseSpec
from litestar.response import Stream

from control_plane.auth import Principal
from control_plane.backups.schemas import BackupOut, BackupRequest, ImportRequest, RestoreRequest, UndoRequest
from control_plane.container import Services
from control_plane.http.params import IdempotencyKey, Limit, Offset
from control_plane.http.responses import respond
from tenant_runtime.lifecycle.download import Download


def tar_stream(found: Download) -> Stream:
    """A backup streamed as one tar attachment (the API's download and the dashboard's)."""
    headers = {
        "content-disposition": f'attachment; filename="{found.filename}"',
        "x-content-type-options": "nosniff",
    }
    return Stream(found.chunks(), media_type="application/x-tar", headers=headers)


class BackupController(Controller):
    path = "/api/tenants/{tenant:str}/backups"
    tags = ("backups",)

    @post("/", sync_to_thread=True, status_code=202)
    def request_backup(
        self,
        tenant: str,
        data: BackupRequest,
        principal: Principal,
        services: Services,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[dict[str, Any]]:
        """Back the whole site up now: 202 with the operation; the backup shows in the list at once."""
        return respond(
            services.backups.request(principal, tenant, confirm=data.confirm, idempotency_key=idempotency_key)
        )

    @get("/", sync_to_thread=True)
    def list_backups(
        self,
        tenant: str,
        principal: Principal,
        services: Services,
        limit: Limit = 100,
        offset: Offset = 0,
    ) -> list[BackupOut]:
        """The site's backups, newest first: time, status, size, manifest digest."""
        return services.backups.list(principal, tenant, limit=limit, offset=offset)

    @get("/{backup_id:str}/download", sync_to_thread=True)
    def download_backup(self, tenant: str, backup_id: str, principal: Principal, services: Services) -> Stream:
        """The whole backup as one tar streamed from the store (manifest first, then every part it vouches for),
        each part checked against the manifest on the way (site.admin)."""
        return tar_stream(services.backups.download(principal, tenant, backup_id))

    @get("/{backup_id:str}", sync_to_thread=True)
    def read_backup(self, tenant: str, backup_id: str, principal: Principal, services: Services) -> BackupOut:
        """One backup of the site."""
        return services.backups.get(principal, tenant, backup_id)


class ImportController(Controller):
    path = "/api/tenants/{tenant:str}/imports"
    tags = ("backups",)

    @post("/", sync_to_thread=True, status_code=202)
    def request_import(
        self,
        tenant: str,
        data: ImportRequest,
        principal: Principal,
        services: Services,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[dict[str, Any]]:
        """Replace the site with a backup (this tenant's, or another's with an operator token or as a member with
        site.admin on both): verified whole before anything is written, staged, swapped in atomically."""
        return respond(
            services.backups.import_backup(
                principal,
                tenant,
                source_tenant=data.backup.tenant,
                backup_id=data.backup.id,
                confirm=data.confirm,
                idempotency_key=idempotency_key,
            )
        )


class RestoreController(Controller):
    path = "/api/tenants/{tenant:str}/restores"
    tags = ("backups",)

    @post(
        "/",
        sync_to_thread=True,
        status_code=200,
        responses={202: ResponseSpec(data_container=dict[str, Any], description="Restore queued (not a dry run)")},
    )
    def restore(
        self,
        tenant: str,
        data: RestoreRequest,
        principal: Principal,
        services: Services,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[Any]:
        """Put the site back to ``at``: ``dry_run`` (the default) answers 200 with the changes (before → after);
        ``"dry_run": false, "confirm": true`` takes a snapshot of now, then restores (202)."""
        if data.dry_run:
            return Response(services.backups.plan_restore(principal, tenant, data.at))
        return respond(
            services.backups.restore(principal, tenant, data.at, confirm=data.confirm, idempotency_key=idempotency_key)
        )

    @post("/undo", sync_to_thread=True, status_code=202)
    def undo(
        self,
        tenant: str,
        data: UndoRequest,
        principal: Principal,
        services: Services,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[dict[str, Any]]:
        """Undo the last restore: import the snapshot it took first (the site comes back byte-identical)."""
        return respond(
            services.backups.undo_restore(principal, tenant, confirm=data.confirm, idempotency_key=idempotency_key)
        )


__all__ = ["BackupController", "ImportController", "RestoreController"]
