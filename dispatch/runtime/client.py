"""The seam through which the control plane reaches a tenant's data: ``RuntimeClient`` over a transport.

The control plane never opens a tenant workspace; its services call this
client, which hands plain requests (``dispatch.runtime.messages``) to a
transport: ``InProcessRuntime`` today (the workspaces live in this process), a
transport to the tenant's own runtime process later (the runtimes issue), with
no change to the controllers, the dashboard or the CLI.
"""

from __future__ import annotations

from typing import Any, Protocol

from dispatch.runtime import messages as m
from dispatch.runtime.packages import PackageKeyOut, PackageOut
from dispatch.runtime.views import (
    CommandResult,
    DeliveryOut,
    DocumentOut,
    DocumentPage,
    MediaOut,
    MediaPolicyOut,
    OperationOut,
    OperationRecord,
    ReleaseContents,
    ResourceOut,
    SiteSettingsOut,
    TenantFigures,
    WebhookOut,
)


class RuntimeTransport(Protocol):
    """Carries a request to the runtime that owns ``tenant`` and brings its answer back."""

    def query(self, tenant: str, actor: m.ActorRef, query: m.Message) -> Any: ...

    def execute(self, tenant: str, command: m.Command) -> CommandResult: ...


class RuntimeClient:
    """Typed calls into tenant runtimes."""

    def __init__(self, transport: RuntimeTransport) -> None:
        self.transport = transport

    def execute(self, tenant: str, command: m.Command) -> CommandResult:
        return self.transport.execute(tenant, command)

    def query(self, tenant: str, actor: m.ActorRef, query: m.Message) -> Any:
        """Any area's query; the area's service types the answer (the query's handler returns its view)."""
        return self.transport.query(tenant, actor, query)

    def documents(
        self,
        tenant: str,
        actor: m.ActorRef,
        *,
        status: str | None = None,
        kind: str | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[DocumentOut]:
        result: list[DocumentOut] = self.transport.query(
            tenant, actor, m.ListDocuments(status=status, kind=kind, limit=limit, offset=offset)
        )
        return result

    def document(self, tenant: str, actor: m.ActorRef, document_id: str) -> DocumentOut:
        result: DocumentOut = self.transport.query(tenant, actor, m.GetDocument(document_id=document_id))
        return result

    def operations(
        self,
        tenant: str,
        actor: m.ActorRef,
        *,
        status: str | None = None,
        limit: int = 100,
        offset: int = 0,
        kinds: tuple[str, ...] = (),
        q: str = "",
    ) -> list[OperationOut]:
        result: list[OperationOut] = self.transport.query(
            tenant, actor, m.ListOperations(status=status, limit=limit, offset=offset, kinds=kinds, q=q)
        )
        return result

    def operation(self, tenant: str, actor: m.ActorRef, operation_id: str) -> OperationOut:
        result: OperationOut = self.transport.query(tenant, actor, m.GetOperation(operation_id=operation_id))
        return result

    def operation_record(self, tenant: str, actor: m.ActorRef, operation_id: str) -> OperationRecord:
        result: OperationRecord = self.transport.query(tenant, actor, m.GetOperationRecord(operation_id=operation_id))
        return result

    def resource(self, tenant: str, actor: m.ActorRef, name: str) -> ResourceOut:
        result: ResourceOut = self.transport.query(tenant, actor, m.GetSiteResource(name=name))
        return result

    def webhooks(self, tenant: str, actor: m.ActorRef) -> list[WebhookOut]:
        result: list[WebhookOut] = self.transport.query(tenant, actor, m.ListWebhooks())
        return result

    def media(
        self,
        tenant: str,
        actor: m.ActorRef,
        *,
        q: str | None = None,
        state: str = "active",
        limit: int = 100,
        offset: int = 0,
    ) -> list[MediaOut]:
        result: list[MediaOut] = self.transport.query(
            tenant, actor, m.ListMedia(q=q, state=state, limit=limit, offset=offset)
        )
        return result

    def media_item(self, tenant: str, actor: m.ActorRef, media_id: str) -> MediaOut:
        result: MediaOut = self.transport.query(tenant, actor, m.GetMedia(media_id=media_id))
        return result

    def media_policy(self, tenant: str, actor: m.ActorRef) -> MediaPolicyOut:
        result: MediaPolicyOut = self.transport.query(tenant, actor, m.GetMediaPolicy())
        return result

    def packages(self, tenant: str, actor: m.ActorRef, *, include_uninstalled: bool = False) -> list[PackageOut]:
        result: list[PackageOut] = self.transport.query(
            tenant, actor, m.ListPackages(include_uninstalled=include_uninstalled)
        )
        return result

    def package_keys(self, tenant: str, actor: m.ActorRef) -> list[PackageKeyOut]:
        result: list[PackageKeyOut] = self.transport.query(tenant, actor, m.ListPackageKeys())
        return result

    def figures(self, tenant: str, actor: m.ActorRef) -> TenantFigures:
        result: TenantFigures = self.transport.query(tenant, actor, m.GetFigures())
        return result

    def find_documents(self, tenant: str, actor: m.ActorRef, find: m.FindDocuments) -> DocumentPage:
        result: DocumentPage = self.transport.query(tenant, actor, find)
        return result

    def delivery(self, tenant: str, actor: m.ActorRef, document_id: str) -> DeliveryOut:
        result: DeliveryOut = self.transport.query(tenant, actor, m.GetDocumentDelivery(document_id=document_id))
        return result

    def release_contents(self, tenant: str, actor: m.ActorRef, operation_id: str) -> ReleaseContents:
        result: ReleaseContents = self.transport.query(tenant, actor, m.GetReleaseContents(operation_id=operation_id))
        return result

    def site_settings(self, tenant: str, actor: m.ActorRef) -> SiteSettingsOut:
        result: SiteSettingsOut = self.transport.query(tenant, actor, m.GetSiteSettings())
        return result


__all__ = ["RuntimeClient", "RuntimeTransport"]
