"""Cache keys of cached steps: never shared across tenants, operations, versions or documents."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from flows.presets import cache_key


def _key(step: str, **parameters: Any) -> str:
    return cache_key(SimpleNamespace(task=SimpleNamespace(name=step)), parameters)  # type: ignore[arg-type]


def test_keys_start_with_the_tenant_and_name_operation_version_step_and_document() -> None:
    key = _key("public_record", tenant="acme", operation_id="op_1", document_id="doc_1", version=3)

    assert key == "acme:op_1:3:public_record:doc_1"


def test_every_part_tells_keys_apart() -> None:
    base = {"tenant": "acme", "operation_id": "op_1", "document_id": "doc_1", "version": 1}
    variants = [base, {**base, "tenant": "globex"}, {**base, "operation_id": "op_2"}, {**base, "version": 2},
                {**base, "document_id": "doc_2"}]

    keys = {_key("index_search", **params) for params in variants} | {_key("notify_plugins", **base)}

    assert len(keys) == len(variants) + 1


def test_steps_without_a_document_keep_their_key() -> None:
    assert _key("refresh_aggregates", tenant="acme", operation_id="op_1", version=0) == "acme:op_1:0:refresh_aggregates"
    assert _key("seed_document", tenant="acme", operation_id="op_1", item="about") == "acme:op_1:0:seed_document:about"
