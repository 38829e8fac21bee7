"""Operation outcomes; webhook deliveries recorded per document.

Revision ID: 0002
Revises: 0001

- ``operation.outcome`` (JSON, nullable): the facts the run that settled the
  operation reported (purged tags, counts), shown with the operation.
- ``webhook_delivery.document_id``: a release delivers several documents in one
  operation, and each one is told to an endpoint once, so the document joins the
  delivery's unique key. SQLite cannot change a table's constraints in place,
  so the table is rebuilt (its rows copied, each given its operation's document
  where the operation has one, else ``''``). Foreign keys are off during the
  upgrade and checked before it commits (``migrations/chain.py``).
"""

from __future__ import annotations

from alembic import op

revision = "0002"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None

_WEBHOOK_DELIVERY = """CREATE TABLE webhook_delivery_0002 (
    id INTEGER NOT NULL,
    operation_id VARCHAR NOT NULL,
    endpoint_id VARCHAR NOT NULL,
    event VARCHAR NOT NULL,
    document_id VARCHAR NOT NULL,
    status VARCHAR NOT NULL,
    status_code INTEGER NOT NULL,
    delivered_at DATETIME NOT NULL,
    PRIMARY KEY (id),
    UNIQUE (operation_id, endpoint_id, event, document_id),
    FOREIGN KEY(endpoint_id) REFERENCES webhook_endpoint (id)
)"""


def upgrade() -> None:
    op.execute("ALTER TABLE operation ADD COLUMN outcome JSON")
    op.execute(_WEBHOOK_DELIVERY)
    op.execute(
        "INSERT INTO webhook_delivery_0002 (id, operation_id, endpoint_id, event, document_id, status, status_code,"
        " delivered_at) SELECT d.id, d.operation_id, d.endpoint_id, d.event,"
        " COALESCE((SELECT o.document_id FROM operation o WHERE o.id = d.operation_id), ''),"
        " d.status, d.status_code, d.delivered_at FROM webhook_delivery d"
    )
    op.execute("DROP TABLE webhook_delivery")
    op.execute("ALTER TABLE webhook_delivery_0002 RENAME TO webhook_delivery")
    op.execute("CREATE INDEX ix_webhook_delivery_operation_id ON webhook_delivery (operation_id)")
    op.execute("CREATE INDEX ix_webhook_delivery_endpoint_id ON webhook_delivery (endpoint_id)")


def downgrade() -> None:
    raise NotImplementedError("workspace revisions are forward-only; restore a backup to go back")
