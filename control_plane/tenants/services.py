"""Tenants as the control plane keeps them: reads, and the operator writes (each an audited action)."""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import Callable, Mapping
from datetime import datetime

import msgspec
import structlog
from sqlalchemy import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, or_, select

from control_plane.auth import Principal
from control_plane.db.models import OperatorAudit, Tenant
from control_plane.db.read_cache import ReadCache
from control_plane.placement import PlacementService
from control_plane.tenants import actions
from control_plane.tenants.schemas import AuditOut, RetentionOut, TenantOut, TokenOut
from dispatch.prefect_port import PrefectPort, PrefectUnavailable
from dispatch.retention import PruneReport, RetentionOverride, prune_finished_runs
from dispatch.runtime import RuntimeClient
from dispatch.runtime import messages as m
from dispatch.runtime.backups import GetBackupHealth
from dispatch.settings import DispatchSettings
from tenant_runtime.errors import AlreadyExists, BadRequest, NotFound, Unavailable
from tenant_runtime.ids import as_utc, utcnow

log = structlog.get_logger("pressroom.tenants")
# A control-plane answer never waits longer than this on Prefect.
PREFECT_TIMEOUT = 10.0


class TenantService:
    def __init__(
        self,
        engine: Engine,
        runtime: RuntimeClient,
        placement: PlacementService,
        prefect: PrefectPort,
        dispatch: DispatchSettings,
        *,
        site_url: str,
        default_publishes_per_hour: int = 600,
        cache: ReadCache | None = None,
    ) -> None:
        self.engine = engine
        self.cache = cache or ReadCache(None)
        self.runtime = runtime
        self.placement = placement
        self.prefect = prefect
        self.dispatch = dispatch
        self.site_url = site_url
        self.default_publishes_per_hour = default_publishes_per_hour

    # --- reads ---------------------------------------------------------------------------------------

    def get(self, slug: str) -> Tenant:
        with Session(self.engine, expire_on_commit=False) as session:
            tenant = session.exec(select(Tenant).where(Tenant.slug == slug)).first()
        if tenant is None:
            raise NotFound(f"Tenant {slug!r} not found.", details={"tenant": slug})
        return tenant

    def current(self, slug: str) -> Tenant:
        """The tenant's row as of the last change to the control-plane database (``ReadCache``); shared
        between requests, so read it, never change it."""
        return self.cache.get("tenant", slug, lambda: self.get(slug))

    def list(
        self,
        *,
        status: str | None = None,
        after: str | None = None,
        limit: int | None = None,
        q: str | None = None,
    ) -> list[Tenant]:
        """Tenants by slug; a page of ``limit`` of those after the slug ``after`` (``GET /ops/tenants``'s cursor);
        ``q``: those whose slug or name holds it (any case)."""
        with Session(self.engine, expire_on_commit=False) as session:
            query = select(Tenant).order_by(col(Tenant.slug))
            if status is not None:
                query = query.where(Tenant.status == status)
            if q:
                query = query.where(
                    or_(col(Tenant.slug).icontains(q, autoescape=True), col(Tenant.name).icontains(q, autoescape=True))
                )
            if after is not None:
                query = query.where(col(Tenant.slug) > after)
            if limit is not None:
                query = query.limit(limit)
            return list(session.exec(query))

    def out(self, tenant: Tenant, shard: str | None = None) -> TenantOut:
        return TenantOut(
            slug=tenant.slug,
            name=tenant.name,
            status=tenant.status,
            status_reason=tenant.status_reason,
            queue=self.dispatch.queue_for(tenant.slug),
            publishes_per_hour=tenant.publishes_per_hour,
            created_at=as_utc(tenant.created_at),
            site_url=f"{self.site_url}/{tenant.slug}",
            shard=shard,
            retention=self.retention(tenant),
        )

    def retention(self, tenant: Tenant) -> RetentionOut:
        """The retention in force for the tenant's finished runs, and which days are its own."""
        own = {name: days for name, days in actions.retention_of(tenant).items() if days is not None}
        policy = self.dispatch.retention.with_overrides(RetentionOverride(**own))
        return RetentionOut(
            succeeded_days=policy.succeeded_days,
            failed_days=policy.failed_days,
            cancelled_days=policy.cancelled_days,
            overrides=own,
        )

    def retention_overrides(self) -> dict[str, RetentionOverride]:
        """Every tenant that overrides any retention, with its own days (one query)."""
        with Session(self.engine) as session:
            rows = session.exec(
                select(Tenant).where(
                    or_(
                        col(Tenant.retention_succeeded_days).is_not(None),
                        col(Tenant.retention_failed_days).is_not(None),
                        col(Tenant.retention_cancelled_days).is_not(None),
                    )
                )
            )
            return {tenant.slug: RetentionOverride(**actions.retention_of(tenant)) for tenant in rows}

    async def detail(self, operator: Principal, slug: str) -> TenantOut:
        """A tenant with its unfinished operations and its late runs (Prefect's view, when it answers)."""
        tenant = await asyncio.to_thread(self.get, slug)
        shard, moving_to = await asyncio.to_thread(self.placement.router.shard_of, slug)
        out = self.out(tenant, shard)
        out.moving_to = moving_to
        figures = await asyncio.to_thread(self.runtime.figures, slug, operator.actor_ref(slug))
        out.queue_depth = figures.unfinished_operations
        health = await asyncio.to_thread(self.runtime.query, slug, operator.actor_ref(slug), GetBackupHealth())
        out.backups = msgspec.to_builtins(health)
        try:
            late, late_by = await asyncio.wait_for(self.prefect.late_runs(slug), timeout=PREFECT_TIMEOUT)
            out.late_runs, out.late_by_seconds, out.prefect = late, late_by, "ok"
        except (TimeoutError, PrefectUnavailable):
            out.prefect = "unavailable"
        return out

    def audit(
        self, *, action: str | None = None, tenant: str | None = None, limit: int = 100
    ) -> builtins.list[AuditOut]:
        """Operator writes, newest first."""
        with Session(self.engine) as session:
            query = select(OperatorAudit).order_by(col(OperatorAudit.id).desc()).limit(limit)
            if action is not None:
                query = query.where(OperatorAudit.action == action)
            if tenant is not None:
                query = query.where(OperatorAudit.tenant == tenant)
            return [
                AuditOut(
                    id=int(row.id or 0),
                    action=row.action,
                    actor=row.actor,
                    tenant=row.tenant,
                    object_type=row.object_type,
                    object_id=row.object_id,
                    data=dict(row.data),
                    created_at=as_utc(row.created_at),
                )
                for row in session.exec(query)
            ]

    # --- operator writes -------------------------------------------------------------------------------

    async def create(self, operator: Principal, slug: str, name: str, *, shard: str | None = None) -> TenantOut:
        """The tenant's placement, its workspace (on its shard), its row (audited) and its delivery queue."""
        shard = shard or self.placement.default_shard
        tenant = await asyncio.to_thread(self._create, operator, slug, name, shard)
        try:
            await asyncio.wait_for(self.prefect.ensure_queue(slug), timeout=PREFECT_TIMEOUT)
        except (TimeoutError, PrefectUnavailable) as exc:
            # The relay creates the queue before the tenant's first run if Prefect is down now.
            log.warning("tenant.queue_deferred", tenant=slug, error=str(exc) or type(exc).__name__)
        return self.out(tenant, shard)

    def _create(self, operator: Principal, slug: str, name: str, shard: str) -> Tenant:
        with Session(self.engine, expire_on_commit=False) as session:
            name = actions.check_new_tenant(session, slug, name)
            if shard not in self.placement.router.transports:
                raise BadRequest(f"No shard {shard!r}.", details={"field": "shard", "shards": self.placement.names()})
            # Placed in this transaction; the workspace is created by that shard's runtime first: creating
            # it is idempotent, so a failed insert leaves nothing visible.
            self.placement.place(session, slug, shard)
            self.placement.router.transport(shard).execute(
                slug,
                m.Command(
                    actor=operator.actor_ref(slug), scope="tenants.create", message=m.CreateWorkspace(title=name)
                ),
            )
            tenant = actions.create_tenant(
                session, operator, slug, name, publishes_per_hour=self.default_publishes_per_hour
            )
            try:
                session.commit()
            except IntegrityError:
                raise AlreadyExists("A tenant with this slug exists.", details={"slug": slug}) from None
            return tenant

    async def set_status(self, operator: Principal, slug: str, status: str, reason: str | None = None) -> TenantOut:
        """Suspend (pause the queue, refuse commands with 423, say ``reason`` to the site's editors) or resume."""
        await asyncio.to_thread(self.get, slug)
        try:
            # The queue first: a suspended tenant must run nothing, so no status flip without it.
            await asyncio.wait_for(
                self.prefect.ensure_queue(slug, paused=status == "suspended"), timeout=PREFECT_TIMEOUT
            )
        except (TimeoutError, PrefectUnavailable) as exc:
            raise Unavailable(
                "Prefect is unreachable; the queue was not changed. Try again.",
                details={"error": str(exc) or type(exc).__name__},
            ) from None
        # Then the tenant's runtime, which the nightly fan-out asks (it skips a tenant that is not active).
        await asyncio.to_thread(
            self.runtime.execute,
            slug,
            m.Command(
                actor=operator.actor_ref(slug), scope="tenants.status", message=m.SetServiceStatus(status=status)
            ),
        )
        return self.out(await asyncio.to_thread(self._set_status, operator, slug, status, reason))

    def set_quota(self, operator: Principal, slug: str, publishes_per_hour: int) -> TenantOut:
        return self.out(self._write(actions.set_quota, operator, slug, publishes_per_hour))

    def set_retention(self, operator: Principal, slug: str, changes: Mapping[str, int | None]) -> TenantOut:
        """The tenant's own retention per outcome (None: back to the default); the next prune applies it."""
        return self.out(self._write(actions.set_retention, operator, slug, changes))

    # --- retention of finished runs in Prefect (dispatch/retention.py) ---------------------------------

    async def prune_runs(
        self,
        *,
        now: datetime | None = None,
        dry_run: bool = False,
        progress: Callable[[PruneReport], None] | None = None,
    ) -> PruneReport:
        """Delete the finished runs past their tenant's retention (the defaults for runs of no tenant)."""
        overrides = await asyncio.to_thread(self.retention_overrides)
        return await prune_finished_runs(
            self.prefect, self.dispatch.retention, overrides, now or utcnow(), dry_run=dry_run, progress=progress
        )

    def issue_token(self, operator: Principal, slug: str, role: str, name: str = "") -> TokenOut:
        with Session(self.engine, expire_on_commit=False) as session:
            token, row = actions.issue_member_token(session, operator, slug, role, name)
            session.commit()
        return TokenOut(id=row.id, token=token, role=role, tenant=slug)

    def issue_operator_token(self, operator: Principal, label: str = "") -> str:
        with Session(self.engine, expire_on_commit=False) as session:
            token, _ = actions.issue_operator_token(session, operator, label)
            session.commit()
        return token

    def _set_status(self, operator: Principal, slug: str, status: str, reason: str | None) -> Tenant:
        with Session(self.engine, expire_on_commit=False) as session:
            tenant = actions.set_status(session, operator, slug, status, reason)
            session.commit()
            return tenant

    def _write(self, action: actions.TenantWrite, operator: Principal, slug: str, value: object) -> Tenant:
        with Session(self.engine, expire_on_commit=False) as session:
            tenant = action(session, operator, slug, value)
            session.commit()
            return tenant


__all__ = ["PREFECT_TIMEOUT", "TenantService"]
