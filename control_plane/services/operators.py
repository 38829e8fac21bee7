"""Operator views across tenants: tenant status with queue depth and lateness, dead operations."""

from __future__ import annotations

import asyncio

from sqlmodel import col, func, select

from control_plane.api.schemas import OperationOut, TenantOut
from control_plane.db.models import Tenant
from control_plane.services.content import operation_out
from dispatch.prefect_gateway import PrefectGateway
from dispatch.settings import DispatchSettings
from tenant_runtime import queries
from tenant_runtime.operation_states import TERMINAL
from tenant_runtime.workspace import Operation, WorkspaceFactory


def tenant_out(tenant: Tenant, factory: WorkspaceFactory, dispatch: DispatchSettings) -> TenantOut:
    return TenantOut(
        slug=tenant.slug,
        name=tenant.name,
        status=tenant.status,
        queue=dispatch.queue_for(tenant.slug),
        publishes_per_hour=tenant.publishes_per_hour,
        created_at=tenant.created_at,
        site_url=f"{factory.settings.site_url}/{tenant.slug}",
    )


def queue_depth(factory: WorkspaceFactory, tenant: str) -> int:
    """Operations of the tenant that are not finished yet."""
    with factory.open(tenant).reader() as tx:
        return tx.exec(select(func.count()).where(col(Operation.status).not_in(TERMINAL))).one()


async def tenant_detail(
    tenant: Tenant, factory: WorkspaceFactory, gateway: PrefectGateway, dispatch: DispatchSettings
) -> TenantOut:
    out = tenant_out(tenant, factory, dispatch)
    out.queue_depth = await asyncio.to_thread(queue_depth, factory, tenant.slug)
    try:
        late, late_by = await asyncio.wait_for(gateway.late_runs(tenant.slug), timeout=5)
        out.late_runs, out.late_by_seconds, out.prefect = late, late_by, "ok"
    except Exception:
        out.prefect = "unavailable"
    return out


def operations_across(
    factory: WorkspaceFactory, tenants: list[Tenant], dispatch: DispatchSettings, status: str | None, limit: int
) -> list[OperationOut]:
    found: list[OperationOut] = []
    for tenant in tenants:
        with factory.open(tenant.slug).reader() as tx:
            for operation in queries.list_operations(tx, status=status, limit=limit):
                found.append(operation_out(tx, operation, dispatch, tenant=tenant.slug))
    found.sort(key=lambda op: op.created_at, reverse=True)
    return found[:limit]
