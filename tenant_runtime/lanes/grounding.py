"""Grounding: fetch the sources a brief cites, within the operator's allow-list and never a private address.

Each URL's host must be on ``lanes_ground_allow`` (``*``: any host) and every
address it resolves to must be public, unless the operator sets
``lanes_ground_allow_private`` (tests serve sources from 127.0.0.1 that way).
Redirects are followed by hand, each hop checked the same way. A source that
is refused is a permanent ``source_not_allowed`` naming it; a network failure
is transient (the step retries); an HTTP error status is recorded with the
source and grounding goes on.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
import socket
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx

from tenant_runtime.errors import Permanent, Unavailable
from tenant_runtime.lanes.settings import LaneSettings
from tenant_runtime.rendering.markdown import plain_text

MAX_REDIRECTS = 3
EXCERPT_CHARS = 1500
MAX_LINKS = 10  # links kept per page, for a further grounding round
_HREF = re.compile(r"""<a\s[^>]*href\s*=\s*["']([^"'#]+)["']""", re.IGNORECASE)

Resolver = Callable[[str], list[str]]


class SourceNotAllowed(Permanent):
    code = "source_not_allowed"


def resolve(host: str) -> list[str]:
    try:
        return sorted({info[4][0] for info in socket.getaddrinfo(host, None)})  # type: ignore[misc]
    except OSError as exc:
        raise Unavailable(f"Cannot resolve {host}.", details={"host": host}, code="source_unreachable") from exc


def check_url(url: str, settings: LaneSettings, resolver: Resolver = resolve) -> None:
    """Refuse a URL whose host is not allowed or resolves to a private, loopback or reserved address."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if parts.scheme not in ("http", "https") or not host:
        raise SourceNotAllowed("A source is an http(s) URL.", details={"url": url})
    allowed = settings.lanes_ground_allow
    if "*" not in allowed and not any(host == a or host.endswith("." + a) for a in allowed):
        raise SourceNotAllowed(
            f"{host} is not on the grounding allow-list.", details={"url": url, "host": host, "allow": list(allowed)}
        )
    if settings.lanes_ground_allow_private:
        return
    for address in resolver(host):
        ip = ipaddress.ip_address(address.split("%")[0])
        if not ip.is_global:
            raise SourceNotAllowed(
                f"{host} resolves to a private address ({address}): the operator has not allowed those.",
                details={"url": url, "host": host, "address": address},
            )


def fetch_source(
    client: httpx.Client, url: str, settings: LaneSettings, resolver: Resolver = resolve
) -> dict[str, Any]:
    """One source: its final URL, status, title and a plain-text excerpt."""
    current = url
    for _ in range(MAX_REDIRECTS + 1):
        check_url(current, settings, resolver)
        try:
            with client.stream("GET", current) as response:
                if response.is_redirect and "location" in response.headers:
                    current = urljoin(current, response.headers["location"])
                    continue
                data = b""
                for chunk in response.iter_bytes():
                    data += chunk
                    if len(data) > settings.lanes_ground_max_bytes:
                        break
                status = response.status_code
                content_type = response.headers.get("content-type", "")
        except httpx.HTTPError as exc:
            raise Unavailable(
                f"Could not fetch {current}: {type(exc).__name__}.", details={"url": current}, code="source_unreachable"
            ) from None
        text = data[: settings.lanes_ground_max_bytes].decode("utf-8", errors="replace")
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
    raise SourceNotAllowed("Too many redirects.", details={"url": url})


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
