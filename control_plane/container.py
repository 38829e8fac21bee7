"""The services of one control-plane process, built once from settings."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from sqlalchemy import Engine

from control_plane.auth import TokenService
from control_plane.backups.services import BackupService
from control_plane.commands import CommandGate
from control_plane.db.engine import make_engine, upgrade
from control_plane.documents.services import DocumentService
from control_plane.operations.services import OperationService
from control_plane.releases.services import ReleaseService
from control_plane.settings import Settings
from control_plane.site.services import SiteService
from control_plane.tenants.services import TenantService
from control_plane.versions.services import RevisionService
from control_plane.webhooks.services import WebhookService
from dispatch.prefect_gateway import PrefectGateway
from dispatch.prefect_port import PrefectPort
from dispatch.relay import Relay
from dispatch.runtime import InProcessRuntime, RelayHandoff, RuntimeClient
from tenant_runtime.workspace import WorkspaceFactory


@dataclass
class Services:
    settings: Settings
    engine: Engine
    tokens: TokenService
    prefect: PrefectPort  # the control plane's own calls (queues, late runs, run details)
    handoff: RelayHandoff  # committed work goes to the relay here, and only here
    runtime: RuntimeClient  # every call into a tenant's data
    tenants: TenantService
    gate: CommandGate
    documents: DocumentService
    operations: OperationService
    releases: ReleaseService
    site: SiteService
    webhooks: WebhookService
    revisions: RevisionService
    backups: BackupService

    @classmethod
    def build(
        cls,
        settings: Settings,
        *,
        factory: WorkspaceFactory | None = None,
        migrate: bool = True,
        prefect: PrefectPort | None = None,
        relay_prefect: PrefectPort | None = None,
    ) -> Services:
        """Everything a control-plane process (API, dashboard, CLI) needs; ``prefect``/``relay_prefect``
        replace the real Prefect adapters (e.g. with ``RecordingPrefect`` in unit tests)."""
        url = settings.database_url
        if migrate and settings.control_plane.migrate_on_start:
            upgrade(url)
        engine = make_engine(url)
        tokens = TokenService(engine)
        if settings.control_plane.operator_token is not None:
            tokens.ensure_operator_token(settings.control_plane.operator_token.get_secret_value())
        factory = factory or WorkspaceFactory(settings.runtime)
        prefect = prefect or PrefectGateway(settings.dispatch)
        # The relay runs on the hand-off's own thread and loop, so it gets a client of its own.
        relay_port = relay_prefect or PrefectGateway(settings.dispatch)
        relay = Relay(factory, relay_port, settings.dispatch.coalescing)
        handoff = RelayHandoff(relay.relay_tenant, close=relay_port.close)
        runtime = RuntimeClient(InProcessRuntime(factory, settings.dispatch, handoff))
        tenants = TenantService(
            engine,
            runtime,
            prefect,
            settings.dispatch,
            site_url=settings.runtime.site_url,
            default_publishes_per_hour=settings.control_plane.default_publishes_per_hour,
        )
        gate = CommandGate(tenants, runtime)
        return cls(
            settings=settings,
            engine=engine,
            tokens=tokens,
            prefect=prefect,
            handoff=handoff,
            runtime=runtime,
            tenants=tenants,
            gate=gate,
            documents=DocumentService(gate, runtime),
            operations=OperationService(gate, runtime),
            releases=ReleaseService(gate),
            site=SiteService(gate, runtime),
            webhooks=WebhookService(gate, runtime),
            revisions=RevisionService(gate, runtime),
            backups=BackupService(gate, runtime),
        )

    async def close(self) -> None:
        """Finish handing off committed work, then close the Prefect clients."""
        await asyncio.to_thread(self.handoff.close)
        await self.prefect.close()


__all__ = ["Services"]
