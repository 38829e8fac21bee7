"""Packages: trusted publisher keys, and the install, rollback and uninstall operations.

The requests (site admins) verify before anything is written: a refused package
answers 4xx with its code (``tenant_runtime.packages.verify``) and leaves no
row, no object and no operation. An accepted one keeps its archive in the
tenant's store and queues ``install_package``; the run's steps call the
functions at the bottom (verify again, stage, activate or deactivate in one
transaction).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from tenant_runtime import audit
from tenant_runtime.actions.operations import new_operation, new_operation_id
from tenant_runtime.actions.site_resources import publish_theme_pin
from tenant_runtime.errors import BadRequest, Conflict, NotFound, Permanent
from tenant_runtime.ids import new_id, utcnow
from tenant_runtime.packages import kind_of, verify_package
from tenant_runtime.packages.signing import decode_public_key, key_id
from tenant_runtime.packages.staging import load_archive, stage_files, store_archive
from tenant_runtime.packages.themes import pinned_theme
from tenant_runtime.packages.trust import PlatformKeyring, keyring
from tenant_runtime.packages.verify import VerifiedPackage
from tenant_runtime.workflows import InstallPackageParameters
from tenant_runtime.workspace import Actor, Workspace
from tenant_runtime.workspace.models import Operation
from tenant_runtime.workspace.package_models import ACTIVE, INACTIVE, UNINSTALLED, InstalledPackage, PackageKey

# --- trusted keys -----------------------------------------------------------------------------------


def add_key(
    tx: Session, actor: Actor, public_key: str, *, name: str = "", expires_at: datetime | None = None
) -> PackageKey:
    """Trust a publisher's key for this site (adding it again renews it: a new name, expiry, no revocation)."""
    actor.require("site.admin")
    raw = decode_public_key(public_key)
    kid = key_id(raw)
    row = tx.get(PackageKey, kid) or PackageKey(key_id=kid, public_key=public_key.strip())
    row.name, row.expires_at, row.revoked_at = name[:100], expires_at, None
    row.added_by, row.added_at = actor.id, utcnow()
    tx.add(row)
    audit.record(tx, "package.key.add", actor, "package_key", kid, name=row.name, expires_at=_iso(expires_at))
    return row


def revoke_key(tx: Session, actor: Actor, kid: str) -> PackageKey:
    """Stop trusting a key at once: packages it signed can no longer be installed or rolled back to."""
    actor.require("site.admin")
    row = _key(tx, kid)
    row.revoked_at = row.revoked_at or utcnow()
    tx.add(row)
    audit.record(tx, "package.key.revoke", actor, "package_key", kid)
    return row


def expire_key(tx: Session, actor: Actor, kid: str, at: datetime) -> PackageKey:
    """Trust a key until ``at`` only."""
    actor.require("site.admin")
    row = _key(tx, kid)
    row.expires_at = at
    tx.add(row)
    audit.record(tx, "package.key.expire", actor, "package_key", kid, expires_at=_iso(at))
    return row


def _key(tx: Session, kid: str) -> PackageKey:
    row = tx.get(PackageKey, kid)
    if row is None:
        raise NotFound("No such trusted key.", details={"key_id": kid}, code="package_key_not_found")
    return row


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


# --- requests ---------------------------------------------------------------------------------------


def platform_keyring(ws: Workspace) -> PlatformKeyring:
    return PlatformKeyring.under(ws.settings.data_dir)


def verify_upload(tx: Session, ws: Workspace, archive: bytes, options: dict[str, Any] | None = None) -> VerifiedPackage:
    """Verify ``archive`` against the keys this site trusts now."""
    return verify_package(
        archive,
        keyring(tx, platform_keyring(ws)),
        now=utcnow(),
        options=options,
        allow_private_webhooks=ws.settings.webhook_allow_private,
    )


def request_install(
    tx: Session,
    ws: Workspace,
    actor: Actor,
    archive: bytes,
    *,
    pin_theme: bool = False,
    options: dict[str, Any] | None = None,
) -> tuple[Operation, VerifiedPackage]:
    """Verify the package, keep its archive and queue install_package (an upgrade, if another version is active)."""
    actor.require("site.admin")
    verified = verify_upload(tx, ws, archive, options)
    manifest = verified.manifest
    if pin_theme and manifest.kind != "theme":
        raise BadRequest("Only a theme can be pinned.", details={"kind": manifest.kind}, code="invalid_request")
    existing = _version(tx, manifest.name, manifest.version)
    if existing is not None and existing.archive_sha256 != verified.archive_sha256:
        raise Conflict(
            "This version of the package is installed already with other contents; publish a new version.",
            details={"package": manifest.ref},
            code="package_version_exists",
        )
    if existing is not None and existing.status == ACTIVE:
        raise Conflict(
            "This version is installed and active.", details={"package": manifest.ref}, code="package_active"
        )
    store_archive(ws, archive)  # content-addressed: the same upload is one object, and only a verified one is kept
    parameters = InstallPackageParameters(
        tenant=ws.tenant,
        operation_id=new_operation_id(),
        name=manifest.name,
        version=manifest.version,
        archive_sha256=verified.archive_sha256,
        pin_theme=pin_theme,
        options=dict(options or {}),
    )
    operation = new_operation(tx, actor, parameters)
    audit.record(
        tx,
        "package.install",
        actor,
        "package",
        manifest.ref,
        operation_id=operation.id,
        kind=manifest.kind,
        key_id=verified.key.key_id,
        key_scope=verified.key.scope,
        archive_sha256=verified.archive_sha256,
    )
    return operation, verified


def request_rollback(tx: Session, ws: Workspace, actor: Actor, name: str, version: str | None = None) -> Operation:
    """Switch back to an installed version (default: the one active before the current one)."""
    actor.require("site.admin")
    target = _version(tx, name, version) if version else _previous(tx, name)
    if target is None or target.status == UNINSTALLED:
        raise NotFound(
            "No installed version of the package to go back to.",
            details={"package": name, "version": version},
            code="package_not_found",
        )
    if target.status == ACTIVE:
        raise Conflict("This version is active already.", details={"package": target.ref}, code="package_active")
    parameters = InstallPackageParameters(
        tenant=ws.tenant,
        operation_id=new_operation_id(),
        name=name,
        version=target.version,
        action="activate",
        archive_sha256=target.archive_sha256,
    )
    operation = new_operation(tx, actor, parameters)
    audit.record(tx, "package.rollback", actor, "package", target.ref, operation_id=operation.id)
    return operation


def request_uninstall(tx: Session, ws: Workspace, actor: Actor, name: str) -> Operation:
    """Take a package off the site; a theme the site is pinned to is refused (pin another one first)."""
    actor.require("site.admin")
    active = _active(tx, name)
    if active is None:
        raise NotFound("The package is not installed.", details={"package": name}, code="package_not_found")
    _check_not_pinned(tx, active)
    parameters = InstallPackageParameters(
        tenant=ws.tenant, operation_id=new_operation_id(), name=name, version=active.version, action="uninstall"
    )
    operation = new_operation(tx, actor, parameters)
    audit.record(tx, "package.uninstall", actor, "package", active.ref, operation_id=operation.id)
    return operation


def _check_not_pinned(tx: Session, package: InstalledPackage) -> None:
    if package.kind == "theme" and pinned_theme(tx) == package.name:
        raise Conflict(
            "The site's theme pin names this theme: release another theme first.",
            details={"package": package.ref},
            code="package_in_use",
        )


def _version(tx: Session, name: str, version: str | None) -> InstalledPackage | None:
    query = select(InstalledPackage).where(InstalledPackage.name == name, InstalledPackage.version == version)
    return tx.exec(query).first()


def _active(tx: Session, name: str) -> InstalledPackage | None:
    query = select(InstalledPackage).where(InstalledPackage.name == name, InstalledPackage.status == ACTIVE)
    return tx.exec(query).first()


def _previous(tx: Session, name: str) -> InstalledPackage | None:
    query = (
        select(InstalledPackage)
        .where(InstalledPackage.name == name, InstalledPackage.status == INACTIVE)
        .order_by(col(InstalledPackage.updated_at).desc())
    )
    return tx.exec(query).first()


def list_packages(tx: Session, *, include_uninstalled: bool = False) -> list[InstalledPackage]:
    query = select(InstalledPackage).order_by(InstalledPackage.name, col(InstalledPackage.installed_at).desc())
    rows = list(tx.exec(query).all())
    return rows if include_uninstalled else [r for r in rows if r.status != UNINSTALLED]


# --- the install run's steps ------------------------------------------------------------------------


def verify_stored(ws: Workspace, params: InstallPackageParameters) -> VerifiedPackage:
    """The run's own check of the stored archive, against the keys trusted now (a key revoked since fails)."""
    archive = load_archive(ws, params.archive_sha256)
    with ws.reader() as tx:
        verified = verify_upload(tx, ws, archive, dict(params.options))
    if (verified.manifest.name, verified.manifest.version) != (params.name, params.version):
        raise Permanent(
            "The stored archive is not the package the operation names.",
            details={"package": verified.manifest.ref, "expected": f"{params.name}@{params.version}"},
            code="package_mismatch",
        )
    return verified


def stage(ws: Workspace, params: InstallPackageParameters) -> int:
    """Verify again, then write the version's files under its prefix (idempotent); objects written."""
    verified = verify_stored(ws, params)
    return stage_files(ws, params.name, params.version, verified.document, verified.files)


def activate(ws: Workspace, params: InstallPackageParameters) -> dict[str, Any]:
    """In one transaction: the version's row active, the previous one inactive, each kind's hooks, the pin.

    Returns whether the public site's pages change (a pinned theme whose version changed, or a new pin),
    so the run re-renders them. A retry after the commit finds the row active for this operation and
    changes nothing again.
    """
    verified = verify_stored(ws, params)
    manifest = verified.manifest
    kind = kind_of(manifest.kind)
    actor = f"package:{manifest.ref}"
    with ws.transaction() as tx:
        row = _version(tx, params.name, params.version)
        if row is not None and row.status == ACTIVE and row.operation_id == params.operation_id:
            return _activated(tx, row, previous=None)
        previous = _active(tx, params.name)
        if previous is not None and previous.id != (row.id if row else None):
            kind_of(previous.kind).uninstall(tx, ws, previous)
            previous.status, previous.updated_at = INACTIVE, utcnow()
            tx.add(previous)
        if row is None:
            row = InstalledPackage(
                id=new_id("pkg"),
                name=manifest.name,
                version=manifest.version,
                kind=manifest.kind,
                key_id=verified.key.key_id,
                key_scope=verified.key.scope,
                manifest=verified.document,
                manifest_sha256=verified.manifest_sha256,
                archive_sha256=verified.archive_sha256,
            )
        row.status, row.operation_id, row.updated_at = ACTIVE, params.operation_id, utcnow()
        row.registrations = {}
        tx.add(row)
        tx.flush()
        kind.install(tx, ws, row)
        tx.add(row)
        if params.pin_theme and pinned_theme(tx) != row.name:
            publish_theme_pin(tx, actor, row.name)
        audit.record(
            tx,
            "package.activated",
            actor,
            "package",
            row.ref,
            operation_id=params.operation_id,
            previous=previous.ref if previous else None,
        )
        return _activated(tx, row, previous)


def _activated(tx: Session, row: InstalledPackage, previous: InstalledPackage | None) -> dict[str, Any]:
    return {
        "package": row.ref,
        "kind": row.kind,
        "previous": previous.ref if previous else None,
        "site_changed": row.kind == "theme" and pinned_theme(tx) == row.name,
    }


def deactivate(ws: Workspace, params: InstallPackageParameters) -> dict[str, Any]:
    """Uninstall: every version of the package off, its kind's hooks undone, in one transaction."""
    with ws.transaction() as tx:
        rows = [r for r in list_packages(tx) if r.name == params.name]
        active = next((r for r in rows if r.status == ACTIVE), None)
        if active is not None:
            _check_not_pinned(tx, active)  # a release may have pinned it since the request
            kind_of(active.kind).uninstall(tx, ws, active)
        for row in rows:
            row.status, row.operation_id, row.updated_at = UNINSTALLED, params.operation_id, utcnow()
            tx.add(row)
        if rows:
            audit.record(tx, "package.uninstalled", "system", "package", params.name, operation_id=params.operation_id)
        return {"package": params.name, "uninstalled": len(rows)}


__all__ = [
    "activate",
    "add_key",
    "deactivate",
    "expire_key",
    "list_packages",
    "platform_keyring",
    "request_install",
    "request_rollback",
    "request_uninstall",
    "revoke_key",
    "stage",
    "verify_stored",
    "verify_upload",
]
