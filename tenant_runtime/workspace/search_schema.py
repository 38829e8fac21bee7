"""The full-text search tables of a workspace, created with raw SQL (SQLModel cannot declare FTS5).

``search_document`` maps a document id to an integer rowid and carries what a
hit shows besides text; ``search_index`` is the FTS5 table over title and body,
sharing that rowid so an upsert touches one row instead of scanning the index.

The revision chain (``tenant_runtime.workspace.migrations``) creates these
tables; the DDL here is their current shape, the counterpart of the models for
the ORM tables, and a test checks that the chain builds exactly it. Changing it
therefore takes a revision. It is also used to recreate the tables when they
are missing from an up-to-date workspace: they hold derived data (the
``rebuild_search_index`` flow refills them), so restoring them empty is safe.
"""

from __future__ import annotations

from sqlalchemy import Connection, Engine, text

SEARCH_DOCUMENT_TABLE = "search_document"
SEARCH_INDEX_TABLE = "search_index"
SEARCH_TABLES = (SEARCH_DOCUMENT_TABLE, SEARCH_INDEX_TABLE)

_DDL = (
    f"""CREATE TABLE IF NOT EXISTS {SEARCH_DOCUMENT_TABLE} (
        rowid INTEGER PRIMARY KEY AUTOINCREMENT,
        document_id TEXT NOT NULL UNIQUE,
        slug TEXT NOT NULL,
        version INTEGER NOT NULL,
        published_at TEXT NOT NULL
    )""",
    # porter: "publish" finds "publishing"; remove_diacritics 2: "cafe" finds "café"; case is folded.
    f"""CREATE VIRTUAL TABLE IF NOT EXISTS {SEARCH_INDEX_TABLE} USING fts5(
        title, body, tokenize = 'porter unicode61 remove_diacritics 2'
    )""",
)


def create_search_tables(connection: Connection) -> None:
    """Create the search tables that are missing, in the caller's transaction."""
    for statement in _DDL:
        connection.execute(text(statement))


def ensure_search_schema(engine: Engine) -> None:
    """Create the search tables if they are missing, in a transaction of their own; idempotent."""
    with engine.begin() as connection:
        create_search_tables(connection)


__all__ = [
    "SEARCH_DOCUMENT_TABLE",
    "SEARCH_INDEX_TABLE",
    "SEARCH_TABLES",
    "create_search_tables",
    "ensure_search_schema",
]
