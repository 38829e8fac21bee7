"""Running a step's tenant-runtime calls: off the event loop, errors turned into StepFailed, results kept small.

A step is one task. ``run_step`` runs one call of it; ``run_each`` runs it for
every item of a run, each item its own idempotent unit.

A step's returned value is what Prefect persists and caches, so it stays small:
ids, keys, hashes, counts. ``guard_result`` refuses anything over
``MAX_RESULT_BYTES`` (64 KiB pickled, as Prefect's result serializer writes it)
with a permanent ``result_too_large`` naming the step, so the mistake fails the
step the first time a test runs it, not a server's disk later. A step with a
large result puts it in the tenant's store with ``spill`` and returns the
reference.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Generic, TypeVar

from prefect.context import TaskRunContext
from prefect.serializers import PickleSerializer

from flows import probes
from flows.metrics import STEP_SECONDS
from flows.runtime import workspace
from tenant_runtime.errors import Permanent, PressroomError
from tenant_runtime.workflows import DeliveryItem, Failure
from tenant_runtime.workspace import Workspace

T = TypeVar("T")

MAX_RESULT_BYTES = 64 * 1024
RESULT_TOO_LARGE = "result_too_large"
SPILL_PREFIX = "results/"
_PICKLE = PickleSerializer()  # Prefect's default result serializer (cloudpickle, then base64)


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
    started = time.perf_counter()
    try:
        await probes.enter(tenant, step, item)
        result = await asyncio.to_thread(fn)
    except StepFailed as exc:
        _observe(step, started, "permanent" if exc.permanent else "failed")
        raise
    except PressroomError as exc:
        _observe(step, started, "permanent" if isinstance(exc, Permanent) else "failed")
        retry_after = exc.details.get("retry_after")
        raise StepFailed(
            step,
            exc.code,
            exc.message,
            isinstance(exc, Permanent),
            retry_after=float(retry_after) if isinstance(retry_after, int | float) else None,
        ) from None
    except Exception as exc:  # any other failure is treated as transient I/O
        _observe(step, started, "failed")
        raise StepFailed(step, type(exc).__name__, str(exc) or repr(exc)) from None
    try:
        guarded = guard_result(step, result)
    except StepFailed:
        _observe(step, started, "permanent")
        raise
    _observe(step, started, "ok")
    return guarded


def _observe(step: str, started: float, outcome: str) -> None:
    STEP_SECONDS.labels(step=step, outcome=outcome).observe(time.perf_counter() - started)


def result_size(value: object) -> int:
    """Bytes ``value`` takes pickled by Prefect's default result serializer (before its base64)."""
    return len(base64.decodebytes(_PICKLE.dumps(value)))


def guard_result(step: str, value: T) -> T:
    """``value``, if it is small enough to be a step's result; else a permanent ``result_too_large``."""
    size = result_size(value)
    if size > MAX_RESULT_BYTES:
        raise StepFailed(
            step,
            RESULT_TOO_LARGE,
            f"The step's result is {size} bytes pickled, over the {MAX_RESULT_BYTES}-byte limit: put it in "
            "the tenant's store (flows.steps.spill) and return the reference.",
            permanent=True,
        )
    return value


def spill(ws: Workspace, data: bytes, name: str) -> dict[str, Any]:
    """Put a large result in the tenant's store under its content hash; the small reference to return.

    ``results/{sha256}`` inside the tenant's prefix: the same bytes are one object,
    written once however many steps, retries or runs spill them. ``name`` says
    what it is, for the log.
    """
    digest = hashlib.sha256(data).hexdigest()
    key = f"{SPILL_PREFIX}{digest}"
    if not ws.store.exists(key):
        ws.store.put(key, data)
        ws.log.info("step.result_spilled", name=name, key=key, bytes=len(data))
    return {"key": key, "sha256": digest, "bytes": len(data)}


def unspill(ws: Workspace, reference: dict[str, Any]) -> bytes:
    """The bytes a ``spill`` reference names, checked against its hash (missing or changed: permanent)."""
    data = ws.store.get(str(reference["key"]))
    if data is None or hashlib.sha256(data).hexdigest() != reference["sha256"]:
        raise Permanent(
            "A spilled result is missing or does not match its hash.",
            details={"key": reference["key"]},
            code="spilled_result_missing",
        )
    return data


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
    return guard_result(step, results)
