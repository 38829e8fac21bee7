"""Lanes and briefs: the site's lanes with their editorial packs, accepted briefs, and the paid-step ledger.

Revision ID: 0005
Revises: 0004

- ``lane``: each lane (enabled, step graph and its digest, source, current pack version, budget).
- ``editorial_pack``: every version of every lane's pack, unique per (lane, version).
- ``brief``: one row per accepted brief_id with its payload hash, the pinned graph and pack version, its
  operation and document.
- ``cost_entry``: one row per (brief, paid step) with its cost and result.

The seven reference lanes are seeded on the backbone with pack version 1 (as
``tenant_runtime.lanes.reference`` holds them at this revision), so every
site, new or upgraded, can take briefs.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from alembic import op
from sqlalchemy import text

revision = "0005"
down_revision: str | None = "0004"
branch_labels: str | None = None
depends_on: str | None = None

_TABLES = (
    """CREATE TABLE lane (
    name VARCHAR NOT NULL,
    enabled BOOLEAN NOT NULL,
    graph JSON NOT NULL,
    graph_digest VARCHAR NOT NULL,
    source VARCHAR NOT NULL,
    pack_version INTEGER NOT NULL,
    budget_micros INTEGER,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    PRIMARY KEY (name)
)""",
    """CREATE TABLE editorial_pack (
    id INTEGER NOT NULL,
    lane VARCHAR NOT NULL,
    version INTEGER NOT NULL,
    voice VARCHAR NOT NULL,
    audience VARCHAR NOT NULL,
    avoid JSON NOT NULL,
    guidance VARCHAR NOT NULL,
    actor VARCHAR NOT NULL,
    created_at DATETIME NOT NULL,
    PRIMARY KEY (id),
    UNIQUE (lane, version)
)""",
    "CREATE INDEX ix_editorial_pack_lane ON editorial_pack (lane)",
    """CREATE TABLE brief (
    brief_id VARCHAR NOT NULL,
    lane VARCHAR NOT NULL,
    payload JSON NOT NULL,
    payload_sha256 VARCHAR NOT NULL,
    slug VARCHAR NOT NULL,
    graph JSON NOT NULL,
    graph_digest VARCHAR NOT NULL,
    pack_version INTEGER NOT NULL,
    operation_id VARCHAR NOT NULL,
    document_id VARCHAR,
    actor VARCHAR NOT NULL,
    created_at DATETIME NOT NULL,
    PRIMARY KEY (brief_id),
    UNIQUE (operation_id)
)""",
    "CREATE INDEX ix_brief_lane ON brief (lane)",
    "CREATE UNIQUE INDEX ix_brief_slug ON brief (slug)",
    """CREATE TABLE cost_entry (
    id INTEGER NOT NULL,
    brief_id VARCHAR NOT NULL,
    lane VARCHAR NOT NULL,
    operation_id VARCHAR NOT NULL,
    step VARCHAR NOT NULL,
    provider VARCHAR NOT NULL,
    units INTEGER NOT NULL,
    cost_micros INTEGER NOT NULL,
    result JSON NOT NULL,
    created_at DATETIME NOT NULL,
    PRIMARY KEY (id),
    UNIQUE (brief_id, step)
)""",
    "CREATE INDEX ix_cost_entry_brief_id ON cost_entry (brief_id)",
    "CREATE INDEX ix_cost_entry_created_at ON cost_entry (created_at)",
    "CREATE INDEX ix_cost_entry_lane ON cost_entry (lane)",
)


def upgrade() -> None:
    from tenant_runtime.lanes.graph import backbone_graph, digest
    from tenant_runtime.lanes.reference import REFERENCE_LANES

    for statement in _TABLES:
        op.execute(statement)
    at = datetime.now(UTC).replace(tzinfo=None).strftime("%Y-%m-%d %H:%M:%S.%f")
    graph = backbone_graph()
    connection = op.get_bind()
    for name, pack in REFERENCE_LANES.items():
        connection.execute(
            text(
                "INSERT INTO lane (name, enabled, graph, graph_digest, source, pack_version, created_at, updated_at)"
                " VALUES (:name, :enabled, :graph, :digest, 'backbone', 1, :at, :at)"
            ),
            # enabled bound, not a literal 1: SQLite stores True as 1, PostgreSQL's BOOLEAN takes no integer.
            {"name": name, "enabled": True, "graph": json.dumps(graph), "digest": digest(graph), "at": at},
        )
        connection.execute(
            text(
                "INSERT INTO editorial_pack (lane, version, voice, audience, avoid, guidance, actor, created_at)"
                " VALUES (:lane, 1, :voice, :audience, :avoid, :guidance, 'system', :at)"
            ),
            {
                "lane": name,
                "voice": pack.voice,
                "audience": pack.audience,
                "avoid": json.dumps(list(pack.avoid)),
                "guidance": pack.guidance,
                "at": at,
            },
        )


def downgrade() -> None:
    raise NotImplementedError("workspace revisions are forward-only; restore a backup to go back")
