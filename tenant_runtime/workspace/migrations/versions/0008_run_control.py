"""Run control: control requests on operations, restarts, and the events and waits of wait_for_event.

Revision ID: 0008
Revises: 0007

- ``operation.control`` … ``control_error``: the last pause / resume / terminate / wake asked
  of the operation's run and whether dispatch has applied it (an outbox of its own, like
  ``sent_at``); ``operation.restarts``: how many times it was restarted (0 for every existing row).
- ``operation_event``: events sent to an operation, kept until a wait consumes them.
- ``operation_wait``: each wait a run reached, with the deadline fixed when it was first reached.
"""

from __future__ import annotations

from alembic import op

revision = "0008"
down_revision: str | None = "0007"
branch_labels: str | None = None
depends_on: str | None = None

_STATEMENTS = (
    "ALTER TABLE operation ADD COLUMN control VARCHAR",
    "ALTER TABLE operation ADD COLUMN control_actor VARCHAR",
    "ALTER TABLE operation ADD COLUMN control_requested_at DATETIME",
    "ALTER TABLE operation ADD COLUMN control_sent_at DATETIME",
    "ALTER TABLE operation ADD COLUMN control_error VARCHAR",
    "ALTER TABLE operation ADD COLUMN restarts INTEGER NOT NULL DEFAULT 0",
    "CREATE INDEX ix_operation_control ON operation (control_sent_at, control)",
    """CREATE TABLE operation_event (
    id INTEGER NOT NULL,
    operation_id VARCHAR NOT NULL,
    type VARCHAR NOT NULL,
    payload JSON,
    actor VARCHAR NOT NULL,
    received_at DATETIME NOT NULL,
    consumed_at DATETIME,
    consumed_by VARCHAR,
    PRIMARY KEY (id),
    FOREIGN KEY(operation_id) REFERENCES operation (id)
)""",
    "CREATE INDEX ix_operation_event_pending ON operation_event (operation_id, type, consumed_at)",
    """CREATE TABLE operation_wait (
    id INTEGER NOT NULL,
    operation_id VARCHAR NOT NULL,
    name VARCHAR NOT NULL,
    event_type VARCHAR NOT NULL,
    epoch INTEGER NOT NULL,
    reached_at DATETIME NOT NULL,
    deadline DATETIME NOT NULL,
    parked INTEGER NOT NULL,
    resolved_at DATETIME,
    outcome VARCHAR,
    event_id INTEGER,
    PRIMARY KEY (id),
    UNIQUE (operation_id, name, epoch),
    FOREIGN KEY(operation_id) REFERENCES operation (id)
)""",
    "CREATE INDEX ix_operation_wait_operation_id ON operation_wait (operation_id)",
    "CREATE INDEX ix_operation_wait_open ON operation_wait (resolved_at)",
)


def upgrade() -> None:
    for statement in _STATEMENTS:
        op.execute(statement)


def downgrade() -> None:
    raise NotImplementedError("workspace revisions are forward-only; restore a backup to go back")
