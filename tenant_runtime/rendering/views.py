"""The small, frozen views that rendering takes as input: no ORM rows cross into templates."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal
from urllib.parse import quote
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = ["DocumentKind", "DocumentView", "ListingItem", "SearchHit", "SiteView"]

DocumentKind = Literal["page", "post"]
_KINDS: frozenset[str] = frozenset({"page", "post"})


def _require_aware(name: str, value: datetime) -> None:
    """Reject naive datetimes: they would render differently depending on the host's clock zone."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{name} must be timezone-aware, got {value!r}")


def _require_kind(kind: str) -> None:
    """Reject kinds the themes do not know how to list."""
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {sorted(_KINDS)}, got {kind!r}")


@dataclass(frozen=True, slots=True)
class SiteView:
    """One tenant's site as the theme sees it."""

    tenant: str
    title: str
    base_url: str  # e.g. "http://127.0.0.1:8080/acme", never with a trailing slash
    timezone: str = "UTC"
    # The published navigation: (label, href); an href starting with "/" is inside the site.
    navigation: tuple[tuple[str, str], ...] = ()
    description: str = ""
    language: str = "en"  # a BCP 47 tag (<html lang>, the feeds' language)

    def __post_init__(self) -> None:
        # Invariants, not user input: actions validate settings before a view is ever built.
        if self.base_url.endswith("/"):
            raise ValueError(f"base_url must not end with '/': {self.base_url!r}")
        try:
            ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"unknown timezone {self.timezone!r}") from exc

    @property
    def tz(self) -> ZoneInfo:
        """The site's timezone, in which dates are shown."""
        return ZoneInfo(self.timezone)

    @property
    def home_url(self) -> str:
        """Absolute URL of the site's home page."""
        return f"{self.base_url}/"

    @property
    def feed_url(self) -> str:
        """Absolute URL of the site's Atom feed."""
        return f"{self.base_url}/feed.xml"

    def nav_url(self, href: str) -> str:
        """Where a navigation entry points: a site path under the site's base URL, else the URL as given."""
        return f"{self.base_url}{href}" if href.startswith("/") else href

    def url_for(self, slug: str) -> str:
        """Absolute URL of the document at ``slug``; also its stable feed id."""
        return f"{self.base_url}/{quote(slug, safe='/')}"


@dataclass(frozen=True, slots=True)
class DocumentView:
    """One published version of a page or post."""

    id: str
    slug: str
    title: str
    body_markdown: str
    kind: DocumentKind
    version: int
    published_at: datetime  # aware, UTC
    updated_at: datetime  # aware, UTC

    def __post_init__(self) -> None:
        _require_kind(self.kind)
        _require_aware("published_at", self.published_at)
        _require_aware("updated_at", self.updated_at)


@dataclass(frozen=True, slots=True)
class ListingItem:
    """One entry of the home listing and the feeds."""

    slug: str
    title: str
    kind: DocumentKind
    published_at: datetime  # aware, UTC
    summary: str = ""  # plain text; markup in it is stripped again before use

    def __post_init__(self) -> None:
        _require_kind(self.kind)
        _require_aware("published_at", self.published_at)


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One search result: plain text only, escaped by the theme like any other text."""

    slug: str
    title: str
    snippet: str = ""
    # The snippet cut into runs of (text, matched): the theme wraps matched runs in <mark>.
    highlights: tuple[tuple[str, bool], ...] = ()
