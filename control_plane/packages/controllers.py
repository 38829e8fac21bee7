"""Tenant API: packages and trusted publisher keys."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Response, get, post

from control_plane.auth import Principal
from control_plane.container import Services
from control_plane.http.errors import error_responses
from control_plane.http.guards import operator_only
from control_plane.http.params import IdempotencyKey
from control_plane.http.responses import respond
from control_plane.packages.schemas import (
    PackageInstall,
    PackageKeyAdd,
    PackageKeyExpire,
    PackageKeyOut,
    PackageKeyRevoke,
    PackageOut,
    PackageRollback,
    PackageUninstall,
)


class PackageController(Controller):
    path = "/api/tenants/{tenant:str}"
    tags = ("packages",)

    @get("/packages", sync_to_thread=True)
    def list_packages(
        self, tenant: str, principal: Principal, services: Services, include_uninstalled: bool = False
    ) -> list[PackageOut]:
        """Installed packages, every version (active, inactive), newest first per name."""
        return services.packages.installed(principal, tenant, include_uninstalled=include_uninstalled)

    @post("/packages", sync_to_thread=True, status_code=202, responses=error_responses(422))
    def install(
        self,
        tenant: str,
        data: PackageInstall,
        principal: Principal,
        services: Services,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[dict[str, Any]]:
        """Install (or upgrade to) a signed package: verified now, installed by the install_package flow."""
        return respond(services.packages.install(principal, tenant, data, idempotency_key=idempotency_key))

    @post("/packages/{name:str}/rollback", sync_to_thread=True, status_code=202)
    def rollback(
        self,
        tenant: str,
        name: str,
        data: PackageRollback,
        principal: Principal,
        services: Services,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[dict[str, Any]]:
        """Switch back to an installed version of the package (default: the previous one)."""
        return respond(
            services.packages.rollback(
                principal, tenant, name, data.version, confirm=data.confirm, idempotency_key=idempotency_key
            )
        )

    @post("/packages/{name:str}/uninstall", sync_to_thread=True, status_code=202)
    def uninstall(
        self,
        tenant: str,
        name: str,
        data: PackageUninstall,
        principal: Principal,
        services: Services,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[dict[str, Any]]:
        """Take the package off the site (a theme the site is pinned to: 409 package_in_use)."""
        return respond(
            services.packages.uninstall(principal, tenant, name, confirm=data.confirm, idempotency_key=idempotency_key)
        )

    @get("/package-keys", sync_to_thread=True)
    def keys(self, tenant: str, principal: Principal, services: Services) -> list[PackageKeyOut]:
        """Publisher keys this site trusts: its own and the platform's, with their status."""
        return services.packages.keys(principal, tenant)

    @post("/package-keys", sync_to_thread=True, status_code=201)
    def add_key(
        self, tenant: str, data: PackageKeyAdd, principal: Principal, services: Services
    ) -> Response[dict[str, Any]]:
        """Trust a publisher's Ed25519 public key (base64) for this site."""
        return respond(
            services.packages.add_key(principal, tenant, data.public_key, name=data.name, expires_at=data.expires_at)
        )

    @post("/package-keys/{key_id:str}/revoke", sync_to_thread=True, status_code=200)
    def revoke_key(
        self, tenant: str, key_id: str, data: PackageKeyRevoke, principal: Principal, services: Services
    ) -> Response[dict[str, Any]]:
        """Stop trusting a key at once."""
        return respond(services.packages.revoke_key(principal, tenant, key_id))

    @post("/package-keys/{key_id:str}/expire", sync_to_thread=True, status_code=200)
    def expire_key(
        self, tenant: str, key_id: str, data: PackageKeyExpire, principal: Principal, services: Services
    ) -> Response[dict[str, Any]]:
        """Trust a key until ``at`` only."""
        return respond(services.packages.expire_key(principal, tenant, key_id, data.at))


class PlatformKeyController(Controller):
    """Operator API: the platform keyring (publisher keys every tenant trusts)."""

    path = "/ops"
    tags = ("operator",)
    guards = (operator_only,)

    @get("/package-keys", sync_to_thread=True)
    def keys(self, principal: Principal, services: Services) -> list[PackageKeyOut]:
        """The platform's trusted publisher keys, with their status."""
        return services.platform_keys.keys(principal)

    @post("/package-keys", sync_to_thread=True, status_code=201)
    def add_key(self, data: PackageKeyAdd, principal: Principal, services: Services) -> PackageKeyOut:
        """Trust a publisher's key for every tenant (audited: package.key.platform.add)."""
        return services.platform_keys.add(principal, data.public_key, name=data.name, expires_at=data.expires_at)

    @post("/package-keys/{key_id:str}/revoke", sync_to_thread=True, status_code=200)
    def revoke_key(
        self, key_id: str, data: PackageKeyRevoke, principal: Principal, services: Services
    ) -> PackageKeyOut:
        """Stop trusting a platform key at once, on every tenant."""
        return services.platform_keys.revoke(principal, key_id)

    @post("/package-keys/{key_id:str}/expire", sync_to_thread=True, status_code=200)
    def expire_key(
        self, key_id: str, data: PackageKeyExpire, principal: Principal, services: Services
    ) -> PackageKeyOut:
        """Trust a platform key until ``at`` only."""
        return services.platform_keys.expire(principal, key_id, data.at)


__all__ = ["PackageController", "PlatformKeyController"]
