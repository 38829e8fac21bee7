"""The runtime's internal HTTP API as bytes: requests, answers and errors in msgspec JSON.

A query travels as ``{"actor", "query"}`` and a command as the ``Command``
itself; the message inside is tagged (``{"type": "PublishDocument", ...}``) and
decodes against the union of every registered message. A query's answer is
decoded into its handler's return type, so the control plane gets the same
typed views over HTTP as in process. An error travels as the one error body
``{"error": {"code", "message", "details"}}`` with its status, and comes back as
the same class of the error tree (so a 409 stays a ``VersionConflict``).
"""

from __future__ import annotations

import functools
import typing
from typing import Any

import msgspec

from dispatch.runtime import messages as m
from dispatch.runtime.areas import CHANGES, READS
from tenant_runtime.errors import PressroomError


class QueryRequest(msgspec.Struct, frozen=True):
    actor: m.ActorRef
    query: msgspec.Raw


class CommandRequest(msgspec.Struct, frozen=True):
    actor: m.ActorRef
    scope: str
    message: msgspec.Raw
    idempotency_key: str | None = None
    quota: m.Quota | None = None


class ErrorDetail(msgspec.Struct):
    code: str
    message: str
    details: dict[str, Any] = {}


class ErrorBody(msgspec.Struct):
    error: ErrorDetail


class WireError(ValueError):
    """A request body the runtime cannot decode (a 400, never a 500)."""


def _all_messages() -> tuple[type[m.Message], ...]:
    found: list[type[m.Message]] = []
    stack = list(m.Message.__subclasses__())
    while stack:
        cls = stack.pop()
        found.append(cls)
        stack.extend(cls.__subclasses__())
    return tuple(sorted(found, key=lambda c: c.__name__))


@functools.cache
def _message_decoder() -> msgspec.json.Decoder[Any]:
    # Built on first use, after every area has registered its messages.
    known = tuple(dict.fromkeys([*_all_messages(), *READS, *CHANGES]))
    return msgspec.json.Decoder(typing.Union[known])  # noqa: UP007


def encode_query(actor: m.ActorRef, query: m.Message) -> bytes:
    return msgspec.json.encode({"actor": actor, "query": query})


def encode_command(command: m.Command) -> bytes:
    return msgspec.json.encode(command)


def decode_query(body: bytes) -> tuple[m.ActorRef, m.Message]:
    try:
        request = msgspec.json.decode(body, type=QueryRequest)
        return request.actor, _message_decoder().decode(request.query)
    except msgspec.ValidationError as exc:
        raise WireError(str(exc)) from None
    except msgspec.DecodeError as exc:
        raise WireError(f"not JSON: {exc}") from None


def decode_command(body: bytes) -> m.Command:
    try:
        request = msgspec.json.decode(body, type=CommandRequest)
        message = _message_decoder().decode(request.message)
    except msgspec.ValidationError as exc:
        raise WireError(str(exc)) from None
    except msgspec.DecodeError as exc:
        raise WireError(f"not JSON: {exc}") from None
    return m.Command(
        actor=request.actor,
        scope=request.scope,
        message=message,
        idempotency_key=request.idempotency_key,
        quota=request.quota,
    )


@functools.cache
def answer_type(query: type[m.Message]) -> Any:
    """What the query's handler returns (its annotation), so an answer decodes into the same views."""
    handler = READS.get(query)
    if handler is None:
        return Any
    return typing.get_type_hints(handler).get("return", Any)


def decode_answer(query: m.Message, body: bytes) -> Any:
    return msgspec.json.decode(body, type=answer_type(type(query)))


@functools.cache
def _error_classes() -> dict[str, type[PressroomError]]:
    classes: dict[str, type[PressroomError]] = {}
    stack: list[type[PressroomError]] = [PressroomError]
    while stack:
        cls = stack.pop()
        classes.setdefault(cls.code, cls)
        stack.extend(cls.__subclasses__())
    return classes


def encode_error(exc: PressroomError) -> bytes:
    return msgspec.json.encode(ErrorBody(ErrorDetail(exc.code, exc.message, exc.details)))


def error_from(status: int, body: bytes) -> PressroomError:
    """The error a runtime answered, as the class of the error tree its code names."""
    try:
        detail = msgspec.json.decode(body, type=ErrorBody).error
    except (msgspec.ValidationError, msgspec.DecodeError):
        detail = ErrorDetail("internal_error", f"The tenant runtime answered {status} without an error body.")
    cls = _error_classes().get(detail.code, PressroomError)
    error = cls.__new__(cls)
    PressroomError.__init__(error, detail.message, details=detail.details, code=detail.code)
    if error.status != status:
        error.status = status  # a code this side does not know keeps the runtime's status
    return error


__all__ = [
    "WireError",
    "answer_type",
    "decode_answer",
    "decode_command",
    "decode_query",
    "encode_command",
    "encode_error",
    "encode_query",
    "error_from",
]
