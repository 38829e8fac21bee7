"""Running a step's tenant-runtime calls: off the event loop, errors turned into StepFailed.

A step is one task. ``run_step`` runs one call of it; ``run_each`` runs it for
every item of a run, each item its own idempotent unit.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Generic, TypeVar

from prefect.context import TaskRunContext

from flows import probes
from flows.runtime import workspace
from tenant_runtime.errors import Permanent, PressroomError
from tenant_runtime.workflows import DeliveryItem, Failure
from tenant_runtime.workspace import Workspace

T = TypeVar("T")


class StepFailed(Exception):
    """A step's failure as dispatch sees it: which step, a stable code, retry or not.

    ``retry_after``: seconds an upstream asked us to wait (a 429/503's Retry-After),
    honoured by step policies with ``retry_after_from_error`` (``flows/policies.py``).
    """

    def __init__(
        self, step: str, code: str, message: str, permanent: bool = False, retry_after: float | None = None
    ) -> None:
        super().__init__(step, code, message, permanent, retry_after)  # all of them: it pickles whole
        self.step = step
        self.code = code
        self.message = message
        self.permanent = permanent
        self.retry_after = retry_after

    def __str__(self) -> str:
        return f"{self.step}: {self.code}: {self.message}"

    def failure(self) -> Failure:
        return Failure(step=self.step, code=self.code, message=self.message)


async def run_step(step: str, tenant: str, fn: Callable[[], T], item: str | None = None) -> T:
    """Run ``fn`` in a thread (tenant-runtime code is synchronous I/O).

    ``item`` names the operation the call is for (probes can target one); inside a
    task it defaults to the task's own run (``run_id``).
    """
    if item is None:
        context = TaskRunContext.get()
        item = str(context.parameters.get("run_id")) if context is not None else None
    try:
        await probes.enter(tenant, step, item)
        return await asyncio.to_thread(fn)
    except StepFailed:
        raise
    except PressroomError as exc:
        retry_after = exc.details.get("retry_after")
        raise StepFailed(
            step,
            exc.code,
            exc.message,
            isinstance(exc, Permanent),
            retry_after=float(retry_after) if isinstance(retry_after, int | float) else None,
        ) from None
    except Exception as exc:  # any other failure is treated as transient I/O
        raise StepFailed(step, type(exc).__name__, str(exc) or repr(exc)) from None


@dataclass(frozen=True)
class Results(Generic[T]):
    """A step over several items: each item's result, and the items set aside by a permanent failure."""

    done: dict[str, T] = field(default_factory=dict)
    failed: dict[str, Failure] = field(default_factory=dict)


async def run_each(
    step: str,
    tenant: str,
    items: Sequence[DeliveryItem],
    call: Callable[[Workspace, DeliveryItem], T],
    *,
    set_aside: bool,
) -> Results[T]:
    """``call(ws, item)`` for every item, as one step.

    With ``set_aside`` (a run carrying several operations), a permanent failure
    sets that item aside: its operation goes ``dead`` and is replayed alone in a
    run of its own, the others go on. Otherwise a permanent failure fails the
    step at once, uncached, so a replay of the operation runs it again. Anything
    else fails the whole step, which is retried, and the items done already are
    no-ops the second time.
    """
    ws = workspace(tenant)
    results: Results[T] = Results()
    for item in items:
        try:
            results.done[item.key] = await run_step(step, tenant, partial(call, ws, item), item=item.operation_id)
        except StepFailed as exc:
            if not (exc.permanent and set_aside):
                raise
            results.failed[item.key] = exc.failure()
    return results
