"""Atom and RSS feeds (feedgen) and the sitemap (ElementTree), deterministic for the same input."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime

from feedgen.feed import FeedGenerator

from tenant_runtime.rendering.markdown import plain_text
from tenant_runtime.rendering.views import ListingItem, SiteView

__all__ = ["SITEMAP_NAMESPACE", "render_atom", "render_rss", "render_sitemap"]

SITEMAP_NAMESPACE = "http://www.sitemaps.org/schemas/sitemap/0.9"
# Characters XML 1.0 cannot carry at all; lxml (under feedgen) refuses the whole feed if one slips in.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(value: str) -> str:
    """Drop characters that cannot appear in an XML document."""
    return _NOT_XML.sub("", value)


def _syndicated(items: list[ListingItem]) -> list[ListingItem]:
    """Posts only, newest first, slug breaking ties so the order never depends on the caller's query."""
    posts = sorted((i for i in items if i.kind == "post"), key=lambda i: i.slug)
    posts.sort(key=lambda i: i.published_at, reverse=True)
    return posts


def _feed(site: SiteView, items: list[ListingItem], updated: datetime, *, self_url: str | None) -> FeedGenerator:
    """Build the feed both formats serialise; every timestamp comes from the input, never from now."""
    title = _xml_text(site.title) or site.tenant
    fg = FeedGenerator()
    fg.id(site.home_url)
    fg.title(title)
    fg.author({"name": title})
    if self_url is not None:
        fg.link(href=self_url, rel="self")
    # feedgen takes the *last* link as the RSS channel link, so the home page goes after "self".
    fg.link(href=site.home_url, rel="alternate")
    # Pinned so that upgrading feedgen does not change every stored feed's hash.
    fg.generator("Pressroom")
    # RSS requires a description; Atom shows it as the subtitle.
    fg.description(_xml_text(site.description) or title)
    fg.language(site.language)
    fg.updated(updated)
    # FeedGenerator() starts with lastBuildDate = now; updated() overwrites it today, this keeps it so.
    fg.lastBuildDate(updated)
    for item in _syndicated(items):
        url = site.url_for(item.slug)
        entry = fg.add_entry(order="append")
        entry.id(url)
        entry.guid(url, permalink=True)
        entry.title(_xml_text(item.title) or item.slug)
        entry.link(href=url, rel="alternate")
        entry.published(item.published_at)
        entry.updated(item.published_at)
        summary = _xml_text(plain_text(item.summary, markdown=False))
        if summary:
            entry.summary(summary)  # feedgen escapes text; it is never emitted as HTML.
    return fg


def render_atom(site: SiteView, items: list[ListingItem], updated: datetime) -> bytes:
    """Render the site's posts as an Atom 1.0 feed."""
    return _feed(site, items, updated, self_url=site.feed_url).atom_str(pretty=True)


def render_rss(site: SiteView, items: list[ListingItem], updated: datetime) -> bytes:
    """Render the site's posts as an RSS 2.0 feed."""
    # No self link: feed_url is the Atom document, and where RSS is served is the caller's choice.
    return _feed(site, items, updated, self_url=None).rss_str(pretty=True)


def _lastmod(value: datetime) -> str:
    """W3C datetime in UTC, as the sitemap protocol expects."""
    return value.astimezone(UTC).isoformat(timespec="seconds")


def render_sitemap(site: SiteView, entries: list[tuple[str, datetime]]) -> bytes:
    """Render a sitemap of the home page and every ``(slug, last_modified)`` entry."""
    root = ET.Element("urlset", {"xmlns": SITEMAP_NAMESPACE})
    ordered = sorted(entries, key=lambda entry: entry[0])
    home = ET.SubElement(root, "url")
    ET.SubElement(home, "loc").text = site.home_url
    if ordered:
        ET.SubElement(home, "lastmod").text = _lastmod(max(modified for _, modified in ordered))
    for slug, modified in ordered:
        url = ET.SubElement(root, "url")
        ET.SubElement(url, "loc").text = site.url_for(slug)
        ET.SubElement(url, "lastmod").text = _lastmod(modified)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)
