"""``GET /metrics``: Prometheus text format, for a scrape token or an operator token."""

from __future__ import annotations

import hmac
from typing import Any

from litestar import MediaType, Response, get
from litestar.connection import ASGIConnection
from litestar.handlers import BaseRouteHandler
from prometheus_client import CONTENT_TYPE_LATEST

from control_plane.container import Services
from control_plane.http.dependencies import principal_of
from control_plane.http.errors import BEARER, error_responses
from tenant_runtime.errors import Forbidden


def metrics_scraper(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """``PRESSROOM_METRICS_TOKEN`` (compared in constant time) or an operator token; 401/403 otherwise.

    The scrape names every tenant with work waiting or late, so it is not public (docs/operations.md).
    """
    services: Services = connection.app.state.services
    expected = services.settings.control_plane.metrics_token
    given = connection.headers.get("authorization", "")
    if expected is not None and hmac.compare_digest(given.encode(), f"Bearer {expected.get_secret_value()}".encode()):
        return
    if not principal_of(connection).is_operator:
        raise Forbidden("The metrics need the scrape token or an operator token.")


@get(
    "/metrics",
    guards=[metrics_scraper],
    tags=["operators"],
    media_type=MediaType.TEXT,
    responses=error_responses(401, 403),
    security=[{BEARER: []}],
)
async def metrics(services: Services) -> Response[bytes]:
    """This control plane's metrics (commands, relay, operations, queues, lateness, shards)."""
    return Response(await services.metrics.render(), media_type=CONTENT_TYPE_LATEST)


__all__ = ["metrics", "metrics_scraper"]
