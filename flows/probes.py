"""Observation points inside steps: execution counts, and faults armed by tests.

Unarmed, a probe only counts. Tests arm a step to fail N times or to park
(block until released) so that crash and retry behaviour can be driven from
outside without stubbing the engine. A worker in another process is armed
through two variables: ``PRESSROOM_PROBE_LOG`` (append "tenant step" per
execution to that file) and ``PRESSROOM_PROBE_PARK`` ("tenant:step", or several
separated by commas: block there forever, after writing ``<log>.parked.<tenant>``
holding the step, until the process is killed).
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from tenant_runtime.config import PressroomSettings
from tenant_runtime.errors import Permanent


class ProbeSettings(PressroomSettings):
    """``PRESSROOM_PROBE_LOG`` and ``PRESSROOM_PROBE_PARK``: set only by tests, for a worker in another process."""

    probe_log: Path | None = None
    probe_park: str | None = None

    @property
    def parks(self) -> frozenset[str]:
        """The "tenant:step" pairs armed to park."""
        return frozenset(part.strip() for part in (self.probe_park or "").split(",") if part.strip())


@functools.cache
def probe_settings() -> ProbeSettings:
    """Read once per process (a worker process is started with them)."""
    return ProbeSettings.from_env()


@dataclass
class _Fault:
    remaining: int
    message: str
    permanent: bool = False


@dataclass
class Probes:
    executions: Counter[tuple[str, str]] = field(default_factory=Counter)
    # (tenant, step, item): item None arms every execution of the step, an operation id only that one's
    _faults: dict[tuple[str, str, str | None], _Fault] = field(default_factory=dict)
    _parks: dict[tuple[str, str], threading.Event] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def fail(
        self,
        tenant: str,
        step: str,
        times: int = 1,
        message: str = "injected fault",
        *,
        permanent: bool = False,
        item: str | None = None,
    ) -> None:
        with self._lock:
            self._faults[(tenant, step, item)] = _Fault(times, message, permanent)

    def park(self, tenant: str, step: str) -> threading.Event:
        """Block ``step`` of ``tenant`` until the returned event is set (from any thread)."""
        event = threading.Event()
        with self._lock:
            self._parks[(tenant, step)] = event
        return event

    def reset(self) -> None:
        with self._lock:
            self.executions.clear()
            self._faults.clear()
            self._parks.clear()

    def count(self, tenant: str, step: str) -> int:
        return self.executions[(tenant, step)]


PROBES = Probes()


async def enter(tenant: str, step: str, item: str | None = None) -> None:
    """Count one execution of ``step`` (for ``item``, in a batch); fail or park it if a test armed that."""
    key = (tenant, step)
    with PROBES._lock:
        PROBES.executions[key] += 1
        fault = PROBES._faults.get((tenant, step, item)) if item is not None else None
        fault = fault if fault is not None and fault.remaining > 0 else PROBES._faults.get((tenant, step, None))
        if fault is not None and fault.remaining > 0:
            fault.remaining -= 1
        else:
            fault = None
        park = PROBES._parks.get(key)
    settings = probe_settings()
    log_path = settings.probe_log
    if log_path is not None:
        with open(log_path, "a") as log:
            log.write(f"{tenant} {step}\n")
        if f"{tenant}:{step}" in settings.parks:
            with open(f"{log_path}.parking.{tenant}", "w") as marker:
                marker.write(step)
            os.replace(f"{log_path}.parking.{tenant}", f"{log_path}.parked.{tenant}")  # whole, or not there at all
            await asyncio.Event().wait()
    if park is not None:
        await asyncio.to_thread(park.wait)
    if fault is not None:
        if fault.permanent:
            raise Permanent(fault.message)
        raise ConnectionError(fault.message)
