"""Markdown to sanitized HTML, and HTML or Markdown to plain-text snippets."""

from __future__ import annotations

import html
import re

import nh3
from markdown_it import MarkdownIt
from markdown_it.token import Token

__all__ = ["ALLOWED_TAGS", "ALLOWED_URL_SCHEMES", "plain_text", "render_markdown"]

# "s" is what markdown-it's strikethrough emits; "del" is for authors writing raw HTML.
ALLOWED_TAGS: frozenset[str] = frozenset(
    {
        "p", "h1", "h2", "h3", "h4", "h5", "h6", "a", "ul", "ol", "li", "blockquote", "pre", "code",
        "em", "strong", "del", "s", "hr", "br", "img", "table", "thead", "tbody", "tr", "th", "td",
        "figure", "figcaption",
    }
)  # fmt: skip
ALLOWED_URL_SCHEMES: frozenset[str] = frozenset({"http", "https", "mailto"})

_ALLOWED_ATTRIBUTES: dict[str, set[str]] = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title"},
    "code": {"class"},
    # markdown-it writes table column alignment as an inline style; only text-align survives.
    "th": {"style"},
    "td": {"style"},
}
# Tags whose *content* is dropped along with the tag: their text is code or chrome, never prose.
_DROP_WITH_CONTENT: set[str] = {"script", "style", "iframe", "object", "embed", "noscript", "template", "textarea"}
_LANGUAGE_CLASS = re.compile(r"language-[A-Za-z0-9_+#.-]{1,40}")

# Raw HTML is allowed on input because authors paste figures and tables; nh3 runs after rendering
# precisely because markdown-it passes that HTML through untouched.
_md = MarkdownIt("commonmark", {"html": True, "linkify": False}).enable(["table", "strikethrough"])


def _keep_language_class(tag: str, attribute: str, value: str) -> str | None:
    """Keep a ``code`` class only when it is a single ``language-*`` hint."""
    if tag == "code" and attribute == "class":
        return value if _LANGUAGE_CLASS.fullmatch(value) else None
    return value


_article_cleaner = nh3.Cleaner(
    tags=set(ALLOWED_TAGS),
    clean_content_tags=_DROP_WITH_CONTENT,
    attributes=_ALLOWED_ATTRIBUTES,
    attribute_filter=_keep_language_class,
    url_schemes=set(ALLOWED_URL_SCHEMES),
    filter_style_properties={"text-align"},
    link_rel="noopener noreferrer",
    strip_comments=True,
)
_text_cleaner = nh3.Cleaner(tags=set(), clean_content_tags=_DROP_WITH_CONTENT, attributes={}, strip_comments=True)
_WHITESPACE = re.compile(r"\s+")
_ELLIPSIS = "…"


# ``![alt](media:med_…)`` embeds a file of the site's media library; ``[label](media:med_…)`` links one.
_MEDIA_URL = re.compile(r"media:(med_[0-9a-z]{26})")


def _resolve_media(tokens: list[Token], base_url: str | None) -> None:
    """Point every ``media:`` image source and link at the file's public URL (before nh3 sees the HTML)."""
    prefix = f"{base_url}/media/" if base_url else "media/"
    for token in tokens:
        for child in token.children or ():
            attribute = "src" if child.type == "image" else "href" if child.type == "link_open" else None
            if attribute is None:
                continue
            value = child.attrGet(attribute)
            found = _MEDIA_URL.fullmatch(value) if isinstance(value, str) else None
            if found is not None:
                child.attrSet(attribute, prefix + found.group(1))


def render_markdown(text: str, *, base_url: str | None = None) -> str:
    """Render Markdown (with tables and strikethrough) to HTML that is safe to embed as-is.

    ``base_url`` is the site's (``http://host/acme``): media embeds resolve to ``{base_url}/media/{id}``,
    or to the relative ``media/{id}`` without one.
    """
    env: dict[str, object] = {}
    tokens = _md.parse(text, env)
    _resolve_media(tokens, base_url)
    return _article_cleaner.clean(_md.renderer.render(tokens, _md.options, env))


def plain_text(html_or_markdown: str, limit: int | None = None, *, markdown: bool = True) -> str:
    """Strip markup to collapsed plain text, cut on a word boundary to at most ``limit`` characters.

    The result is text, not HTML: entities are decoded, so it must be escaped wherever it is embedded.
    Pass ``markdown=False`` for text that is already plain (stored summaries), so that a leading
    "1990." or "#tag" is not read as Markdown syntax; tags are still stripped.
    """
    # Rendering first turns Markdown syntax into tags that are then stripped; HTML input passes through.
    source = _md.render(html_or_markdown) if markdown else html_or_markdown
    stripped = _text_cleaner.clean(source)
    text = _WHITESPACE.sub(" ", html.unescape(stripped)).strip()
    if limit is None or len(text) <= limit:
        return text
    if limit <= len(_ELLIPSIS):
        return _ELLIPSIS[:limit]
    cut = text[: limit - len(_ELLIPSIS) + 1]
    # The extra character tells whether the cut fell between words; otherwise back up to the last space.
    head = cut[:-1] if cut[-1] == " " else (cut.rsplit(" ", 1)[0] if " " in cut else cut[:-1])
    return head.rstrip(" ,.;:!?-–—") + _ELLIPSIS
