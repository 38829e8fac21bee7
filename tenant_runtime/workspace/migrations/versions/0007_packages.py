"""Packages: the tenant's trusted publisher keys and its installed package versions.

Revision ID: 0007
Revises: 0006

- ``package_key``: a publisher's Ed25519 public key the tenant trusts (until expired or revoked).
- ``package``: one row per installed version of a package (theme, plugin, lane), with its verified
  manifest; at most one version of a name is active.
"""

from __future__ import annotations

from alembic import op

revision = "0007"
down_revision: str | None = "0006"
branch_labels: str | None = None
depends_on: str | None = None

_TABLES = (
    """CREATE TABLE package_key (
    key_id VARCHAR NOT NULL,
    public_key VARCHAR NOT NULL,
    name VARCHAR NOT NULL,
    added_by VARCHAR NOT NULL,
    added_at DATETIME NOT NULL,
    expires_at DATETIME,
    revoked_at DATETIME,
    PRIMARY KEY (key_id)
)""",
    """CREATE TABLE package (
    id VARCHAR NOT NULL,
    name VARCHAR NOT NULL,
    version VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,
    status VARCHAR NOT NULL,
    key_id VARCHAR NOT NULL,
    key_scope VARCHAR NOT NULL,
    manifest JSON NOT NULL,
    manifest_sha256 VARCHAR NOT NULL,
    archive_sha256 VARCHAR NOT NULL,
    registrations JSON NOT NULL,
    operation_id VARCHAR,
    installed_by VARCHAR NOT NULL,
    installed_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    PRIMARY KEY (id),
    UNIQUE (name, version)
)""",
    "CREATE INDEX ix_package_name ON package (name)",
)


def upgrade() -> None:
    for statement in _TABLES:
        op.execute(statement)


def downgrade() -> None:
    raise NotImplementedError("workspace revisions are forward-only; restore a backup to go back")
