"""Tenant retention: each tenant's own days for its finished runs in Prefect, per outcome (NULL: the default).

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01 11:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

COLUMNS = ("retention_succeeded_days", "retention_failed_days", "retention_cancelled_days")


def upgrade() -> None:
    with op.batch_alter_table("tenant", schema=None) as batch_op:
        for column in COLUMNS:
            batch_op.add_column(sa.Column(column, sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("tenant", schema=None) as batch_op:
        for column in reversed(COLUMNS):
            batch_op.drop_column(column)
