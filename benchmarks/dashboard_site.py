"""An in-process control plane with the dashboard, and a tenant filled to a newsroom's size in seconds.

The app is the one ``pressroom serve`` runs (``create_app`` over ``Services.build``) on a private data
directory, with the recording twin in place of Prefect: dashboard pages read the tenant's workspace and the
control-plane database, never Prefect. A tenant is made real first (created, a document published, a media
file uploaded, a brief accepted, a member invited, all through the API), then its workspace is bulk-filled
(``INSERT`` of many rows per statement) with copies of those rows: documents, operations, media, briefs and
audit entries with spread timestamps and a mix of statuses, so that every list page has its real shape.
"""

from __future__ import annotations

import asyncio
import io
import random
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from litestar.testing import TestClient
from PIL import Image
from sqlalchemy import insert
from sqlmodel import select

from control_plane.app import create_app
from control_plane.auth import Principal
from control_plane.container import Services
from control_plane.settings import ControlPlaneSettings, Settings
from dispatch.prefect_twin import RecordingPrefect
from dispatch.settings import DispatchSettings
from tenant_runtime.ids import new_id
from tenant_runtime.settings import RuntimeSettings
from tenant_runtime.storage.factory import StorageSettings
from tenant_runtime.workspace import WorkspaceFactory
from tenant_runtime.workspace.lane_models import Brief
from tenant_runtime.workspace.media_models import Media
from tenant_runtime.workspace.models import AuditEntry, Document, Operation

OPERATOR_TOKEN = "pro_bench-operator-token-0123456789"
OPERATOR = Principal(token_id="bench-operator", kind="operator")
ORIGIN = "http://dashboard.bench"
BATCH = 2_000
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
# The mix of a site that has run a while: most operations done, some failed or dead, a few scheduled.
OPERATION_STATUSES = ("succeeded",) * 90 + ("failed",) * 4 + ("dead",) * 3 + ("cancelled",) * 2 + ("scheduled",)
WORDS = [
    "market",
    "election",
    "river",
    "budget",
    "council",
    "school",
    "harbour",
    "festival",
    "transit",
    "housing",
    "climate",
    "museum",
]


def settings_for(root: Path, site_url: str = "http://site.bench") -> Settings:
    """A private control plane: SQLite control-plane database, filesystem store, no Prefect reachable."""
    runtime = RuntimeSettings(data_dir=root, storage=StorageSettings(root=root / "objects"), site_url=site_url)
    dispatch = DispatchSettings(api_url="http://127.0.0.1:9/api", ui_url="http://127.0.0.1:9")
    control = ControlPlaneSettings(database_url=f"sqlite:///{root / 'control-plane.db'}", operator_token=OPERATOR_TOKEN)
    return Settings(runtime=runtime, dispatch=dispatch, control_plane=control)


@dataclass
class Site:
    """The served app and what a signed-in owner needs to read it."""

    services: Services
    client: TestClient[Any]
    factory: WorkspaceFactory

    def tenant(self, slug: str, name: str | None = None) -> str:
        """A new site ``slug``; returns an owner token."""
        asyncio.run(self.services.tenants.create(OPERATOR, slug, name or f"Site {slug}"))
        return self.services.tenants.issue_token(OPERATOR, slug, "owner").token

    def browser(self, token: str) -> TestClient[Any]:
        """A signed-in dashboard session sharing the app (its own cookies)."""
        client: TestClient[Any] = TestClient(self.client.app, base_url=ORIGIN)
        page = client.get("/dashboard/login")
        csrf = _CSRF.search(page.text)
        assert csrf is not None, page.text[:300]
        signed = client.post(
            "/dashboard/login", data={"token": token, "csrf_token": csrf.group(1)}, headers={"Origin": ORIGIN}
        )
        if signed.status_code != 200 or "/login" in str(signed.url):
            raise RuntimeError(f"sign-in failed: {signed.status_code} {signed.text[:300]}")
        return client


@contextmanager
def dashboard_site(root: Path, site_url: str = "http://site.bench") -> Iterator[Site]:
    """The control plane's app under a TestClient, over a fresh data directory in ``root``."""
    settings = settings_for(root, site_url)
    factory = WorkspaceFactory(settings.runtime)
    services = Services.build(settings, factory=factory, prefect=RecordingPrefect(), relay_prefect=RecordingPrefect())
    try:
        with TestClient(create_app(settings, services=services), base_url=ORIGIN) as client:
            yield Site(services, client, factory)
    finally:
        services.engine.dispose()


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (32, 24), (47, 91, 234)).save(out, format="PNG")
    return out.getvalue()


def api_call(site: Site, token: str, method: str, path: str, status: int, **kwargs: Any) -> dict[str, Any]:
    """``method path`` as ``token``'s bearer; its JSON answer, or RuntimeError unless it answered ``status``."""
    response = site.client.request(method, path, headers={"Authorization": f"Bearer {token}"}, **kwargs)
    if response.status_code != status:
        raise RuntimeError(f"{method} {path}: {response.status_code} {response.text[:300]}")
    return dict(response.json())


def make_real(site: Site, slug: str, token: str) -> None:
    """One of everything through the API: the rows the bulk fill copies."""
    t = f"/api/tenants/{slug}"
    doc = api_call(site, token, "POST", f"{t}/documents", 201, json={"slug": "seed", "title": "Seed", "body": "Hi"})
    api_call(site, token, "POST", f"{t}/documents/{doc['id']}/publish", 202, json={"confirm": True})
    api_call(site, token, "POST", f"{t}/media", 201, files={"file": ("seed.png", _png(), "image/png")})
    api_call(
        site,
        token,
        "POST",
        f"{t}/briefs",
        202,
        json={"brief_id": f"seed-{slug}", "lane": "news", "title": "Seed brief"},
    )
    api_call(site, token, "POST", f"{t}/members", 201, json={"name": "Vera", "role": "editor"})
    site.services.handoff.flush()


def _row(model: Any) -> dict[str, Any]:
    return {column.name: getattr(model, column.name) for column in model.__table__.columns}


def _insert(tx: Any, table: Any, rows: list[dict[str, Any]]) -> None:
    for start in range(0, len(rows), BATCH):
        tx.execute(insert(table), rows[start : start + BATCH])


def fill(
    site: Site, slug: str, *, documents: int, operations: int, media: int, briefs: int, audit: int
) -> dict[str, int]:
    """Bulk-insert copies of the tenant's real rows; returns the counts now in the workspace."""
    rng = random.Random(15)
    now = datetime.now(UTC)
    ws = site.factory.open(slug)
    with ws.reader() as tx:
        doc = _row(tx.exec(select(Document)).first())
        ops = [_row(op) for op in tx.exec(select(Operation))]
        medium = _row(tx.exec(select(Media)).first())
        brief = _row(tx.exec(select(Brief)).first())
        entry = _row(tx.exec(select(AuditEntry)).first())
    publish = next(op for op in ops if op["kind"] == "publish")
    article = next(op for op in ops if op["id"] == brief["operation_id"])

    def ago(i: int, total: int, span_days: int = 365) -> datetime:
        return now - timedelta(seconds=span_days * 86_400 * (total - i) / max(1, total))

    doc_rows, doc_ids = [], []
    for i in range(documents):
        words = " ".join(rng.choice(WORDS) for _ in range(3))
        published = rng.random() < 0.6
        version = rng.randint(1, 5)
        doc_id = new_id("doc")
        doc_ids.append(doc_id)
        doc_rows.append(
            doc
            | {
                "id": doc_id,
                "slug": f"{words.replace(' ', '-')}-{i}",
                "title": f"{words.title()} {i}",
                "body": f"Story {i} about {words}.",
                "kind": "post" if i % 5 else "page",
                "status": "published" if published else "draft",
                "version": version,
                "published_version": (version - (i % 3 == 0 and version > 1)) if published else None,
                "published_at": ago(i, documents) if published else None,
                "created_at": ago(i, documents),
                "updated_at": ago(i, documents),
            }
        )
    op_rows = []
    brief_ops = set(rng.sample(range(operations), min(briefs, operations)))  # a brief's run is an operation too
    for i in range(operations):
        status = rng.choice(OPERATION_STATUSES)
        created = ago(i, operations)
        document_id = rng.choice(doc_ids) if doc_ids else None
        template = article if i in brief_ops else publish
        op_rows.append(
            template
            | {
                "id": new_id("op"),
                "status": status,
                "document_id": document_id,
                "parameters": template["parameters"] | {"document_id": document_id},
                "idempotency_key": f"bench-{i}",
                "flow_run_id": None,
                "batch_id": None,
                "sent_at": created,
                "scheduled_for": created + timedelta(days=400) if status == "scheduled" else None,
                "error_code": "render_failed" if status in ("failed", "dead") else None,
                "error_message": "The renderer gave up." if status in ("failed", "dead") else None,
                "created_at": created,
                "updated_at": created,
                "finished_at": None if status == "scheduled" else created + timedelta(seconds=2),
            }
        )
    media_rows = [
        medium
        | {
            "id": new_id("med"),
            "name": f"{rng.choice(WORDS)}-{i}.png",
            "created_at": ago(i, media),
            "status": "deleted" if i % 20 == 0 else "active",
            "deleted_at": ago(i, media) if i % 20 == 0 else None,
        }
        for i in range(media)
    ]
    runs = [op_rows[i] for i in sorted(brief_ops)]
    brief_rows = [
        brief
        | {"brief_id": f"brief-{i}", "slug": f"brief-{i}", "operation_id": run["id"], "created_at": run["created_at"]}
        for i, run in enumerate(runs)
    ]
    audit_rows = [
        entry
        | {
            "id": None,
            "action": rng.choice(("content.publish", "content.update", "content.create", "media.upload")),
            "object_id": rng.choice(doc_ids) if doc_ids else entry["object_id"],
            "created_at": ago(i, audit),
        }
        for i in range(audit)
    ]
    for row in audit_rows:
        del row["id"]
    with ws.transaction() as tx:
        _insert(tx, Document.__table__, doc_rows)
        _insert(tx, Operation.__table__, op_rows)
        _insert(tx, Media.__table__, media_rows)
        _insert(tx, Brief.__table__, brief_rows)
        _insert(tx, AuditEntry.__table__, audit_rows)
    with ws.reader() as tx:
        from sqlmodel import func

        return {
            name: int(tx.exec(select(func.count()).select_from(model)).one())
            for name, model in (
                ("documents", Document),
                ("operations", Operation),
                ("media", Media),
                ("briefs", Brief),
                ("audit", AuditEntry),
            )
        }


__all__ = ["OPERATOR_TOKEN", "Site", "dashboard_site", "fill", "make_real", "settings_for"]
