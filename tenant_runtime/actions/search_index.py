"""Ask for the tenant's search index to be rebuilt (site admins; runs as a flow)."""

from __future__ import annotations

from sqlmodel import Session

from tenant_runtime import audit
from tenant_runtime.actions.operations import new_operation, new_operation_id
from tenant_runtime.workflows import RebuildSearchIndexParameters
from tenant_runtime.workspace.access import Actor
from tenant_runtime.workspace.models import Operation


def request_search_rebuild(tx: Session, tenant: str, actor: Actor, *, force: bool = False) -> Operation:
    """Queue the rebuild_search_index flow; without ``force`` it does nothing to a populated index."""
    actor.require("site.admin")
    parameters = RebuildSearchIndexParameters(tenant=tenant, operation_id=new_operation_id(), force=force)
    operation = new_operation(tx, actor, parameters)
    audit.record(tx, "site.search.rebuild", actor, "site", tenant, operation_id=operation.id, force=force)
    return operation
