"""Full-text search over one tenant's published documents (SQLite FTS5, or PostgreSQL's, in the workspace).

User text never reaches FTS5 as query syntax: it is cut into word tokens and
each token becomes a quoted string, so ``NEAR``, ``*``, ``"``, ``:`` or ``-``
in a query are plain words or nothing, and a query of nothing but punctuation
finds nothing instead of failing.

On PostgreSQL the same words go to ``plainto_tsquery`` (every word required,
no operators: ``websearch_to_tsquery`` would read ``or`` and ``-`` as syntax,
where FTS5 here reads them as words), ranked by ``ts_rank`` over the weighted
vector (title 1.0, body 0.1: the title counts ten times, as with bm25's
weights), snippets by ``ts_headline`` with the same markers.
"""

from __future__ import annotations

import re
from typing import Any

import structlog
from sqlalchemy import Connection, text
from sqlalchemy.exc import OperationalError, ProgrammingError
from sqlmodel import Session

from tenant_runtime import queries
from tenant_runtime.ids import as_utc
from tenant_runtime.rendering import plain_text
from tenant_runtime.rendering.views import SearchHit
from tenant_runtime.workspace.models import Document, Revision
from tenant_runtime.workspace.open import Workspace
from tenant_runtime.workspace.search_schema import SEARCH_CONFIG
from tenant_runtime.workspace.search_schema import SEARCH_DOCUMENT_TABLE as DOCS
from tenant_runtime.workspace.search_schema import SEARCH_INDEX_TABLE as INDEX

log = structlog.get_logger("pressroom.search")

MAX_QUERY_CHARS = 200
MAX_TERMS = 8
MAX_LIMIT = 50
SNIPPET_TOKENS = 24
# Private-use characters mark matches inside snippets; they are removed from indexed text first,
# so a document cannot fake a highlight.
_OPEN, _CLOSE = "\ue000", "\ue001"
_MARKERS = re.compile(f"[{_OPEN}{_CLOSE}]")
_TERM = re.compile(r"\w+")


def _terms(q: str) -> list[str]:
    return [t for t in _TERM.findall(q[:MAX_QUERY_CHARS]) if any(c.isalnum() for c in t)][:MAX_TERMS]


def match_expression(q: str) -> str | None:
    """The FTS5 expression for user text: its words, each quoted, all required; None if no words."""
    terms = _terms(q)
    if not terms:
        return None
    # \w never matches '"', but doubling keeps the quoting correct even if the pattern changes.
    return " ".join('"' + term.replace('"', '""') + '"' for term in terms)


def _clean(value: str) -> str:
    return _MARKERS.sub("", value)


def _highlights(snippet: str) -> tuple[tuple[str, bool], ...]:
    """Split a marked snippet into (text, matched) runs."""
    runs: list[tuple[str, bool]] = []
    for part in re.split(f"({_OPEN}[^{_CLOSE}]*{_CLOSE})", snippet):
        if not part:
            continue
        matched = part.startswith(_OPEN)
        runs.append((_clean(part), matched))
    return tuple(runs)


def _connection(tx: Session) -> Connection:
    return tx.connection()


def _postgres(conn: Connection) -> bool:
    return conn.dialect.name == "postgresql"


def _upsert(conn: Connection, document: Document, revision: Revision) -> bool:
    """Index ``revision`` under its document id unless a newer version is indexed already."""
    row = conn.execute(text(f"SELECT rowid, version FROM {DOCS} WHERE document_id = :id"), {"id": document.id}).first()
    published_at = as_utc(document.published_at or revision.created_at).isoformat()
    values = {"id": document.id, "slug": revision.slug, "version": revision.version, "published_at": published_at}
    if row is None:
        insert = (
            f"INSERT INTO {DOCS} (document_id, slug, version, published_at) "
            "VALUES (:id, :slug, :version, :published_at)"
        )
        if _postgres(conn):  # no lastrowid on PostgreSQL
            rowid = conn.execute(text(insert + " RETURNING rowid"), values).scalar_one()
        else:
            rowid = conn.execute(text(insert), values).lastrowid
    else:
        if row.version > revision.version:
            return False
        rowid = row.rowid
        conn.execute(
            text(
                f"UPDATE {DOCS} SET slug = :slug, version = :version, published_at = :published_at WHERE rowid = :rowid"
            ),
            {**values, "rowid": rowid},
        )
        conn.execute(text(f"DELETE FROM {INDEX} WHERE rowid = :rowid"), {"rowid": rowid})
    conn.execute(
        text(f"INSERT INTO {INDEX} (rowid, title, body) VALUES (:rowid, :title, :body)"),
        {"rowid": rowid, "title": _clean(revision.title), "body": _clean(plain_text(revision.body))},
    )
    return True


def _delete(conn: Connection, document_id: str) -> bool:
    row = conn.execute(text(f"SELECT rowid FROM {DOCS} WHERE document_id = :id"), {"id": document_id}).first()
    if row is None:
        return False
    conn.execute(text(f"DELETE FROM {INDEX} WHERE rowid = :rowid"), {"rowid": row.rowid})
    conn.execute(text(f"DELETE FROM {DOCS} WHERE rowid = :rowid"), {"rowid": row.rowid})
    return True


def index_document(ws: Workspace, document_id: str, version: int) -> bool:
    """Index the document at ``version`` if that is what is public; True if the index changed."""
    with ws.transaction() as tx:
        document = queries.get_document(tx, document_id)
        conn = _connection(tx)
        if document.status != "published" or document.published_version is None:
            # Withdrawn since the delivery started: make sure it is not findable.
            return _delete(conn, document_id)
        if document.published_version != version:
            return False  # another version is public; its own delivery indexes it
        return _upsert(conn, document, queries.get_revision(tx, document_id, version))


def remove_document(ws: Workspace, document_id: str) -> bool:
    """Drop the document from the index (unpublish) unless it is published again; True if it was there."""
    with ws.transaction() as tx:
        document = tx.get(Document, document_id)
        if document is not None and document.status == "published":
            return False  # republished since the unpublish: its own delivery keeps the index right
        return _delete(_connection(tx), document_id)


def indexed_count(ws: Workspace) -> int:
    with ws.reader() as tx:
        return int(_connection(tx).execute(text(f"SELECT count(*) FROM {DOCS}")).scalar_one())


def rebuild_search_index(ws: Workspace, force: bool = False) -> dict[str, Any]:
    """Replay every published document into a fresh index; a no-op if it is populated unless forced."""
    with ws.transaction() as tx:
        conn = _connection(tx)
        populated = int(conn.execute(text(f"SELECT count(*) FROM {DOCS}")).scalar_one())
        if populated and not force:
            return {"rebuilt": False, "indexed": populated}
        conn.execute(text(f"DELETE FROM {INDEX}"))
        conn.execute(text(f"DELETE FROM {DOCS}"))
        listing = queries.published_listing(tx)
        for document, revision in listing:
            _upsert(conn, document, revision)
        return {"rebuilt": True, "indexed": len(listing)}


_PG_SEARCH = text(
    f"SELECT d.slug AS slug, i.title AS title, "
    f"ts_headline('{SEARCH_CONFIG}', i.body, q.query, :options) AS snippet "
    f"FROM {INDEX} i JOIN {DOCS} d ON d.rowid = i.rowid, "
    f"plainto_tsquery('{SEARCH_CONFIG}', :terms) AS q(query) "
    "WHERE i.document @@ q.query "
    # Weights in the order D, C, B, A: the body (D) 0.1, the title (A) 1.0; slug breaks ties.
    "ORDER BY ts_rank('{0.1, 0, 0, 1.0}', i.document, q.query) DESC, d.slug LIMIT :limit"
)
# MinWords/MaxWords around SNIPPET_TOKENS; one fragment, as FTS5's snippet gives.
_PG_HEADLINE = (
    f"StartSel={_OPEN}, StopSel={_CLOSE}, MaxWords={SNIPPET_TOKENS}, MinWords={SNIPPET_TOKENS // 2}, "
    "ShortWord=0, MaxFragments=1, FragmentDelimiter=…"
)


def search(ws: Workspace, q: str, limit: int = 20) -> list[SearchHit]:
    """Published documents matching every word of ``q``, best first; garbage finds nothing."""
    expression = match_expression(q)
    if expression is None:
        return []
    limit = max(1, min(int(limit), MAX_LIMIT))
    if postgres_engine(ws):
        return _search_postgres(ws, q, limit)
    statement = text(
        f"SELECT {DOCS}.slug AS slug, {INDEX}.title AS title, "
        f"snippet({INDEX}, 1, :open, :close, '…', :tokens) AS snippet "
        f"FROM {INDEX} JOIN {DOCS} ON {DOCS}.rowid = {INDEX}.rowid "
        f"WHERE {INDEX} MATCH :expression "
        # Title matches weigh ten times body matches; slug breaks ties so the order is stable.
        f"ORDER BY bm25({INDEX}, 10.0, 1.0), {DOCS}.slug LIMIT :limit"
    )
    params = {"open": _OPEN, "close": _CLOSE, "tokens": SNIPPET_TOKENS, "expression": expression, "limit": limit}
    try:
        with ws.reader() as tx:
            rows = _connection(tx).execute(statement, params).all()
    except OperationalError as exc:
        # A workspace opened read-only before its search tables existed, or an FTS5 error the
        # quoting should make impossible: either way the reader gets no results, never a 500.
        if "no such table" not in str(exc) and "fts5" not in str(exc):
            raise
        log.warning("search.unavailable", tenant=ws.tenant, error=str(exc.orig))
        return []
    return _hits(rows)


def postgres_engine(ws: Workspace) -> bool:
    return ws.engine.dialect.name == "postgresql"


def _search_postgres(ws: Workspace, q: str, limit: int) -> list[SearchHit]:
    params = {"terms": " ".join(_terms(q)), "options": _PG_HEADLINE, "limit": limit}
    try:
        with ws.reader() as tx:
            rows = _connection(tx).execute(_PG_SEARCH, params).all()
    except ProgrammingError as exc:
        # A workspace opened read-only before its search tables existed: no results, never a 500.
        if "does not exist" not in str(exc):
            raise
        log.warning("search.unavailable", tenant=ws.tenant, error=str(exc.orig))
        return []
    return _hits(rows)


def _hits(rows: Any) -> list[SearchHit]:
    return [
        SearchHit(slug=row.slug, title=row.title, snippet=_clean(row.snippet), highlights=_highlights(row.snippet))
        for row in rows
    ]


__all__ = [
    "MAX_LIMIT",
    "index_document",
    "indexed_count",
    "match_expression",
    "rebuild_search_index",
    "remove_document",
    "search",
]
