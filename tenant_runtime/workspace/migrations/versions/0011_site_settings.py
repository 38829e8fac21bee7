"""Site settings beyond title and timezone, and which settings a rendered object was rendered with.

Revision ID: 0011
Revises: 0010

- ``site_state.description`` and ``site_state.language`` (a BCP 47 tag, ``en`` until set): shown on every
  page and in the feeds.
- ``site_state.settings_version``: bumped by every settings change; ``rendered_object.settings_version``
  records the one an object was rendered with, so the public server renders a page live (and never
  serves the stored object) once the settings it shows have changed. Existing objects were rendered
  with the settings as they are, version 0.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision: str | None = "0010"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.add_column("site_state", sa.Column("description", sa.String(), nullable=False, server_default=""))
    op.add_column("site_state", sa.Column("language", sa.String(), nullable=False, server_default="en"))
    op.add_column("site_state", sa.Column("settings_version", sa.Integer(), nullable=False, server_default="0"))
    op.add_column("rendered_object", sa.Column("settings_version", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    raise NotImplementedError("workspace revisions are forward-only; restore a backup to go back")
