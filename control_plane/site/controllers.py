"""Tenant API: site resources and the search index."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Response, get, post, put

from control_plane.auth import Principal
from control_plane.container import Services
from control_plane.http.params import IdempotencyKey
from control_plane.http.responses import respond
from control_plane.site.schemas import RebuildRequest, ResourceOut, ResourceUpdate, SettingsUpdate, SiteSettingsOut


class SiteController(Controller):
    path = "/api/tenants/{tenant:str}"
    tags = ("site",)

    @get("/site/{name:str}", sync_to_thread=True)
    def read_resource(self, tenant: str, name: str, principal: Principal, services: Services) -> ResourceOut:
        """Navigation, redirects or theme: draft and published versions."""
        return services.site.resource(principal, tenant, name)

    @put("/site/{name:str}", sync_to_thread=True)
    def update_resource(
        self,
        tenant: str,
        name: str,
        data: ResourceUpdate,
        principal: Principal,
        services: Services,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[dict[str, Any]]:
        """Save a new draft version of navigation, redirects or theme (publish it with a release)."""
        return respond(services.site.update_resource(principal, tenant, name, data, idempotency_key=idempotency_key))

    @get("/settings", sync_to_thread=True)
    def read_settings(self, tenant: str, principal: Principal, services: Services) -> SiteSettingsOut:
        """The site's title and timezone."""
        return services.site.settings(principal, tenant)

    @put("/settings", sync_to_thread=True)
    def update_settings(
        self,
        tenant: str,
        data: SettingsUpdate,
        principal: Principal,
        services: Services,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[dict[str, Any]]:
        """Set the site's title, description, language (a BCP 47 tag such as ``pt-BR``) and timezone (an IANA
        name such as ``Europe/Berlin``); a field left out stays. Every cached page that shows them is purged
        before the answer, so the next request sees the change."""
        return respond(services.site.configure(principal, tenant, data, idempotency_key=idempotency_key))

    @post("/search/rebuild", sync_to_thread=True, status_code=202)
    def rebuild_search(
        self,
        tenant: str,
        data: RebuildRequest,
        principal: Principal,
        services: Services,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[dict[str, Any]]:
        """Replay every published document into a fresh index (no-op if populated unless forced)."""
        return respond(
            services.site.rebuild_search(principal, tenant, force=data.force, idempotency_key=idempotency_key)
        )


__all__ = ["SiteController"]
