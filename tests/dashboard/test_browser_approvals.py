"""The approvals inbox in Chromium, with the recording twin in place of Prefect (fast, no worker): an editor
finds the run waiting on them, is stopped by the confirmation, confirms, and the decision is the
operation's approval event (the test parks the run at its approve step, as a worker would)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from control_plane.app import create_app
from tenant_runtime.actions import run_control
from tests.dashboard.conftest import Dashboard
from tests.dashboard.test_lane_pages import _brief, _waiting_for_approval
from tests.fixtures.live_server import serve

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.integration


@pytest.fixture
def waiting(dashboard: Dashboard) -> tuple[str, str]:
    """An editor's token and a news brief's run parked at its approve step (made before Chromium starts:
    Playwright's loop then owns the thread)."""
    owner = dashboard.tenant("acme")
    answer = dashboard.client.put(
        "/api/tenants/acme/lanes/news/approval", json={"required": True}, headers={"Authorization": f"Bearer {owner}"}
    )
    assert answer.status_code == 200, answer.text
    operation_id = _brief(dashboard, owner, "b-browser", title="Rates rise again")
    _waiting_for_approval(dashboard, operation_id)
    return dashboard.tenant("acme", role="editor"), operation_id


@pytest.fixture
def served(dashboard: Dashboard) -> Iterator[str]:
    with serve(create_app(dashboard.services.settings, services=dashboard.services)) as url:
        yield url


def test_an_editor_approves_a_waiting_run_from_the_inbox_after_confirming(
    waiting: tuple[str, str], served: str, dashboard: Dashboard, chromium: Browser
) -> None:
    from playwright.sync_api import expect

    token, operation_id = waiting
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    blocked: list[str] = []
    page.on("console", lambda msg: blocked.append(msg.text) if "Content Security Policy" in msg.text else None)
    try:
        page.goto(f"{served}/dashboard/login")
        page.fill("#token", token)
        page.click("button:has-text('Sign in')")
        page.click("nav.sitenav >> text=Approvals")
        item = page.locator(f"#approval-{operation_id}")
        expect(item.locator("h2")).to_have_text("Rates rise again")
        expect(item.locator("[data-status]")).to_have_text("waiting")

        item.locator("button:has-text('Approve')").click()
        expect(page.locator(".flash-error")).to_contain_text("confirmation_required")
        with dashboard.factory.open("acme").reader() as tx:
            assert run_control.events_of(tx, operation_id) == []

        item = page.locator(f"#approval-{operation_id}")
        item.locator("form[data-decision=approve] input[name=confirm]").check()
        item.locator("button:has-text('Approve')").click()

        expect(page.locator(".flash-success")).to_contain_text("goes on to publish")
        expect(page.locator(f"#approval-{operation_id}")).to_have_attribute("data-decided", "yes")
        expect(page.locator(f"#approval-{operation_id} form")).to_have_count(0)
    finally:
        context.close()
    with dashboard.factory.open("acme").reader() as tx:
        assert [(e.type, e.payload) for e in run_control.events_of(tx, operation_id)] == [
            ("approval", {"approved": True})
        ]
    assert blocked == []
