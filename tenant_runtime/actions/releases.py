"""Releases: several document versions plus navigation, redirects and theme, in one operation.

An immediate release flips everything public in the command's transaction. A
scheduled release records the version it expects of every resource; when its
run fires, ``apply_scheduled`` re-checks them all in one transaction and
either applies the whole release or nothing (``version_conflict``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlmodel import Session, select

from tenant_runtime import audit
from tenant_runtime.actions.operations import new_operation, new_operation_id, set_status
from tenant_runtime.actions.publishing import bump_generation
from tenant_runtime.actions.site_resources import get_resource
from tenant_runtime.errors import BadRequest, Conflict, InvalidSchedule, Permanent, VersionConflict
from tenant_runtime.ids import as_utc, utcnow
from tenant_runtime.operation_states import CANCELLED, SCHEDULED
from tenant_runtime.queries import get_document, get_operation, site_state
from tenant_runtime.workflows import (
    Approval,
    DeliverReleaseParameters,
    DocumentVersion,
    ReleaseParameters,
    ScheduledPublishParameters,
)
from tenant_runtime.workspace.access import Actor
from tenant_runtime.workspace.models import AuditEntry, Operation, SiteResource, SiteResourceRevision

MAX_SCHEDULE_AHEAD = timedelta(days=90)
MAX_DOCUMENTS = 100


@dataclass(frozen=True)
class ReleaseSpec:
    """What a release command asks for: document versions and site-resource versions."""

    documents: tuple[tuple[str, int], ...]
    navigation_version: int | None = None
    redirects_version: int | None = None
    theme: str | None = None

    def fields(self, theme_version: int) -> dict[str, Any]:
        """The release fields of its run's parameters (they pin the theme version they expect)."""
        return {
            "documents": tuple(DocumentVersion(document_id=d, version=v) for d, v in self.documents),
            "navigation_version": self.navigation_version,
            "redirects_version": self.redirects_version,
            "theme": self.theme,
            "theme_version": theme_version,
        }

    @classmethod
    def of(cls, parameters: ReleaseParameters) -> ReleaseSpec:
        return cls(
            documents=tuple((d.document_id, d.version) for d in parameters.documents),
            navigation_version=parameters.navigation_version,
            redirects_version=parameters.redirects_version,
            theme=parameters.theme,
        )


def check_publish_at(publish_at: datetime, now: datetime) -> datetime:
    """Aware, in the future, at most 90 days ahead; returned in UTC."""
    if publish_at.tzinfo is None or publish_at.utcoffset() is None:
        raise InvalidSchedule(
            "publish_at needs a timezone offset (e.g. 2027-01-05T09:00:00+01:00).", details={"field": "publish_at"}
        )
    when = as_utc(publish_at)
    if when <= now:
        raise InvalidSchedule("publish_at is in the past.", details={"field": "publish_at"})
    if when - now > MAX_SCHEDULE_AHEAD:
        raise InvalidSchedule("publish_at is at most 90 days ahead.", details={"field": "publish_at", "max_days": 90})
    return when


def _check_spec(spec: ReleaseSpec) -> None:
    if not spec.documents and spec.navigation_version is None and spec.redirects_version is None and not spec.theme:
        raise BadRequest("A release needs at least one document or site resource.", code="empty_release")
    if len(spec.documents) > MAX_DOCUMENTS:
        raise BadRequest(f"A release has at most {MAX_DOCUMENTS} documents.", details={"max": MAX_DOCUMENTS})
    ids = [doc_id for doc_id, _ in spec.documents]
    if len(set(ids)) != len(ids):
        raise BadRequest("A document appears twice in the release.", code="duplicate_document")


def _check_versions(tx: Session, spec: ReleaseSpec, theme_version: int | None) -> None:
    """Every addressed version must still be the current one; else VersionConflict (nothing written)."""
    conflicts: list[dict[str, Any]] = []
    for doc_id, version in spec.documents:
        document = get_document(tx, doc_id)
        if document.version != version:
            conflicts.append({"document_id": doc_id, "expected": version, "current": document.version})
    for name, expected in (("navigation", spec.navigation_version), ("redirects", spec.redirects_version)):
        if expected is not None and get_resource(tx, name).version != expected:
            conflicts.append({"resource": name, "expected": expected, "current": get_resource(tx, name).version})
    if theme_version is not None and get_resource(tx, "theme").version != theme_version:
        conflicts.append({"resource": "theme", "expected": theme_version, "current": get_resource(tx, "theme").version})
    if conflicts:
        raise VersionConflict("Part of the release changed since it was prepared.", details={"conflicts": conflicts})


def _apply(tx: Session, spec: ReleaseSpec, actor_id: str) -> int:
    now = utcnow()
    for doc_id, version in spec.documents:
        document = get_document(tx, doc_id)
        document.status = "published"
        document.published_version = version
        document.published_at = document.published_at or now
        tx.add(document)
    for name, resource_version in (("navigation", spec.navigation_version), ("redirects", spec.redirects_version)):
        if resource_version is not None:
            resource = get_resource(tx, name)
            resource.published_version = resource_version
            tx.add(resource)
    if spec.theme:
        theme = get_resource(tx, "theme")
        theme.version += 1
        theme.published_version = theme.version
        tx.add(theme)
        tx.flush()
        tx.add(SiteResourceRevision(name="theme", version=theme.version, content={"name": spec.theme}, actor=actor_id))
    return bump_generation(tx)


def create_release(
    tx: Session,
    tenant: str,
    actor: Actor,
    spec: ReleaseSpec,
    *,
    publish_at: datetime | None = None,
    approval: Approval | None = None,
) -> Operation:
    """Publish the release now (one transaction) or schedule it; one operation either way.

    A scheduled release may wait for an ``approval`` event (sent to its operation) before it applies.
    """
    actor.require("content.publish")
    _check_spec(spec)
    if approval is not None and publish_at is None:
        raise BadRequest(
            "Only a scheduled release waits for an approval: give publish_at.",
            code="approval_needs_schedule",
            details={"field": "approval"},
        )
    if spec.theme is not None:
        from tenant_runtime.actions.site_resources import validate_content
        from tenant_runtime.packages.themes import installed_themes

        validate_content("theme", {"name": spec.theme}, themes=installed_themes(tx))
    theme_version = get_resource(tx, "theme").version
    _check_versions(tx, spec, theme_version if spec.theme else None)
    fields = spec.fields(theme_version)
    documents = [[doc_id, version] for doc_id, version in spec.documents]
    if publish_at is None:
        generation = _apply(tx, spec, actor.id)
        parameters = DeliverReleaseParameters(
            tenant=tenant, operation_id=new_operation_id(), generation=generation, **fields
        )
        operation = new_operation(tx, actor, parameters)
        audit.record(
            tx, "release.publish", actor, "release", operation.id, operation_id=operation.id, documents=documents
        )
        return operation
    when = check_publish_at(publish_at, utcnow())
    scheduled = ScheduledPublishParameters(tenant=tenant, operation_id=new_operation_id(), approval=approval, **fields)
    operation = new_operation(tx, actor, scheduled, scheduled_for=when)
    audit.record(
        tx,
        "release.schedule",
        actor,
        "release",
        operation.id,
        operation_id=operation.id,
        publish_at=when.isoformat(),
        documents=documents,
        approval=approval.model_dump(mode="json") if approval else None,
    )
    return operation


def reschedule(tx: Session, actor: Actor, operation_id: str, publish_at: datetime) -> Operation:
    """A new scheduled operation for the same release; the old one is cancelled and its run ends as a no-op."""
    actor.require("content.publish")
    old = get_operation(tx, operation_id)
    if old.status != SCHEDULED or old.kind != "release":
        raise Conflict(
            "Only a scheduled release can be rescheduled.", code="not_scheduled", details={"status": old.status}
        )
    when = check_publish_at(publish_at, utcnow())
    set_status(tx, old, CANCELLED)
    parameters = old.run_parameters().model_copy(update={"operation_id": new_operation_id()})
    new = new_operation(tx, actor, parameters, scheduled_for=when)
    audit.record(
        tx,
        "release.reschedule",
        actor,
        "release",
        new.id,
        operation_id=new.id,
        replaces=old.id,
        publish_at=when.isoformat(),
    )
    return new


@dataclass(frozen=True)
class Applied:
    """What firing a scheduled release did: applied at ``generation``, or refused with a version conflict."""

    applied: bool
    generation: int = 0
    conflict: dict[str, Any] | None = None  # {"code", "message", "details"} of the VersionConflict


def apply_scheduled(tx: Session, operation_id: str) -> Applied:
    """At fire time: apply the whole release if every expected version still holds, else nothing."""
    operation = get_operation(tx, operation_id)
    already = tx.exec(
        select(AuditEntry).where(AuditEntry.operation_id == operation_id, AuditEntry.action == "release.publish")
    ).first()
    if already is not None:  # applied by an earlier attempt whose result was lost: never apply twice
        return Applied(True, site_state(tx).generation)
    parameters = operation.run_parameters()
    if not isinstance(parameters, ReleaseParameters):
        raise Permanent("The operation is not a release.", details={"operation_id": operation_id})
    spec = ReleaseSpec.of(parameters)
    theme_version = parameters.theme_version if spec.theme else None
    try:
        _check_versions(tx, spec, theme_version)
    except VersionConflict as conflict:
        return Applied(
            False, conflict={"code": conflict.code, "message": conflict.message, "details": conflict.details}
        )
    generation = _apply(tx, spec, operation.actor)
    audit.record(tx, "release.publish", "system", "release", operation_id, operation_id=operation_id, scheduled=True)
    return Applied(True, generation)


__all__ = [
    "Applied",
    "ReleaseSpec",
    "SiteResource",
    "apply_scheduled",
    "check_publish_at",
    "create_release",
    "reschedule",
]
