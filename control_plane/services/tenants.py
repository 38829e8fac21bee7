"""Tenants in the control plane: create (workspace + queue), list, suspend, resume."""

from __future__ import annotations

from sqlalchemy import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from tenant_runtime.errors import AlreadyExists, BadRequest, NotFound
from tenant_runtime.ids import check_tenant_slug, utcnow
from tenant_runtime.actions.site import configure_site
from tenant_runtime.workspace import SYSTEM, WorkspaceFactory
from control_plane.db.models import Tenant


class TenantService:
    def __init__(self, engine: Engine, factory: WorkspaceFactory, *, default_publishes_per_hour: int = 600) -> None:
        self.engine = engine
        self.factory = factory
        self.default_publishes_per_hour = default_publishes_per_hour

    def create(self, slug: str, name: str) -> Tenant:
        """The control-plane row and the tenant's own workspace database."""
        check_tenant_slug(slug)
        name = name.strip()
        if not name or len(name) > 200:
            raise BadRequest("A site name is 1-200 characters.", details={"field": "name"})
        with Session(self.engine, expire_on_commit=False) as session:
            if session.exec(select(Tenant).where(Tenant.slug == slug)).first() is not None:
                raise AlreadyExists("A tenant with this slug exists.", details={"slug": slug})
            # The workspace first: creating it is idempotent, so a failed insert leaves nothing visible.
            workspace = self.factory.create(slug)
            with workspace.transaction() as tx:
                configure_site(tx, SYSTEM, title=name)
            tenant = Tenant(slug=slug, name=name, publishes_per_hour=self.default_publishes_per_hour)
            session.add(tenant)
            try:
                session.commit()
            except IntegrityError:
                raise AlreadyExists("A tenant with this slug exists.", details={"slug": slug}) from None
            return tenant

    def get(self, slug: str) -> Tenant:
        with Session(self.engine, expire_on_commit=False) as session:
            tenant = session.exec(select(Tenant).where(Tenant.slug == slug)).first()
        if tenant is None:
            raise NotFound(f"Tenant {slug!r} not found.", details={"tenant": slug})
        return tenant

    def list(self, *, status: str | None = None) -> list[Tenant]:
        with Session(self.engine, expire_on_commit=False) as session:
            query = select(Tenant).order_by(col(Tenant.slug))
            if status is not None:
                query = query.where(Tenant.status == status)
            return list(session.exec(query))

    def set_status(self, slug: str, status: str) -> Tenant:
        with Session(self.engine, expire_on_commit=False) as session:
            tenant = session.exec(select(Tenant).where(Tenant.slug == slug)).first()
            if tenant is None:
                raise NotFound(f"Tenant {slug!r} not found.", details={"tenant": slug})
            tenant.status = status
            tenant.updated_at = utcnow()
            session.add(tenant)
            session.commit()
            return tenant

    def set_quota(self, slug: str, publishes_per_hour: int) -> Tenant:
        if publishes_per_hour < 0 or publishes_per_hour > 1_000_000:
            raise BadRequest("publishes_per_hour is 0-1000000.", details={"field": "publishes_per_hour"})
        with Session(self.engine, expire_on_commit=False) as session:
            tenant = session.exec(select(Tenant).where(Tenant.slug == slug)).first()
            if tenant is None:
                raise NotFound(f"Tenant {slug!r} not found.", details={"tenant": slug})
            tenant.publishes_per_hour = publishes_per_hour
            session.add(tenant)
            session.commit()
            return tenant
