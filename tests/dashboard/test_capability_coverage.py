"""Every tenant capability of the API has a place in the dashboard, or a reason it has none.

The API's tenant routes are read from the app's route table, so a new endpoint fails this test until
it is mapped here: to the dashboard route (method and path, also read from the route table) that
offers it, or to ``API_ONLY`` with the reason a person in the dashboard does not need it.
"""

from __future__ import annotations

import re

from litestar.routes import HTTPRoute

from tests.dashboard.conftest import Dashboard

_TYPES = re.compile(r":\w+\}")
SITE = "/dashboard/sites/{tenant}"
API = "/api/tenants/{tenant}"

# (method, API path) → (method, dashboard path) that offers the same capability.
SURFACES: dict[tuple[str, str], tuple[str, str]] = {
    ("GET", f"{API}/audit"): ("GET", f"{SITE}/audit"),
    ("GET", f"{API}/backups"): ("GET", f"{SITE}/health"),
    ("POST", f"{API}/backups"): ("POST", f"{SITE}/health/backup"),
    ("GET", f"{API}/backups/{{backup_id}}"): ("GET", f"{SITE}/health"),
    ("GET", f"{API}/backups/{{backup_id}}/download"): ("GET", f"{SITE}/health/backups/{{backup_id}}/download"),
    ("GET", f"{API}/briefs/{{brief_id}}"): ("GET", f"{SITE}/briefs"),
    ("GET", f"{API}/costs"): ("GET", f"{SITE}/lanes"),
    ("GET", f"{API}/documents"): ("GET", f"{SITE}"),
    ("POST", f"{API}/documents"): ("POST", f"{SITE}/documents"),
    ("GET", f"{API}/documents/{{document_id}}"): ("GET", f"{SITE}/documents/{{document_id}}"),
    ("PUT", f"{API}/documents/{{document_id}}"): ("POST", f"{SITE}/documents/{{document_id}}"),
    ("POST", f"{API}/documents/{{document_id}}/publish"): ("POST", f"{SITE}/documents/{{document_id}}/publish"),
    ("POST", f"{API}/documents/{{document_id}}/unpublish"): ("POST", f"{SITE}/documents/{{document_id}}/unpublish"),
    ("GET", f"{API}/documents/{{document_id}}/revisions"): ("GET", f"{SITE}/documents/{{document_id}}/revisions"),
    ("GET", f"{API}/documents/{{document_id}}/revisions/diff"): (
        "GET",
        f"{SITE}/documents/{{document_id}}/revisions",
    ),
    ("GET", f"{API}/documents/{{document_id}}/revisions/{{version}}"): (
        "GET",
        f"{SITE}/documents/{{document_id}}/revisions",
    ),
    ("POST", f"{API}/documents/{{document_id}}/revisions/{{version}}/restore"): (
        "POST",
        f"{SITE}/documents/{{document_id}}/revisions/{{version}}/restore",
    ),
    ("GET", f"{API}/fields"): ("GET", f"{SITE}/fields"),
    ("POST", f"{API}/fields/migrations"): ("POST", f"{SITE}/fields/migrations"),
    ("GET", f"{API}/fields/migrations/{{migration_id}}"): ("GET", f"{SITE}/fields"),
    ("POST", f"{API}/imports"): ("POST", f"{SITE}/health/import"),
    ("GET", f"{API}/lanes"): ("GET", f"{SITE}/lanes"),
    ("PUT", f"{API}/lanes/{{lane}}/approval"): ("POST", f"{SITE}/lanes/{{lane}}/approval"),
    ("PUT", f"{API}/lanes/{{lane}}/budget"): ("POST", f"{SITE}/lanes/{{lane}}/budget"),
    ("POST", f"{API}/lanes/{{lane}}/enabled"): ("POST", f"{SITE}/lanes/{{lane}}/enabled"),
    ("GET", f"{API}/lanes/{{lane}}/pack"): ("GET", f"{SITE}/lanes/{{lane}}/pack"),
    ("PUT", f"{API}/lanes/{{lane}}/pack"): ("POST", f"{SITE}/lanes/{{lane}}/pack"),
    ("GET", f"{API}/media"): ("GET", f"{SITE}/media"),
    ("POST", f"{API}/media"): ("POST", f"{SITE}/media"),
    ("GET", f"{API}/media/policy"): ("GET", f"{SITE}/media"),
    ("POST", f"{API}/media/sweep"): ("POST", f"{SITE}/media/sweep"),
    ("GET", f"{API}/media/{{media_id}}"): ("GET", f"{SITE}/media/{{media_id}}"),
    ("DELETE", f"{API}/media/{{media_id}}"): ("POST", f"{SITE}/media/{{media_id}}/{{change}}"),
    ("POST", f"{API}/media/{{media_id}}/restore"): ("POST", f"{SITE}/media/{{media_id}}/{{change}}"),
    ("GET", f"{API}/members"): ("GET", f"{SITE}/members"),
    ("POST", f"{API}/members"): ("POST", f"{SITE}/members"),
    ("PATCH", f"{API}/members/{{member_id}}"): ("POST", f"{SITE}/members/{{member_id}}/role"),
    ("DELETE", f"{API}/members/{{member_id}}"): ("POST", f"{SITE}/members/{{member_id}}/remove"),
    ("GET", f"{API}/operations"): ("GET", f"{SITE}/operations"),
    ("GET", f"{API}/operations/{{operation_id}}"): ("GET", f"{SITE}/operations/{{operation_id}}"),
    ("GET", f"{API}/operations/{{operation_id}}/timeline"): ("GET", f"{SITE}/operations/{{operation_id}}"),
    ("POST", f"{API}/operations/{{operation_id}}/cancel"): ("POST", f"{SITE}/operations/{{operation_id}}/cancel"),
    ("POST", f"{API}/operations/{{operation_id}}/events"): ("POST", f"{SITE}/operations/{{operation_id}}/event"),
    ("POST", f"{API}/operations/{{operation_id}}/pause"): ("POST", f"{SITE}/operations/{{operation_id}}/control"),
    ("POST", f"{API}/operations/{{operation_id}}/resume"): ("POST", f"{SITE}/operations/{{operation_id}}/control"),
    ("POST", f"{API}/operations/{{operation_id}}/terminate"): (
        "POST",
        f"{SITE}/operations/{{operation_id}}/control",
    ),
    ("POST", f"{API}/operations/{{operation_id}}/restart"): ("POST", f"{SITE}/operations/{{operation_id}}/restart"),
    ("POST", f"{API}/operations/{{operation_id}}/retry"): ("POST", f"{SITE}/operations/{{operation_id}}/retry"),
    ("POST", f"{API}/operations/{{operation_id}}/reschedule"): (
        "POST",
        f"{SITE}/operations/{{operation_id}}/reschedule",
    ),
    ("GET", f"{API}/package-keys"): ("GET", f"{SITE}/packages"),
    ("POST", f"{API}/package-keys"): ("POST", f"{SITE}/packages/keys"),
    ("POST", f"{API}/package-keys/{{key_id}}/expire"): ("POST", f"{SITE}/packages/keys/{{key_id}}/{{change}}"),
    ("POST", f"{API}/package-keys/{{key_id}}/revoke"): ("POST", f"{SITE}/packages/keys/{{key_id}}/{{change}}"),
    ("GET", f"{API}/packages"): ("GET", f"{SITE}/packages"),
    ("POST", f"{API}/packages"): ("POST", f"{SITE}/packages"),
    ("POST", f"{API}/packages/{{name}}/rollback"): ("POST", f"{SITE}/packages/{{name}}/{{change}}"),
    ("POST", f"{API}/packages/{{name}}/uninstall"): ("POST", f"{SITE}/packages/{{name}}/{{change}}"),
    ("POST", f"{API}/releases"): ("POST", f"{SITE}/releases"),
    ("POST", f"{API}/restores"): ("POST", f"{SITE}/health/restore"),
    ("POST", f"{API}/restores/undo"): ("POST", f"{SITE}/health/undo-restore"),
    ("GET", f"{API}/retention"): ("GET", f"{SITE}/site"),
    ("PUT", f"{API}/retention/{{entity_type}}"): ("POST", f"{SITE}/site/retention/{{entity_type}}"),
    ("POST", f"{API}/retention/prune"): ("POST", f"{SITE}/site/retention/prune"),
    ("POST", f"{API}/search/rebuild"): ("POST", f"{SITE}/site/search"),
    ("GET", f"{API}/settings"): ("GET", f"{SITE}/site"),
    ("PUT", f"{API}/settings"): ("POST", f"{SITE}/site/settings"),
    ("GET", f"{API}/site/{{name}}"): ("GET", f"{SITE}/site"),
    ("PUT", f"{API}/site/{{name}}"): ("POST", f"{SITE}/site/navigation"),
    ("GET", f"{API}/tokens"): ("GET", f"{SITE}/members"),
    ("POST", f"{API}/tokens"): ("POST", f"{SITE}/tokens"),
    ("POST", f"{API}/tokens/{{token_id}}/revoke"): ("POST", f"{SITE}/tokens/{{token_id}}/revoke"),
    ("GET", f"{API}/webhooks"): ("GET", f"{SITE}/site"),
    ("POST", f"{API}/webhooks"): ("POST", f"{SITE}/site/webhooks"),
    ("POST", f"{API}/webhooks/{{endpoint_id}}/enable"): ("POST", f"{SITE}/site/webhooks/{{endpoint_id}}/{{verb}}"),
    ("POST", f"{API}/webhooks/{{endpoint_id}}/disable"): ("POST", f"{SITE}/site/webhooks/{{endpoint_id}}/{{verb}}"),
}

# (method, API path) → why the dashboard does not offer it.
API_ONLY: dict[tuple[str, str], str] = {
    ("POST", f"{API}/briefs"): "briefs are posted by agents (content routines); people read them on the briefs page",
    ("POST", f"{API}/lanes"): "registering a lane graph by hand is an operator's override; sites get lanes from "
    "packages, which the packages page installs",
}


OPS = "/dashboard/ops"

# (method, operator API path) → (method, console path) that offers the same capability.
OPS_SURFACES: dict[tuple[str, str], tuple[str, str]] = {
    ("GET", "/ops/tenants"): ("GET", OPS),
    ("GET", "/ops/tenants/{slug}"): ("GET", OPS),
    ("POST", "/ops/tenants"): ("POST", f"{OPS}/tenants"),
    ("POST", "/ops/tenants/{slug}/suspend"): ("POST", f"{OPS}/tenants/{{slug}}/{{change}}"),
    ("POST", "/ops/tenants/{slug}/resume"): ("POST", f"{OPS}/tenants/{{slug}}/{{change}}"),
    ("PATCH", "/ops/tenants/{slug}/quota"): ("POST", f"{OPS}/tenants/{{slug}}/{{change}}"),
    ("GET", "/ops/operations"): ("GET", f"{OPS}/operations"),
    ("GET", "/ops/audit"): ("GET", f"{OPS}/audit"),
    ("GET", "/ops/package-keys"): ("GET", f"{OPS}/keys"),
    ("POST", "/ops/package-keys"): ("POST", f"{OPS}/keys"),
    ("POST", "/ops/package-keys/{key_id}/expire"): ("POST", f"{OPS}/keys/{{key_id}}/expire"),
    ("POST", "/ops/package-keys/{key_id}/revoke"): ("POST", f"{OPS}/keys/{{key_id}}/revoke"),
}

# (method, operator API path) → why the console does not offer it.
OPS_ONLY: dict[tuple[str, str], str] = {
    ("GET", "/ops/shards"): "shards and placement are the platform's plumbing: `pressroom shards` lists them",
    ("POST", "/ops/tenants/{slug}/move"): "a move drains and hands a tenant to another shard; `pressroom tenants "
    "move` runs it and shows its progress",
    ("PATCH", "/ops/tenants/{slug}/retention"): "a rare per-tenant override of how long finished runs stay in "
    "Prefect, for automation; `pressroom tenants show --json` shows it",
    ("POST", "/ops/tenants/{slug}/tokens"): "an operator opens the site from the console and invites its members "
    "on its members page, which issues their tokens (shown once)",
    ("POST", "/ops/tenants/{slug}/seed"): "loads the example site's content; `make up` and `pressroom` do it",
    ("PUT", "/ops/tenants/{slug}/media-policy"): "a site's media limits are set with `pressroom media policy`; "
    "the site's media page shows them",
}


def _routes(dashboard: Dashboard, prefix: str) -> set[tuple[str, str]]:
    found = set()
    for route in dashboard.client.app.routes:
        if isinstance(route, HTTPRoute) and route.path.startswith(prefix):
            for method in route.route_handler_map:
                if method not in ("OPTIONS", "HEAD"):
                    found.add((method, _TYPES.sub("}", route.path)))
    return found


def test_every_tenant_api_route_has_a_dashboard_surface_or_a_reason(dashboard: Dashboard) -> None:
    api = _routes(dashboard, "/api/tenants/")
    pages = _routes(dashboard, "/dashboard/")
    assert len(api) >= 70 and len(pages) >= 60

    unmapped = sorted(api - SURFACES.keys() - API_ONLY.keys())
    assert not unmapped, f"tenant API routes with no dashboard surface and no reason: {unmapped}"
    stale = sorted((SURFACES.keys() | API_ONLY.keys()) - api)
    assert not stale, f"mapped but not routed (renamed or removed?): {stale}"
    assert not SURFACES.keys() & API_ONLY.keys()
    missing_pages = sorted({target for target in SURFACES.values() if target not in pages})
    assert not missing_pages, f"dashboard routes named here that do not exist: {missing_pages}"


def test_every_operator_api_route_has_a_console_surface_or_a_reason(dashboard: Dashboard) -> None:
    api = _routes(dashboard, "/ops/")
    pages = _routes(dashboard, OPS)
    assert len(api) >= 15

    unmapped = sorted(api - OPS_SURFACES.keys() - OPS_ONLY.keys())
    assert not unmapped, f"operator API routes with no console surface and no reason: {unmapped}"
    stale = sorted((OPS_SURFACES.keys() | OPS_ONLY.keys()) - api)
    assert not stale, f"mapped but not routed (renamed or removed?): {stale}"
    missing_pages = sorted({target for target in OPS_SURFACES.values() if target not in pages})
    assert not missing_pages, f"console routes named here that do not exist: {missing_pages}"
