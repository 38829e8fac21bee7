"""Packages: install (verified in the request, installed by the install_package flow), rollback, uninstall,
the installed list, and the publisher keys the site trusts (its own and the platform's)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import msgspec
from sqlalchemy import Engine
from sqlmodel import Session

from control_plane.auth import Principal
from control_plane.commands import Command, CommandGate
from control_plane.packages.schemas import PackageInstall
from control_plane.settings import ControlPlaneSettings
from control_plane.tenants.actions import record
from dispatch.runtime import CommandResult, RuntimeClient
from dispatch.runtime import messages as m
from dispatch.runtime.packages import PackageKeyOut, PackageOut
from tenant_runtime.errors import BadRequest, Forbidden
from tenant_runtime.ids import utcnow
from tenant_runtime.packages import PlatformKeyring, TrustedKey
from tenant_runtime.packages.fetch import fetch_archive

# What fetches a package archive from a URL (the allow-listed fetcher; a twin in tests).
Fetch = Callable[[str], bytes]


def _no_fetch(url: str) -> bytes:
    raise BadRequest("This installation does not fetch packages from URLs.", details={"url": url})


def url_fetcher(settings: ControlPlaneSettings) -> Fetch:
    """The operator's fetcher: PRESSROOM_PACKAGE_FETCH_ALLOW hosts only (none by default), public addresses
    unless PRESSROOM_PACKAGE_FETCH_ALLOW_PRIVATE, within the archive limit."""

    def fetch(url: str) -> bytes:
        return fetch_archive(
            url,
            allow=settings.package_fetch_allow,
            allow_private=settings.package_fetch_allow_private,
            timeout=settings.package_fetch_timeout_seconds,
        )

    return fetch


class PackageService:
    def __init__(self, gate: CommandGate, runtime: RuntimeClient, fetch: Fetch = _no_fetch) -> None:
        self.gate = gate
        self.runtime = runtime
        self.fetch = fetch

    def installed(self, principal: Principal, tenant: str, *, include_uninstalled: bool = False) -> list[PackageOut]:
        return self.runtime.packages(
            tenant, self.gate.reader(principal, tenant), include_uninstalled=include_uninstalled
        )

    def install(
        self, principal: Principal, tenant: str, data: PackageInstall, *, idempotency_key: str | None = None
    ) -> CommandResult:
        """Verify the package now (4xx with a code, nothing written, if it fails) and queue its install.

        A ``url`` is fetched first, only once the principal may install here and has confirmed (no one else
        makes this process fetch anything), within the allow-list and the archive limit."""
        if (data.archive is None) == (data.url is None):
            raise BadRequest("Send the package as 'archive' or as 'url', one of the two.", details={"field": "url"})
        archive = data.archive
        if data.url is not None:
            self.gate.admit(principal, tenant, "site.admin", data.confirm, effect="This installs a package")
            archive = self.fetch(data.url)
        assert archive is not None
        message = m.InstallPackage(archive=archive, pin_theme=data.pin_theme, options=data.options)
        return self.gate.execute(
            principal,
            Command(
                tenant, "site.admin", "packages.install", message, confirm=data.confirm, idempotency_key=idempotency_key
            ),
        )

    def rollback(
        self,
        principal: Principal,
        tenant: str,
        name: str,
        version: str | None,
        *,
        confirm: bool,
        idempotency_key: str | None = None,
    ) -> CommandResult:
        """Switch back to an installed version (default: the previous one: a repeat without the same
        ``idempotency_key`` steps back once more)."""
        message = m.RollbackPackage(name=name, version=version)
        scope = f"packages.rollback:{name}"
        return self.gate.execute(
            principal,
            Command(tenant, "site.admin", scope, message, confirm=confirm, idempotency_key=idempotency_key),
        )

    def uninstall(
        self, principal: Principal, tenant: str, name: str, *, confirm: bool, idempotency_key: str | None = None
    ) -> CommandResult:
        message = m.UninstallPackage(name=name)
        scope = f"packages.uninstall:{name}"
        return self.gate.execute(
            principal,
            Command(tenant, "site.admin", scope, message, confirm=confirm, idempotency_key=idempotency_key),
        )

    def keys(self, principal: Principal, tenant: str) -> list[PackageKeyOut]:
        return self.runtime.package_keys(tenant, self.gate.reader(principal, tenant))

    def add_key(
        self, principal: Principal, tenant: str, public_key: str, *, name: str = "", expires_at: datetime | None = None
    ) -> CommandResult:
        message = m.AddPackageKey(public_key=public_key, name=name, expires_at=expires_at)
        return self.gate.execute(principal, Command(tenant, "site.admin", "packages.keys.add", message))

    def revoke_key(self, principal: Principal, tenant: str, key_id: str) -> CommandResult:
        message = m.RevokePackageKey(key_id=key_id)
        return self.gate.execute(principal, Command(tenant, "site.admin", f"packages.keys.revoke:{key_id}", message))

    def expire_key(self, principal: Principal, tenant: str, key_id: str, at: datetime) -> CommandResult:
        message = m.ExpirePackageKey(key_id=key_id, at=at)
        return self.gate.execute(principal, Command(tenant, "site.admin", f"packages.keys.expire:{key_id}", message))


def _operator(principal: Principal) -> str:
    if not principal.is_operator:
        raise Forbidden("Only an operator may change the platform's trusted keys.")
    return f"operator:{principal.token_id}"


class PlatformKeyService:
    """The platform keyring: publisher keys every tenant trusts, changed by operators (audited)."""

    def __init__(self, engine: Engine, keyring: PlatformKeyring) -> None:
        self.engine = engine
        self.keyring = keyring

    def keys(self, principal: Principal) -> list[PackageKeyOut]:
        _operator(principal)
        now = utcnow()
        keys = sorted(self.keyring.keys().values(), key=lambda k: k.key_id)
        return [msgspec.convert(k.as_json(now), PackageKeyOut) for k in keys]

    def add(
        self, principal: Principal, public_key: str, *, name: str = "", expires_at: datetime | None = None
    ) -> PackageKeyOut:
        return self._write(
            principal,
            "package.key.platform.add",
            lambda: self.keyring.add(public_key, name=name, expires_at=expires_at),
        )

    def revoke(self, principal: Principal, key_id: str) -> PackageKeyOut:
        return self._write(principal, "package.key.platform.revoke", lambda: self.keyring.revoke(key_id))

    def expire(self, principal: Principal, key_id: str, at: datetime) -> PackageKeyOut:
        return self._write(principal, "package.key.platform.expire", lambda: self.keyring.expire(key_id, at))

    def key(self, principal: Principal, key_id: str) -> PackageKeyOut:
        """One platform key, or ``package_key_not_found``."""
        _operator(principal)
        return msgspec.convert(self.keyring.key(key_id).as_json(utcnow()), PackageKeyOut)

    def _write(self, principal: Principal, action: str, change: Callable[[], TrustedKey]) -> PackageKeyOut:
        """Change the keyring inside the audit row's transaction: a change that fails records nothing."""
        actor = _operator(principal)
        with Session(self.engine) as session, session.begin():
            key = change()
            record(session, actor, action, tenant=None, object_type="package_key", object_id=key.key_id, name=key.name)
        return msgspec.convert(key.as_json(utcnow()), PackageKeyOut)


__all__ = ["Fetch", "PackageService", "PlatformKeyService", "url_fetcher"]
