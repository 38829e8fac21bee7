"""Jinja2 themes: whole HTML pages from views, byte-for-byte the same for the same input."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from jinja2 import (
    ChoiceLoader,
    DictLoader,
    Environment,
    PackageLoader,
    StrictUndefined,
    Template,
    TemplateNotFound,
    select_autoescape,
)
from jinja2.sandbox import SandboxedEnvironment

from tenant_runtime.errors import NotFound
from tenant_runtime.rendering.markdown import plain_text, render_markdown
from tenant_runtime.rendering.views import DocumentView, ListingItem, SearchHit, SiteView

__all__ = [
    "DEFAULT_THEME",
    "TEMPLATES",
    "PackageTheme",
    "environment",
    "render_home",
    "render_not_found",
    "render_page",
    "render_search",
]

DEFAULT_THEME = "default"
_THEME_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
_DESCRIPTION_LIMIT = 160
_MAX_QUERY = 200  # the search form's maxlength; longer queries are cut by the search itself
# Spelled out rather than strftime("%B"), which follows the process locale and would break hashing.
_MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip


def _date_in(value: datetime, site: SiteView) -> str:
    """Human date in the site's timezone, e.g. "1 May 2024"."""
    local = value.astimezone(site.tz)
    return f"{local.day} {_MONTHS[local.month - 1]} {local.year}"


def _iso_in(value: datetime, site: SiteView) -> str:
    """Machine date-time in the site's timezone, for ``<time datetime>``."""
    return value.astimezone(site.tz).isoformat(timespec="seconds")


environment = Environment(
    loader=PackageLoader("tenant_runtime.rendering", "templates"),
    autoescape=select_autoescape(["html", "xml"], default_for_string=True),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)
environment.filters["date_in"] = _date_in
environment.filters["iso_in"] = _iso_in

# The templates a theme can provide; a package theme that leaves one out falls back to the default's.
TEMPLATES = ("base.html", "page.html", "home.html", "search.html", "not_found.html")


class PackageTheme:
    """A theme from an installed package: its own templates, rendered in Jinja's sandbox.

    The templates come from a signed package, but they still run inside the
    runtime: the sandbox keeps them to the views they are given (no attribute
    walks to the interpreter). A template the package does not provide is the
    default theme's.
    """

    def __init__(self, name: str, templates: Mapping[str, str]) -> None:
        self.name = name
        self.environment = SandboxedEnvironment(
            # Its own templates first; ``default/…`` names the default theme's, to extend or include.
            loader=ChoiceLoader([DictLoader(dict(templates)), PackageLoader("tenant_runtime.rendering", "templates")]),
            autoescape=select_autoescape(["html", "xml"], default_for_string=True),
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=True,
        )
        self.environment.filters["date_in"] = _date_in
        self.environment.filters["iso_in"] = _iso_in

    def template(self, name: str) -> Template | None:
        try:
            return self.environment.get_template(name)
        except TemplateNotFound:
            return None


def _render(theme: str | PackageTheme, name: str, **context: Any) -> str:
    """Render ``name`` from ``theme``; an unknown theme is a not-found, never a path."""
    if isinstance(theme, PackageTheme):
        own = theme.template(name)
        return (own or environment.get_template(f"{DEFAULT_THEME}/{name}")).render(**context)
    if not _THEME_NAME.fullmatch(theme):
        raise NotFound(f"unknown theme {theme!r}", details={"theme": theme}, code="theme_not_found")
    try:
        template = environment.get_template(f"{theme}/{name}")
    except TemplateNotFound as exc:
        raise NotFound(f"unknown theme {theme!r}", details={"theme": theme}, code="theme_not_found") from exc
    return template.render(**context)


def render_page(site: SiteView, doc: DocumentView, *, theme: str | PackageTheme = DEFAULT_THEME) -> str:
    """Render one page or post as a complete HTML document."""
    return _render(
        theme,
        "page.html",
        site=site,
        doc=doc,
        # The only HTML the template marks safe: it has just been through nh3.
        body_html=render_markdown(doc.body_markdown, base_url=site.base_url),
        description=plain_text(doc.body_markdown, _DESCRIPTION_LIMIT),
    )


def render_home(site: SiteView, items: list[ListingItem], *, theme: str | PackageTheme = DEFAULT_THEME) -> str:
    """Render the home page: posts newest first, then pages by title."""
    # Secondary keys make the order, and so the bytes, independent of the order the caller queried in.
    posts = sorted((i for i in items if i.kind == "post"), key=lambda i: i.slug)
    posts.sort(key=lambda i: i.published_at, reverse=True)
    pages = sorted((i for i in items if i.kind == "page"), key=lambda i: (i.title.casefold(), i.slug))
    # Summaries are meant to be plain already; stripping again keeps stray markup out of the listing.
    listed = [(post, plain_text(post.summary, markdown=False)) for post in posts]
    return _render(theme, "home.html", site=site, posts=listed, pages=pages)


def render_not_found(site: SiteView | None) -> str:
    """Render the 404 page, for a known site or for a host that matches no tenant."""
    return _render(DEFAULT_THEME, "not_found.html", site=site)


def render_search(site: SiteView, q: str, hits: list[SearchHit], *, theme: str | PackageTheme = DEFAULT_THEME) -> str:
    """Render the search page for query ``q`` (echoed escaped) and its hits."""
    return _render(theme, "search.html", site=site, q=q[:_MAX_QUERY], hits=hits, max_query=_MAX_QUERY)
