"""Tenant API: the media library. Operator API: a tenant's media policy."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Response, delete, get, post, put
from litestar.enums import RequestEncodingType
from litestar.params import Body, Parameter

from control_plane.auth import Principal
from control_plane.container import Services
from control_plane.http.errors import error_responses
from control_plane.http.guards import MULTIPART, operator_only
from control_plane.http.params import IdempotencyKey, Limit, Offset
from control_plane.http.responses import respond
from control_plane.http.schemas import ConfirmRequest
from control_plane.media.schemas import MediaOut, MediaPolicyOut, MediaPolicyUpdate, MediaState, MediaUpload

SearchText = Annotated[str | None, Parameter(required=False, min_length=1, max_length=200)]
# The route option that tells the edge guards this handler takes a multipart body, and create_app its size cap.
UPLOAD_OPT = {"body": MULTIPART}


class MediaController(Controller):
    path = "/api/tenants/{tenant:str}/media"
    tags = ("media",)

    @post("/", sync_to_thread=True, status_code=201, opt=UPLOAD_OPT)
    def upload(
        self,
        tenant: str,
        data: Annotated[MediaUpload, Body(media_type=RequestEncodingType.MULTI_PART)],
        principal: Principal,
        services: Services,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[dict[str, Any]]:
        """Upload a file (multipart part ``file``): 201 with its id and public URL.

        Its type is told from its bytes (PNG, JPEG, GIF, WebP, PDF, MP4, WebM, MP3; images get width and
        height); over the tenant's limit is a 413 ``media_too_large``, any other type a 415
        ``media_type_not_allowed``, and nothing is stored.
        """
        content = data.file.file.read()
        result = services.media.upload(principal, tenant, data.file.filename, content, idempotency_key=idempotency_key)
        return respond(result)

    @get("/", sync_to_thread=True)
    def list(
        self,
        tenant: str,
        principal: Principal,
        services: Services,
        q: SearchText = None,
        status: MediaState = "active",
        limit: Limit = 100,
        offset: Offset = 0,
    ) -> list[MediaOut]:
        """Files newest first; ``q`` searches names; ``status=deleted`` lists the trash, ``all`` both."""
        return services.media.list(principal, tenant, q=q, state=status, limit=limit, offset=offset)

    @get("/policy", sync_to_thread=True)
    def policy(self, tenant: str, principal: Principal, services: Services) -> MediaPolicyOut:
        """The site's largest upload and how long deleted files stay restorable."""
        return services.media.policy(principal, tenant)

    @post("/sweep", sync_to_thread=True, status_code=202)
    def sweep(
        self,
        tenant: str,
        principal: Principal,
        services: Services,
        data: ConfirmRequest | None = None,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[dict[str, Any]]:
        """Run sweep_media now (it also runs nightly): 202 with its operation, whose outcome lists purged and kept."""
        data = data or ConfirmRequest()
        return respond(services.media.sweep(principal, tenant, confirm=data.confirm, idempotency_key=idempotency_key))

    @get("/{media_id:str}", sync_to_thread=True)
    def read(self, tenant: str, media_id: str, principal: Principal, services: Services) -> MediaOut:
        """One file (live or in the trash) and where it is used: ``used_by`` lists the documents and the versions
        still in retention naming it (in the body or a custom field), the same scan the sweep trusts."""
        return services.media.get(principal, tenant, media_id)

    @delete("/{media_id:str}", sync_to_thread=True, status_code=200)
    def remove(self, tenant: str, media_id: str, principal: Principal, services: Services) -> Response[dict[str, Any]]:
        """Move a file to the trash; its URL keeps working until the sweep removes it."""
        return respond(services.media.delete(principal, tenant, media_id))

    @post("/{media_id:str}/restore", sync_to_thread=True, status_code=200)
    def restore(self, tenant: str, media_id: str, principal: Principal, services: Services) -> Response[dict[str, Any]]:
        """Take a file out of the trash within its retention window (409 ``media_retention_passed`` after)."""
        return respond(services.media.restore(principal, tenant, media_id))


class MediaPolicyController(Controller):
    path = "/ops/tenants/{slug:str}/media-policy"
    tags = ("operators",)
    guards = (operator_only,)

    @put("/", sync_to_thread=True, responses=error_responses(423))
    def set_policy(
        self, slug: str, data: MediaPolicyUpdate, principal: Principal, services: Services
    ) -> Response[dict[str, Any]]:
        """Set a tenant's largest upload (bytes) and soft-delete retention (days)."""
        return respond(
            services.media.set_policy(principal, slug, max_bytes=data.max_bytes, retention_days=data.retention_days)
        )


__all__ = ["UPLOAD_OPT", "MediaController", "MediaPolicyController"]
