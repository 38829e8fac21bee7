"""``HttpRuntime``: the transport to a shard's runtime process over its internal HTTP API.

Every request carries the shard's bearer credential. A runtime that cannot be
reached (refused, reset, timed out, or a proxy's 502/503/504) is
``RuntimeUnavailable`` (503 ``runtime_unavailable`` with Retry-After). A
command's transaction either committed there or not at all, never half: when
the connection failed nothing was sent; when the answer was lost the command
may have committed, and an ``Idempotency-Key`` makes the retry safe either way. The runtime's own errors
come back as the same classes of the error tree.
"""

from __future__ import annotations

from typing import Any

import httpx
import msgspec

from dispatch.runtime import messages as m
from dispatch.runtime import wire
from dispatch.runtime.views import CommandResult
from tenant_runtime.errors import RuntimeUnavailable

GATEWAY_STATUSES = frozenset({502, 503, 504})
RETRY_AFTER = 5


class HttpRuntime:
    """Queries, commands and hand-over calls to one shard's runtime."""

    def __init__(
        self,
        shard: str,
        url: str,
        secret: str,
        *,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.shard = shard
        self.url = url.rstrip("/")
        self._client = httpx.Client(
            base_url=self.url,
            headers={"Authorization": f"Bearer {secret}", "Content-Type": "application/json"},
            timeout=httpx.Timeout(timeout, connect=min(timeout, 3.0)),
            transport=transport,
        )

    def close(self) -> None:
        self._client.close()

    # --- the seam ----------------------------------------------------------------------------------------

    def query(self, tenant: str, actor: m.ActorRef, query: m.Message) -> Any:
        response = self._post(f"/v1/tenants/{tenant}/query", wire.encode_query(actor, query))
        return wire.decode_answer(query, response.content)

    def execute(self, tenant: str, command: m.Command) -> CommandResult:
        response = self._post(f"/v1/tenants/{tenant}/command", wire.encode_command(command))
        return msgspec.json.decode(response.content, type=CommandResult)

    # --- hand-over -----------------------------------------------------------------------------------------

    def health(self) -> dict[str, Any]:
        return dict(self._request("GET", "/healthz").json())

    def drain(self, tenant: str, timeout: float) -> dict[str, Any]:
        response = self._request(
            "POST", f"/v1/tenants/{tenant}/drain", params={"timeout": timeout}, timeout=timeout + 10
        )
        return dict(response.json())

    def export(self, tenant: str) -> tuple[bytes, str]:
        response = self._request("POST", f"/v1/tenants/{tenant}/export", timeout=120)
        return response.content, response.headers["x-sha256"]

    def import_(self, tenant: str, data: bytes, sha256: str) -> dict[str, Any]:
        response = self._request(
            "PUT",
            f"/v1/tenants/{tenant}/import",
            content=data,
            headers={"Content-Type": "application/octet-stream", "X-Sha256": sha256},
            timeout=120,
        )
        return dict(response.json())

    def release(self, tenant: str) -> dict[str, Any]:
        return dict(self._request("POST", f"/v1/tenants/{tenant}/release").json())

    def resume(self, tenant: str) -> dict[str, Any]:
        return dict(self._request("POST", f"/v1/tenants/{tenant}/resume").json())

    # --- plumbing ------------------------------------------------------------------------------------------

    def _post(self, path: str, body: bytes) -> httpx.Response:
        return self._request("POST", path, content=body)

    def _request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            response = self._client.request(method, path, **kwargs)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise self._unavailable(type(exc).__name__, sent=False) from None
        except httpx.TransportError as exc:
            raise self._unavailable(type(exc).__name__, sent=True) from None
        if response.status_code < 400:
            return response
        if response.status_code in GATEWAY_STATUSES and not _is_error_body(response):
            raise self._unavailable(f"HTTP {response.status_code}", sent=False)
        raise wire.error_from(response.status_code, response.content)

    def _unavailable(self, reason: str, *, sent: bool) -> RuntimeUnavailable:
        message = (
            "The site's runtime did not answer in time; repeat the request with the same Idempotency-Key."
            if sent
            else "The site's runtime is not answering; nothing was changed. Try again shortly."
        )
        return RuntimeUnavailable(message, details={"shard": self.shard, "reason": reason, "retry_after": RETRY_AFTER})


def _is_error_body(response: httpx.Response) -> bool:
    return response.headers.get("content-type", "").startswith("application/json") and b'"error"' in response.content


__all__ = ["HttpRuntime"]
