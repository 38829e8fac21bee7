"""The packages area of the in-process runtime: installed packages, trusted keys, install/rollback/uninstall."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec
from sqlmodel import Session

from dispatch.runtime import messages as m
from dispatch.runtime.changes import accepted
from dispatch.runtime.handlers import Effect, command, query
from dispatch.settings import DispatchSettings
from tenant_runtime.actions import packages
from tenant_runtime.ids import as_utc, utcnow
from tenant_runtime.packages.themes import pinned_theme
from tenant_runtime.packages.trust import keyring
from tenant_runtime.workspace import Actor, Workspace
from tenant_runtime.workspace.package_models import InstalledPackage


class PackageOut(msgspec.Struct):
    id: str
    name: str
    version: str
    kind: str
    status: str  # active | inactive | uninstalled
    description: str
    files: int
    key_id: str
    key_scope: str
    archive_sha256: str
    manifest_sha256: str
    contributions: dict[str, Any]
    installed_at: datetime
    updated_at: datetime
    operation_id: str | None
    pinned: bool = False  # a theme the site's published theme pin names


class PackageKeyOut(msgspec.Struct):
    key_id: str
    public_key: str
    scope: str  # platform | tenant
    name: str
    added_at: datetime | None
    expires_at: datetime | None
    revoked_at: datetime | None
    status: str  # trusted | expired | revoked


def package_out(row: InstalledPackage, pinned: str | None = None) -> PackageOut:
    manifest = row.manifest
    return PackageOut(
        id=row.id,
        name=row.name,
        version=row.version,
        kind=row.kind,
        status=row.status,
        description=str(manifest.get("description", "")),
        files=len(manifest.get("files", [])),
        key_id=row.key_id,
        key_scope=row.key_scope,
        archive_sha256=row.archive_sha256,
        manifest_sha256=row.manifest_sha256,
        contributions=dict(manifest.get("contributions", {})),
        installed_at=as_utc(row.installed_at),
        updated_at=as_utc(row.updated_at),
        operation_id=row.operation_id,
        pinned=row.kind == "theme" and row.status == "active" and row.name == pinned,
    )


@query(m.ListPackages)
def _list(tx: Session, ws: Workspace, q: m.ListPackages, dispatch: DispatchSettings) -> list[PackageOut]:
    pinned = pinned_theme(tx)
    return [package_out(row, pinned) for row in packages.list_packages(tx, include_uninstalled=q.include_uninstalled)]


@query(m.ListPackageKeys)
def _keys(tx: Session, ws: Workspace, q: m.ListPackageKeys, dispatch: DispatchSettings) -> list[PackageKeyOut]:
    now = utcnow()
    keys = keyring(tx, packages.platform_keyring(ws))
    return [msgspec.convert(k.as_json(now), PackageKeyOut) for k in sorted(keys.values(), key=lambda k: k.key_id)]


@command(m.InstallPackage)
def _install(tx: Session, ws: Workspace, actor: Actor, c: m.InstallPackage) -> Effect:
    operation, verified = packages.request_install(
        tx, ws, actor, c.archive, pin_theme=c.pin_theme, options=dict(c.options)
    )
    manifest = verified.manifest
    return accepted(
        ws,
        operation,
        package={"name": manifest.name, "version": manifest.version, "kind": manifest.kind},
        key_id=verified.key.key_id,
    )


@command(m.RollbackPackage)
def _rollback(tx: Session, ws: Workspace, actor: Actor, c: m.RollbackPackage) -> Effect:
    return accepted(ws, packages.request_rollback(tx, ws, actor, c.name, c.version))


@command(m.UninstallPackage)
def _uninstall(tx: Session, ws: Workspace, actor: Actor, c: m.UninstallPackage) -> Effect:
    return accepted(ws, packages.request_uninstall(tx, ws, actor, c.name))


def _key_out(tx: Session, ws: Workspace, key_id: str) -> dict[str, Any]:
    key = keyring(tx, packages.platform_keyring(ws))[key_id]
    return dict(msgspec.to_builtins(msgspec.convert(key.as_json(utcnow()), PackageKeyOut)))


@command(m.AddPackageKey)
def _add_key(tx: Session, ws: Workspace, actor: Actor, c: m.AddPackageKey) -> Effect:
    row = packages.add_key(tx, actor, c.public_key, name=c.name, expires_at=c.expires_at)
    tx.flush()
    return Effect(201, _key_out(tx, ws, row.key_id))


@command(m.RevokePackageKey)
def _revoke_key(tx: Session, ws: Workspace, actor: Actor, c: m.RevokePackageKey) -> Effect:
    packages.revoke_key(tx, actor, c.key_id)
    tx.flush()
    return Effect(200, _key_out(tx, ws, c.key_id))


@command(m.ExpirePackageKey)
def _expire_key(tx: Session, ws: Workspace, actor: Actor, c: m.ExpirePackageKey) -> Effect:
    packages.expire_key(tx, actor, c.key_id, c.at)
    tx.flush()
    return Effect(200, _key_out(tx, ws, c.key_id))


__all__ = ["PackageKeyOut", "PackageOut", "package_out"]
