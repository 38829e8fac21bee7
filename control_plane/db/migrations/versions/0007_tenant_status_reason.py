"""Tenant status reason: why an operator suspended a site, shown to its editors (NULL: none given).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 19:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tenant", schema=None) as batch_op:
        batch_op.add_column(sa.Column("status_reason", sqlmodel.sql.sqltypes.AutoString(length=500), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("tenant", schema=None) as batch_op:
        batch_op.drop_column("status_reason")
