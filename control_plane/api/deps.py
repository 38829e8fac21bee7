"""Dependencies shared by the controllers."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Request, Response
from litestar.exceptions import ValidationException
from litestar.background_tasks import BackgroundTask
from litestar.connection import ASGIConnection
from litestar.datastructures import State
from litestar.exceptions import HTTPException
from litestar.handlers import BaseRouteHandler
from litestar.params import Parameter

from control_plane.services.auth import Principal
from control_plane.services.commands import Outcome
from control_plane.services.container import Services

# 1-200 printable ASCII characters (what tenant_runtime.actions.idempotency accepts that a header can carry).
IdempotencyKey = Annotated[
    str | None,
    Parameter(header="Idempotency-Key", required=False, min_length=1, max_length=200, pattern=r"^[\x20-\x7e]+$",
              description="Repeat a command safely: the same key returns the first answer; "
                          "the same key with another body is a 409."),
]


JSON_API_PREFIXES = ("/api/", "/ops/")


def require_json_body(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """A body sent to the JSON APIs must be declared JSON: anything else is a 415 before it is read.

    Litestar would decode any body as JSON whatever its Content-Type; refusing
    ``text/plain`` and form posts also keeps browsers' CORS-free "simple requests" out.
    """
    if not connection.scope["path"].startswith(JSON_API_PREFIXES):
        return
    headers = connection.headers
    if not headers.get("transfer-encoding") and headers.get("content-length", "0").strip() in ("", "0"):
        return
    media_type = headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media_type == "application/json" or (media_type.startswith("application/") and media_type.endswith("+json")):
        return
    raise HTTPException(status_code=415, detail="Send the request body as JSON (Content-Type: application/json).")


async def decode_strictly(connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler) -> None:
    """Refuse bodies that only fit the schema after coercion (``"confirm": 1``, ``"force": "true"``).

    Litestar converts request data leniently; the JSON APIs promise the types
    their OpenAPI schema states, so the body is decoded once more, strictly.
    """
    if not connection.scope["path"].startswith(JSON_API_PREFIXES) or connection.scope.get("method") == "GET":
        return
    parameter = handler.parsed_fn_signature.parameters.get("data")  # type: ignore[attr-defined]
    if parameter is None:
        return
    body = await Request(connection.scope, connection.receive).body()
    if not body:
        return
    try:
        msgspec.json.decode(body, type=parameter.annotation, strict=True)
    except msgspec.ValidationError as exc:
        message, _, path = str(exc).partition(" - at `$.")
        key = path.rstrip("`").split(".")[0].split("[")[0] if path else "body"
        raise ValidationException(detail=f"Validation failed for POST {connection.scope['path']}",
                                  extra=[{"message": message, "key": key, "source": "body"}]) from None
    except msgspec.DecodeError:
        return  # malformed JSON: Litestar's own decoding answers it


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
