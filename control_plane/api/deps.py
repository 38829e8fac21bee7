"""Dependencies shared by the controllers."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response
from litestar.background_tasks import BackgroundTask
from litestar.datastructures import State

from control_plane.services.auth import Principal
from control_plane.services.commands import Outcome
from control_plane.services.container import Services


def provide_services(state: State) -> Services:
    return state.services  # type: ignore[no-any-return]


def provide_principal(request: Request[Any, Any, Any], services: Services) -> Principal:
    return services.tokens.resolve(request.headers.get("authorization"))


def respond(services: Services, tenant: str, outcome: Outcome) -> Response[dict[str, Any]]:
    """The command's answer; its outbox goes to the relay after the response is sent."""
    background = BackgroundTask(_relay, services, tenant) if outcome.relay else None
    return Response(outcome.body, status_code=outcome.status_code, background=background)


async def _relay(services: Services, tenant: str) -> None:
    try:
        await services.relay.relay_tenant(tenant)
    except Exception as exc:  # the worker's sweeper re-sends whatever is left
        services.factory.open(tenant).log.warning("relay.after_commit_failed", error=str(exc))
