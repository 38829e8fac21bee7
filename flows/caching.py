"""Step caching: a completed step is a cache hit when its run is retried, and never shared.

``CACHE_BY_STEP`` goes on every task beside its step policy (``flows/policies.py``).
"""

from __future__ import annotations

import hashlib
from datetime import timedelta
from typing import Any

from prefect.context import TaskRunContext
from pydantic_core import to_json


def cache_key(context: TaskRunContext, parameters: dict[str, Any]) -> str:
    """tenant : run : step : digest of the step's inputs — never shared across tenants, runs or inputs.

    Every task takes ``tenant`` and ``run_id`` (the operation, or the batch, the run
    is for) first; the digest covers the rest, so one run's steps over different
    items or versions never collide.
    """
    rest = {name: value for name, value in parameters.items() if name not in ("tenant", "run_id")}
    digest = hashlib.sha256(to_json(rest)).hexdigest()[:16]
    return f"{parameters['tenant']}:{parameters['run_id']}:{context.task.name}:{digest}"


CACHE_BY_STEP: dict[str, Any] = {
    "cache_key_fn": cache_key,
    "persist_result": True,
    "cache_expiration": timedelta(days=14),
}

__all__ = ["CACHE_BY_STEP", "cache_key"]
