"""Operator audit: every operator write, with its dotted action name.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01 08:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "operator_audit",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("action", sqlmodel.sql.sqltypes.AutoString(length=80), nullable=False),
        sa.Column("actor", sqlmodel.sql.sqltypes.AutoString(length=80), nullable=False),
        sa.Column("tenant", sqlmodel.sql.sqltypes.AutoString(length=39), nullable=True),
        sa.Column("object_type", sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
        sa.Column("object_id", sqlmodel.sql.sqltypes.AutoString(length=80), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("operator_audit", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_operator_audit_action"), ["action"], unique=False)
        batch_op.create_index(batch_op.f("ix_operator_audit_tenant"), ["tenant"], unique=False)
        batch_op.create_index(batch_op.f("ix_operator_audit_created_at"), ["created_at"], unique=False)


def downgrade() -> None:
    op.drop_table("operator_audit")
