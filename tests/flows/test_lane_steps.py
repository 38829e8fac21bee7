"""Every registered lane step has a runner, a policy and the step cache, keyed by node and pinned graph."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from prefect import Task

from flows.caching import cache_key
from flows.lanes import steps
from tenant_runtime.lanes.graph import STEPS


def test_the_contract_registry_and_the_runners_name_the_same_steps() -> None:
    assert set(steps.RUNNERS) == set(STEPS)


def test_every_lane_task_retries_by_policy_and_caches_by_step() -> None:
    tasks = [value for value in vars(steps).values() if isinstance(value, Task)]
    assert {t.name for t in tasks} >= {"validate", "ground", "generate", "clean", "persist", "index", "cover"}
    for t in tasks:
        assert t.cache_key_fn is cache_key and t.persist_result is True, t.name
        assert t.retry_condition_fn is not None and t.timeout_seconds, t.name


def test_the_cache_key_holds_the_node_and_the_graph_digest() -> None:
    context: Any = SimpleNamespace(task=SimpleNamespace(name="ground"))
    base = {"tenant": "acme", "run_id": "op_1", "node": "ground", "graph_digest": "d1", "brief_id": "b"}
    key = cache_key(context, base)
    assert key.startswith("acme:op_1:ground:")
    assert cache_key(context, {**base, "node": "ground_again"}) != key
    assert cache_key(context, {**base, "graph_digest": "d2"}) != key
    assert cache_key(context, dict(base)) == key
