"""Cache keys of cached steps: never shared across tenants, runs, steps or inputs."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from flows.caching import cache_key
from tenant_runtime.workflows import DeliveryItem


def _key(step: str, **parameters: Any) -> str:
    return cache_key(SimpleNamespace(task=SimpleNamespace(name=step)), parameters)  # type: ignore[arg-type]


def _items(*versions: int) -> tuple[DeliveryItem, ...]:
    return tuple(
        DeliveryItem(operation_id="op_1", document_id=f"doc_{n}", version=v) for n, v in enumerate(versions, start=1)
    )


def test_keys_start_with_the_tenant_the_run_and_the_step() -> None:
    key = _key("public_record", tenant="acme", run_id="op_1", items=_items(3))

    tenant, run, step, digest = key.split(":")
    assert (tenant, run, step) == ("acme", "op_1", "public_record") and len(digest) == 16


def test_every_part_tells_keys_apart() -> None:
    base: dict[str, Any] = {"tenant": "acme", "run_id": "op_1", "items": _items(1)}
    variants = [
        base,
        {**base, "tenant": "globex"},
        {**base, "run_id": "op_2"},
        {**base, "items": _items(2)},
        {**base, "items": _items(1, 1)},
    ]

    keys = {_key("index_search", **params) for params in variants} | {_key("notify_plugins", **base)}

    assert len(keys) == len(variants) + 1


def test_the_same_inputs_give_the_same_key_in_every_process() -> None:
    first = _key("render_home", tenant="acme", run_id="bat_1", generation=7)
    assert first == _key("render_home", tenant="acme", run_id="bat_1", generation=7)
    assert first != _key("render_home", tenant="acme", run_id="bat_1", generation=8)
    assert first == "acme:bat_1:render_home:" + first.rsplit(":", 1)[1]
