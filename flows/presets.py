"""Named retry and caching presets: the only place task policies are spelled out."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from prefect.context import TaskRunContext
from prefect.tasks import exponential_backoff

from flows.steps import StepFailed


def cache_key(context: TaskRunContext, parameters: dict[str, Any]) -> str:
    """tenant : operation : version : step [: document] [: item] — never shared across tenants or operations."""
    parts = [
        str(parameters["tenant"]),
        str(parameters["operation_id"]),
        str(parameters.get("version", 0)),
        context.task.name,
    ]
    # A step that takes a document is per document, so one operation delivering several never collides.
    if "document_id" in parameters:
        parts.append(str(parameters["document_id"]))
    if "item" in parameters:
        parts.append(str(parameters["item"]))
    return ":".join(parts)


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

RETRY_NEVER: dict[str, Any] = {"retries": 0}
