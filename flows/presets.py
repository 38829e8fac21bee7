"""Named retry and caching presets: the only place task policies are spelled out."""

from __future__ import annotations

import hashlib
from datetime import timedelta
from typing import Any

from prefect.context import TaskRunContext
from prefect.tasks import exponential_backoff
from pydantic_core import to_json

from flows.steps import StepFailed


def cache_key(context: TaskRunContext, parameters: dict[str, Any]) -> str:
    """tenant : run : step : digest of the step's inputs — never shared across tenants, runs or inputs.

    Every task takes ``tenant`` and ``run_id`` (the operation, or the batch, the run
    is for) first; the digest covers the rest, so one run's steps over different
    items or versions never collide.
    """
    rest = {name: value for name, value in parameters.items() if name not in ("tenant", "run_id")}
    digest = hashlib.sha256(to_json(rest)).hexdigest()[:16]
    return f"{parameters['tenant']}:{parameters['run_id']}:{context.task.name}:{digest}"


async def _retry_unless_permanent(task: object, task_run: object, state: Any) -> bool:
    """A permanent failure (bad input, bad signature) fails at once; anything else is retried."""
    error = await state.aresult(raise_on_failure=False)
    return not (isinstance(error, StepFailed) and error.permanent)


CACHE_BY_STEP: dict[str, Any] = {
    "cache_key_fn": cache_key,
    "persist_result": True,
    "cache_expiration": timedelta(days=14),
}

# Short in-attempt retries for transient I/O; the operation's own retry budget
# (five, with backoff, managed by dispatch) covers longer outages.
RETRY_IO: dict[str, Any] = {
    "retries": 2,
    "retry_delay_seconds": exponential_backoff(backoff_factor=0.5),
    "retry_jitter_factor": 0.5,
    "retry_condition_fn": _retry_unless_permanent,
}
