"""Rendering: Markdown sanitising, themes, feeds and sitemap, all pure and deterministic."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from importlib.resources import files

import pytest

from tenant_runtime import rendering
from tenant_runtime.errors import NotFound
from tenant_runtime.rendering import (
    DocumentView,
    ListingItem,
    SiteView,
    plain_text,
    render_atom,
    render_home,
    render_markdown,
    render_not_found,
    render_page,
    render_rss,
    render_sitemap,
)

BASE = "http://127.0.0.1:8080/acme"
ATOM = "{http://www.w3.org/2005/Atom}"
SITEMAP = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
UPDATED = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)
EVIL_TITLE = "Hi <script>alert('t')</script>"

# Each payload with strings that must not survive it; the generic checks below apply to all of them.
PAYLOADS: list[tuple[str, list[str]]] = [
    ("<script>alert(1)</script>", ["alert(1)"]),
    ("<img src=x onerror=alert(1)>", ["onerror"]),
    ("[x](javascript:alert(1))", []),
    ('<a href="JaVaScRiPt:alert(1)">click</a>', []),
    ('<iframe src="https://evil.example/"></iframe>', ["evil.example"]),
    ("<style>body{display:none}</style>", ["display:none"]),
]
PAYLOAD_IDS = ["script", "onerror", "md-javascript-link", "mixed-case-javascript", "iframe", "style"]
_EVENT_HANDLER = re.compile(r"<[^>]*\son[a-z]+\s*=", re.IGNORECASE)
_SCRIPT_URL = re.compile(r"(href|src)\s*=\s*[\"']?\s*javascript:", re.IGNORECASE)


def assert_neutralized(output: str, forbidden: list[str]) -> None:
    """No executable markup and none of the payload's own tell-tale strings."""
    lowered = output.lower()
    assert "<script" not in lowered
    assert "<iframe" not in lowered
    assert not _EVENT_HANDLER.search(output)
    assert not _SCRIPT_URL.search(output)
    for needle in forbidden:
        assert needle not in output


@pytest.fixture
def site() -> SiteView:
    return SiteView(tenant="acme", title="Acme News", base_url=BASE, timezone="Europe/Berlin")


def make_doc(body: str = "# Hello\n\nSome *text*.", *, title: str = "Hello", kind: str = "post") -> DocumentView:
    return DocumentView(
        id="doc-1",
        slug="hello",
        title=title,
        body_markdown=body,
        kind=kind,  # type: ignore[arg-type]
        version=7,
        published_at=datetime(2024, 5, 1, 23, 30, tzinfo=UTC),
        updated_at=datetime(2024, 5, 2, 8, 0, tzinfo=UTC),
    )


@pytest.fixture
def items() -> list[ListingItem]:
    day = datetime(2024, 1, 1, 9, 0, tzinfo=UTC)
    return [
        ListingItem("older", "Older post", "post", day, "The older one."),
        ListingItem("about", "About us", "page", day, ""),
        ListingItem("newest", "Newest post", "post", day + timedelta(days=30), "The newest one."),
        ListingItem("middle", "Middle post", "post", day + timedelta(days=10), "In between."),
        ListingItem("contact", "Contact", "page", day, ""),
    ]


# --- Markdown -------------------------------------------------------------------------------


def test_markdown_renders_headings_emphasis_and_strikethrough() -> None:
    html = render_markdown("# Title\n\n## Sub\n\n*em* **strong** ~~gone~~")
    assert "<h1>Title</h1>" in html
    assert "<h2>Sub</h2>" in html
    assert "<em>em</em>" in html
    assert "<strong>strong</strong>" in html
    assert "<s>gone</s>" in html


def test_markdown_keeps_language_hint_on_code_blocks_only() -> None:
    html = render_markdown("```python\nprint('x')\n```\n\nand `inline`")
    assert '<pre><code class="language-python">' in html
    assert "<code>inline</code>" in html
    assert "class" not in render_markdown('<code class="evil language-x">x</code>')


def test_markdown_renders_tables_with_alignment() -> None:
    html = render_markdown("| a | b |\n|--:|---|\n| 1 | 2 |")
    assert "<table>" in html and "<thead>" in html and "<tbody>" in html
    assert '<th style="text-align:right">a</th>' in html
    assert "<td>2</td>" in html


def test_markdown_links_get_rel_and_keep_safe_schemes() -> None:
    html = render_markdown('[site](https://example.com "Title") and [mail](mailto:a@example.com)')
    assert '<a href="https://example.com" title="Title" rel="noopener noreferrer">site</a>' in html
    assert 'href="mailto:a@example.com"' in html


def test_markdown_drops_unlisted_schemes_and_attributes() -> None:
    html = render_markdown(
        '<a href="data:text/html,hi" id="x" style="color:red">d</a><img src="x.png" alt="A" width="9">'
    )
    assert "data:" not in html
    assert "id=" not in html and "style=" not in html and "width=" not in html
    assert '<img src="x.png" alt="A">' in html


def test_markdown_allows_figures_and_raw_article_html() -> None:
    html = render_markdown('<figure><img src="https://e.x/a.png" alt="a"><figcaption>Cap</figcaption></figure>')
    assert "<figure>" in html and "<figcaption>Cap</figcaption>" in html


@pytest.mark.parametrize(("payload", "forbidden"), PAYLOADS, ids=PAYLOAD_IDS)
def test_render_markdown_neutralizes(payload: str, forbidden: list[str]) -> None:
    assert_neutralized(render_markdown(f"Before\n\n{payload}\n\nAfter"), forbidden)


@pytest.mark.parametrize(("payload", "forbidden"), PAYLOADS, ids=PAYLOAD_IDS)
def test_plain_text_neutralizes(payload: str, forbidden: list[str]) -> None:
    text = plain_text(f"Before {payload} after")
    assert_neutralized(text, forbidden)
    assert text.startswith("Before") and text.endswith("after")


# --- plain_text ----------------------------------------------------------------------------


def test_plain_text_strips_markup_and_collapses_whitespace() -> None:
    assert plain_text("# Title\n\nSome   **bold**\n\n<p>and\t<em>html</em></p>") == "Title Some bold and html"
    assert plain_text("Fish &amp; chips") == "Fish & chips"


def test_plain_text_truncates_on_word_boundary_with_ellipsis() -> None:
    text = plain_text("The quick brown fox jumps over the lazy dog", limit=18)
    assert text == "The quick brown…"
    assert len(text) <= 18
    assert plain_text("Short one", limit=50) == "Short one"


def test_plain_text_without_markdown_keeps_plain_summaries_intact() -> None:
    assert plain_text("1990. A good year", markdown=False) == "1990. A good year"
    assert plain_text("1990. A good year") != "1990. A good year"  # Markdown reads it as a list
    assert plain_text("a <b>bold</b> claim", markdown=False) == "a bold claim"


# --- Pages ---------------------------------------------------------------------------------


def test_page_has_title_version_meta_feed_link_and_body(site: SiteView) -> None:
    html = render_page(site, make_doc())
    assert '<meta charset="utf-8">' in html
    assert '<meta name="viewport"' in html
    assert "<title>Hello · Acme News</title>" in html
    assert '<meta name="pressroom-version" content="7">' in html
    assert f'<link rel="alternate" type="application/atom+xml" title="Acme News" href="{BASE}/feed.xml">' in html
    assert f'<a href="{BASE}/">Acme News</a>' in html
    assert "<h1>Hello</h1>" in html and "<em>text</em>" in html


def test_post_date_is_shown_in_site_timezone(site: SiteView) -> None:
    html = render_page(site, make_doc())
    # 23:30 UTC on 1 May is already 2 May in Berlin.
    assert '<time datetime="2024-05-02T01:30:00+02:00">2 May 2024</time>' in html
    assert "<time" not in render_page(site, make_doc(kind="page"))


@pytest.mark.parametrize(("payload", "forbidden"), PAYLOADS, ids=PAYLOAD_IDS)
def test_render_page_neutralizes_body(site: SiteView, payload: str, forbidden: list[str]) -> None:
    assert_neutralized(render_page(site, make_doc(f"Intro\n\n{payload}\n\nOutro")), forbidden)


def test_titles_are_escaped_in_page_and_home(site: SiteView) -> None:
    evil_site = SiteView(tenant="acme", title=EVIL_TITLE, base_url=BASE)
    page = render_page(evil_site, make_doc(title=EVIL_TITLE))
    home = render_home(
        evil_site,
        [ListingItem("x", EVIL_TITLE, "post", UPDATED, ""), ListingItem("y", EVIL_TITLE, "page", UPDATED, "")],
    )
    for html in (page, home):
        assert "<script" not in html
        assert "&lt;script&gt;" in html


def test_page_render_is_deterministic(site: SiteView) -> None:
    assert render_page(site, make_doc()) == render_page(site, make_doc())


def test_unknown_or_path_like_theme_is_not_found(site: SiteView) -> None:
    with pytest.raises(NotFound):
        render_page(site, make_doc(), theme="nope")
    with pytest.raises(NotFound):
        render_page(site, make_doc(), theme="../templates")


# --- Home and 404 --------------------------------------------------------------------------


def test_home_lists_posts_newest_first_then_pages(site: SiteView, items: list[ListingItem]) -> None:
    html = render_home(site, items)
    order = [html.index(f'href="{BASE}/{slug}"') for slug in ("newest", "middle", "older", "about", "contact")]
    assert order == sorted(order)
    assert "The newest one." in html
    assert "1 January 2024" in html


@pytest.mark.parametrize(("payload", "forbidden"), PAYLOADS, ids=PAYLOAD_IDS)
def test_home_neutralizes_summaries(site: SiteView, payload: str, forbidden: list[str]) -> None:
    html = render_home(site, [ListingItem("p", "P", "post", UPDATED, payload)])
    assert_neutralized(html, forbidden)


def test_home_is_deterministic_regardless_of_input_order(site: SiteView, items: list[ListingItem]) -> None:
    assert render_home(site, items) == render_home(site, list(reversed(items)))


def test_not_found_without_and_with_site(site: SiteView) -> None:
    bare = render_not_found(None)
    assert "Page not found" in bare and "feed.xml" not in bare
    assert f'href="{BASE}/"' in render_not_found(site)


# --- Feeds and sitemap ---------------------------------------------------------------------


def test_atom_has_one_entry_per_post_with_stable_ids_and_links(site: SiteView, items: list[ListingItem]) -> None:
    root = ET.fromstring(render_atom(site, items, UPDATED))
    entries = root.findall(f"{ATOM}entry")
    assert len(entries) == 3  # pages are not syndicated
    assert [e.findtext(f"{ATOM}id") for e in entries] == [f"{BASE}/newest", f"{BASE}/middle", f"{BASE}/older"]
    assert [e.find(f"{ATOM}link").get("href") for e in entries] == [f"{BASE}/newest", f"{BASE}/middle", f"{BASE}/older"]  # type: ignore[union-attr]
    assert root.findtext(f"{ATOM}updated") == "2024-06-01T12:00:00+00:00"
    assert entries[0].findtext(f"{ATOM}summary") == "The newest one."


def test_rss_has_items_and_build_date_from_input(site: SiteView, items: list[ListingItem]) -> None:
    channel = ET.fromstring(render_rss(site, items, UPDATED)).find("channel")
    assert channel is not None
    rss_items = channel.findall("item")
    assert len(rss_items) == 3
    assert [i.findtext("link") for i in rss_items] == [f"{BASE}/newest", f"{BASE}/middle", f"{BASE}/older"]
    assert [i.findtext("guid") for i in rss_items] == [f"{BASE}/newest", f"{BASE}/middle", f"{BASE}/older"]
    assert channel.findtext("link") == f"{BASE}/"
    # feedgen defaults lastBuildDate to now; it must come from the caller instead.
    assert channel.findtext("lastBuildDate") == format_datetime(UPDATED)


def test_feeds_are_deterministic(site: SiteView, items: list[ListingItem]) -> None:
    assert render_atom(site, items, UPDATED) == render_atom(site, list(reversed(items)), UPDATED)
    assert render_rss(site, items, UPDATED) == render_rss(site, list(reversed(items)), UPDATED)


@pytest.mark.parametrize(("payload", "forbidden"), PAYLOADS, ids=PAYLOAD_IDS)
def test_feed_summaries_are_neutralized_plain_text(site: SiteView, payload: str, forbidden: list[str]) -> None:
    post = [ListingItem("p", "P", "post", UPDATED, f"Before {payload} after")]
    atom, rss = render_atom(site, post, UPDATED), render_rss(site, post, UPDATED)
    summary = ET.fromstring(atom).find(f"{ATOM}entry/{ATOM}summary")
    description = ET.fromstring(rss).find("channel/item/description")
    assert summary is not None and description is not None
    for text in (summary.text or "", description.text or ""):
        assert_neutralized(text, forbidden)
        assert text.startswith("Before")
    for raw in (atom, rss):
        assert b"<script" not in raw.lower() and b"<iframe" not in raw.lower()


def test_feed_titles_are_escaped(site: SiteView) -> None:
    post = [ListingItem("p", EVIL_TITLE, "post", UPDATED, "")]
    for raw, path in (
        (render_atom(site, post, UPDATED), f"{ATOM}entry/{ATOM}title"),
        (render_rss(site, post, UPDATED), "channel/item/title"),
    ):
        assert b"<script" not in raw
        assert ET.fromstring(raw).findtext(path) == EVIL_TITLE


def test_sitemap_lists_home_and_every_slug(site: SiteView) -> None:
    entries = [("b-post", datetime(2024, 2, 1, tzinfo=UTC)), ("a-page", datetime(2024, 3, 1, 10, tzinfo=UTC))]
    raw = render_sitemap(site, entries)
    urls = ET.fromstring(raw).findall(f"{SITEMAP}url")
    assert [u.findtext(f"{SITEMAP}loc") for u in urls] == [f"{BASE}/", f"{BASE}/a-page", f"{BASE}/b-post"]
    assert [u.findtext(f"{SITEMAP}lastmod") for u in urls] == [
        "2024-03-01T10:00:00+00:00",
        "2024-03-01T10:00:00+00:00",
        "2024-02-01T00:00:00+00:00",
    ]
    assert raw == render_sitemap(site, list(reversed(entries)))


# --- Views and package ---------------------------------------------------------------------


def test_views_reject_naive_datetimes_trailing_slash_and_bad_timezone() -> None:
    with pytest.raises(ValueError):
        ListingItem("x", "X", "post", datetime(2024, 1, 1), "")
    with pytest.raises(ValueError):
        SiteView(tenant="acme", title="A", base_url=f"{BASE}/")
    with pytest.raises(ValueError):
        SiteView(tenant="acme", title="A", base_url=BASE, timezone="Mars/Olympus")
    with pytest.raises(ValueError):
        ListingItem("x", "X", "article", UPDATED, "")  # type: ignore[arg-type]


def test_public_api_is_exported() -> None:
    assert set(rendering.__all__) == {
        "DocumentKind", "DocumentView", "ListingItem", "SearchHit", "SiteView", "plain_text", "render_atom",
        "render_home", "render_markdown", "render_not_found", "render_page", "render_rss", "render_search",
        "render_sitemap",
    }  # fmt: skip
    assert all(hasattr(rendering, name) for name in rendering.__all__)


def test_default_theme_templates_ship_inside_the_package() -> None:
    theme = files("tenant_runtime.rendering") / "templates" / "default"
    assert {"base.html", "page.html", "home.html", "not_found.html", "search.html"} <= {p.name for p in theme.iterdir()}


def test_the_default_theme_renders_the_navigation_escaped_and_none_when_empty() -> None:
    at = datetime(2024, 5, 1, tzinfo=UTC)
    doc = DocumentView("doc_1", "hello", "Hello", "Hi", "post", 1, at, at)
    navigated = SiteView(
        tenant="acme",
        title="Acme",
        base_url=BASE,
        navigation=(("About <us>", "/about"), ("Elsewhere", "https://example.org/x")),
    )
    html = render_page(navigated, doc)
    assert f'<a href="{BASE}/about">About &lt;us&gt;</a>' in html
    assert '<a href="https://example.org/x">Elsewhere</a>' in html
    plain = render_page(SiteView(tenant="acme", title="Acme", base_url=BASE), doc)
    assert '<nav class="site">' not in plain
