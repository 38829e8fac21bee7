"""Workspace tables of packages: the tenant's trusted publisher keys and its installed package versions.

``package_key``  a publisher key the tenant trusts (platform keys live in the platform keyring)
``package``      one row per installed version of a package; at most one version of a name is
                 ``active``, earlier ones stay ``inactive`` (a rollback activates one again),
                 ``uninstalled`` ones are kept for the record
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, UniqueConstraint
from sqlmodel import Field

from tenant_runtime.ids import utcnow
from tenant_runtime.workspace.models import WorkspaceModel

ACTIVE, INACTIVE, UNINSTALLED = "active", "inactive", "uninstalled"


class PackageKey(WorkspaceModel, table=True):
    """A publisher's Ed25519 public key this tenant trusts, until it expires or is revoked."""

    __tablename__ = "package_key"

    key_id: str = Field(primary_key=True)
    public_key: str  # base64 of the 32 raw bytes
    name: str = ""
    added_by: str = "system"
    added_at: datetime = Field(default_factory=utcnow)
    expires_at: datetime | None = None
    revoked_at: datetime | None = None


class InstalledPackage(WorkspaceModel, table=True):
    """One installed version of a package: its verified manifest, where its files are, whether it is active."""

    __tablename__ = "package"
    __table_args__ = (UniqueConstraint("name", "version"),)

    id: str = Field(primary_key=True)
    name: str = Field(index=True)
    version: str
    kind: str
    status: str = ACTIVE  # active | inactive | uninstalled
    key_id: str
    key_scope: str  # platform | tenant
    manifest: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    manifest_sha256: str
    archive_sha256: str
    # What its kind's install hook registered (e.g. a plugin's webhook endpoints), for its uninstall hook.
    registrations: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    operation_id: str | None = None  # the run that last changed it
    installed_by: str = "system"
    installed_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.version}"


__all__ = ["ACTIVE", "INACTIVE", "UNINSTALLED", "InstalledPackage", "PackageKey"]
