"""The dashboard's flows end to end in Chromium on the real stack (real Prefect server, real runtime
worker): each clicks through the pages as a person would and checks the outcome in the page and where it
lands (the public site, the operation, the media file).

One stack for the module (each test its own site and its own worker, stopped when it ends); Chromium per
test (Playwright's loop owns the thread while it is open). Set-up the flow does not exercise (a site's
timezone, a document that already exists) goes through the tenant API, as an integration would.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import pytest
from PIL import Image

from control_plane.app import create_app
from control_plane.container import Services
from control_plane.local import PrefectServerHandle
from flows.probes import PROBES
from tests.fixtures.browser import LiveDashboard
from tests.fixtures.live_server import serve
from tests.fixtures.stack import OPERATOR_TOKEN, Pressroom, Tenant, build_pressroom

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.integration

LANDS = 90_000  # ms: how long a delivery may take to land on a loaded 2-core machine
SCHEDULE_AHEAD = timedelta(seconds=8)  # far enough to check and confirm the time, near enough to wait for


@pytest.fixture(scope="module")
def stack(prefect_server: PrefectServerHandle, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveDashboard]:
    """One control plane served on loopback over one Pressroom for the whole module."""
    with build_pressroom(tmp_path_factory.mktemp("browser-flows")) as room:
        services = Services.build(room.settings, factory=room.factory, migrate=False)
        try:
            with serve(create_app(room.settings, services=services)) as url:
                yield LiveDashboard(url, room, services)
        finally:
            services.engine.dispose()


@pytest.fixture
def live(stack: LiveDashboard) -> Iterator[LiveDashboard]:
    """The module's stack; the test's workers and armed probes go when it ends."""
    try:
        yield stack
    finally:
        stack.room.stop_workers()
        PROBES.reset()


@pytest.fixture
def page(chromium: Browser) -> Iterator[Page]:
    """A fresh browser context's page that records what the dashboard's CSP blocked (it must block nothing)."""
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    blocked: list[str] = []
    page.on("console", lambda msg: blocked.append(msg.text) if "Content Security Policy" in msg.text else None)
    try:
        yield page
    finally:
        context.close()
    assert blocked == []


def _token(room: Pressroom, tenant: Tenant, role: str) -> str:
    return room.token(tenant, role)["Authorization"].removeprefix("Bearer ")


def _sign_in(page: Page, live: LiveDashboard, token: str) -> None:
    from playwright.sync_api import expect

    page.goto(f"{live.url}/dashboard/login")
    page.fill("#token", token)
    page.click("button:has-text('Sign in')")
    expect(page.locator(".who")).to_be_visible()


def _nav(page: Page, name: str) -> None:
    """Follow the site menu's link ``name`` (exactly: a site's slug may contain the word)."""
    page.locator("nav.sitenav").get_by_role("link", name=name, exact=True).click()


def _until(check: Callable[[], bool], what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def _mark_not_reloaded(page: Page) -> None:
    page.evaluate("window.notReloaded = true")


def _not_reloaded(page: Page) -> bool:
    return bool(page.evaluate("window.notReloaded === true"))


def _public(room: Pressroom, tenant: Tenant, path: str) -> Any:
    return room.site.get(f"/{tenant.slug}/{path}")


def _document(room: Pressroom, tenant: Tenant, document_id: str) -> dict[str, Any]:
    answer = room.api.get(f"/api/tenants/{tenant.slug}/documents/{document_id}", headers=tenant.headers)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def _edit(room: Pressroom, tenant: Tenant, document: dict[str, Any], **fields: Any) -> dict[str, Any]:
    answer = room.api.put(
        f"/api/tenants/{tenant.slug}/documents/{document['id']}",
        json={"version": document["version"], **fields},
        headers=tenant.headers,
    )
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def test_an_editor_writes_edits_and_schedules_a_post_in_the_sites_timezone_and_it_goes_live(
    live: LiveDashboard, page: Page
) -> None:
    from playwright.sync_api import expect

    room = live.room
    acme = room.new_tenant("sched")
    zone = "America/New_York"
    settings = room.api.put(f"/api/tenants/{acme.slug}/settings", json={"timezone": zone}, headers=acme.headers)
    assert settings.status_code == 200, settings.text
    editor = _token(room, acme, "editor")
    room.start_worker(acme)

    _sign_in(page, live, editor)
    page.click("text=New document")
    page.fill("#title", "Evening edition")
    page.fill("#slug", "evening")
    page.fill("#body", "First draft.")
    page.click("button:has-text('Create draft')")
    expect(page.locator(".flash-success")).to_contain_text("created")
    page.fill("#body", "The **final** text.")
    page.click("button:has-text('Save')")
    expect(page.locator(".flash-success")).to_contain_text("Saved version 2")

    page.click("text=Schedule version 2…")
    expect(page.locator("label[for=at]")).to_contain_text(zone)
    when = (datetime.now(UTC) + SCHEDULE_AHEAD).replace(microsecond=0)
    page.fill("#at", when.astimezone(ZoneInfo(zone)).strftime("%Y-%m-%dT%H:%M:%S"))
    page.click("button:has-text('Check this time')")
    effects = page.locator("ul.effects")
    expect(effects).to_contain_text(f"{when.astimezone(ZoneInfo(zone)):%Y-%m-%d %H:%M:%S} {zone}")
    expect(effects.locator("code").nth(1)).to_have_text(when.isoformat())  # the UTC instant stated beside it
    page.click("button:has-text('Schedule')")  # not confirmed: refused, nothing scheduled
    expect(page.locator(".flash-error")).to_contain_text("confirmation_required")
    page.check("input[name=confirm]")
    page.click("button:has-text('Schedule')")
    expect(page.locator(".flash-success")).to_contain_text("Scheduled")
    operation_id = (page.locator("#delivery a").get_attribute("href") or "").rsplit("/", 1)[-1]
    assert operation_id.startswith("op_")
    scheduled = room.operation(acme, operation_id)
    assert scheduled["scheduled_for"].startswith(when.isoformat()[:19]) or scheduled["status"] != "scheduled"

    # The indicator follows the schedule by itself: scheduled, then rendering, then published, no reload.
    _mark_not_reloaded(page)
    expect(page.locator("#delivery")).to_have_attribute("data-state", "published", timeout=LANDS)
    assert _not_reloaded(page)

    public = _public(room, acme, "evening")
    assert public.status_code == 200 and "<strong>final</strong>" in public.text
    done = room.operation(acme, operation_id)
    assert done["status"] == "succeeded"
    assert datetime.fromisoformat(done["finished_at"]) >= when


def test_a_release_is_previewed_before_and_after_then_published_and_its_timeline_follows_it(
    live: LiveDashboard, page: Page
) -> None:
    from playwright.sync_api import expect

    room = live.room
    acme = room.new_tenant("release")
    room.start_worker(acme)
    about = room.create_document(acme, "about", title="About us", body="We sell tea.", kind="page")
    first = room.publish(acme, about["id"])["operation_id"]
    assert room.wait_operation(acme, first)["status"] == "succeeded"
    _edit(room, acme, _document(room, acme, about["id"]), body="We sell tea and coffee.")
    room.create_document(acme, "opening", title="Grand opening", body="Doors open at nine.")

    _sign_in(page, live, acme.token)
    _nav(page, "Releases")
    page.check("label:has-text('About us') input")
    page.check("label:has-text('Grand opening') input")
    page.click("button:has-text('Preview the changes')")
    changes = page.locator("section.change")
    expect(changes).to_have_count(2)
    changed = page.locator("section.change", has_text="About us")
    expect(changed.locator(".diff .del")).to_contain_text("We sell tea.")
    expect(changed.locator(".diff .add")).to_contain_text("We sell tea and coffee.")
    expect(page.locator("section.change", has_text="Grand opening")).to_contain_text("new on the site")
    assert _public(room, acme, "opening").status_code == 404  # a preview changes nothing

    page.click("button:has-text('Confirm release')")  # not confirmed: refused in place
    expect(page.locator(".flash-error")).to_contain_text("confirmation_required")
    page.check("input[name=confirm]")
    page.click("button:has-text('Confirm release')")
    expect(page.locator(".flash-success")).to_contain_text("Release published")
    operation_id = page.url.rsplit("/", 1)[-1]
    assert operation_id.startswith("op_")

    # The operation's timeline follows the run live: its status and its steps, without a reload.
    _mark_not_reloaded(page)
    expect(page.locator("#op-live .badge[data-status]")).to_have_attribute("data-status", "succeeded", timeout=LANDS)
    expect(page.locator("#steps tr[data-step]").first).to_be_visible()
    assert _not_reloaded(page)

    assert room.operation(acme, operation_id)["status"] == "succeeded"
    assert "We sell tea and coffee." in _public(room, acme, "about").text
    assert "Doors open at nine." in _public(room, acme, "opening").text


def test_a_running_delivery_is_paused_and_resumed_from_its_timeline(live: LiveDashboard, page: Page) -> None:
    from playwright.sync_api import expect

    room = live.room
    acme = room.new_tenant("pause")
    held = PROBES.park(acme.slug, "render_page")
    room.start_worker(acme)
    story = room.create_document(acme, "held-story", title="Held story", body="Worth the wait.")
    operation_id = room.publish(acme, story["id"])["operation_id"]
    try:
        _sign_in(page, live, acme.token)
        page.goto(f"{live.url}/dashboard/sites/{acme.slug}/operations/{operation_id}")
        _until(lambda: PROBES.count(acme.slug, "render_page") == 1, "render_page to start")
        expect(page.locator("#op-live .badge[data-status]")).to_have_attribute("data-status", "delivering")

        pause = page.locator("form[data-control=pause]")
        pause.locator("input[name=confirm]").check()
        pause.locator("button:has-text('Pause')").click()
        expect(page.locator(".flash-success")).to_contain_text("pause asked")
        _until(lambda: bool((room.operation(acme, operation_id).get("control") or {}).get("applied")), "the suspend")
    finally:
        held.set()  # render_page ends; the run stops at the next step boundary

    _mark_not_reloaded(page)
    expect(page.locator("#op-live .badge[data-status]")).to_have_attribute("data-status", "paused", timeout=LANDS)
    expect(page.locator("#op-live [data-waiting]")).to_have_attribute("data-waiting", "paused")
    resume = page.locator("form[data-control=resume]")
    expect(resume).to_be_visible()  # offered as soon as the run has stopped, no reload
    assert _not_reloaded(page)
    assert PROBES.count(acme.slug, "public_record") == 0
    assert _public(room, acme, "held-story").status_code == 200  # live rendering, as for any publish

    resume.locator("input[name=confirm]").check()
    resume.locator("button:has-text('Resume')").click()
    expect(page.locator(".flash-success")).to_contain_text("resume asked")
    expect(page.locator("#op-live .badge[data-status]")).to_have_attribute("data-status", "succeeded", timeout=LANDS)

    done = room.operation(acme, operation_id)
    assert done["status"] == "succeeded"
    # The resumed run redid nothing: every step ran once.
    assert [PROBES.count(acme.slug, step) for step in ("verify", "render_page", "public_record", "purge")] == [1] * 4


def test_an_editor_reads_a_revisions_diff_and_restores_the_earlier_text_to_the_public_site(
    live: LiveDashboard, page: Page
) -> None:
    from playwright.sync_api import expect

    room = live.room
    acme = room.new_tenant("revs")
    room.start_worker(acme)
    story = room.create_document(acme, "pricing", title="Pricing", body="Plans start at ten euros.")
    rewritten = _edit(room, acme, story, body="Plans start at twenty euros.")
    first = room.publish(acme, story["id"], version=rewritten["version"])["operation_id"]
    assert room.wait_operation(acme, first)["status"] == "succeeded"
    assert "twenty" in _public(room, acme, "pricing").text
    editor = _token(room, acme, "editor")

    _sign_in(page, live, editor)
    page.click("text=Pricing")
    page.click("text=Revisions")
    diff = page.locator(".word-diff")
    expect(page.locator("#diff-h")).to_have_text("Version 1 → version 2")
    expect(diff.locator("del")).to_contain_text("ten")
    expect(diff.locator("ins")).to_contain_text("twenty")

    page.click("#rev-1 >> text=Restore…")
    restore = page.locator("#restore-1")
    restore.locator("input[name=publish][value=yes]").check()
    restore.locator("input[name=confirm]").check()
    restore.locator("button:has-text('Restore version 1')").click()
    expect(page.locator(".flash-success")).to_contain_text("Version 1 restored as version 3 and published")
    _mark_not_reloaded(page)
    expect(page.locator("#delivery")).to_have_attribute("data-state", "published", timeout=LANDS)
    assert _not_reloaded(page)

    assert "ten euros" in _public(room, acme, "pricing").text
    restored = _document(room, acme, story["id"])
    assert (restored["version"], restored["published_version"], restored["body"]) == (3, 3, story["body"])


def test_an_editor_approves_a_waiting_brief_and_the_article_goes_public(live: LiveDashboard, page: Page) -> None:
    from playwright.sync_api import expect

    room = live.room
    acme = room.new_tenant("brief")
    required = room.api.put(
        f"/api/tenants/{acme.slug}/lanes/founders/approval", json={"required": True}, headers=acme.headers
    )
    assert required.status_code == 200, required.text
    room.start_worker(acme)
    answer = room.api.post(
        f"/api/tenants/{acme.slug}/briefs",
        json={"brief_id": "f-ship", "lane": "founders", "title": "We shipped", "notes": "Version two is out."},
        headers=acme.headers,
    )
    assert answer.status_code == 202, answer.text
    operation_id = answer.json()["operation_id"]
    room.wait_operation(acme, operation_id, ("waiting",), timeout=LANDS / 1000)
    assert _public(room, acme, "we-shipped").status_code == 404  # a draft until approved
    editor = _token(room, acme, "editor")

    _sign_in(page, live, editor)
    _nav(page, "Approvals")
    item = page.locator(f"#approval-{operation_id}")
    expect(item.locator("h2")).to_have_text("We shipped")
    item.locator("form[data-decision=approve] input[name=confirm]").check()
    item.locator("button:has-text('Approve')").click()
    expect(page.locator(".flash-success")).to_contain_text("goes on to publish")
    expect(page.locator(f"#approval-{operation_id}")).to_have_attribute("data-decided", "yes")

    assert room.wait_operation(acme, operation_id, timeout=LANDS / 1000)["status"] == "succeeded"
    assert _public(room, acme, "we-shipped").status_code == 200


def _png(path: Path) -> Path:
    Image.new("RGB", (6, 4), "green").save(path, format="PNG")
    return path


def test_an_uploaded_image_is_in_the_library_and_served_by_the_public_site(
    live: LiveDashboard, page: Page, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    room = live.room
    acme = room.new_tenant("media")
    editor = _token(room, acme, "editor")
    picture = _png(tmp_path / "harbour.png")

    _sign_in(page, live, editor)
    _nav(page, "Media")
    page.set_input_files("#file", str(picture))
    page.click("button:has-text('Upload')")
    item = page.locator(".media-item", has_text="harbour.png")
    expect(item).to_be_visible()  # the script reloads the library once every file is up
    expect(item).to_contain_text("6×4")
    item.locator("a:has-text('harbour.png')").click()
    address = page.locator("dt:has-text('Address') + dd code").inner_text().strip()
    assert address.startswith(f"{room.settings.runtime.site_url}/{acme.slug}/media/"), address

    served = room.site.get(address.removeprefix(room.settings.runtime.site_url))
    assert served.status_code == 200 and served.headers["content-type"] == "image/png"
    assert served.content == picture.read_bytes()


REASON = "Invoice 1042 is unpaid; write to billing@example.com."


def test_an_operator_suspends_a_site_and_its_editor_sees_why(
    live: LiveDashboard, page: Page, chromium: Browser
) -> None:
    from playwright.sync_api import expect

    room = live.room
    acme = room.new_tenant("suspend")
    story = room.create_document(acme, "notice", title="Notice", body="Open as usual.")
    editor = _token(room, acme, "editor")

    _sign_in(page, live, editor)
    page.click("text=Notice")
    expect(page.locator("#site-status")).to_have_count(0)

    operator_context = chromium.new_context(viewport={"width": 1280, "height": 900})
    try:
        console = operator_context.new_page()
        _sign_in(console, live, OPERATOR_TOKEN)
        console.click("text=Operator console")
        row = console.locator(f"#tenant-{acme.slug}")
        row.get_by_label(f"Why suspend {acme.slug}").fill(REASON)
        row.locator("button:has-text('Suspend')").click()
        expect(console.locator(".flash-success")).to_contain_text(f"Site {acme.slug} is suspended")
        row = console.locator(f"#tenant-{acme.slug}")
        expect(row.locator(".badge")).to_have_attribute("data-status", "suspended")
        expect(row.locator("[data-reason]")).to_have_text(REASON)
    finally:
        operator_context.close()

    # The editor's open page knew nothing of it: the save is refused in words, with the reason.
    page.fill("#body", "Closed today.")
    page.click("button:has-text('Save')")
    expect(page.locator(".flash-error")).to_contain_text("suspended by the platform's operator")
    expect(page.locator(".flash-error")).to_contain_text(REASON)
    expect(page.locator("#site-status [data-reason]")).to_have_text(REASON)
    _nav(page, "Operations")
    expect(page.locator("#site-status")).to_contain_text(REASON)  # on every page

    assert _document(room, acme, story["id"])["body"] == "Open as usual."  # nothing half-saved
    refused = room.api.post(
        f"/api/tenants/{acme.slug}/documents/{story['id']}/publish", json={"confirm": True}, headers=acme.headers
    )
    assert refused.status_code == 423 and refused.json()["error"]["code"] == "tenant_suspended"
    assert refused.json()["error"]["details"]["reason"] == REASON
