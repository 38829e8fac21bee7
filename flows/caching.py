"""Step caching: a completed step is a cache hit when its run is retried, and never shared.

``CACHE_BY_STEP`` goes on every task beside its step policy (``flows/policies.py``).

A restarted operation (``tenant_runtime/actions/run_control.restart``) runs with a
restart history in its parameters; each step's key carries its *epoch*, how many of
those restarts reach it (``Restart.epoch`` over the workflow's declared steps). A
restart from step k leaves the epochs of the steps before k alone (cache hits) and
raises those of k and every later step (they run again).
"""

from __future__ import annotations

import hashlib
from datetime import timedelta
from typing import Any

from prefect.context import FlowRunContext, TaskRunContext
from pydantic_core import to_json

from tenant_runtime.workflows import Restart, RunParameters, WorkflowSpec, spec


def cache_key(context: TaskRunContext, parameters: dict[str, Any]) -> str:
    """tenant : run : step : digest of the step's inputs — never shared across tenants, runs or inputs.

    Every task takes ``tenant`` and ``run_id`` (the operation, or the batch, the run
    is for) first; the digest covers the rest, so one run's steps over different
    items or versions never collide.
    """
    rest = {name: value for name, value in parameters.items() if name not in ("tenant", "run_id")}
    digest = hashlib.sha256(to_json(rest)).hexdigest()[:16]
    key = f"{parameters['tenant']}:{parameters['run_id']}:{context.task.name}:{digest}"
    epoch = restart_epoch(context.task.name)
    return f"{key}:r{epoch}" if epoch else key


def restart_epoch(step: str) -> int:
    """How many restarts of the current run's operation reach ``step`` (0: never restarted)."""
    flow_run = FlowRunContext.get()
    if flow_run is None or not flow_run.parameters:
        return 0
    params = flow_run.parameters.get("params")
    restart: Any = params.restart if isinstance(params, RunParameters) else (params or {}).get("restart")
    if not restart:
        return 0
    history = restart if isinstance(restart, Restart) else Restart.model_validate(restart)
    return history.epoch(step, _steps(flow_run.flow.name) if flow_run.flow is not None else ())


def _steps(flow_name: str) -> tuple[str, ...]:
    try:
        workflow: WorkflowSpec = spec(flow_name)
    except (KeyError, ValueError):
        return ()
    return workflow.steps


CACHE_BY_STEP: dict[str, Any] = {
    "cache_key_fn": cache_key,
    "persist_result": True,
    "cache_expiration": timedelta(days=14),
}

__all__ = ["CACHE_BY_STEP", "cache_key"]
