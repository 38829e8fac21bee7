"""Grounding: fetch the sources a brief cites, within the operator's allow-list and never a private address.

Each URL's host must be on ``lanes_ground_allow`` (``*``: any host) and every
address it resolves to must be public, unless the operator sets
``lanes_ground_allow_private`` (tests serve sources from 127.0.0.1 that way):
the outbound guard of ``tenant_runtime.outbound``, redirects followed by hand and
each hop checked. A source that is refused is a permanent ``source_not_allowed``
naming it; a network failure is transient (the step retries); an HTTP error
status is recorded with the source and grounding goes on.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx

from tenant_runtime import outbound
from tenant_runtime.errors import Permanent, Unavailable
from tenant_runtime.lanes.settings import LaneSettings
from tenant_runtime.outbound import Resolver, resolve
from tenant_runtime.rendering.markdown import plain_text

EXCERPT_CHARS = 1500
MAX_LINKS = 10  # links kept per page, for a further grounding round
_HREF = re.compile(r"""<a\s[^>]*href\s*=\s*["']([^"'#]+)["']""", re.IGNORECASE)


class SourceNotAllowed(Permanent):
    code = "source_not_allowed"


def _policy(settings: LaneSettings) -> outbound.OutboundPolicy:
    return outbound.OutboundPolicy(
        allow=settings.lanes_ground_allow,
        allow_private=settings.lanes_ground_allow_private,
        what="grounding",
        refused=SourceNotAllowed,
    )


def check_url(url: str, settings: LaneSettings, resolver: Resolver = resolve) -> None:
    """Refuse a URL whose host is not allowed or resolves to a private, loopback or reserved address."""
    outbound.check_url(url, _policy(settings), resolver)


def fetch_source(
    client: httpx.Client, url: str, settings: LaneSettings, resolver: Resolver = resolve
) -> dict[str, Any]:
    """One source: its final URL, status, title and a plain-text excerpt."""
    with outbound.open_checked(client, url, _policy(settings), resolver) as (current, response):
        data, _ = outbound.read_limited(response, settings.lanes_ground_max_bytes)
        status = response.status_code
        content_type = response.headers.get("content-type", "")
    text = data.decode("utf-8", errors="replace")
    is_html = "html" in content_type
    links = _links(current, text) if is_html and status < 400 else []
    return {
        "url": url,
        "final_url": current,
        "status": status,
        "title": _title(text) if is_html else "",
        "excerpt": plain_text(text, EXCERPT_CHARS, markdown=False) if status < 400 else "",
        "sha256": hashlib.sha256(data).hexdigest(),
        "links": links,
    }


def _links(base: str, html: str) -> list[str]:
    found: list[str] = []
    for href in _HREF.findall(html):
        url = urljoin(base, href.strip())
        if urlsplit(url).scheme in ("http", "https") and url not in found:
            found.append(url)
        if len(found) == MAX_LINKS:
            break
    return found


def _title(html: str) -> str:
    lower = html.lower()
    start, end = lower.find("<title>"), lower.find("</title>")
    return plain_text(html[start + 7 : end], 200, markdown=False) if 0 <= start < end else ""


def ground(
    urls: Sequence[str], settings: LaneSettings, *, transport: httpx.BaseTransport | None = None
) -> list[dict[str, Any]]:
    """Every cited source, fetched (in order)."""
    with httpx.Client(
        timeout=settings.lanes_ground_timeout_seconds,
        follow_redirects=False,
        transport=transport,
        headers={"user-agent": "Pressroom-grounding/1"},
    ) as client:
        return [fetch_source(client, url, settings) for url in urls]


def ground_further(
    records: Sequence[dict[str, Any]],
    settings: LaneSettings,
    *,
    limit: int = 5,
    transport: httpx.BaseTransport | None = None,
) -> list[dict[str, Any]]:
    """A further round: ``records`` plus up to ``limit`` pages they link to (links not allowed are skipped,
    as the brief did not cite them; one that cannot be fetched is recorded with status 0)."""
    seen = {r["url"] for r in records} | {r.get("final_url", r["url"]) for r in records}
    links = [link for r in records for link in r.get("links", []) if link not in seen]
    added: list[dict[str, Any]] = []
    with httpx.Client(
        timeout=settings.lanes_ground_timeout_seconds,
        follow_redirects=False,
        transport=transport,
        headers={"user-agent": "Pressroom-grounding/1"},
    ) as client:
        for link in dict.fromkeys(links):
            if len(added) == limit:
                break
            try:
                added.append({**fetch_source(client, link, settings), "round": 2})
            except SourceNotAllowed:
                continue
            except Unavailable:
                added.append({"url": link, "final_url": link, "status": 0, "title": "", "excerpt": "", "round": 2})
    return [*records, *added]


__all__ = ["SourceNotAllowed", "check_url", "fetch_source", "ground", "ground_further", "resolve"]
