"""One tenant's workspace: its database, its object-store view, its cache view."""

# Imported for its ORM listener: every change of versioned state is recorded with it (history.py).
from tenant_runtime.workspace import history  # noqa: F401
from tenant_runtime.workspace.access import ROLE_PERMISSIONS, SYSTEM, Actor
from tenant_runtime.workspace.delivery_models import AggregateState, WebhookDelivery, WebhookEndpoint
from tenant_runtime.workspace.field_models import FieldDefinition, FieldDefinitionRevision, FieldMigration
from tenant_runtime.workspace.lane_models import Brief, CostEntry, EditorialPack, Lane
from tenant_runtime.workspace.lifecycle_models import Backup, ChoreRun, EntityHistory
from tenant_runtime.workspace.media_models import Media, MediaPolicy
from tenant_runtime.workspace.models import (
    Attempt,
    AuditEntry,
    Document,
    IdempotencyRecord,
    Operation,
    RenderedObject,
    Revision,
    SiteResource,
    SiteResourceRevision,
    SiteState,
    WorkspaceModel,
)
from tenant_runtime.workspace.open import (
    TenantMigration,
    Workspace,
    WorkspaceFactory,
    list_tenants,
    migrate_workspaces,
)
from tenant_runtime.workspace.package_models import InstalledPackage, PackageKey
from tenant_runtime.workspace.run_control_models import OperationEvent, OperationWait
from tenant_runtime.workspace.version_models import RetentionPolicy, SpilloverPending

__all__ = [
    "ROLE_PERMISSIONS",
    "SYSTEM",
    "Actor",
    "AggregateState",
    "Attempt",
    "AuditEntry",
    "Backup",
    "Brief",
    "ChoreRun",
    "CostEntry",
    "Document",
    "EditorialPack",
    "EntityHistory",
    "FieldDefinition",
    "FieldDefinitionRevision",
    "FieldMigration",
    "IdempotencyRecord",
    "InstalledPackage",
    "Lane",
    "Media",
    "MediaPolicy",
    "Operation",
    "OperationEvent",
    "OperationWait",
    "PackageKey",
    "RenderedObject",
    "RetentionPolicy",
    "Revision",
    "SiteResource",
    "SiteResourceRevision",
    "SiteState",
    "SpilloverPending",
    "TenantMigration",
    "WebhookDelivery",
    "WebhookEndpoint",
    "Workspace",
    "WorkspaceFactory",
    "WorkspaceModel",
    "list_tenants",
    "migrate_workspaces",
]
