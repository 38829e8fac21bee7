"""Counters and histograms of the command layer, in this process's default registry."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from prometheus_client import Counter, Histogram

from dispatch.runtime import CommandResult
from dispatch.runtime import messages as m
from tenant_runtime.errors import PressroomError

COMMAND_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

# kind: the command message's tag (PublishDocument, CreateRelease…); result: ok, replayed (an
# Idempotency-Key repeat) or the refusal's stable error code. Both sets are bounded by the code.
COMMANDS = Counter("pressroom_commands_total", "Tenant commands by kind and result.", ["kind", "result"])
COMMAND_SECONDS = Histogram(
    "pressroom_command_seconds", "A tenant command, checks included.", ["kind"], buckets=COMMAND_BUCKETS
)


class CommandOutcome:
    """What ``observe_command`` counts: set ``result`` once the command answered."""

    def __init__(self) -> None:
        self.result: CommandResult | None = None


@contextmanager
def observe_command(message: m.Message | str) -> Iterator[CommandOutcome]:
    """Count the command and time it; a raised error counts under its code (``error`` if it has none).
    ``message`` is the runtime message, or the kind of a control-plane command (``InviteMember``)."""
    kind = message if isinstance(message, str) else type(message).__name__
    outcome = CommandOutcome()
    started = time.perf_counter()
    try:
        yield outcome
    except PressroomError as exc:
        COMMANDS.labels(kind=kind, result=exc.code).inc()
        raise
    except Exception:
        COMMANDS.labels(kind=kind, result="error").inc()
        raise
    else:
        replayed = outcome.result is not None and outcome.result.replayed
        COMMANDS.labels(kind=kind, result="replayed" if replayed else "ok").inc()
    finally:
        COMMAND_SECONDS.labels(kind=kind).observe(time.perf_counter() - started)


__all__ = ["COMMANDS", "COMMAND_SECONDS", "observe_command"]
