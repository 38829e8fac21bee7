"""The outbound guard: every hop of a fetch is checked, and sent to the address that was checked."""

from __future__ import annotations

import httpx
import pytest

from tenant_runtime import outbound
from tenant_runtime.errors import Permanent

POLICY = outbound.OutboundPolicy(allow=("*",), what="test")
DNS = {"docs.example": ["2606:2800:220:1::1", "93.184.216.34"], "moved.example": ["10.0.0.7"]}


def test_each_hop_goes_to_its_checked_address_and_a_redirect_to_a_private_one_is_refused() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(302, headers={"location": "http://moved.example/next"})

    with (
        httpx.Client(transport=httpx.MockTransport(handler), follow_redirects=False) as client,
        pytest.raises(Permanent, match="private address"),
        outbound.open_checked(client, "https://docs.example/a", POLICY, DNS.__getitem__),
    ):
        pass
    (first,) = seen  # the redirect's target was checked before anything was sent to it
    assert first.url.host == "93.184.216.34"  # IPv4 first: the address checked, not a second lookup
    assert first.headers["host"] == "docs.example" and first.extensions["sni_hostname"] == "docs.example"


def test_a_url_with_private_addresses_allowed_is_fetched_by_name() -> None:
    allowed = outbound.OutboundPolicy(allow=("*",), allow_private=True)
    assert outbound.check_url("http://127.0.0.1:9/x", allowed) == []
    assert outbound.pin("http://127.0.0.1:9/x", []) == outbound.Pinned("http://127.0.0.1:9/x", {}, {})
    pinned = outbound.pin("http://[::1]:8080/x", ["::1"])
    assert pinned.url == "http://[::1]:8080/x" and pinned.headers == {"Host": "[::1]:8080"} and not pinned.extensions
