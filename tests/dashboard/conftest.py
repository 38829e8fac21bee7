"""A control plane with the dashboard for unit tests: no Prefect (the recording twin stands in for it)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar.testing import TestClient

from control_plane.app import create_app
from control_plane.auth import Principal
from control_plane.container import Services
from dispatch.prefect_twin import RecordingPrefect
from tenant_runtime.errors import NotFound
from tenant_runtime.workspace import WorkspaceFactory
from tests.fixtures.stack import OPERATOR_TOKEN, make_settings

ORIGIN = "http://testserver.local"  # the TestClient's base URL: what a browser on the dashboard sends
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
_FORM_KEY = re.compile(r'name="form_key" value="([^"]+)"')
OPERATOR = Principal(token_id="test-operator", kind="operator")


@dataclass
class Browser:
    """A TestClient used like a browser: it reads the CSRF token and form key off each page it loads."""

    client: TestClient[Any]
    csrf: str = ""
    form_key: str = ""
    last: httpx.Response | None = field(default=None, repr=False)

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        response = self.client.get(path, **kwargs)
        if (match := _CSRF.search(response.text)) is not None:
            self.csrf = match.group(1)
        if (match := _FORM_KEY.search(response.text)) is not None:
            self.form_key = match.group(1)
        self.last = response
        return response

    def post(
        self,
        path: str,
        data: dict[str, Any] | None = None,
        *,
        origin: str | None = ORIGIN,
        csrf: bool = True,
        headers: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> httpx.Response:
        """POST a form as the page would: with the Origin header and the CSRF token unless told otherwise."""
        form = dict(data or {})
        if csrf:
            form.setdefault("csrf_token", self.csrf)
        sent = dict(headers or {})
        if origin is not None:
            sent["Origin"] = origin
        response = self.client.post(path, data=form, headers=sent, **kwargs)
        if (match := _CSRF.search(response.text)) is not None:
            self.csrf = match.group(1)
        self.last = response
        return response

    def login(self, token: str) -> httpx.Response:
        self.get("/dashboard/login")
        return self.post("/dashboard/login", {"token": token})


@dataclass
class Dashboard:
    services: Services
    client: TestClient[Any]
    factory: WorkspaceFactory
    prefect: RecordingPrefect  # what the relay sent

    def tenant(self, slug: str, role: str = "owner") -> str:
        """Create site ``slug`` (if new) and return a fresh member token with ``role``."""
        try:
            self.services.tenants.get(slug)
        except NotFound:
            asyncio.run(self.services.tenants.create(OPERATOR, slug, f"Site {slug}"))
        return self.services.tenants.issue_token(OPERATOR, slug, role).token

    @property
    def relayed(self) -> list[str]:
        """The tenants whose committed operations reached (the twin of) Prefect, in order."""
        self.services.handoff.flush()
        return [call["request"].tenant for call in self.prefect.called("create_run")]

    def browser(self, token: str | None = None) -> Browser:
        """A browser session sharing the app, with its own cookies; signed in if ``token`` is given."""
        client = TestClient(self.client.app, base_url=ORIGIN)
        browser = Browser(client)
        if token is not None:
            response = browser.login(token)
            assert response.status_code == 200, response.text
        return browser

    def documents(self, tenant: str) -> list[Any]:
        from tenant_runtime import queries

        with self.factory.open(tenant).reader() as tx:
            return list(queries.list_documents(tx))

    def operations(self, tenant: str) -> list[Any]:
        from tenant_runtime import queries

        with self.factory.open(tenant).reader() as tx:
            return list(queries.list_operations(tx))


@pytest.fixture
def dashboard(tmp_path: Path) -> Iterator[Dashboard]:
    """The control-plane app (dashboard included) on a fresh data directory."""
    settings = make_settings(tmp_path / "data")
    factory = WorkspaceFactory(settings.runtime)
    prefect = RecordingPrefect()
    services = Services.build(settings, factory=factory, prefect=RecordingPrefect(), relay_prefect=prefect)
    with TestClient(create_app(settings, services=services), base_url=ORIGIN) as client:
        yield Dashboard(services, client, factory, prefect)


@pytest.fixture
def operator_token() -> str:
    return OPERATOR_TOKEN
