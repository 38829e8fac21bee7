"""Fetching a package archive from a URL: only from the operator's allow-listed hosts, never a private address
unless allowed (the outbound guard grounding uses), at most the archive limit, nothing kept.

The bytes are returned, not stored: the install command verifies the signature and every
file hash before anything of the package is written, exactly as for an upload.

    package_url_not_allowed   not http(s), a host off the allow-list, a private address, too many redirects
    package_fetch_failed      the server answered an error status, or could not be reached
    package_too_large         more than the archive limit (told by Content-Length or by reading)
"""

from __future__ import annotations

import httpx

from tenant_runtime import outbound
from tenant_runtime.errors import PackageRejected, Unavailable
from tenant_runtime.packages.archive import MAX_ARCHIVE_BYTES


class PackageUrlNotAllowed(PackageRejected):
    code = "package_url_not_allowed"


def fetch_archive(
    url: str,
    *,
    allow: tuple[str, ...],
    allow_private: bool = False,
    timeout: float = 10.0,
    max_bytes: int = MAX_ARCHIVE_BYTES,
    transport: httpx.BaseTransport | None = None,
    resolver: outbound.Resolver = outbound.resolve,
) -> bytes:
    """The archive at ``url``, checked against the allow-list at every hop and cut off past ``max_bytes``."""
    policy = outbound.OutboundPolicy(
        allow=allow, allow_private=allow_private, what="package source", refused=PackageUrlNotAllowed
    )
    with httpx.Client(
        timeout=timeout,
        follow_redirects=False,
        transport=transport,
        headers={"user-agent": "Pressroom-packages/1"},
    ) as client:
        try:
            with outbound.open_checked(client, url, policy, resolver) as (final, response):
                if response.status_code >= 400:
                    raise PackageRejected(
                        f"{final} answered {response.status_code}.",
                        details={"url": final, "status": response.status_code},
                        code="package_fetch_failed",
                    )
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > max_bytes:
                    raise _too_large(final, max_bytes)
                data, more = outbound.read_limited(response, max_bytes)
                if more:
                    raise _too_large(final, max_bytes)
                return data
        except Unavailable as exc:  # the user's URL, not our service: a 4xx naming it
            raise PackageRejected(exc.message, details=exc.details, code="package_fetch_failed") from None
    raise AssertionError("unreachable")  # pragma: no cover (open_checked yields once or raises)


def _too_large(url: str, max_bytes: int) -> PackageRejected:
    return PackageRejected(
        f"A package archive may be at most {max_bytes} bytes.",
        details={"url": url, "limit": max_bytes},
        code="package_too_large",
    )


__all__ = ["PackageUrlNotAllowed", "fetch_archive"]
