"""Pressroom as its clients see it: the operator and tenant HTTP APIs and the public site."""

from __future__ import annotations

import asyncio
import secrets
import time
from dataclasses import dataclass
from typing import Any

import httpx


class ApiError(RuntimeError):
    pass


@dataclass
class Tenant:
    slug: str
    token: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


@dataclass
class Published:
    """One publish command as the client saw it."""

    tenant: str
    document_id: str
    operation_id: str
    sent_at: float  # time.monotonic() before the request
    acked_at: float  # time.monotonic() when the 202 arrived

    @property
    def latency(self) -> float:
        return self.acked_at - self.sent_at


class PressroomApi:
    """One pooled async HTTP client for the control plane and one for the site server."""

    def __init__(self, api_url: str, site_url: str, operator_token: str, *, connections: int = 100) -> None:
        # uvicorn drops idle keep-alive connections after 5 s; expiring ours first avoids
        # reusing a connection the server is closing (an httpx.ReadError on the next request).
        limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections, keepalive_expiry=2.0)
        self.api = httpx.AsyncClient(base_url=api_url, timeout=60, limits=limits)
        self.site = httpx.AsyncClient(base_url=site_url, timeout=30, limits=limits)
        self.operator = {"Authorization": f"Bearer {operator_token}"}

    async def close(self) -> None:
        await self.api.aclose()
        await self.site.aclose()

    async def _call(self, method: str, url: str, expect: int, **kwargs: Any) -> dict[str, Any]:
        response = await self.api.request(method, url, **kwargs)
        if response.status_code != expect:
            raise ApiError(f"{method} {url} → {response.status_code}: {response.text[:500]}")
        return response.json() if response.content else {}

    async def create_tenant(self, slug: str) -> Tenant:
        """A tenant (workspace + queue) and an owner token for it."""
        await self._call(
            "POST", "/ops/tenants", 201, json={"slug": slug, "name": f"Bench {slug}"}, headers=self.operator
        )
        issued = await self._call(
            "POST", f"/ops/tenants/{slug}/tokens", 201, json={"role": "owner"}, headers=self.operator
        )
        return Tenant(slug, str(issued["token"]))

    async def create_tenants(self, prefix: str, count: int, *, concurrency: int = 4) -> list[Tenant]:
        suffix = secrets.token_hex(2)
        slugs = [f"{prefix}{suffix}-{i:04d}" for i in range(count)]
        gate = asyncio.Semaphore(concurrency)

        async def one(slug: str) -> Tenant:
            async with gate:
                return await self.create_tenant(slug)

        return list(await asyncio.gather(*(one(s) for s in slugs)))

    async def create_document(self, tenant: Tenant, slug: str, body: str = "Benchmark body.") -> dict[str, Any]:
        return await self._call(
            "POST",
            f"/api/tenants/{tenant.slug}/documents",
            201,
            headers=tenant.headers,
            json={"slug": slug, "title": slug.replace("-", " ").title(), "body": body, "kind": "post"},
        )

    async def update_document(self, tenant: Tenant, document_id: str, version: int, body: str) -> dict[str, Any]:
        return await self._call(
            "PUT",
            f"/api/tenants/{tenant.slug}/documents/{document_id}",
            200,
            headers=tenant.headers,
            json={"version": version, "body": body},
        )

    async def publish(self, tenant: Tenant, document_id: str) -> Published:
        """POST …/publish with confirmation; the timing brackets only the HTTP round trip."""
        url = f"/api/tenants/{tenant.slug}/documents/{document_id}/publish"
        t0 = time.monotonic()
        response = await self.api.post(url, json={"confirm": True}, headers=tenant.headers)
        t1 = time.monotonic()
        if response.status_code != 202:
            raise ApiError(f"POST {url} → {response.status_code}: {response.text[:500]}")
        return Published(tenant.slug, document_id, str(response.json()["operation_id"]), t0, t1)

    async def document(self, tenant: Tenant, document_id: str) -> dict[str, Any]:
        return await self._call(
            "GET", f"/api/tenants/{tenant.slug}/documents/{document_id}", 200, headers=tenant.headers
        )

    async def operation(self, tenant: Tenant, operation_id: str) -> dict[str, Any]:
        return await self._call(
            "GET", f"/api/tenants/{tenant.slug}/operations/{operation_id}", 200, headers=tenant.headers
        )

    async def retry(self, tenant: Tenant, operation_id: str) -> dict[str, Any]:
        return await self._call(
            "POST", f"/api/tenants/{tenant.slug}/operations/{operation_id}/retry", 202, headers=tenant.headers
        )

    async def openapi(self) -> dict[str, Any]:
        return await self._call("GET", "/schema/openapi.json", 200)

    async def page(self, tenant: str, slug: str) -> httpx.Response:
        return await self.site.get(f"/{tenant}/{slug}")
