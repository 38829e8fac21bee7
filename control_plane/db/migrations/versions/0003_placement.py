"""Placement: the shard whose runtime holds each tenant; existing tenants are on shard ``default``.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01 11:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "placement",
        sa.Column("tenant", sqlmodel.sql.sqltypes.AutoString(length=39), nullable=False),
        sa.Column("shard", sqlmodel.sql.sqltypes.AutoString(length=39), nullable=False),
        sa.Column("moving_to", sqlmodel.sql.sqltypes.AutoString(length=39), nullable=True),
        sa.Column("updated_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("tenant"),
    )
    with op.batch_alter_table("placement", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_placement_shard"), ["shard"], unique=False)
    # Every tenant so far lived in the one embedded runtime.
    op.execute(
        "INSERT INTO placement (tenant, shard, moving_to, updated_at) "
        "SELECT slug, 'default', NULL, CURRENT_TIMESTAMP FROM tenant"
    )


def downgrade() -> None:
    op.drop_table("placement")
