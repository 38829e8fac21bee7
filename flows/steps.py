"""Running one step's tenant-runtime call: off the event loop, errors turned into StepFailed."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

from prefect.context import TaskRunContext

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


async def run_step(step: str, tenant: str, fn: Callable[[], T], item: str | None = None) -> T:
    """Run ``fn`` in a thread (tenant-runtime code is synchronous I/O).

    ``item`` names the operation the call is for (probes can target one); inside a
    task it defaults to the task's own ``operation_id``.
    """
    if item is None:
        context = TaskRunContext.get()
        item = str(context.parameters.get("operation_id")) if context is not None else None
    try:
        await probes.enter(tenant, step, item)
        return await asyncio.to_thread(fn)
    except StepFailed:
        raise
    except PressroomError as exc:
        raise StepFailed(step, exc.code, exc.message, isinstance(exc, Permanent)) from None
    except Exception as exc:  # any other failure is treated as transient I/O
        raise StepFailed(step, type(exc).__name__, str(exc) or repr(exc)) from None


async def run_each(
    step: str, tenant: str, items: list[tuple[str, Callable[[], T]]]
) -> tuple[dict[str, T], dict[str, dict[str, str]]]:
    """One step over several operations' items, each its own idempotent unit.

    A permanent failure sets that item aside (its operation goes ``dead``, the
    others go on); anything else fails the whole step, which is retried, and
    the items done already are no-ops the second time.
    """
    done: dict[str, T] = {}
    failed: dict[str, dict[str, str]] = {}
    for key, fn in items:
        try:
            done[key] = await run_step(step, tenant, fn, item=key)
        except StepFailed as exc:
            if not exc.permanent:
                raise
            failed[key] = {"step": exc.step, "code": exc.code, "message": exc.message}
    return done, failed
