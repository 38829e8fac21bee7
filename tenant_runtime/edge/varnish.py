"""The VCL that puts Varnish (with the xkey vmod) in front of the public site server.

Pressroom talks to Varnish through the existing ``HttpPurger``: Varnish
answers the same ``PURGE`` + ``xkey-purge`` request as the site server's own
purge endpoint. This module only renders ``varnish.vcl`` for a backend.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from importlib import resources
from string import Template

__all__ = ["DEFAULT_PURGERS", "render_vcl", "vcl_template"]

# Loopback only: a purge comes from a process on the same host unless the ACL is widened.
DEFAULT_PURGERS: tuple[str, ...] = ("127.0.0.1", "::1")

# Characters that are safe inside a VCL "..." string and in a sed replacement (the chart's
# entrypoint substitutes the secret the same way): base64/URL-safe tokens fit.
_SECRET = re.compile(r"^[A-Za-z0-9._~+/=-]*$")
_HOST = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9.-]{0,252})$")
_TTL = re.compile(r"^[0-9]+(ms|s|m|h|d|w|y)$")


def vcl_template() -> str:
    """The raw template, with its ``${...}`` placeholders."""
    return resources.files("tenant_runtime.edge").joinpath("varnish.vcl").read_text(encoding="utf-8")


def _acl_entry(entry: str) -> str:
    network = ipaddress.ip_network(entry, strict=False)  # ValueError names the bad entry
    if network.prefixlen == network.max_prefixlen:
        return f'    "{network.network_address}";'
    return f'    "{network.network_address}"/{network.prefixlen};'


def render_vcl(
    backend_host: str,
    backend_port: int,
    purge_secret: str = "",
    *,
    purgers: Sequence[str] = DEFAULT_PURGERS,
    ttl: str = "1h",
) -> str:
    """VCL for a backend at ``backend_host:backend_port``; PURGE from ``purgers`` (IPs or CIDRs) only,
    and only with ``x-purge-secret: purge_secret`` when the secret is not empty."""
    if not _HOST.match(backend_host):
        raise ValueError(f"backend_host must be a hostname or IP address, got {backend_host!r}")
    if not 0 < int(backend_port) < 65536:
        raise ValueError(f"backend_port must be a TCP port number, got {backend_port!r}")
    if not _SECRET.match(purge_secret):
        raise ValueError("purge_secret may only hold letters, digits and . _ ~ + / = -")
    if not purgers:
        raise ValueError("purgers must name at least one address: an empty VCL acl does not compile")
    if not _TTL.match(ttl):
        raise ValueError(f"ttl must be a VCL duration such as 1h, got {ttl!r}")
    return Template(vcl_template()).substitute(
        BACKEND_HOST=backend_host,
        BACKEND_PORT=str(int(backend_port)),
        PURGE_SECRET=purge_secret,
        PURGE_ACL="\n".join(_acl_entry(entry) for entry in purgers),
        DEFAULT_TTL=ttl,
    )
