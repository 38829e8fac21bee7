"""Members' names per site: an email invited to a second site gets the name that site's owner typed.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 20:00:00

Before, a second site's invitation answered (and listed) the name another site had stored for the same
person. Existing memberships keep NULL: their user's name, which the site that created them gave.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("membership", schema=None) as batch_op:
        batch_op.add_column(sa.Column("name", sa.String(length=200), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("membership", schema=None) as batch_op:
        batch_op.drop_column("name")
