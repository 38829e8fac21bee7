"""Content that gives a fresh tenant something to explore."""

from __future__ import annotations

from dataclasses import dataclass

from sqlmodel import select

from tenant_runtime.actions.documents import create_document
from tenant_runtime.actions.publishing import publish_document
from tenant_runtime.workspace.access import SYSTEM
from tenant_runtime.workspace.models import Document
from tenant_runtime.workspace.open import Workspace


@dataclass(frozen=True)
class ExampleDocument:
    slug: str
    title: str
    kind: str
    body: str


EXAMPLE_DOCUMENTS: tuple[ExampleDocument, ...] = (
    ExampleDocument(
        "about",
        "About this site",
        "page",
        "This site runs on **Pressroom**. Every publish is a durable Prefect flow.\n\n"
        "Edit this page from the dashboard or the tenant API.",
    ),
    ExampleDocument("contact", "Contact", "page", "Write to us at [hello@example.com](mailto:hello@example.com)."),
    ExampleDocument(
        "hello-world",
        "Hello, world",
        "post",
        "# Hello\n\nYour first post. Publishing it rendered this page, re-rendered the home "
        "listing and purged exactly the cache tags it touched.",
    ),
    ExampleDocument(
        "how-publishing-works",
        "How publishing works",
        "post",
        "1. You press *Publish*; the command commits in one transaction.\n"
        "2. A relay hands the operation to Prefect on your site's own work queue.\n"
        "3. The runtime worker renders, indexes and purges, one cached step at a time.",
    ),
    ExampleDocument(
        "writing-in-markdown",
        "Writing in Markdown",
        "post",
        "Use `code`, **bold**, _emphasis_, lists and tables:\n\n"
        "| step | retries |\n|---|---|\n| render | 2 |\n| purge | 2 |\n",
    ),
)


def seed_document(ws: Workspace, slug: str) -> str | None:
    """Create and publish one example document unless it exists; returns the publish operation id."""
    spec = next(doc for doc in EXAMPLE_DOCUMENTS if doc.slug == slug)
    with ws.transaction() as tx:
        if tx.exec(select(Document).where(Document.slug == slug)).first() is not None:
            return None
        document = create_document(tx, SYSTEM, slug=spec.slug, title=spec.title, body=spec.body, kind=spec.kind)
        _, operation = publish_document(tx, ws.tenant, SYSTEM, document.id)
        return operation.id
