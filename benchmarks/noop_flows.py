"""Bare Prefect flows the baselines run: the floor, a no-op deployment target, retry shapes.

Importable from the repository root so a deployment can point at
``benchmarks/noop_flows.py:bench_noop``.
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from typing import Any

from prefect import flow, task
from prefect.context import TaskRunContext

EXECUTIONS: Counter[str] = Counter()
_FAILURES: dict[str, int] = {}


@task(name="noop_step")
async def noop_step(index: int) -> int:
    return index


@flow(name="bench_floor", persist_result=False)
async def floor_flow(steps: int = 4) -> int:
    """The floor: ``steps`` no-op tasks, run in this process with nothing else."""
    total = 0
    for index in range(steps):
        total += await noop_step(index)
    return total


@flow(name="bench_noop", persist_result=False)
async def bench_noop(
    tenant: str = "", operation_id: str = "", document_id: str = "", version: int = 0, generation: int = 0
) -> None:
    """Target of the bare run-creation baseline; never executed by the benchmarks."""


def arm(run_key: str, step: str, times: int = 1) -> None:
    _FAILURES[f"{run_key}:{step}"] = times


async def _enter(run_key: str, step: str) -> None:
    EXECUTIONS[f"{run_key}:{step}"] += 1
    key = f"{run_key}:{step}"
    if _FAILURES.get(key, 0) > 0:
        _FAILURES[key] -= 1
        raise ConnectionError("injected fault")


def _by_run_and_step(context: TaskRunContext, parameters: dict[str, Any]) -> str:
    return f"{parameters['run_key']}:{context.task.name}:{parameters['index']}"


@task(name="step_default")
async def step_default(run_key: str, index: int) -> int:
    """Prefect's defaults: no result persistence, so no cache hit on a flow retry."""
    await _enter(run_key, f"s{index}")
    return index


@task(name="step_cached", cache_key_fn=_by_run_and_step, persist_result=True, cache_expiration=timedelta(hours=1))
async def step_cached(run_key: str, index: int) -> int:
    """The engine's own answer: persisted results and a key per (run, step)."""
    await _enter(run_key, f"s{index}")
    return index


@flow(name="bench_retry_default", retries=1, retry_delay_seconds=0, persist_result=False)
async def retry_default(run_key: str, steps: int) -> int:
    return sum([await step_default(run_key, i) for i in range(1, steps + 1)])


@flow(name="bench_retry_cached", retries=1, retry_delay_seconds=0, persist_result=False)
async def retry_cached(run_key: str, steps: int) -> int:
    return sum([await step_cached(run_key, i) for i in range(1, steps + 1)])
