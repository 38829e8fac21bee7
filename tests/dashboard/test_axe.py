"""axe-core in Debian's Chromium on every dashboard page: zero serious or critical violations.

The pages are the route table's (``test_accessibility._pages``: every GET under ``/dashboard``), over the same
seeded site (a published and edited page, a scheduled release, media, a brief, a field migration, a webhook,
a member and a token), each visited as the role that sees it: the owner for a site's pages, the operator for
the console, nobody for the sign-in page. axe-core comes from the npm registry (``tests/dashboard/axe``,
installed by ``make system-deps`` with ``npm ci``) and is injected by Playwright into the served page.

The keyboard checks walk the key pages with Tab: the skip link comes first and lands on ``main``, the page's
main actions follow the navigation in reading order, and the focused element has a visible outline.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from control_plane.app import create_app
from control_plane.container import Services
from dispatch.prefect_twin import RecordingPrefect
from tests.dashboard.conftest import OPERATOR, Dashboard
from tests.dashboard.test_accessibility import _PARAM, EXTRA_STATES, FRAGMENTS, _pages, _seed
from tests.fixtures.live_server import serve
from tests.fixtures.stack import OPERATOR_TOKEN

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page

pytestmark = pytest.mark.integration

AXE = Path(__file__).parent / "axe" / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = ("serious", "critical")
# Fragments htmx swaps into a page are checked in their page; alone they are not documents (no lang, title…).
SKIPPED_RULES_FOR_FRAGMENTS = ["document-title", "html-has-lang", "landmark-one-main", "page-has-heading-one", "region"]


@dataclass
class Served:
    """The seeded dashboard over a socket: its URL, the path ids and queries of every page."""

    url: str
    dashboard: Dashboard
    token: str
    ids: dict[str, str]
    queries: dict[str, str]


@pytest.fixture
def served(dashboard: Dashboard) -> Iterator[Served]:
    """The seeded site, served by a second app over the same data (its own services, as a process would be)."""
    token = dashboard.tenant("acme")
    ids, queries = _seed(dashboard, token)
    settings = dashboard.services.settings
    services = Services.build(
        settings, factory=dashboard.factory, migrate=False, prefect=RecordingPrefect(), relay_prefect=RecordingPrefect()
    )
    try:
        with serve(create_app(settings, services=services)) as url:
            yield Served(url, dashboard, token, ids, queries)
    finally:
        services.engine.dispose()


def _signed_in(chromium: Browser, url: str, token: str | None) -> BrowserContext:
    # bypass_csp: the dashboard's CSP (script-src 'self') rightly refuses the injected axe script.
    context = chromium.new_context(viewport={"width": 1280, "height": 800}, bypass_csp=True)
    if token is not None:
        page = context.new_page()
        page.goto(f"{url}/dashboard/login")
        page.fill("#token", token)
        page.click("button:has-text('Sign in')")
        page.wait_for_load_state()
        assert "/login" not in page.url, page.content()[:500]
        page.close()
    return context


def axe_violations(page: Page, *, fragment: bool = False) -> list[dict[str, Any]]:
    """axe-core's serious and critical violations on the loaded page."""
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: run `make system-deps` (npm ci in tests/dashboard/axe)")
    page.add_script_tag(path=str(AXE))
    options: dict[str, Any] = {"resultTypes": ["violations"]}
    if fragment:
        options["rules"] = {rule: {"enabled": False} for rule in SKIPPED_RULES_FOR_FRAGMENTS}
    result = page.evaluate("options => axe.run(document, options)", options)
    return [v for v in result["violations"] if v.get("impact") in BLOCKING]


def with_axe(context: BrowserContext) -> BrowserContext:
    """Every page the context loads from now on has axe-core, whatever its CSP (see axe_violations_under_csp)."""
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: run `make system-deps` (npm ci in tests/dashboard/axe)")
    context.add_init_script(path=str(AXE))
    return context


def axe_violations_under_csp(page: Page) -> list[dict[str, Any]]:
    """As ``axe_violations``, on a page whose CSP is enforced (no ``bypass_csp``): axe is put in by the context's
    init script (``with_axe``), which DevTools evaluates, not a script tag the page's ``script-src 'self'`` refuses;
    the page is as served, so htmx under that CSP is what is checked."""
    result = page.evaluate("() => axe.run(document, {resultTypes: ['violations']})")
    return [v for v in result["violations"] if v.get("impact") in BLOCKING]


def describe(path: str, violations: list[dict[str, Any]]) -> list[str]:
    """One line per failing node: page, rule, impact, target and axe's summary of what to fix."""
    lines = []
    for violation in violations:
        for node in violation["nodes"]:
            summary = (node.get("failureSummary") or violation["help"]).replace("\n", " ")
            lines.append(f"{path}: {violation['id']} ({violation['impact']}) at {node['target']}: {summary}")
    return lines


def test_every_dashboard_page_has_no_serious_or_critical_axe_violation(served: Served, chromium: Browser) -> None:
    pages = _pages(served.dashboard)
    assert len(pages) > 25  # the route table, not a list kept by hand
    contexts = {
        "owner": _signed_in(chromium, served.url, served.token),
        "operator": _signed_in(chromium, served.url, OPERATOR_TOKEN),
        "anonymous": _signed_in(chromium, served.url, None),
    }
    found: list[str] = []
    visited = 0
    for name, template in pages:
        unknown = [p for p in _PARAM.findall(template) if p not in served.ids]
        assert not unknown, f"teach test_accessibility._seed a value for {unknown} ({template})"
        path = _PARAM.sub(lambda m: served.ids[m.group(1)], template)
        if name in served.queries:
            path += "?" + served.queries[name]
        role = "anonymous" if name == "login_form" else "operator" if template.startswith("/dashboard/ops") else "owner"
        page = contexts[role].new_page()
        response = page.goto(served.url + path)
        assert response is not None and response.status == 200, (path, response and response.status)
        found += describe(path, axe_violations(page, fragment=name in FRAGMENTS))
        visited += 1
        page.close()
    for path, status in EXTRA_STATES:  # a field error shown in place, a missing page
        page = contexts["owner"].new_page()
        response = page.goto(served.url + path)
        assert response is not None and response.status == status, path
        found += describe(path, axe_violations(page))
        page.close()
    for context in contexts.values():
        context.close()
    assert visited == len(pages)
    assert not found, f"{len(found)} serious/critical axe violations:\n" + "\n".join(found)


def test_the_check_finds_a_serious_violation(chromium: Browser) -> None:
    page = chromium.new_page()
    page.set_content(
        '<html lang="en"><head><title>T</title></head><body><main><h1>T</h1>'
        '<p style="color:#bbb;background:#fff">faint</p><input name="q"><button></button></main></body></html>'
    )
    rules = {v["id"] for v in axe_violations(page)}
    page.close()
    assert {"color-contrast", "label", "button-name"} <= rules, rules


def _tab_stops(page: Page, count: int) -> list[dict[str, Any]]:
    """The next ``count`` elements Tab focuses (fewer at the page's end): their tag, text or name, and whether
    the focus is visible."""
    stops: list[dict[str, Any]] = []
    for _ in range(count):
        page.keyboard.press("Tab")
        stops.append(
            page.evaluate(
                """() => {
                const el = document.activeElement;
                const style = getComputedStyle(el);
                const field = ['input', 'select', 'textarea'].includes(el.tagName.toLowerCase());
                const label = el.labels && el.labels.length ? el.labels[0].innerText : '';
                const text = field
                  ? (label || el.getAttribute('aria-label') || el.value || '')
                  : (el.innerText || el.value || el.getAttribute('aria-label') || '');
                return {
                  tag: el.tagName.toLowerCase(),
                  text: text.trim(),
                  id: el.id,
                  href: el.getAttribute('href') || '',
                  inMain: !!el.closest('main'),
                  outline: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2,
                  visible: el.getBoundingClientRect().width > 0 && el.getBoundingClientRect().left >= 0,
                };
            }"""
            )
        )
        if stops[-1]["tag"] == "body":  # past the last stop
            stops.pop()
            break
    return stops


def _first_in_main(stops: list[dict[str, Any]]) -> int:
    return next(i for i, stop in enumerate(stops) if stop["inMain"])


def _at(texts: list[str], start: str) -> int:
    """Where the first stop whose text (or label) starts with ``start`` is."""
    return next((i for i, text in enumerate(texts) if text.startswith(start)), -1)


def test_keyboard_reaches_the_skip_link_first_and_it_lands_on_main(served: Served, chromium: Browser) -> None:
    context = _signed_in(chromium, served.url, served.token)
    page = context.new_page()
    page.goto(f"{served.url}/dashboard/sites/acme")
    stops = _tab_stops(page, 1)
    assert stops[0]["text"] == "Skip to content" and stops[0]["href"] == "#main", stops
    assert stops[0]["visible"] and stops[0]["outline"], "the skip link is shown with a focus outline when focused"
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")  # from main, the next stop is the page's own first action, past the navigation
    assert page.evaluate("() => !!document.activeElement.closest('main')"), "Tab after the skip link stays in main"
    context.close()


def test_tab_order_on_the_documents_list_and_editor_is_navigation_then_main_actions(
    served: Served, chromium: Browser
) -> None:
    context = _signed_in(chromium, served.url, served.token)
    page = context.new_page()
    page.goto(f"{served.url}/dashboard/sites/acme")
    stops = _tab_stops(page, 40)
    texts = [stop["text"] for stop in stops]
    assert all(stop["outline"] for stop in stops), [s for s in stops if not s["outline"]]
    start = _first_in_main(stops)
    assert texts[:2] == ["Skip to content", "Pressroom"], texts
    assert "Documents" in texts[:start] and "Sign out" in texts[:start], "the navigation comes before main"
    main = texts[start:]
    assert main.index("New document") < main.index("Search"), main  # the heading's action, then the filters
    assert "About" in main and main.index("Search") < main.index("About"), main  # then the rows

    page.goto(f"{served.url}/dashboard/sites/acme/documents/{served.ids['document_id']}")
    stops = _tab_stops(page, 60)
    main = [stop["text"] for stop in stops[_first_in_main(stops) :]]
    assert all(stop["outline"] for stop in stops), [s for s in stops if not s["outline"]]
    title, slug, body, save = (_at(main, name) for name in ("Title", "Slug", "Body", "Save"))
    assert 0 <= title < slug < body < save, main  # the form reads top to bottom, Save after what it saves
    assert save < _at(main, "Publish version"), main  # then the public-site actions
    context.close()


VIEWER_PAGES = (
    "",
    "documents/{document_id}",
    "media",
    "media/{media_id}",
    "operations/{operation_id}",
    "site",
    "lanes",
)


def test_a_viewers_pages_with_their_controls_disabled_have_no_serious_or_critical_violation(
    served: Served, chromium: Browser
) -> None:
    viewer = served.dashboard.services.tenants.issue_token(OPERATOR, "acme", "viewer").token
    context = _signed_in(chromium, served.url, viewer)
    found: list[str] = []
    for template in VIEWER_PAGES:
        path = "/dashboard/sites/acme/" + template.format(**served.ids)
        page = context.new_page()
        response = page.goto(served.url + path)
        assert response is not None and response.status == 200, path
        found += describe(f"{path} (viewer)", axe_violations(page))
        page.close()
    context.close()
    assert not found, "\n".join(found)
