"""Grounding fetches cited sources within the allow-list, and never a private address unless the operator allows."""

from __future__ import annotations

import pytest

from tenant_runtime.errors import Unavailable
from tenant_runtime.lanes.grounding import SourceNotAllowed, check_url, ground
from tenant_runtime.lanes.settings import LaneSettings
from tests.fixtures.source_server import SourceServer


def test_private_and_loopback_addresses_are_refused_by_default() -> None:
    settings = LaneSettings()
    for address in ("127.0.0.1", "10.1.2.3", "192.168.0.9", "169.254.169.254", "::1", "fd00::1"):
        with pytest.raises(SourceNotAllowed) as refused:
            check_url("http://intranet.example/x", settings, resolver=lambda host, a=address: [a])
        assert refused.value.details["address"] == address
    check_url("https://example.com/x", settings, resolver=lambda host: ["93.184.215.14"])


def test_the_allow_list_names_hosts_and_their_subdomains() -> None:
    settings = LaneSettings(lanes_ground_allow="example.com, docs.python.org")
    public = lambda host: ["93.184.215.14"]  # noqa: E731
    check_url("https://example.com/a", settings, public)
    check_url("https://news.example.com/a", settings, public)
    for url in ("https://evil-example.com/a", "https://python.org/", "ftp://example.com/a"):
        with pytest.raises(SourceNotAllowed):
            check_url(url, settings, public)


def test_with_the_operators_allowance_local_sources_are_fetched(source_server: SourceServer) -> None:
    source_server.pages["/a"] = "<html><title>Alpha</title><body><p>Alpha beats beta.</p></body></html>"
    url = source_server.url("/a")
    with pytest.raises(SourceNotAllowed):
        ground([url], LaneSettings())
    records = ground([url, source_server.url("/missing")], LaneSettings(lanes_ground_allow_private=True))
    assert [(r["status"], r["title"]) for r in records] == [(200, "Alpha"), (404, "")]
    assert "Alpha beats beta." in records[0]["excerpt"]


def test_an_unreachable_source_is_transient() -> None:
    with pytest.raises(Unavailable) as failed:
        ground(["http://127.0.0.1:9/x"], LaneSettings(lanes_ground_allow_private=True, lanes_ground_timeout_seconds=2))
    assert failed.value.code == "source_unreachable"
