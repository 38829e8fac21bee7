"""One tenant's workspace: its database, its object-store view, its cache view."""

from tenant_runtime.workspace.access import Actor, ROLE_PERMISSIONS, SYSTEM
from tenant_runtime.workspace.models import (
    Attempt,
    AuditEntry,
    Document,
    IdempotencyRecord,
    Operation,
    RenderedObject,
    Revision,
    SiteState,
    WorkspaceModel,
)
from tenant_runtime.workspace.open import Workspace, WorkspaceFactory, create_workspace, list_tenants, open_workspace

__all__ = [
    "ROLE_PERMISSIONS",
    "SYSTEM",
    "Actor",
    "Attempt",
    "AuditEntry",
    "Document",
    "IdempotencyRecord",
    "Operation",
    "RenderedObject",
    "Revision",
    "SiteState",
    "Workspace",
    "WorkspaceFactory",
    "WorkspaceModel",
    "create_workspace",
    "list_tenants",
    "open_workspace",
]
