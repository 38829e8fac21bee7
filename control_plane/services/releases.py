"""Release commands and site-resource reads, shaped for the edges."""

from __future__ import annotations

from typing import Any

import msgspec
from sqlmodel import Session

from control_plane.api.release_schemas import ReleaseCreate, Reschedule, ResourceOut, ResourceUpdate
from control_plane.services.commands import Outcome
from control_plane.services.content import accepted
from tenant_runtime.actions import releases, site_resources
from tenant_runtime.workspace import Actor, Operation, Workspace


def _accepted(ws: Workspace, operation: Operation) -> dict[str, Any]:
    scheduled_for = operation.scheduled_for.isoformat() if operation.scheduled_for else None
    return {**accepted(ws, operation), "scheduled_for": scheduled_for}


def create(data: ReleaseCreate) -> Any:
    spec = releases.ReleaseSpec(
        documents=tuple((d.id, d.version) for d in data.documents),
        navigation_version=data.navigation_version,
        redirects_version=data.redirects_version,
        theme=data.theme,
    )

    def action(tx: Session, ws: Workspace, actor: Actor) -> Outcome:
        operation = releases.create_release(tx, ws.tenant, actor, spec, publish_at=data.publish_at)
        return Outcome(202, _accepted(ws, operation), relay=True)

    return action


def reschedule(operation_id: str, data: Reschedule) -> Any:
    def action(tx: Session, ws: Workspace, actor: Actor) -> Outcome:
        operation = releases.reschedule(tx, ws.tenant, actor, operation_id, data.publish_at)
        return Outcome(202, {**_accepted(ws, operation), "replaces": operation_id}, relay=True)

    return action


def resource_out(tx: Session, name: str) -> ResourceOut:
    resource = site_resources.get_resource(tx, name)
    return ResourceOut(
        name=name,
        version=resource.version,
        published_version=resource.published_version,
        content=site_resources.resource_content(tx, name, resource.version),
        published_content=site_resources.resource_content(tx, name, resource.published_version),
    )


def update_resource(name: str, data: ResourceUpdate) -> Any:
    def action(tx: Session, ws: Workspace, actor: Actor) -> Outcome:
        site_resources.update_resource(tx, actor, name, data.content, expected_version=data.version)
        return Outcome(200, msgspec.to_builtins(resource_out(tx, name)))

    return action
