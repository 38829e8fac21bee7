"""Running one step's tenant-runtime call: off the event loop, errors turned into StepFailed."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

from flows import probes
from tenant_runtime.errors import Permanent, PressroomError

T = TypeVar("T")


class StepFailed(Exception):
    """A step's failure as dispatch sees it: which step, a stable code, retry or not."""

    def __init__(self, step: str, code: str, message: str, permanent: bool = False) -> None:
        super().__init__(step, code, message, permanent)
        self.step = step
        self.code = code
        self.message = message
        self.permanent = permanent

    def __str__(self) -> str:
        return f"{self.step}: {self.code}: {self.message}"


async def run_step(step: str, tenant: str, fn: Callable[[], T]) -> T:
    """Run ``fn`` in a thread (tenant-runtime code is synchronous I/O)."""
    try:
        await probes.enter(tenant, step)
        return await asyncio.to_thread(fn)
    except StepFailed:
        raise
    except PressroomError as exc:
        raise StepFailed(step, exc.code, exc.message, isinstance(exc, Permanent)) from None
    except Exception as exc:  # any other failure is treated as transient I/O
        raise StepFailed(step, type(exc).__name__, str(exc) or repr(exc)) from None
