"""Rendering for the tenant runtime: pure functions from small views to HTML and XML.

No database and no web framework: callers build ``SiteView``/``DocumentView``/``ListingItem``
and store or serve the strings and bytes these functions return.
"""

from __future__ import annotations

from tenant_runtime.rendering.feeds import render_atom, render_rss, render_sitemap
from tenant_runtime.rendering.markdown import plain_text, render_markdown
from tenant_runtime.rendering.theme import render_home, render_not_found, render_page, render_search
from tenant_runtime.rendering.views import DocumentKind, DocumentView, ListingItem, SearchHit, SiteView

__all__ = [
    "DocumentKind",
    "DocumentView",
    "ListingItem",
    "SearchHit",
    "SiteView",
    "plain_text",
    "render_atom",
    "render_home",
    "render_markdown",
    "render_not_found",
    "render_page",
    "render_rss",
    "render_search",
    "render_sitemap",
]
