"""Full-text search: user text is never FTS5 syntax, snippets are text, the index follows publishing."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import text

from tenant_runtime import search
from tenant_runtime.delivery import site_view
from tenant_runtime.rendering import SearchHit, render_search
from tenant_runtime.workspace import Workspace, WorkspaceFactory
from tenant_runtime.workspace.search_schema import ensure_search_schema
from tests.tenant_runtime.content import publish, republish, unpublish

HOSTILE_QUERIES = [
    '"',
    '""',
    "'",
    "NEAR(alpha beta)",
    "alpha OR beta",
    "alpha AND",
    "NOT alpha",
    "title:alpha",
    "alpha*",
    "-alpha",
    "^alpha",
    "(",
    ")",
    "{title}: alpha",
    "alpha + beta",
    "'; DROP TABLE document; --",
    "\x00alpha",
    "\ue000alpha\ue001",
    "🙂",
    "   ",
    "*",
    "a" * 5000,
    "alpha " * 500,
]


def _indexed(ws: Workspace, slug: str, body: str, **kw: str) -> str:
    document, _ = publish(ws, slug, body=body, **kw)
    assert search.index_document(ws, document.id, document.version)
    return document.id


def _slugs(ws: Workspace, q: str) -> list[str]:
    return [hit.slug for hit in search.search(ws, q)]


@pytest.mark.parametrize("q", HOSTILE_QUERIES)
def test_hostile_queries_are_only_quoted_words_and_never_fail(workspace: Workspace, q: str) -> None:
    _indexed(workspace, "alpha", "alpha beta gamma")

    expression = search.match_expression(q)
    hits = search.search(workspace, q)

    if expression is not None:
        assert re.fullmatch(r'"[^"]+"( "[^"]+")*', expression), expression
        assert len(expression.split(" ")) <= search.MAX_TERMS
    assert all(isinstance(hit, SearchHit) for hit in hits)
    with workspace.reader() as tx:  # the statement did nothing but read
        assert tx.connection().execute(text("SELECT count(*) FROM document")).scalar_one() == 1


def test_operators_are_plain_words() -> None:
    assert search.match_expression("title:secret OR x*") == '"title" "secret" "OR" "x"'
    assert search.match_expression("!!! ... ---") is None
    assert search.match_expression("") is None


def test_every_word_is_required_and_or_is_not_an_operator(workspace: Workspace) -> None:
    _indexed(workspace, "first", "alpha only here")
    _indexed(workspace, "second", "beta only here")
    _indexed(workspace, "both", "alpha and beta together")

    assert _slugs(workspace, "alpha beta") == ["both"]
    assert _slugs(workspace, "alpha OR beta") == []
    assert sorted(_slugs(workspace, "only")) == ["first", "second"]


def test_stemming_diacritics_and_title_weight(workspace: Workspace) -> None:
    _indexed(workspace, "body-match", "we talk about the café and publishing")
    _indexed(workspace, "title-match", "nothing relevant", title="Cafe publishing")

    assert _slugs(workspace, "cafe publish") == ["title-match", "body-match"]


def test_snippets_are_plain_text_and_escaped_when_rendered(workspace: Workspace) -> None:
    body = "Never paste `<img src=x onerror=alert(1)>` into a page, carefully \ue000fake\ue001 marks."
    _indexed(workspace, "careful", body, title="<script>alert('t')</script> Safety")

    [hit] = search.search(workspace, "carefully")
    assert "<img src=x onerror=alert(1)>" in hit.snippet  # text, exactly as written
    assert "\ue000" not in hit.snippet and ("carefully", True) in hit.highlights
    assert ("fake", True) not in hit.highlights  # a document cannot fake a highlight
    with workspace.reader() as tx:
        html = render_search(site_view(workspace, tx), "carefully <b>", [hit])
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<mark>carefully</mark>" in html and "carefully &lt;b&gt;" in html


def test_reindexing_replaces_the_document_and_an_older_version_never_wins(workspace: Workspace) -> None:
    document_id = _indexed(workspace, "news", "old words")
    republish(workspace, document_id, body="fresh words")
    assert search.index_document(workspace, document_id, 2)

    assert search.index_document(workspace, document_id, 1) is False
    assert _slugs(workspace, "old") == []
    assert _slugs(workspace, "fresh") == ["news"] and _slugs(workspace, "words") == ["news"]
    assert search.indexed_count(workspace) == 1


def test_unpublished_documents_leave_the_index(workspace: Workspace) -> None:
    document_id = _indexed(workspace, "gone", "vanishing text")
    unpublish(workspace, document_id)

    assert search.remove_document(workspace, document_id) is True
    assert _slugs(workspace, "vanishing") == []
    # A delivery that starts after the unpublish removes rather than indexes.
    assert search.index_document(workspace, document_id, 1) is False
    assert _slugs(workspace, "vanishing") == []


def test_removal_of_a_republished_document_is_a_no_op(workspace: Workspace) -> None:
    document_id = _indexed(workspace, "back", "returning text")
    republish(workspace, document_id, body="returning text again")

    assert search.remove_document(workspace, document_id) is False
    assert _slugs(workspace, "returning") == ["back"]


def test_rebuild_is_a_no_op_when_populated_unless_forced(workspace: Workspace) -> None:
    _indexed(workspace, "one", "first entry")
    publish(workspace, "two", body="second entry")  # published but never indexed

    assert search.rebuild_search_index(workspace) == {"rebuilt": False, "indexed": 1}
    assert _slugs(workspace, "second") == []
    assert search.rebuild_search_index(workspace, force=True) == {"rebuilt": True, "indexed": 2}
    assert sorted(_slugs(workspace, "entry")) == ["one", "two"]


def test_limit_is_clamped(workspace: Workspace) -> None:
    for n in range(3):
        _indexed(workspace, f"doc-{n}", "shared term")

    assert len(search.search(workspace, "shared", limit=0)) == 1
    assert len(search.search(workspace, "shared", limit=10_000)) == 3


def test_tenants_never_see_each_others_documents(two_tenants: tuple[Workspace, Workspace]) -> None:
    acme, globex = two_tenants
    _indexed(acme, "secret-plan", "acquisition of globex")

    assert _slugs(acme, "acquisition") == ["secret-plan"]
    assert _slugs(globex, "acquisition") == []


def test_schema_is_idempotent_and_restored_on_open(workspace_factory: WorkspaceFactory, workspace: Workspace) -> None:
    ensure_search_schema(workspace.engine)
    ensure_search_schema(workspace.engine)
    with workspace.transaction() as tx:
        tx.connection().execute(text("DROP TABLE search_index"))
        tx.connection().execute(text("DROP TABLE search_document"))

    reader = WorkspaceFactory(workspace_factory.settings, store=workspace_factory.store, read_only=True).open("acme")
    assert search.search(reader, "anything") == []  # an old workspace read-only: no results, no error

    reopened = WorkspaceFactory(workspace_factory.settings, store=workspace_factory.store).open("acme")
    _indexed(reopened, "after", "restored index")
    assert _slugs(reopened, "restored") == ["after"]
