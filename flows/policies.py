"""Step policies: how a step retries, how long it may run, which failures end it at once.

Every task in ``flows/`` declares exactly one of the presets at the bottom
(``@task(name=..., **RETRY_IO.task_options(), **CACHE_BY_STEP)``); nothing else
spells out retries. A failure meets two layers, one inside the other:

    layer      where                                what it is for               budget
    ---------  -----------------------------------  ---------------------------  ---------------------------------
    step       this module: Prefect task retries    a blip: a locked database,   the preset's retries on its curve
               inside one attempt of the operation  a dropped connection, an     (seconds); then the step fails,
                                                    upstream 429 or 503          and with it the run
    operation  dispatch/operation_sync.py with      an outage: the store,        PRESSROOM_MAX_RETRIES (5) reruns
               DispatchSettings.backoff: the same   Prefect or an endpoint down  of the run, PRESSROOM_RETRY_BASE_
               flow run set back to Scheduled       for minutes                  SECONDS x 2^(n-1) capped at
                                                                                 PRESSROOM_RETRY_CAP_SECONDS; then
                                                                                 the operation is dead (replayable)

A rerun of the operation takes its completed steps from the cache
(``flows/caching.py``), so the outer layer repeats only what failed.

- **Curves.** The delay before retry n (0 = the first) is ``delay_seconds``
  (constant), ``delay_seconds * (n + 1)`` (linear) or ``delay_seconds * 2**n``
  (exponential), each at most ``cap_seconds``; Prefect gets them as an explicit
  list and draws each actual wait from a clamped Poisson around it
  (``retry_jitter_factor``): between ``bounds(n)``.
- **Fail at once.** A ``Permanent`` error (``StepFailed.permanent``) is never
  retried by either layer: the operation is dead. A code in ``non_retryable``
  fails the step at once too, but the operation layer still retries it with its
  longer backoff (what cannot clear in a second may clear in a minute).
- **A delay from the error.** With ``retry_after_from_error``, a failure that
  carries ``retry_after`` (an upstream 429/503's Retry-After, surfaced by the
  webhook sender and kept on ``StepFailed``) is retried no sooner than that.
  Prefect's delays are static per task, but the engine awaits
  ``retry_condition_fn`` before it reads them (``prefect/task_engine.py``,
  ``AsyncTaskRunEngine.handle_retry``), so the condition waits out the
  Retry-After less the curve's shortest delay, then says yes. The task run shows
  Running meanwhile. A Retry-After over ``max_retry_after_seconds`` is not waited
  out inside the attempt (it would hold a worker slot): the step fails, and the
  operation layer retries later.
- **Timeouts.** ``timeout_seconds`` ends an attempt in Prefect's ``TimedOut``
  state; it is retried like any transient failure. Tenant-runtime calls run in a
  thread (``flows/steps.py``): a timed-out call is abandoned, not killed, which is
  safe because every step is idempotent, and its retry queues on the same locks.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Literal

import structlog
from prefect.client.schemas.objects import TaskRun
from prefect.states import State
from prefect.utilities.math import lower_clamp_multiple

from flows.steps import StepFailed
from tenant_runtime.errors import Permanent, PressroomError

Backoff = Literal["constant", "linear", "exponential"]
MAX_RETRIES = 50  # Prefect refuses more than 50 retry delays

log = structlog.get_logger("pressroom.steps")


@dataclass(frozen=True)
class StepPolicy:
    """One named way for a step to retry; ``task_options()`` are its Prefect task arguments."""

    name: str
    retries: int = 0
    delay_seconds: float = 0.0
    backoff: Backoff = "constant"
    cap_seconds: float | None = None
    jitter: float = 0.0
    retry_after_from_error: bool = False
    max_retry_after_seconds: float = 60.0
    timeout_seconds: float | None = None
    non_retryable: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        if not 0 <= self.retries <= MAX_RETRIES:
            raise ValueError(f"{self.name}: retries is 0-{MAX_RETRIES}")
        if self.delay_seconds < 0 or self.jitter < 0 or self.max_retry_after_seconds < 0:
            raise ValueError(f"{self.name}: delays and jitter are never negative")
        if self.cap_seconds is not None and self.cap_seconds < self.delay_seconds:
            raise ValueError(f"{self.name}: cap_seconds is below delay_seconds")
        if self.backoff not in ("constant", "linear", "exponential"):
            raise ValueError(f"{self.name}: backoff is constant, linear or exponential")
        if self.timeout_seconds is not None and self.timeout_seconds <= 0:
            raise ValueError(f"{self.name}: timeout_seconds is positive")

    def delay(self, retry: int) -> float:
        """The curve's delay before retry ``retry`` (0 = the first), before jitter."""
        if self.backoff == "constant":
            delay = self.delay_seconds
        elif self.backoff == "linear":
            delay = self.delay_seconds * (retry + 1)
        else:
            delay = self.delay_seconds * 2**retry
        return delay if self.cap_seconds is None else min(delay, self.cap_seconds)

    def delays(self) -> list[float]:
        """Every retry's delay, in order: what Prefect gets as ``retry_delay_seconds``."""
        return [self.delay(retry) for retry in range(self.retries)]

    def bounds(self, retry: int) -> tuple[float, float]:
        """The shortest and longest wait before retry ``retry``, jitter included (Prefect's clamped Poisson)."""
        delay = self.delay(retry)
        if not self.jitter or delay <= 0:
            return delay, delay
        return delay * lower_clamp_multiple(1 + self.jitter), delay * (1 + self.jitter)

    def fails_at_once(self, error: object) -> bool:
        """Whether ``error`` ends the step without a retry: permanent, or a code this policy never retries."""
        if isinstance(error, StepFailed):
            return error.permanent or error.code in self.non_retryable
        if isinstance(error, PressroomError):
            return isinstance(error, Permanent) or error.code in self.non_retryable
        return False

    def extra_wait(self, error: object, retry: int) -> float | None:
        """Seconds to wait before retry ``retry`` on top of the curve so the error's Retry-After is honoured
        (0: none to honour); None: too long to wait inside the attempt, do not retry the step."""
        retry_after = _retry_after(error) if self.retry_after_from_error else None
        if retry_after is None:
            return 0.0
        if retry_after > self.max_retry_after_seconds:
            return None
        return max(0.0, retry_after - self.bounds(retry)[0])

    def task_options(self) -> dict[str, Any]:
        """Prefect ``@task`` arguments: retries, the curve's delays, jitter, timeout and the retry condition."""
        return {
            "retries": self.retries,
            "retry_delay_seconds": self.delays(),
            "retry_jitter_factor": self.jitter or None,
            "timeout_seconds": self.timeout_seconds,
            "retry_condition_fn": RetryCondition(self),
        }


def _retry_after(error: object) -> float | None:
    value = getattr(error, "retry_after", None)
    if value is None and isinstance(error, PressroomError):
        value = error.details.get("retry_after")
    try:
        return None if value is None else max(0.0, float(value))
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True)
class RetryCondition:
    """A policy's ``retry_condition_fn``: the engine awaits it before it schedules the retry."""

    policy: StepPolicy

    async def __call__(self, task: object, task_run: TaskRun, state: State[Any]) -> bool:
        error = await state.aresult(raise_on_failure=False)
        if self.policy.fails_at_once(error):
            return False
        retry = max(0, task_run.run_count - 1)  # run_count counts the attempt that just failed
        wait = self.policy.extra_wait(error, retry)
        if wait is None:
            log.info("step.retry_after_too_long", step=task_run.name, retry_after=_retry_after(error))
            return False
        if wait > 0:
            log.info("step.retry_after", step=task_run.name, retry_after=_retry_after(error), extra_wait=wait)
            await asyncio.sleep(wait)
        return True


# Idempotent store and database steps: a couple of quick retries for a blip; longer
# outages are the operation layer's. Codes a retry a second later cannot change fail at once.
RETRY_IO = StepPolicy(
    "retry_io",
    retries=2,
    delay_seconds=0.5,
    backoff="exponential",
    cap_seconds=4.0,
    jitter=0.5,
    timeout_seconds=300.0,
    non_retryable=frozenset({"not_found", "version_conflict", "invalid_request", "invalid_object_key"}),
)

# Outbound HTTP to someone else's endpoint: a little more patience, and their Retry-After honoured.
WEBHOOK = StepPolicy(
    "webhook",
    retries=3,
    delay_seconds=0.5,
    backoff="exponential",
    cap_seconds=8.0,
    jitter=0.3,
    retry_after_from_error=True,
    max_retry_after_seconds=60.0,
    timeout_seconds=300.0,
)

# Steps that would only fail again (a bad signature, a bad archive): one attempt.
RETRY_NEVER = StepPolicy("retry_never", timeout_seconds=300.0)

PRESETS: dict[str, StepPolicy] = {policy.name: policy for policy in (RETRY_IO, WEBHOOK, RETRY_NEVER)}

__all__ = ["PRESETS", "RETRY_IO", "RETRY_NEVER", "WEBHOOK", "Backoff", "RetryCondition", "StepPolicy"]
