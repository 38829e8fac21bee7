"""Purgers: the one-method seam to whatever caches public pages.

The public site server's own tagged cache and Varnish (xkey) both accept the
same request, ``PURGE /`` with an ``xkey-purge`` header listing the tags, so
one HTTP adapter serves both; ``MemoryPurger`` is the twin for unit tests.
"""

from __future__ import annotations

import re
import threading
from typing import Protocol

import httpx

from tenant_runtime.errors import BadRequest

_TAG = re.compile(r"^[a-z0-9][a-z0-9:._/-]{0,199}$")


class Purger(Protocol):
    def purge(self, tags: list[str]) -> None: ...


class NullPurger:
    """No edge cache configured: nothing to purge."""

    def purge(self, tags: list[str]) -> None:
        return None


class MemoryPurger:
    """Records every purge; the unit-test twin."""

    def __init__(self) -> None:
        self.purged: list[list[str]] = []
        self._lock = threading.Lock()

    def purge(self, tags: list[str]) -> None:
        with self._lock:
            self.purged.append(list(tags))

    @property
    def all_tags(self) -> set[str]:
        return {tag for batch in self.purged for tag in batch}


class HttpPurger:
    """Sends ``PURGE`` with the tags in an ``xkey-purge`` header."""

    def __init__(self, url: str, *, secret: str = "", timeout: float = 5.0) -> None:
        self.url = url
        self._headers = {"x-purge-secret": secret} if secret else {}
        # One pooled client for the process: building one per purge (TLS context and all)
        # was half of a publish command's time in the command_ack profile.
        self._client = httpx.Client(timeout=timeout)

    def purge(self, tags: list[str]) -> None:
        if not tags:
            return
        response = self._client.request("PURGE", self.url, headers={**self._headers, "xkey-purge": " ".join(tags)})
        response.raise_for_status()


def tenant_tags(tenant: str, *names: str) -> list[str]:
    """Surrogate keys are always namespaced by tenant: ``{tenant}`` or ``{tenant}:{name}``."""
    tags = []
    for name in names:
        tag = f"{tenant}:{name}" if name else tenant
        if not _TAG.match(tag):
            raise BadRequest("Invalid cache tag.", details={"tag": tag})
        tags.append(tag)
    return tags


class TenantCache:
    """A purger view that can only name its own tenant's tags."""

    def __init__(self, purger: Purger, tenant: str) -> None:
        self._purger = purger
        self.tenant = tenant

    def tags(self, *names: str) -> list[str]:
        return tenant_tags(self.tenant, *names)

    def purge(self, *names: str) -> list[str]:
        tags = self.tags(*names)
        self._purger.purge(tags)
        return tags
