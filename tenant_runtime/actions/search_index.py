"""Ask for the tenant's search index to be rebuilt (site admins; runs as a flow)."""

from __future__ import annotations

from sqlmodel import Session

from tenant_runtime import audit
from tenant_runtime.actions.operations import new_operation
from tenant_runtime.workspace.access import Actor
from tenant_runtime.workspace.models import Operation

REBUILD_FLOW = "rebuild_search_index"


def request_search_rebuild(tx: Session, tenant: str, actor: Actor, *, force: bool = False) -> Operation:
    """Queue the rebuild_search_index flow; without ``force`` it does nothing to a populated index."""
    actor.require("site.admin")
    operation = new_operation(tx, tenant, actor, kind="search_rebuild", flow_name=REBUILD_FLOW,
                              key_prefix="search-rebuild", parameters={"force": force})
    audit.record(tx, "site.search.rebuild", actor, "site", tenant, operation_id=operation.id, force=force)
    return operation
