"""Custom fields below the engine: values checked on every write, and migrate_field's steps in batches."""

from __future__ import annotations

import pytest
from sqlmodel import col, select

from tenant_runtime.actions import fields
from tenant_runtime.actions.documents import create_document, update_document
from tenant_runtime.errors import BadRequest, Conflict
from tenant_runtime.workspace import SYSTEM, Document, FieldDefinition, Workspace


def _define(ws: Workspace, kind: str, name: str, type: str, **extra: object) -> None:
    """Add a field through its migration, run to the end the way the flow runs it."""
    with ws.transaction() as tx:
        _, operation = fields.request_field_change(
            tx,
            "acme",
            SYSTEM,
            kind=kind,
            change="add",
            field=name,
            type=type,
            **extra,  # type: ignore[arg-type]
        )
    _run(ws, operation.id)


def _run(ws: Workspace, migration_id: str, size: int = 50) -> dict[str, object]:
    while not fields.check_batch(ws, migration_id, size)["done"]:
        pass
    while not fields.apply_batch(ws, migration_id, size)["done"]:
        pass
    return fields.finish_migration(ws, migration_id)


def _bulk(ws: Workspace, n: int, make: object) -> None:
    with ws.transaction() as tx:
        for i in range(n):
            tx.add(Document(slug=f"doc-{i}", title=f"D{i}", kind="post", fields=make(i)))  # type: ignore[operator]


def test_every_write_is_checked_against_the_kinds_definitions(workspace: Workspace) -> None:
    _define(workspace, "post", "rating", "number", options={"min": 0, "max": 5})
    _define(workspace, "post", "topic", "choice", options={"choices": ["news", "howto"]}, default="news")
    _define(workspace, "post", "related", "reference")

    with workspace.transaction() as tx:
        doc = create_document(tx, SYSTEM, slug="ok", title="T", body="", kind="post", fields={"rating": 4})
        created = dict(doc.fields)
        with pytest.raises(BadRequest) as wrong:
            create_document(tx, SYSTEM, slug="bad", title="T", body="", kind="post", fields={"rating": "4", "x": 1})
        with pytest.raises(BadRequest) as reference:
            update_document(
                tx, SYSTEM, doc.id, expected_version=1, fields={"related": "doc_00000000000000000000000000"}
            )
        with pytest.raises(BadRequest) as choice:
            update_document(tx, SYSTEM, doc.id, expected_version=1, fields={"topic": "gossip"})
        edited = update_document(tx, SYSTEM, doc.id, expected_version=1, fields={"rating": None, "related": doc.id})

    assert created == {"rating": 4, "topic": "news"}  # the default filled in
    assert wrong.value.code == "unknown_field"
    assert {e["code"] for e in wrong.value.details["errors"]} == {"unknown_field", "invalid_field_value"}
    assert reference.value.code == "invalid_reference" and choice.value.code == "invalid_field_value"
    assert edited.fields == {"topic": "news", "related": doc.id} and edited.version == 2


def test_a_rename_converts_every_document_once_and_resumes_from_its_cursor(workspace: Workspace) -> None:
    _define(workspace, "post", "score", "text")
    _bulk(workspace, 230, lambda i: {"score": str(i)})
    with workspace.transaction() as tx:
        _, operation = fields.request_field_change(
            tx, "acme", SYSTEM, kind="post", change="rename", field="score", to="points"
        )
        with pytest.raises(Conflict) as busy:
            create_document(tx, SYSTEM, slug="mid", title="T", body="", kind="post", fields={"points": "1"})

    fields.apply_batch(workspace, operation.id, 100)  # then the run "dies"; a new attempt goes on from the cursor
    with workspace.reader() as tx:
        progress = fields.migration_progress(fields.get_migration(tx, operation.id))
    summary = _run(workspace, operation.id, 100)

    assert busy.value.code == "field_migrating"
    assert (progress["phase"], progress["done"], progress["total"]) == ("apply", 100, 230)
    assert summary["switched"] is True and summary["converted"] == 230
    with workspace.reader() as tx:
        docs = tx.exec(select(Document).order_by(col(Document.slug))).all()
        [definition] = tx.exec(select(FieldDefinition)).all()
    assert all(set(d.fields) == {"points"} for d in docs)
    assert sorted(int(d.fields["points"]) for d in docs) == list(range(230))
    assert (definition.name, definition.version, definition.status) == ("points", 2, "active")


def test_a_type_change_lists_what_cannot_convert_and_changes_nothing(workspace: Workspace) -> None:
    _define(workspace, "post", "price", "text")
    _bulk(workspace, 120, lambda i: {"price": "n/a" if i in (7, 99) else f"{i}.5"})
    with workspace.transaction() as tx:
        _, blocked = fields.request_field_change(
            tx, "acme", SYSTEM, kind="post", change="change_type", field="price", type="number"
        )

    summary = _run(workspace, blocked.id)

    assert summary["switched"] is False and summary["unconvertible_count"] == 2
    assert sorted(u["slug"] for u in summary["unconvertible"]) == ["doc-7", "doc-99"]  # type: ignore[union-attr]
    with workspace.transaction() as tx:
        for slug in ("doc-7", "doc-99"):
            doc = tx.exec(select(Document).where(Document.slug == slug)).one()
            update_document(tx, SYSTEM, doc.id, expected_version=1, fields={"price": "0"})
        [definition] = tx.exec(select(FieldDefinition)).all()
        assert (definition.type, definition.status) == ("text", "active")  # unchanged, writable again
        _, retry = fields.request_field_change(
            tx, "acme", SYSTEM, kind="post", change="change_type", field="price", type="number"
        )
    done = _run(workspace, retry.id)

    assert done["switched"] is True and done["converted"] == 120
    with workspace.reader() as tx:
        values = {d.fields["price"] for d in tx.exec(select(Document))}
        [definition] = tx.exec(select(FieldDefinition)).all()
    assert 3.5 in values and 0 in values and definition.type == "number"


def test_removing_a_field_and_bad_changes(workspace: Workspace) -> None:
    _define(workspace, "page", "legacy", "boolean", default=False)
    _bulk(workspace, 3, lambda i: {})
    with workspace.transaction() as tx:
        with pytest.raises(BadRequest) as no_default:
            fields.request_field_change(
                tx, "acme", SYSTEM, kind="page", change="add", field="must", type="text", required=True
            )
        with pytest.raises(BadRequest) as bad_type:
            fields.request_field_change(tx, "acme", SYSTEM, kind="page", change="add", field="x", type="colour")
        with pytest.raises(BadRequest) as bad_name:
            fields.request_field_change(tx, "acme", SYSTEM, kind="page", change="add", field="Bad-Name", type="text")
        _, removal = fields.request_field_change(tx, "acme", SYSTEM, kind="page", change="remove", field="legacy")

    assert _run(workspace, removal.id)["switched"] is True
    assert (no_default.value.code, bad_type.value.code, bad_name.value.code) == (
        "field_default_required",
        "invalid_field_type",
        "invalid_field_name",
    )
    with workspace.reader() as tx:
        assert tx.exec(select(FieldDefinition)).all() == []
