"""The full-text search tables of a workspace, created with raw SQL (SQLModel cannot declare FTS5).

``search_document`` maps a document id to an integer rowid and carries what a
hit shows besides text; ``search_index`` is the FTS5 table over title and body,
sharing that rowid so an upsert touches one row instead of scanning the index.
"""

from __future__ import annotations

from sqlalchemy import Engine, text

SEARCH_DOCUMENT_TABLE = "search_document"
SEARCH_INDEX_TABLE = "search_index"

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


def ensure_search_schema(engine: Engine) -> None:
    """Create the search tables if they are missing; safe to call on every open."""
    with engine.begin() as connection:
        for statement in _DDL:
            connection.execute(text(statement))


__all__ = ["SEARCH_DOCUMENT_TABLE", "SEARCH_INDEX_TABLE", "ensure_search_schema"]
