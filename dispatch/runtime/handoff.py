"""The one place committed work is handed to the relay: a background loop that relays tenants on notice.

A command commits its operation (the outbox row) and calls ``notify(tenant)``;
the answer goes back at once, never waiting on Prefect. The hand-off runs the
relay for that tenant on its own thread and event loop (where its Prefect
client lives), one pass at a time, coalescing notices that arrive while a
tenant is waiting or being relayed into one more pass. Whatever it cannot send
stays unsent for the worker's sweep.

A pass runs in a context of its own, bound to its tenant: never in the
context of the request whose notice scheduled it (``call_soon_threadsafe``
and tasks copy the caller's context by default, so a coalesced pass would
log under an earlier request's id and path).
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable, Coroutine
from typing import Any

import structlog

log = structlog.get_logger("pressroom.handoff")
# Relay passes run one at a time: they share this process's CPU and its tenants' write locks with the
# requests they follow, and a flood of commands must not starve the commands themselves (saturated
# command_ack, 50 clients over 20 tenants: 75/s with a pass per tenant at once, 95/s one at a time).
# A pass sends everything its tenant has waiting, so a backlog costs one pass per tenant, not per command.
PASSES_AT_ONCE = 1


class RelayHandoff:
    """Relays a tenant in the background after each ``notify``; ``flush`` waits until nothing is pending."""

    def __init__(
        self,
        relay_tenant: Callable[[str], Coroutine[Any, Any, int]],
        close: Callable[[], Coroutine[Any, Any, None]] | None = None,
    ) -> None:
        self._relay_tenant = relay_tenant
        self._close = close
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._started = threading.Lock()
        self._pending: set[str] = set()  # notified, not yet relayed
        self._running: set[str] = set()
        self._idle = threading.Condition()
        self._tasks: set[asyncio.Future[None]] = set()
        self._gate: asyncio.Semaphore | None = None

    def notify(self, tenant: str) -> None:
        """Relay ``tenant`` soon (after the caller's response, on the hand-off thread)."""
        loop = self._ensure_started()
        with self._idle:
            if tenant in self._pending:
                return  # a pass is already due and will see this commit too
            self._pending.add(tenant)
        loop.call_soon_threadsafe(self._schedule, tenant, context=contextvars.Context())

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every notified tenant has been relayed; False if ``timeout`` passed first."""
        with self._idle:
            return self._idle.wait_for(lambda: not self._pending and not self._running, timeout)

    def close(self, timeout: float = 10.0) -> None:
        """Finish what is pending, close the relay's client, stop the thread."""
        if self._loop is None or self._thread is None:
            return
        self.flush(timeout)
        if self._close is not None:
            asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(timeout)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout)
        self._loop, self._thread = None, None

    def _ensure_started(self) -> asyncio.AbstractEventLoop:
        with self._started:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=loop.run_forever, name="relay-handoff", daemon=True)
                self._thread.start()
                self._loop = loop
            return self._loop

    def _schedule(self, tenant: str) -> None:
        with self._idle:
            if tenant in self._running:
                return  # the pass in flight re-runs when it ends (the tenant is still pending)
            self._pending.discard(tenant)
            self._running.add(tenant)
        task = asyncio.get_running_loop().create_task(self._pass(tenant), context=contextvars.Context())
        self._tasks.add(task)  # the loop keeps only a weak reference to a task
        task.add_done_callback(self._tasks.discard)

    async def _pass(self, tenant: str) -> None:
        if self._gate is None:  # created on the hand-off's own loop
            self._gate = asyncio.Semaphore(PASSES_AT_ONCE)
        structlog.contextvars.bind_contextvars(tenant=tenant)  # this task's own context (see the docstring)
        try:
            async with self._gate:
                await self._relay_tenant(tenant)
        except Exception as exc:  # the worker's sweeper re-sends whatever is left
            log.warning("relay.after_commit_failed", tenant=tenant, error=str(exc) or type(exc).__name__)
        finally:
            with self._idle:
                self._running.discard(tenant)
                again = tenant in self._pending
                self._idle.notify_all()
            if again:
                self._schedule(tenant)


__all__ = ["RelayHandoff"]
