"""Tenant API: a document's revisions."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Response, get, post, put
from litestar.params import Parameter

from control_plane.auth import Principal
from control_plane.container import Services
from control_plane.http.params import IdempotencyKey, Limit, Offset
from control_plane.http.responses import respond
from control_plane.http.schemas import ConfirmRequest
from control_plane.versions.schemas import EntityType, RestoreRequest, RetentionPolicyIn, RevisionDiffOut, RevisionOut


class RevisionController(Controller):
    path = "/api/tenants/{tenant:str}/documents/{document_id:str}/revisions"
    tags = ("documents",)

    @get("/", sync_to_thread=True)
    def list(
        self,
        tenant: str,
        document_id: str,
        principal: Principal,
        services: Services,
        limit: Limit = 100,
        offset: Offset = 0,
    ) -> list[RevisionOut]:
        """The document's versions, newest first."""
        return services.revisions.list(principal, tenant, document_id, limit=limit, offset=offset)

    @get("/diff", sync_to_thread=True)
    def diff(
        self,
        tenant: str,
        document_id: str,
        principal: Principal,
        services: Services,
        from_version: Annotated[int, Parameter(query="from", ge=1, le=2**31)],
        to_version: Annotated[int, Parameter(query="to", ge=1, le=2**31)],
    ) -> RevisionDiffOut:
        """A readable word-level diff of two versions: ``?from=1&to=3``."""
        return services.revisions.diff(principal, tenant, document_id, from_version, to_version)

    @get("/{version:int}", sync_to_thread=True)
    def read(
        self, tenant: str, document_id: str, version: int, principal: Principal, services: Services
    ) -> RevisionOut:
        """One version with its body."""
        return services.revisions.get(principal, tenant, document_id, version)

    @post("/{version:int}/restore", sync_to_thread=True, status_code=200)
    def restore(
        self,
        tenant: str,
        document_id: str,
        version: int,
        principal: Principal,
        services: Services,
        data: RestoreRequest | None = None,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[dict[str, Any]]:
        """Restore ``version`` as a new version (200); with ``"publish": true, "confirm": true`` it is also
        published through the ordinary publish path (202 with the operation)."""
        data = data or RestoreRequest()
        return respond(
            services.revisions.restore(
                principal,
                tenant,
                document_id,
                version,
                publish=data.publish,
                confirm=data.confirm,
                expected_version=data.version,
                idempotency_key=idempotency_key,
            )
        )


class RetentionController(Controller):
    path = "/api/tenants/{tenant:str}/retention"
    tags = ("versions",)

    @get("/", sync_to_thread=True)
    def read(self, tenant: str, principal: Principal, services: Services) -> dict[str, Any]:
        """The policy in force for each versioned entity type, and spillover waiting to be deleted."""
        return services.retention.get(principal, tenant)

    @put("/{entity_type:str}", sync_to_thread=True)
    def set_policy(
        self,
        tenant: str,
        entity_type: EntityType,
        data: RetentionPolicyIn,
        principal: Principal,
        services: Services,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[dict[str, Any]]:
        """Set one entity type's policy (``site.admin``)."""
        return respond(
            services.retention.set_policy(
                principal,
                tenant,
                entity_type,
                keep_last=data.keep_last,
                keep_days=data.keep_days,
                idempotency_key=idempotency_key,
            )
        )

    @post("/prune", sync_to_thread=True, status_code=202)
    def prune(
        self,
        tenant: str,
        principal: Principal,
        services: Services,
        data: ConfirmRequest | None = None,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[dict[str, Any]]:
        """Run prune_policies now: 202 with the operation (it also runs nightly at 04:00 UTC)."""
        data = data or ConfirmRequest()
        return respond(
            services.retention.prune(principal, tenant, confirm=data.confirm, idempotency_key=idempotency_key)
        )


__all__ = ["RetentionController", "RevisionController"]
