"""``make screenshots``: the dashboard's main pages over a seeded site, as PNGs in docs/dashboard/.

Starts the control plane (dashboard included, the recording twin in place of Prefect; runs are settled the
way a worker settles them) on a private data directory, served by uvicorn on 127.0.0.1; fills site
``harbour-times`` through the API (posts and pages, published, edited, a scheduled release, images, a brief,
members, a failed and a dead delivery); then Debian's Chromium (Playwright, never ``playwright install``)
signs in as the owner (and as the operator for the console) and writes one 1280×800 PNG per page,
quantised with Pillow when that keeps it small.

    PYTHONPATH=. python scripts/dashboard_screenshots.py [OUT_DIR]     # default docs/dashboard
"""

from __future__ import annotations

import io
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import uvicorn
from PIL import Image, ImageDraw
from sqlmodel import select

from benchmarks.dashboard_site import OPERATOR_TOKEN, Site, api_call, dashboard_site
from control_plane.app import create_app
from control_plane.local import free_port
from control_plane.public.app import create_site_app
from tenant_runtime.actions import operations as operation_actions
from tenant_runtime.workflows import Carried
from tenant_runtime.workspace import Operation

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
SLUG = "harbour-times"
VIEWPORT = {"width": 1280, "height": 800}
MAX_BYTES = 150_000  # a PNG above this is quantised to 256 colours (text and flat UI survive it)
POSTS = [
    ("Council approves the new harbour ferry timetable", "news"),
    ("Five things to know before the river festival", "guide"),
    ("School budget: where the money goes this year", "analysis"),
    ("Museum night returns with free entry after dark", "culture"),
    ("Transit strike talks resume on Monday", "news"),
    ("Housing plan for the old market district, explained", "analysis"),
    ("Climate week: what the city measured", "data"),
    ("Election guide: polling stations and opening hours", "guide"),
    ("Letters: the bridge works, the buses and the bins", "opinion"),
    ("Harbour walk opens its last stretch", "news"),
]
BODY = """# {title}

The city council met on Tuesday evening and, after **two hours** of debate, voted 7 to 2.

- What changes: the timetable, the fares and the night service
- When: from the first of the month
- Who decides next: the transport committee

> "We listened to the people who take the boat every day," the chair said.

Read the [full minutes](https://example.org/minutes) for every vote.
"""


def _image(label: str, colour: tuple[int, int, int]) -> bytes:
    image = Image.new("RGB", (480, 320), colour)
    draw = ImageDraw.Draw(image)
    for i in range(0, 480, 24):
        draw.line([(i, 320), (i + 160, 0)], fill=tuple(min(255, c + 30) for c in colour), width=6)
    draw.rectangle([16, 248, 464, 304], fill=(255, 255, 255))
    draw.text((28, 266), label, fill=(17, 24, 39))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def _settle(site: Site, *, failed: int = 0, dead: int = 0) -> None:
    """What workers do: every sent operation claimed and finished; the oldest ``failed``/``dead`` break."""
    site.services.handoff.flush()
    with site.factory.open(SLUG).transaction() as tx:
        ops = [op for op in tx.exec(select(Operation).where(Operation.status == "queued")) if op.flow_run_id]
        for n, op in enumerate(sorted(ops, key=lambda o: o.created_at)):
            carried = Carried(operation_id=op.id, workflow=op.flow_name, fields={})
            operation_actions.claim(tx, carried, flow_run_id=op.flow_run_id)
            if n < failed + dead:
                operation_actions.fail(
                    tx,
                    op.id,
                    step="render_pages",
                    error_code="render_failed",
                    error_message="The template 'post.html' has an unclosed block at line 42.",
                    max_retries=0 if n < dead else 3,
                    next_attempt_at=None if n < dead else datetime.now(UTC) + timedelta(minutes=5),
                )
            else:
                operation_actions.finish(tx, op.id, "succeeded", step="purge_aggregates")


def seed(site: Site) -> dict[str, str]:
    """The site the pictures show; returns the ids the page paths need."""
    token = site.tenant(SLUG, "The Harbour Times")
    site.tenant("river-gazette", "River Gazette")
    t = f"/api/tenants/{SLUG}"
    docs = []
    for n, (title, tag) in enumerate(POSTS):
        slug = "-".join(title.lower().replace(":", "").replace(",", "").split()[:5])
        body = BODY.format(title=title) + f"\n\nFiled under *{tag}*."
        docs.append(
            api_call(
                site,
                token,
                "POST",
                f"{t}/documents",
                201,
                json={"slug": slug, "title": title, "body": body, "kind": "post" if n % 4 else "page"},
            )
        )
    for doc in docs[:7]:
        api_call(site, token, "POST", f"{t}/documents/{doc['id']}/publish", 202, json={"confirm": True})
        site.services.handoff.flush()
    _settle(site, failed=1, dead=1)
    for doc in docs[:2]:
        edited = BODY.format(title=doc["title"]).replace("7 to 2", "8 to 1") + "\n\n*Updated with the final vote.*"
        api_call(site, token, "PUT", f"{t}/documents/{doc['id']}", 200, json={"version": 1, "body": edited})
    api_call(
        site,
        token,
        "POST",
        f"{t}/releases",
        202,
        json={
            "documents": [{"id": docs[8]["id"], "version": 1}],
            "confirm": True,
            "publish_at": (datetime.now(UTC) + timedelta(days=2)).replace(hour=7, minute=0).isoformat(),
        },
    )
    media = None
    for label, colour in (
        ("Harbour ferry", (47, 91, 234)),
        ("River festival", (6, 118, 71)),
        ("Museum night", (181, 71, 8)),
        ("Old market", (71, 84, 103)),
    ):
        name = label.lower().replace(" ", "-") + ".png"
        media = api_call(
            site, token, "POST", f"{t}/media", 201, files={"file": (name, _image(label, colour), "image/png")}
        )
    api_call(
        site,
        token,
        "POST",
        f"{t}/briefs",
        202,
        json={"brief_id": "ferry-followup", "lane": "news", "title": "Ferry timetable: reactions"},
    )
    api_call(
        site,
        token,
        "POST",
        f"{t}/members",
        201,
        json={"name": "Vera Lindqvist", "role": "editor", "email": "vera@example.org"},
    )
    api_call(site, token, "POST", f"{t}/members", 201, json={"name": "Sam Okafor", "role": "viewer"})
    _settle(site)
    assert media is not None
    return {"token": token, "document": docs[0]["id"], "media": media["id"]}


def _optimise(path: Path) -> None:
    if path.stat().st_size <= MAX_BYTES:
        return
    with Image.open(path) as image:
        small = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    small.save(path, format="PNG", optimize=True)


def shoot(url: str, ids: dict[str, str], out: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright

    s = f"/dashboard/sites/{SLUG}"
    owner_pages = {
        "documents": f"{s}/",
        "editor": f"{s}/documents/{ids['document']}",
        "publish-confirm": f"{s}/documents/{ids['document']}/publish",
        "revisions": f"{s}/documents/{ids['document']}/revisions",
        "releases": f"{s}/releases",
        "operations": f"{s}/operations",
        "media": f"{s}/media",
        "briefs": f"{s}/briefs",
        "lanes": f"{s}/lanes",
        "health": f"{s}/health",
        "site": f"{s}/site",
        "members": f"{s}/members",
        "audit": f"{s}/audit",
    }
    written = []
    out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for token, pages in ((ids["token"], owner_pages), (OPERATOR_TOKEN, {"operator-console": "/dashboard/ops"})):
                context = browser.new_context(viewport=VIEWPORT)  # type: ignore[arg-type]
                page = context.new_page()
                page.goto(f"{url}/dashboard/login")
                if not written:
                    path = out / "login.png"
                    page.screenshot(path=str(path))
                    written.append(path)
                page.fill("#token", token)
                page.click("button:has-text('Sign in')")
                page.wait_for_load_state()
                for name, path_ in pages.items():
                    page.goto(url + path_)
                    page.wait_for_load_state("networkidle")
                    target = out / f"{name}.png"
                    page.screenshot(path=str(target))
                    written.append(target)
                context.close()
        finally:
            browser.close()
    for path in written:
        _optimise(path)
    return written


def _serve(app: Any, port: int) -> tuple[uvicorn.Server, threading.Thread]:
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError(f"a server did not start on port {port}")
        time.sleep(0.05)
    return server, thread


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else Path("docs/dashboard")
    dashboard_port, site_port = free_port(), free_port()
    site_url = f"http://127.0.0.1:{site_port}"  # the public site serves the media the library shows
    with tempfile.TemporaryDirectory(prefix="pressroom-shots-") as root, dashboard_site(Path(root), site_url) as site:
        ids = seed(site)
        settings = site.services.settings
        servers = [
            _serve(create_app(settings, services=site.services), dashboard_port),
            _serve(create_site_app(settings, factory=site.factory), site_port),
        ]
        try:
            written = shoot(f"http://127.0.0.1:{dashboard_port}", ids, out)
        finally:
            for server, thread in servers:
                server.should_exit = True
                thread.join(10)
    for path in written:
        print(f"{path} {path.stat().st_size // 1024} KiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
