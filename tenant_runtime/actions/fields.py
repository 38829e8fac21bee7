"""Custom field definitions change only through ``migrate_field``: ask for a change, then its flow's steps.

``request_field_change``  checks the change, marks the definition ``migrating`` (writes that set the field
                          are 409 ``field_migrating`` from then on) and queues the operation, in one transaction
``check_batch``           change_type only, read-only pass first: which documents cannot convert (listed)
``apply_batch``           the next batch of documents after the migration's cursor, converted in ONE
                          transaction with the cursor and the counts, so a crash redoes no document
``finish_migration``      the definition switches over only when every document has; else it stays as it
                          was and the documents that cannot convert are listed on the operation
"""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, col, func, select

from tenant_runtime import audit
from tenant_runtime.actions.documents import KINDS
from tenant_runtime.actions.operations import new_operation, new_operation_id
from tenant_runtime.errors import BadRequest, Conflict, NotFound
from tenant_runtime.fields.types import FIELD_TYPES, Unconvertible, check_options, check_value, convert
from tenant_runtime.fields.validation import FIELD_NAME, usable_media
from tenant_runtime.ids import utcnow
from tenant_runtime.workflows import MigrateFieldParameters
from tenant_runtime.workspace import Workspace
from tenant_runtime.workspace.access import SYSTEM, Actor
from tenant_runtime.workspace.field_models import FieldDefinition, FieldDefinitionRevision, FieldMigration
from tenant_runtime.workspace.models import Document, Operation

CHANGES = ("add", "rename", "change_type", "remove")
BATCH_SIZE = 200
MAX_LISTED = 1000  # unconvertible documents listed by id (all of them are counted)


def _bad(message: str, code: str, **details: Any) -> BadRequest:
    return BadRequest(message, details=details, code=code)


def _definition(tx: Session, kind: str, name: str) -> FieldDefinition:
    found = tx.exec(select(FieldDefinition).where(FieldDefinition.kind == kind, FieldDefinition.name == name)).first()
    if found is None:
        raise NotFound("No such field.", details={"kind": kind, "field": name})
    return found


def definition_view(d: FieldDefinition) -> dict[str, Any]:
    return {
        "id": d.id,
        "kind": d.kind,
        "name": d.name,
        "type": d.type,
        "required": d.required,
        "options": d.options,
        "default": d.default,
        "version": d.version,
        "status": d.status,
        "migration_id": d.migration_id,
    }


def _check_name(name: str, field: str = "field") -> str:
    if not isinstance(name, str) or not FIELD_NAME.match(name):
        raise _bad(
            "Field names are 1-40 lowercase letters, digits and '_', starting with a letter.",
            "invalid_field_name",
            field=field,
            pattern=FIELD_NAME.pattern,
        )
    return name


def request_field_change(
    tx: Session,
    tenant: str,
    actor: Actor,
    *,
    kind: str,
    change: str,
    field: str,
    to: str | None = None,
    type: str | None = None,
    options: dict[str, Any] | None = None,
    default: Any = None,
    required: bool = False,
) -> tuple[FieldDefinition, Operation]:
    """Check a definition change and queue the migrate_field run that applies it to every document."""
    actor.require("site.admin")
    if kind not in KINDS:
        raise _bad("kind is 'page' or 'post'.", "invalid_request", field="kind", allowed=list(KINDS))
    if change not in CHANGES:
        raise _bad("Unknown field change.", "invalid_field_change", change=change, allowed=list(CHANGES))
    _check_name(field)
    target: dict[str, Any] = {}
    if change == "add":
        if tx.exec(
            select(FieldDefinition.id).where(FieldDefinition.kind == kind, FieldDefinition.name == field)
        ).first():
            raise Conflict("The kind has that field already.", details={"field": field}, code="field_exists")
        if type is None:
            raise _bad("A new field needs a type.", "invalid_field_type", allowed=list(FIELD_TYPES))
        options = check_options(type, dict(options or {}))
        if default is not None and (problem := check_value(type, options, default)) is not None:
            raise _bad(f"The default is not valid: {problem}.", "invalid_field_default", field="default")
        if type == "media" and default is not None and not usable_media(tx, default):
            raise _bad("The default names media this site does not have.", "media_not_found", field="default")
        if required and default is None:
            raise _bad("A required new field needs a default for the documents that exist.", "field_default_required")
        definition = FieldDefinition(
            kind=kind, name=field, type=type, options=options, default=default, required=required
        )
        definition.status = "migrating"
        tx.add(definition)
        tx.flush()
    else:
        definition = _definition(tx, kind, field)
        if definition.status == "migrating":
            raise Conflict(
                "A migration is changing this field already.",
                details={"field": field, "migration_id": definition.migration_id},
                code="field_migrating",
            )
        if change == "rename":
            _check_name(to or "", "to")
            if tx.exec(
                select(FieldDefinition.id).where(FieldDefinition.kind == kind, FieldDefinition.name == to)
            ).first():
                raise Conflict("The kind has a field of that name already.", details={"to": to}, code="field_exists")
            target = {"name": to}
        elif change == "change_type":
            if type is None:
                raise _bad("A type change needs the new type.", "invalid_field_type", allowed=list(FIELD_TYPES))
            options = check_options(type, dict(options or {}))
            new_default = None
            if definition.default is not None:
                try:
                    new_default = convert(definition.default, type, options)
                except Unconvertible:
                    new_default = None
                if type == "media" and new_default is not None and not usable_media(tx, new_default):
                    new_default = None  # a default never names a file the site lacks
            target = {"type": type, "options": options, "default": new_default}
        definition.status = "migrating"
    operation_id = new_operation_id()
    definition.migration_id = operation_id
    definition.updated_at = utcnow()
    tx.add(definition)
    phase = "check" if change == "change_type" else "apply"
    total = tx.exec(select(func.count()).select_from(Document).where(Document.kind == kind)).one()
    tx.add(
        FieldMigration(
            id=operation_id,
            definition_id=definition.id,
            kind=kind,
            change=change,
            field=field,
            target=target,
            phase=phase,
            total=int(total),
            actor=actor.id,
        )
    )
    operation = new_operation(tx, actor, MigrateFieldParameters(tenant=tenant, operation_id=operation_id))
    audit.record(
        tx,
        "site.fields.migrate",
        actor,
        "field",
        definition.id,
        operation_id=operation.id,
        change=change,
        kind=kind,
        field=field,
        target=target,
    )
    return definition, operation


def get_migration(tx: Session, migration_id: str) -> FieldMigration:
    migration = tx.get(FieldMigration, migration_id)
    if migration is None:
        raise NotFound("No such field migration.", details={"migration_id": migration_id})
    return migration


def _next_documents(tx: Session, migration: FieldMigration, size: int) -> list[Document]:
    query = select(Document).where(Document.kind == migration.kind).order_by(col(Document.id)).limit(size)
    if migration.cursor is not None:
        query = query.where(col(Document.id) > migration.cursor)
    return list(tx.exec(query))


def _type_target(tx: Session, migration: FieldMigration) -> tuple[str, dict[str, Any]]:
    return str(migration.target["type"]), dict(migration.target.get("options") or {})


def check_batch(ws: Workspace, migration_id: str, size: int = BATCH_SIZE) -> dict[str, Any]:
    """Check the next batch of documents for values that cannot convert (a type change, before any write)."""
    with ws.transaction() as tx:
        migration = get_migration(tx, migration_id)
        if migration.phase != "check":
            return {"done": True, "checked": migration.checked, "unconvertible": migration.unconvertible_count}
        documents = _next_documents(tx, migration, size)
        to_type, options = _type_target(tx, migration)
        problems = list(migration.unconvertible)
        for document in documents:
            if migration.field in document.fields:
                try:
                    convert(document.fields[migration.field], to_type, options)
                except Unconvertible as exc:
                    migration.unconvertible_count += 1
                    if len(problems) < MAX_LISTED:
                        problems.append({"document_id": document.id, "slug": document.slug, "reason": str(exc)})
        migration.unconvertible = problems
        migration.checked += len(documents)
        migration.updated_at = utcnow()
        done = len(documents) < size
        if documents:
            migration.cursor = documents[-1].id
        if done and migration.unconvertible_count == 0:
            migration.phase, migration.cursor = "apply", None
        tx.add(migration)
        return {"done": done, "checked": migration.checked, "unconvertible": migration.unconvertible_count}


def _converted(migration: FieldMigration, values: dict[str, Any], default: Any) -> dict[str, Any] | None:
    """The document's new values (None: nothing to change)."""
    name = migration.field
    if migration.change == "add":
        return None if name in values or default is None else {**values, name: default}
    if name not in values:
        return None
    rest = {k: v for k, v in values.items() if k != name}
    if migration.change == "rename":
        return {**rest, str(migration.target["name"]): values[name]}
    if migration.change == "remove":
        return rest
    return {
        **rest,
        name: convert(values[name], str(migration.target["type"]), dict(migration.target.get("options") or {})),
    }


def apply_batch(ws: Workspace, migration_id: str, size: int = BATCH_SIZE) -> dict[str, Any]:
    """Convert the next batch after the cursor, with the cursor and counts, in ONE transaction."""
    with ws.transaction() as tx:
        migration = get_migration(tx, migration_id)
        if migration.phase != "apply":
            return {"done": True, "converted": migration.converted}
        definition = tx.get(FieldDefinition, migration.definition_id)
        default = definition.default if definition is not None else None
        documents = _next_documents(tx, migration, size)
        problems = list(migration.unconvertible)
        for document in documents:
            try:
                values = _converted(migration, dict(document.fields), default)
            except Unconvertible as exc:  # changed since the check: listed, never dropped
                migration.unconvertible_count += 1
                if len(problems) < MAX_LISTED:
                    problems.append({"document_id": document.id, "slug": document.slug, "reason": str(exc)})
                continue
            if values is not None:
                document.fields = values
                tx.add(document)
            migration.converted += 1
        migration.unconvertible = problems
        migration.updated_at = utcnow()
        if documents:
            migration.cursor = documents[-1].id
        done = len(documents) < size
        tx.add(migration)
        return {"done": done, "converted": migration.converted}


def finish_migration(ws: Workspace, migration_id: str) -> dict[str, Any]:
    """Switch the definition over if every document converted; otherwise leave it as it was."""
    with ws.transaction() as tx:
        migration = get_migration(tx, migration_id)
        definition = tx.get(FieldDefinition, migration.definition_id)
        if migration.phase in ("done", "failed") or definition is None:
            return _summary(migration)
        switched = migration.unconvertible_count == 0 and migration.phase == "apply"
        if not switched:
            migration.phase = "failed"
            if migration.change == "add":
                tx.delete(definition)
            else:
                definition.status, definition.migration_id = "active", None
                tx.add(definition)
        else:
            migration.phase = "done"
            if migration.change == "remove":
                tx.delete(definition)
            else:
                if migration.change == "rename":
                    definition.name = str(migration.target["name"])
                elif migration.change == "change_type":
                    definition.type = str(migration.target["type"])
                    definition.options = dict(migration.target.get("options") or {})
                    definition.default = migration.target.get("default")
                if migration.change != "add":
                    definition.version += 1
                definition.status, definition.migration_id = "active", None
                definition.updated_at = utcnow()
                tx.add(definition)
                tx.add(
                    FieldDefinitionRevision(
                        definition_id=definition.id,
                        version=definition.version,
                        definition=definition_view(definition),
                        actor=migration.actor,
                    )
                )
        migration.finished_at = migration.updated_at = utcnow()
        tx.add(migration)
        summary = _summary(migration)
        audit.record(
            tx,
            f"site.fields.{migration.phase}",
            SYSTEM,
            "field",
            migration.definition_id,
            operation_id=migration.id,
            **{k: v for k, v in summary.items() if k != "unconvertible"},
        )
        return summary


def _summary(migration: FieldMigration) -> dict[str, Any]:
    return {
        "switched": migration.phase == "done",
        "phase": migration.phase,
        "total": migration.total,
        "converted": migration.converted,
        "unconvertible_count": migration.unconvertible_count,
        "unconvertible": migration.unconvertible[:100],
    }


def migration_progress(migration: FieldMigration) -> dict[str, Any]:
    """What the operation shows while the migration runs."""
    done = migration.checked if migration.phase == "check" else migration.converted
    return {
        "change": migration.change,
        "kind": migration.kind,
        "field": migration.field,
        "target": migration.target,
        "phase": migration.phase,
        "total": migration.total,
        "done": done,
        "checked": migration.checked,
        "converted": migration.converted,
        "unconvertible_count": migration.unconvertible_count,
        "unconvertible": migration.unconvertible[:100],
    }


def operation_progress(tx: Session, operation: Operation) -> dict[str, Any] | None:
    """The progress an operation shows: a field migration's, else None."""
    if operation.flow_name != "migrate_field":
        return None
    migration = tx.get(FieldMigration, operation.id)
    return migration_progress(migration) if migration is not None else None


__all__ = [
    "BATCH_SIZE",
    "CHANGES",
    "apply_batch",
    "check_batch",
    "definition_view",
    "finish_migration",
    "get_migration",
    "migration_progress",
    "operation_progress",
    "request_field_change",
]
