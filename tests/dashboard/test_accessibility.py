"""Accessibility of every dashboard page's server-rendered HTML, without a browser.

Pages are enumerated from the app's route table (every GET under ``/dashboard``), so a new page is checked
the day it lands, and one whose path id or query the test does not know fails asking to be taught. Each is
rendered for an owner over seeded data (the operator console for the operator, the sign-in page signed out)
and parsed with the standard library: every form control has an accessible name (a label, aria-label or
aria-labelledby), every img has alt, a page has one h1, a lang and a title, buttons say something, tables
have headers, and no id is used twice. (The browser's axe-core check is the issue's other half.)
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from typing import Any

from litestar.routes import HTTPRoute
from PIL import Image

from tests.dashboard.conftest import Browser, Dashboard
from tests.dashboard.test_health_pages import _age_history
from tests.fixtures.stack import OPERATOR_TOKEN
from tests.tenant_runtime.package_kit import Publisher

_PARAM = re.compile(r"\{(\w+):\w+\}")
# Served files (scripts, styles, a backup's tar) and the fragments htmx swaps into a page (checked as parts:
# no h1, lang or title of their own).
NOT_PAGES = {"htmx", "media_upload", "picker_script", "stylesheet", "download"}
FRAGMENTS = {"delivery"}
# Pages in a state a GET reaches besides the seeded one: (path, status).
EXTRA_STATES = (
    ("/dashboard/sites/acme/health/restore?at=soon", 400),
    ("/dashboard/sites/acme/documents/doc_00000000000000000000000000", 404),
    ("/dashboard/sites/acme/nothing-here", 404),
)
LABELLED = ("aria-label", "aria-labelledby")
_UNNAMED_INPUTS = frozenset({"hidden", "submit", "button", "reset", "image"})


@dataclass
class Findings:
    """What one page breaks, as readable sentences."""

    problems: list[str] = field(default_factory=list)


class _Checker(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: dict[str, int] = {}
        self.label_for: set[str] = set()
        self.controls: list[tuple[str, dict[str, str], bool]] = []  # tag, attrs, inside a <label>
        self.label_depth = 0
        self.h1 = 0
        self.lang: str | None = None
        self.title = ""
        self.in_title = False
        self.images: list[dict[str, str]] = []
        self.buttons: list[tuple[dict[str, str], str]] = []
        self.button: tuple[dict[str, str], list[str]] | None = None
        self.tables: list[list[int]] = []  # per open table: [th count]
        self.headless_tables = 0
        self.references: list[tuple[str, str]] = []  # (attribute, id) a label or aria attribute points at

    def handle_starttag(self, tag: str, raw: list[tuple[str, str | None]]) -> None:
        attrs = {k: v or "" for k, v in raw}
        if "id" in attrs:
            self.ids[attrs["id"]] = self.ids.get(attrs["id"], 0) + 1
        for name in ("aria-labelledby", "aria-describedby", "aria-controls"):
            self.references += [(name, ref) for ref in attrs.get(name, "").split()]
        if tag == "html":
            self.lang = attrs.get("lang", "")
        elif tag == "title":
            self.in_title = True
        elif tag == "h1":
            self.h1 += 1
        elif tag == "label":
            self.label_depth += 1
            if attrs.get("for"):
                self.label_for.add(attrs["for"])
                self.references.append(("label for", attrs["for"]))
        elif tag in ("input", "select", "textarea"):
            self.controls.append((tag, attrs, self.label_depth > 0))
        elif tag == "img":
            self.images.append(attrs)
        elif tag == "button":
            self.button = (attrs, [])
        elif tag == "table":
            self.tables.append([0])
        elif tag == "th" and self.tables:
            self.tables[-1][0] += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        elif tag == "label":
            self.label_depth = max(0, self.label_depth - 1)
        elif tag == "button" and self.button is not None:
            self.buttons.append((self.button[0], " ".join(self.button[1]).strip()))
            self.button = None
        elif tag == "table" and self.tables and self.tables.pop()[0] == 0:
            self.headless_tables += 1

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title += data
        if self.button is not None:
            self.button[1].append(data.strip())


def _named(attrs: dict[str, str]) -> bool:
    return any(attrs.get(a, "").strip() for a in LABELLED)


def check(html: str, *, fragment: bool = False) -> list[str]:
    """The accessibility problems of one page (or htmx fragment), in words."""
    parser = _Checker()
    parser.feed(html)
    parser.close()
    problems = [f"id {i!r} is used {n} times" for i, n in parser.ids.items() if n > 1]
    problems += [f"{attr}={ref!r} names no element" for attr, ref in parser.references if ref not in parser.ids]
    for tag, attrs, wrapped in parser.controls:
        kind = attrs.get("type", "text").lower()
        if tag == "input" and kind in _UNNAMED_INPUTS:
            if kind in ("submit", "button", "reset") and not (attrs.get("value", "").strip() or _named(attrs)):
                problems.append(f"an input type={kind} has no value or aria-label")
            if kind == "image" and not attrs.get("alt", "").strip():
                problems.append("an input type=image has no alt")
            continue
        if not (wrapped or attrs.get("id", "") in parser.label_for or _named(attrs)):
            problems.append(f"a <{tag} name={attrs.get('name', '')!r}> has no label, aria-label or aria-labelledby")
    problems += [f"an img ({img.get('src', '')!r}) has no alt" for img in parser.images if "alt" not in img]
    for attrs, text in parser.buttons:
        if not (text or _named(attrs) or attrs.get("title", "").strip()):
            problems.append(f"a button ({attrs}) has no text")
    if parser.headless_tables:
        problems.append(f"{parser.headless_tables} table(s) without a <th>")
    if not fragment:
        if parser.h1 != 1:
            problems.append(f"{parser.h1} h1 elements (one expected)")
        if not (parser.lang or "").strip():
            problems.append("<html> has no lang")
        if not parser.title.strip():
            problems.append("no <title>")
    return problems


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (3, 2), "red").save(out, format="PNG")
    return out.getvalue()


def _ok(response: Any, status: int = 201) -> dict[str, Any]:
    assert response.status_code == status, response.text
    return dict(response.json())


def _seed(dashboard: Dashboard, token: str) -> tuple[dict[str, str], dict[str, str]]:
    """A site with a published and edited page, a scheduled release, media, a brief, a field migration, a
    webhook, a member and a token, and a platform package key: the path ids of every page, and the query a page
    cannot do without."""
    api, t = dashboard.client, "/api/tenants/acme"
    headers = {"Authorization": f"Bearer {token}"}
    page = _ok(
        api.post(
            f"{t}/documents", headers=headers, json={"slug": "about", "title": "About", "body": "Hi", "kind": "page"}
        )
    )
    published = _ok(api.post(f"{t}/documents/{page['id']}/publish", headers=headers, json={"confirm": True}), 202)
    _ok(api.put(f"{t}/documents/{page['id']}", headers=headers, json={"version": 1, "body": "Edited"}), 200)
    draft = _ok(
        api.post(
            f"{t}/documents", headers=headers, json={"slug": "draft", "title": "Draft", "body": "", "kind": "post"}
        )
    )
    _ok(
        api.post(
            f"{t}/releases",
            headers=headers,
            json={
                "documents": [{"id": draft["id"], "version": 1}],
                "confirm": True,
                "publish_at": (datetime.now(UTC) + timedelta(days=1)).isoformat(),
            },
        ),
        202,
    )
    media = _ok(api.post(f"{t}/media", headers=headers, files={"file": ("logo.png", _png(), "image/png")}))
    _ok(api.post(f"{t}/briefs", headers=headers, json={"brief_id": "brief-1", "lane": "news", "title": "Brief"}), 202)
    _ok(
        api.post(
            f"{t}/fields/migrations",
            headers=headers,
            json={"kind": "post", "change": "add", "field": "subtitle", "type": "text", "confirm": True},
        ),
        202,
    )
    _ok(api.post(f"{t}/webhooks", headers=headers, json={"url": "https://hooks.example/hook"}))
    member = _ok(api.post(f"{t}/members", headers=headers, json={"name": "Vera", "role": "viewer"}))
    minted = _ok(api.post(f"{t}/tokens", headers=headers, json={"member_id": member["member"]["id"], "label": "ci"}))
    operator = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}
    key = _ok(api.post("/ops/package-keys", headers=operator, json={"public_key": Publisher().public_key, "name": "V"}))
    ids = {
        "tenant": "acme",
        "document_id": page["id"],
        "operation_id": published["operation_id"],
        "media_id": media["id"],
        "lane": "news",
        "member_id": member["member"]["id"],
        "token_id": minted["id"],
        "key_id": key["key_id"],
    }
    _age_history(dashboard, 1)  # so that ten minutes ago has a site to restore to
    at = (datetime.now(UTC) - timedelta(minutes=10)).strftime("%Y-%m-%dT%H:%M")
    queries = {"review": f"doc={page['id']}:2&navigation=1", "restore_preview": f"at={at}"}
    return ids, queries


def _pages(dashboard: Dashboard) -> list[tuple[str, str]]:
    """(handler name, path template) of every GET page under /dashboard."""
    found = []
    for route in dashboard.client.app.routes:
        if isinstance(route, HTTPRoute) and route.path.startswith("/dashboard"):
            for method, (handler, _) in route.route_handler_map.items():
                if method == "GET" and handler.handler_name not in NOT_PAGES:
                    found.append((handler.handler_name, route.path))
    return sorted(found, key=lambda page: page[1])


def test_every_dashboard_page_names_its_controls_and_has_one_h1_a_lang_and_a_title(dashboard: Dashboard) -> None:
    token = dashboard.tenant("acme")
    ids, queries = _seed(dashboard, token)
    owner = dashboard.browser(token)
    operator = dashboard.browser(OPERATOR_TOKEN)
    anonymous = dashboard.browser()
    pages = _pages(dashboard)
    assert len(pages) > 25  # the route table, not a list kept by hand

    problems: dict[str, list[str]] = {}
    for name, template in pages:
        unknown = [p for p in _PARAM.findall(template) if p not in ids]
        assert not unknown, f"teach this test a value for {unknown} ({template})"
        path = _PARAM.sub(lambda m: ids[m.group(1)], template)
        if name in queries:
            path += "?" + queries[name]
        browser: Browser = (
            anonymous if name == "login_form" else operator if template.startswith("/dashboard/ops") else owner
        )
        response = browser.get(path)
        assert response.status_code == 200, (path, response.status_code, response.text[:500])
        found = check(response.text, fragment=name in FRAGMENTS)
        if found:
            problems[path] = found
    for path, status in EXTRA_STATES:  # a field error shown in place, a missing page
        response = owner.get(path)
        assert response.status_code == status, (path, response.status_code)
        if found := check(response.text):
            problems[path] = found
    assert not problems, "\n".join(f"{path}: {'; '.join(found)}" for path, found in problems.items())


def test_the_checker_finds_what_it_looks_for() -> None:
    bad = (
        '<html><head></head><body><h1>A</h1><h1>B</h1><input name="q"><select name="s"></select>'
        '<img src="x.png"><button></button><table><tr><td>1</td></tr></table><p id="a"></p><p id="a"></p></body></html>'
    )
    good = (
        '<html lang="en"><head><title>T</title></head><body><h1>A</h1><label for="q">Search</label>'
        '<input id="q" name="q"><label>Sort <select name="s"></select></label><textarea aria-label="Body"></textarea>'
        '<input type="hidden" name="csrf_token"><img src="x.png" alt=""><button aria-label="Close">×</button>'
        "<table><tr><th>N</th></tr></table></body></html>"
    )

    found = check(bad)

    assert check(good) == []
    assert len(found) == 9, found
    assert any("'q'" in p for p in found) and any("2 h1" in p for p in found) and any("'a'" in p for p in found)
