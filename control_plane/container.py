"""The services of one control-plane process, built once from settings."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from sqlalchemy import Engine

from control_plane.audit.services import AuditService
from control_plane.auth import TokenService
from control_plane.backups.services import BackupService
from control_plane.commands import CommandGate
from control_plane.db.engine import make_engine, upgrade
from control_plane.db.read_cache import ReadCache
from control_plane.documents.services import DocumentService
from control_plane.fields.services import FieldService
from control_plane.lanes.services import LaneService
from control_plane.media.services import MediaService
from control_plane.members.services import MemberService
from control_plane.metrics.services import MetricsService
from control_plane.operations.services import OperationService
from control_plane.packages.services import PackageService, PlatformKeyService, url_fetcher
from control_plane.placement import PlacementService, ShardRouter
from control_plane.releases.services import ReleaseService
from control_plane.settings import Settings
from control_plane.site.services import SiteService
from control_plane.tenants.services import TenantService
from control_plane.versions.services import RetentionService, RevisionService
from control_plane.webhooks.services import WebhookService
from dispatch.prefect_gateway import PrefectGateway
from dispatch.prefect_port import PrefectPort
from dispatch.relay import Relay
from dispatch.runtime import InProcessRuntime, RelayHandoff, RuntimeClient, RuntimeTransport
from dispatch.runtime.http_transport import HttpRuntime
from tenant_runtime.packages import PlatformKeyring
from tenant_runtime.storage import build_object_store
from tenant_runtime.workspace import WorkspaceFactory


@dataclass
class Services:
    settings: Settings
    engine: Engine
    tokens: TokenService
    prefect: PrefectPort  # the control plane's own calls (queues, late runs, run details)
    handoff: RelayHandoff  # committed work of the in-process shard goes to the relay here, and only here
    runtime: RuntimeClient  # every call into a tenant's data, routed to the tenant's shard
    router: ShardRouter
    placement: PlacementService
    factory: WorkspaceFactory | None  # the in-process shard's workspaces; None when every shard is remote
    tenants: TenantService
    gate: CommandGate
    documents: DocumentService
    operations: OperationService
    releases: ReleaseService
    site: SiteService
    webhooks: WebhookService
    revisions: RevisionService
    backups: BackupService
    lanes: LaneService
    media: MediaService
    packages: PackageService
    platform_keys: PlatformKeyService
    retention: RetentionService
    fields: FieldService
    metrics: MetricsService
    members: MemberService
    audit: AuditService

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
        cache = ReadCache(url)
        tokens = TokenService(engine, cache)
        if settings.control_plane.operator_token is not None:
            tokens.ensure_operator_token(settings.control_plane.operator_token.get_secret_value())
        prefect = prefect or PrefectGateway(settings.dispatch)
        transports: dict[str, RuntimeTransport] = {}
        remotes: dict[str, HttpRuntime] = {}
        handoff = RelayHandoff(_nothing_to_relay)
        for name, target in settings.control_plane.shards.items():
            if target.url is not None and target.secret is not None:
                remotes[name] = HttpRuntime(
                    name,
                    target.url,
                    target.secret.get_secret_value(),
                    timeout=settings.control_plane.runtime_timeout_seconds,
                )
                transports[name] = remotes[name]
                continue
            # The shard that runs in this process (the embedded stack): the only one whose workspaces we open.
            factory = factory or WorkspaceFactory(settings.runtime)
            # The relay runs on the hand-off's own thread and loop, so it gets a client of its own.
            relay_port = relay_prefect or PrefectGateway(settings.dispatch)
            relay = Relay(factory, relay_port, settings.dispatch.coalescing, push=settings.dispatch.worker_push)
            handoff = RelayHandoff(relay.relay_tenant, close=relay_port.close)
            transports[name] = InProcessRuntime(factory, settings.dispatch, handoff)
        router = ShardRouter(engine, transports, settings.control_plane.default_shard, cache)
        placement = PlacementService(engine, router, remotes, drain_seconds=settings.control_plane.move_drain_seconds)
        runtime = RuntimeClient(router)
        tenants = TenantService(
            engine,
            runtime,
            placement,
            prefect,
            settings.dispatch,
            site_url=settings.runtime.site_url,
            default_publishes_per_hour=settings.control_plane.default_publishes_per_hour,
            cache=cache,
        )
        gate = CommandGate(tenants, runtime)
        # Downloads stream a backup from the store the runtimes write (one shared store: S3 in a cluster).
        store = factory.store if factory is not None else build_object_store(settings.runtime.storage)
        return cls(
            settings=settings,
            engine=engine,
            tokens=tokens,
            prefect=prefect,
            handoff=handoff,
            runtime=runtime,
            router=router,
            placement=placement,
            factory=factory,
            tenants=tenants,
            gate=gate,
            documents=DocumentService(gate, runtime),
            operations=OperationService(gate, runtime, prefect),
            releases=ReleaseService(gate),
            site=SiteService(gate, runtime),
            webhooks=WebhookService(gate, runtime),
            revisions=RevisionService(gate, runtime),
            backups=BackupService(gate, runtime, tokens, store),
            lanes=LaneService(gate, runtime),
            media=MediaService(gate, runtime, tenants),
            packages=PackageService(gate, runtime, url_fetcher(settings.control_plane)),
            platform_keys=PlatformKeyService(engine, PlatformKeyring.under(settings.runtime.data_dir)),
            retention=RetentionService(gate, runtime),
            fields=FieldService(gate, runtime),
            metrics=MetricsService(
                tenants,
                placement,
                prefect,
                runtime,
                tenants_per_scrape=settings.control_plane.metrics_tenants_per_scrape,
                timeout=settings.control_plane.metrics_timeout_seconds,
            ),
            members=MemberService(engine, gate),
            audit=AuditService(engine, gate, runtime),
        )

    async def close(self) -> None:
        """Finish handing off committed work, then close the Prefect clients."""
        await asyncio.to_thread(self.handoff.close)
        await self.prefect.close()
        self.tokens.cache.close()
        if self.factory is not None:
            self.factory.close()  # the connections kept open checkpoint their WAL as they close
        for remote in self.placement.remotes.values():
            remote.close()


async def _nothing_to_relay(tenant: str) -> int:
    """The hand-off of a control plane without an in-process shard: its runtimes relay their own work."""
    return 0


__all__ = ["Services"]
