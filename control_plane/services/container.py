"""The services of one control-plane process, built once from settings."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine

from control_plane.db.engine import make_engine, upgrade
from control_plane.services.auth import TokenService
from control_plane.services.commands import CommandLayer
from control_plane.services.tenants import TenantService
from control_plane.settings import Settings
from dispatch.prefect_gateway import PrefectGateway
from dispatch.relay import Relay
from tenant_runtime.workspace import WorkspaceFactory


@dataclass
class Services:
    settings: Settings
    engine: Engine
    factory: WorkspaceFactory
    tokens: TokenService
    tenants: TenantService
    commands: CommandLayer
    gateway: PrefectGateway
    relay: Relay

    @classmethod
    def build(cls, settings: Settings, *, factory: WorkspaceFactory | None = None, migrate: bool = True) -> Services:
        url = settings.control_plane.database_url
        if migrate and settings.control_plane.migrate_on_start:
            upgrade(url)
        engine = make_engine(url)
        factory = factory or WorkspaceFactory(settings.runtime)
        tokens = TokenService(engine)
        if settings.control_plane.operator_token:
            tokens.ensure_operator_token(settings.control_plane.operator_token)
        tenants = TenantService(
            engine, factory, default_publishes_per_hour=settings.control_plane.default_publishes_per_hour
        )
        gateway = PrefectGateway(settings.dispatch)
        return cls(
            settings=settings,
            engine=engine,
            factory=factory,
            tokens=tokens,
            tenants=tenants,
            commands=CommandLayer(tenants, factory),
            gateway=gateway,
            relay=Relay(factory, gateway, settings.dispatch.coalescing),
        )
