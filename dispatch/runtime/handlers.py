"""The in-process runtime's handler tables: every area registers its queries and commands here.

An area's module (``reads.py``, ``changes.py``, and one per later area) declares
its handlers with ``@query(Message)`` / ``@command(Message)``; ``areas.py``
imports every area module, so the tables are complete once it is imported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sqlmodel import Session

from dispatch.runtime.messages import Message
from dispatch.settings import DispatchSettings
from tenant_runtime.workspace import Actor, Workspace


@dataclass
class Effect:
    """What a command produced: the answer, effects that must follow the commit, work for the relay."""

    status_code: int
    body: dict[str, Any]
    after_commit: list[Callable[[], None]] = field(default_factory=list)
    relay: bool = False


QueryHandler = Callable[[Session, Workspace, Any, DispatchSettings], Any]
CommandHandler = Callable[[Session, Workspace, Actor, Any], Effect]
READS: dict[type[Message], QueryHandler] = {}
CHANGES: dict[type[Message], CommandHandler] = {}

Q = TypeVar("Q", bound=QueryHandler)
C = TypeVar("C", bound=CommandHandler)


def query(message: type[Message]) -> Callable[[Q], Q]:
    """Register the handler of a query (run in a read transaction)."""

    def register(handler: Q) -> Q:
        if message in READS:
            raise RuntimeError(f"{message.__name__} has a query handler already")
        READS[message] = handler
        return handler

    return register


def command(message: type[Message]) -> Callable[[C], C]:
    """Register the handler of a command (run inside the command's write transaction)."""

    def register(handler: C) -> C:
        if message in CHANGES:
            raise RuntimeError(f"{message.__name__} has a command handler already")
        CHANGES[message] = handler
        return handler

    return register


__all__ = ["CHANGES", "READS", "CommandHandler", "Effect", "QueryHandler", "command", "query"]
