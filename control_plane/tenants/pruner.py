"""The control plane's background prune of finished runs in Prefect (why here: ``dispatch/retention.py``).

Started and stopped by the app's lifespan (``control_plane/app.py``). The first
pass comes a few minutes after start (so a control plane restarted more often
than hourly still prunes, and a short-lived one never does), then one every
``PRESSROOM_RETENTION_PRUNE_SECONDS`` (3600), each jittered by a tenth so that
several control planes spread their passes; doing the same pass twice is
harmless anyway. A pass that fails (Prefect down) is logged and the next one
tries again. Each pass logs one structured ``retention.pruned`` line.
"""

from __future__ import annotations

import asyncio
import random
from contextlib import suppress

import structlog

from control_plane.tenants.services import TenantService

log = structlog.get_logger("pressroom.retention")
FIRST_PASS_SECONDS = 300.0


class RunPruner:
    """Prunes every ``interval`` seconds until stopped; ``interval`` 0 never starts."""

    def __init__(self, tenants: TenantService, interval: float, *, first_delay: float | None = None) -> None:
        self.tenants = tenants
        self.interval = interval
        self.first_delay = first_delay
        self.passes = 0
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> RunPruner:
        if self.interval > 0 and self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._loop(), name="retention-pruner")
        return self

    async def stop(self) -> None:
        """Stop at once: a pass under way is cancelled (the next start finishes its work)."""
        self._stop.set()
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task

    async def _loop(self) -> None:
        delay = self.first_delay
        if delay is None:
            delay = min(self.interval, FIRST_PASS_SECONDS) * random.uniform(0.5, 1.0)
        while not await self._stopped_within(delay):
            await self.prune_once()
            delay = self.interval * random.uniform(0.9, 1.1)

    async def _stopped_within(self, seconds: float) -> bool:
        try:
            await asyncio.wait_for(self._stop.wait(), timeout=seconds)
        except TimeoutError:
            return False
        return True

    async def prune_once(self) -> None:
        try:
            report = await self.tenants.prune_runs()
        except Exception as exc:  # Prefect unreachable, a database hiccup: the next pass tries again
            log.warning("retention.prune_failed", error=str(exc) or type(exc).__name__)
        else:
            log.info("retention.pruned", **report.summary())
        self.passes += 1


__all__ = ["FIRST_PASS_SECONDS", "RunPruner"]
