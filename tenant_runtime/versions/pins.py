"""The versions no retention policy may prune, whatever its numbers say.

- each entity's current version and its published version;
- every version an unfinished operation addresses (a scheduled release above all: it fires with the
  versions it was prepared with; a publish or a release being delivered; a failed one that will retry);
- every version a backup's restore point needs: for each completed backup, the version each entity had
  (its newest version made by then) and the versions the state history says were current or published
  then, so a restore to that point finds every one.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlmodel import Session, col, func, select

from tenant_runtime.operation_states import TERMINAL
from tenant_runtime.workspace.lifecycle_models import Backup, EntityHistory
from tenant_runtime.workspace.models import Document, Operation, Revision, SiteResource, SiteResourceRevision

# What a pin names: (entity id, version); documents by id, site resources by name.
Pin = tuple[str, int]
_RESOURCE_FIELDS = {"navigation_version": "navigation", "redirects_version": "redirects", "theme_version": "theme"}


def restore_points(tx: Session) -> list[datetime]:
    """When each completed backup was taken: the moments a restore may go back to."""
    rows = tx.exec(select(Backup).where(Backup.status == "succeeded"))
    return [backup.snapshot_at or backup.created_at for backup in rows]


def _versions_in(parameters: dict[str, Any]) -> tuple[list[Pin], list[Pin]]:
    """The document and site-resource versions one operation's parameters address."""
    documents: list[Pin] = []
    if isinstance(parameters.get("document_id"), str) and isinstance(parameters.get("version"), int):
        documents.append((parameters["document_id"], parameters["version"]))
    for entry in [*(parameters.get("documents") or ()), *(parameters.get("members") or ())]:
        if isinstance(entry, dict):
            documents.append((str(entry.get("document_id")), int(entry.get("version") or 0)))
        elif isinstance(entry, list | tuple) and len(entry) == 2:  # releases from before the typed contract
            documents.append((str(entry[0]), int(entry[1])))
    resources = [
        (name, int(parameters[field]))
        for field, name in _RESOURCE_FIELDS.items()
        if isinstance(parameters.get(field), int) and parameters[field] > 0
    ]
    return documents, resources


def _unfinished(tx: Session) -> Iterable[Operation]:
    return tx.exec(select(Operation).where(col(Operation.status).not_in(TERMINAL)))


def _history_states(tx: Session, entity_type: str, at: datetime) -> dict[str, dict[str, Any]]:
    """Each entity's recorded state at ``at`` (its newest history row by then)."""
    rows = tx.exec(
        select(EntityHistory)
        .where(EntityHistory.entity_type == entity_type, col(EntityHistory.at) <= at)
        .order_by(col(EntityHistory.at), col(EntityHistory.id))
    )
    return {row.entity_id: row.state for row in rows}


def _state_versions(state: dict[str, Any]) -> list[int]:
    return [v for v in (state.get("version"), state.get("published_version")) if isinstance(v, int) and v > 0]


def pinned_document_versions(tx: Session) -> set[Pin]:
    """(document id, version) of every document version nothing may prune."""
    pins: set[Pin] = set()
    for document in tx.exec(select(Document)):
        pins.add((document.id, document.version))
        if document.published_version is not None:
            pins.add((document.id, document.published_version))
    for operation in _unfinished(tx):
        documents, _ = _versions_in(operation.parameters)
        pins.update(documents)
        if operation.document_id is not None and operation.document_version is not None:
            pins.add((operation.document_id, operation.document_version))
    for at in restore_points(tx):
        newest = tx.exec(
            select(Revision.document_id, func.max(Revision.version))
            .where(col(Revision.created_at) <= at)
            .group_by(col(Revision.document_id))
        )
        pins.update((document_id, int(version)) for document_id, version in newest)
        for document_id, state in _history_states(tx, "document", at).items():
            pins.update((document_id, v) for v in _state_versions(state))
    return pins


def pinned_resource_versions(tx: Session) -> set[Pin]:
    """(resource name, version) of every site-resource version nothing may prune."""
    pins: set[Pin] = set()
    for resource in tx.exec(select(SiteResource)):
        pins.add((resource.name, resource.version))
        if resource.published_version is not None:
            pins.add((resource.name, resource.published_version))
    for operation in _unfinished(tx):
        _, resources = _versions_in(operation.parameters)
        pins.update(resources)
    for at in restore_points(tx):
        newest = tx.exec(
            select(SiteResourceRevision.name, func.max(SiteResourceRevision.version))
            .where(col(SiteResourceRevision.created_at) <= at)
            .group_by(col(SiteResourceRevision.name))
        )
        pins.update((name, int(version)) for name, version in newest)
        for name, state in _history_states(tx, "site_resource", at).items():
            pins.update((name, v) for v in _state_versions(state))
    return pins


__all__ = ["Pin", "pinned_document_versions", "pinned_resource_versions", "restore_points"]
