"""Fetching from a URL someone else chose, within the operator's allow-list and never a private address.

One guard for every outbound fetch of user-given URLs (a brief's grounding sources,
a package to install): the URL is http(s), its host is on the allow-list
(``*``: any host; ``example.com`` also allows its subdomains), and every address
the host resolves to is public unless the operator allows private ones (tests
serve from 127.0.0.1 that way). Redirects are followed by hand, each hop checked
the same way, and each request goes to the address that was checked (``pin``), so a
second DNS answer cannot send it elsewhere. A refusal raises the caller's permanent
error class. Plugin webhooks go through the same check and pin (any host; private
addresses only when the operator allows them).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

import httpx

from tenant_runtime.errors import Permanent, Unavailable

MAX_REDIRECTS = 3

Resolver = Callable[[str], list[str]]


@dataclass(frozen=True)
class OutboundPolicy:
    """Where a fetch may go: ``allow`` hosts, private addresses or not; ``what`` names the list in messages."""

    allow: tuple[str, ...]
    allow_private: bool = False
    what: str = "fetch"
    refused: type[Permanent] = Permanent  # the error a refusal raises (its own code)


def resolve(host: str) -> list[str]:
    """Every address ``host`` resolves to (a failure is transient: ``source_unreachable``)."""
    try:
        return sorted({info[4][0] for info in socket.getaddrinfo(host, None)})  # type: ignore[misc]
    except OSError as exc:
        raise Unavailable(f"Cannot resolve {host}.", details={"host": host}, code="source_unreachable") from exc


def check_url(url: str, policy: OutboundPolicy, resolver: Resolver = resolve) -> list[str]:
    """Refuse a URL whose host is not allowed or resolves to a private, loopback or reserved address; the
    addresses checked (none when the operator allows private ones: the name is connected to as it is)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if parts.scheme not in ("http", "https") or not host:
        raise policy.refused("The address must be an http(s) URL.", details={"url": url})
    allowed = policy.allow
    if "*" not in allowed and not any(host == a or host.endswith("." + a) for a in allowed):
        raise policy.refused(
            f"{host} is not on the {policy.what} allow-list.",
            details={"url": url, "host": host, "allow": list(allowed)},
        )
    if policy.allow_private:
        return []
    addresses = resolver(host)
    for address in addresses:
        ip = ipaddress.ip_address(address.split("%")[0])
        if not ip.is_global:
            raise policy.refused(
                f"{host} resolves to a private address ({address}): the operator has not allowed those.",
                details={"url": url, "host": host, "address": address},
            )
    return addresses


@dataclass(frozen=True)
class Pinned:
    """A request sent to the address that was checked, not to a second lookup of the name (which a hostile
    DNS server could answer with a private address: DNS rebinding). The Host header and TLS's server name
    (SNI and certificate check, httpcore's ``sni_hostname``) stay the URL's own host."""

    url: str
    headers: dict[str, str]
    extensions: dict[str, str]


def pin(url: str, addresses: list[str]) -> Pinned:
    """``url`` with its host replaced by one of ``addresses``, IPv4 first (unchanged when there are none)."""
    if not addresses:
        return Pinned(url, {}, {})
    parsed = httpx.URL(url)
    host = parsed.host
    address = min(addresses, key=lambda a: ipaddress.ip_address(a.split("%")[0]).version).split("%")[0]
    netloc = parsed.netloc.decode("ascii")
    return Pinned(
        str(parsed.copy_with(host=address)),
        {"Host": netloc},
        {"sni_hostname": host} if parsed.scheme == "https" else {},
    )


@contextmanager
def open_checked(
    client: httpx.Client, url: str, policy: OutboundPolicy, resolver: Resolver = resolve
) -> Iterator[tuple[str, httpx.Response]]:
    """GET ``url`` (``client`` must not follow redirects itself), every hop checked; the final URL and the
    streaming response. A network failure is transient (``source_unreachable``)."""
    current = url
    for _ in range(MAX_REDIRECTS + 1):
        pinned = pin(current, check_url(current, policy, resolver))
        try:
            with client.stream("GET", pinned.url, headers=pinned.headers, extensions=pinned.extensions) as response:
                if response.is_redirect and "location" in response.headers:
                    current = urljoin(current, response.headers["location"])
                    continue
                yield current, response
                return
        except httpx.HTTPError as exc:
            raise Unavailable(
                f"Could not fetch {current}: {type(exc).__name__}.", details={"url": current}, code="source_unreachable"
            ) from None
    raise policy.refused("Too many redirects.", details={"url": url})


def read_limited(response: httpx.Response, max_bytes: int) -> tuple[bytes, bool]:
    """The body, at most ``max_bytes`` of it, and whether there was more."""
    data = b""
    for chunk in response.iter_bytes():
        data += chunk
        if len(data) > max_bytes:
            return data[:max_bytes], True
    return data, False


__all__ = [
    "MAX_REDIRECTS",
    "OutboundPolicy",
    "Pinned",
    "Resolver",
    "check_url",
    "open_checked",
    "pin",
    "read_limited",
    "resolve",
]
