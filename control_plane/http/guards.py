"""Guards every JSON API request passes, and the operator guard of the operator API."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request
from litestar.connection import ASGIConnection
from litestar.exceptions import HTTPException, ValidationException
from litestar.handlers import BaseRouteHandler

from control_plane.http.dependencies import principal_of
from tenant_runtime.errors import Forbidden

JSON_API_PREFIXES = ("/api/", "/ops/")
# A handler whose ``opt["body"]`` is this takes a multipart form (an upload) instead of JSON.
MULTIPART = "multipart"


def takes_multipart(handler: BaseRouteHandler) -> bool:
    return handler.opt.get("body") == MULTIPART


async def json_api_body(connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler) -> None:
    """The JSON APIs' body checks, as one guard (Litestar copies the route handler for every guard it runs, on
    every request): its declared type, then a strict decoding of it."""
    if not connection.scope["path"].startswith(JSON_API_PREFIXES):
        return
    _require_json_body(connection, handler)
    if connection.scope.get("method") != "GET" and not takes_multipart(handler):
        await _decode_strictly(connection, handler)


def _require_json_body(connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler) -> None:
    """A body sent to the JSON APIs must be declared JSON: anything else is a 415 before it is read.

    Litestar would decode any body as JSON whatever its Content-Type; refusing
    ``text/plain`` and form posts also keeps browsers' CORS-free "simple requests" out.
    An upload handler (``takes_multipart``) takes ``multipart/form-data`` and nothing else.
    """
    headers = connection.headers
    media_type = headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if takes_multipart(handler):
        if media_type != "multipart/form-data":
            raise HTTPException(status_code=415, detail="Send the file as multipart/form-data (part `file`).")
        return
    if not headers.get("transfer-encoding") and headers.get("content-length", "0").strip() in ("", "0"):
        return
    if media_type == "application/json" or (media_type.startswith("application/") and media_type.endswith("+json")):
        return
    raise HTTPException(status_code=415, detail="Send the request body as JSON (Content-Type: application/json).")


async def _decode_strictly(connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler) -> None:
    """Refuse bodies that only fit the schema after coercion (``"confirm": 1``, ``"force": "true"``).

    Litestar converts request data leniently; the JSON APIs promise the types
    their OpenAPI schema states, so the body is decoded once more, strictly.
    """
    parameter = handler.parsed_fn_signature.parameters.get("data")
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
        raise ValidationException(
            detail=f"Validation failed for POST {connection.scope['path']}",
            extra=[{"message": message, "key": key, "source": "body"}],
        ) from None
    except msgspec.DecodeError:
        return  # malformed JSON: Litestar's own decoding answers it


def operator_only(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """The operator API: an operator token, or 401/403 before the handler runs."""
    if not principal_of(connection).is_operator:
        raise Forbidden("This endpoint needs an operator token.")


__all__ = [
    "JSON_API_PREFIXES",
    "MULTIPART",
    "json_api_body",
    "operator_only",
    "takes_multipart",
]
