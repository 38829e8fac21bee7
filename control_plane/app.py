"""The control-plane Litestar app: dashboard, tenant API, operator API, assembled from the areas."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from litestar import Litestar, MediaType, get
from litestar.datastructures import State
from litestar.di import Provide
from litestar.exceptions import HTTPException, NotFoundException
from litestar.openapi import OpenAPIConfig
from litestar.openapi.spec import Components

from control_plane.backups.controllers import BackupController, ImportController, RestoreController
from control_plane.container import Services
from control_plane.dashboard import build_dashboard
from control_plane.dashboard.errors import not_routed
from control_plane.documents.controllers import DocumentController
from control_plane.fields.controllers import FieldController
from control_plane.http.dependencies import provide_principal, provide_services
from control_plane.http.errors import EXCEPTION_HANDLERS, SECURITY_SCHEMES, document_errors
from control_plane.http.guards import json_api_body, takes_multipart
from control_plane.http.request_log import RequestLog, bind_tenant
from control_plane.http.schemas import StrictStructSchemaPlugin, document_optional_bodies
from control_plane.lanes.controllers import BriefController, CostController, LaneController
from control_plane.media.controllers import MediaController, MediaPolicyController
from control_plane.members.controllers import AuditController, MemberController, TokenController
from control_plane.metrics.controllers import metrics
from control_plane.operations.controllers import OperationController
from control_plane.packages.controllers import PackageController, PlatformKeyController
from control_plane.releases.controllers import ReleaseController
from control_plane.settings import Settings
from control_plane.site.controllers import SiteController
from control_plane.tenants.controllers import OperatorController
from control_plane.tenants.pruner import RunPruner
from control_plane.versions.controllers import RetentionController, RevisionController
from control_plane.webhooks.controllers import WebhookController

CONTROLLERS = (
    OperatorController,
    DocumentController,
    OperationController,
    ReleaseController,
    SiteController,
    WebhookController,
    RevisionController,
    BackupController,
    BriefController,
    LaneController,
    CostController,
    MediaController,
    MediaPolicyController,
    PackageController,
    PlatformKeyController,
    ImportController,
    RetentionController,
    RestoreController,
    FieldController,
    MemberController,
    TokenController,
    AuditController,
)


@get("/healthz", media_type=MediaType.JSON, include_in_schema=True)
async def healthz(state: State) -> dict[str, Any]:
    """Liveness: the process can serve."""
    services: Services = state.services
    return {"status": "ok", "prefect_api": services.settings.dispatch.api_url}


def create_app(settings: Settings | None = None, *, services: Services | None = None) -> Litestar:
    settings = settings or Settings.from_env()
    services = services or Services.build(settings)

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        # Finished runs past their retention leave Prefect (control_plane/tenants/pruner.py).
        pruner = RunPruner(services.tenants, settings.dispatch.retention_prune_seconds).start()
        try:
            yield
        finally:
            await pruner.stop()
            await services.close()

    app = Litestar(
        route_handlers=[healthz, metrics, *CONTROLLERS, build_dashboard(settings.control_plane)],
        state=State({"services": services}),
        dependencies={
            "services": Provide(provide_services, sync_to_thread=False),
            "principal": Provide(provide_principal),
        },
        exception_handlers={**EXCEPTION_HANDLERS, NotFoundException: not_routed(EXCEPTION_HANDLERS[HTTPException])},
        guards=[json_api_body],
        before_request=bind_tenant,
        middleware=[RequestLog],
        lifespan=[lifespan],
        request_max_body_size=settings.control_plane.max_body_bytes,
        openapi_config=OpenAPIConfig(
            title="Pressroom control plane",
            version="0.1.0",
            path="/schema",
            components=Components(security_schemes=SECURITY_SCHEMES),
        ),
        plugins=[StrictStructSchemaPlugin()],
        debug=False,
    )
    document_errors(app)
    document_optional_bodies(app)
    _cap_uploads(app, settings.control_plane.media_max_body_bytes)
    return app


def _cap_uploads(app: Litestar, max_bytes: int) -> None:
    """Upload handlers take bodies up to the media cap (the app's own cap is for JSON); read lazily by Litestar."""
    for route in app.routes:
        for handler in getattr(route, "route_handlers", ()):
            if takes_multipart(handler):
                handler.request_max_body_size = max_bytes


__all__ = ["create_app"]
