"""Fetching a package archive from a URL: the allow-list, private addresses, redirects, size, errors — against
a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import pytest

from tenant_runtime.errors import PackageRejected
from tenant_runtime.packages.fetch import fetch_archive
from tests.fixtures.live_server import free_port
from tests.fixtures.source_server import SourceServer

LOCAL = ("127.0.0.1",)


def _refused(code: str, url: str, **options: object) -> PackageRejected:
    with pytest.raises(PackageRejected) as refused:
        fetch_archive(url, **options)  # type: ignore[arg-type]
    assert refused.value.code == code, refused.value.message
    return refused.value


def test_an_allowed_host_is_fetched_and_private_addresses_need_the_operators_allowance(
    source_server: SourceServer,
) -> None:
    source_server.files["/theme.tar.gz"] = b"\x1f\x8b archive bytes"
    url = source_server.url("/theme.tar.gz")
    assert fetch_archive(url, allow=LOCAL, allow_private=True) == b"\x1f\x8b archive bytes"

    private = _refused("package_url_not_allowed", url, allow=LOCAL)
    assert "private address" in private.message
    assert "not on the package source allow-list" in _refused("package_url_not_allowed", url, allow=()).message
    _refused("package_url_not_allowed", url, allow=("example.com",), allow_private=True)
    _refused("package_url_not_allowed", "file:///etc/passwd", allow=("*",), allow_private=True)
    assert source_server.fetches["/theme.tar.gz"] == 1  # no refused URL was requested


def test_each_redirect_hop_is_checked_and_size_and_errors_are_4xx(source_server: SourceServer) -> None:
    source_server.files["/big.tar.gz"] = b"x" * 5000
    source_server.redirects["/moved"] = source_server.url("/big.tar.gz").replace("127.0.0.1", "localhost")
    source_server.redirects["/here"] = "/big.tar.gz"

    hop = _refused("package_url_not_allowed", source_server.url("/moved"), allow=LOCAL, allow_private=True)
    assert hop.details["host"] == "localhost" and source_server.fetches["/big.tar.gz"] == 0
    assert len(fetch_archive(source_server.url("/here"), allow=LOCAL, allow_private=True)) == 5000
    _refused("package_too_large", source_server.url("/big.tar.gz"), allow=LOCAL, allow_private=True, max_bytes=4999)
    missing = _refused("package_fetch_failed", source_server.url("/nope"), allow=LOCAL, allow_private=True)
    assert missing.details["status"] == 404
    port = free_port()  # nothing listens on it
    _refused("package_fetch_failed", f"http://127.0.0.1:{port}/gone", allow=LOCAL, allow_private=True, timeout=2)
