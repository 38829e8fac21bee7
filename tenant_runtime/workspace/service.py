"""Whether a tenant is in service on this runtime: ``active``, ``suspended`` or ``deleted``, as the control plane says.

The control plane owns a tenant's status; it tells the tenant's runtime with
every change (``SetServiceStatus``), and the runtime keeps it beside the
workspace, in ``tenants/{slug}/service.json``, not inside it: it is not site
content, so a backup, an import or a restore never carries it (a clone of a
suspended site is not suspended), while a shard move, which moves the tenant's
folder whole, does. No file means active (every tenant before its first
change). The nightly fan-out reads it to skip tenants that are not active.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from tenant_runtime.errors import BadRequest
from tenant_runtime.ids import check_tenant_slug, utcnow
from tenant_runtime.settings import RuntimeSettings

ACTIVE, SUSPENDED, DELETED = "active", "suspended", "deleted"
SERVICE_STATUSES = (ACTIVE, SUSPENDED, DELETED)
_FILE = "service.json"


def _path(settings: RuntimeSettings, tenant: str) -> Path:
    return settings.workspace_path(check_tenant_slug(tenant)).parent / _FILE


def service_status(settings: RuntimeSettings, tenant: str) -> str:
    """The tenant's status on this runtime; an unreadable file counts as active (the control plane refuses
    a suspended tenant's commands on its own: this only decides what the nightly chores queue)."""
    try:
        status = json.loads(_path(settings, tenant).read_text()).get("status")
    except (OSError, ValueError, AttributeError):
        return ACTIVE
    return status if status in SERVICE_STATUSES else ACTIVE


def set_service_status(settings: RuntimeSettings, tenant: str, status: str) -> str:
    """Record ``status`` for ``tenant`` (whole or not at all); the status before."""
    if status not in SERVICE_STATUSES:
        raise BadRequest(
            "status is active, suspended or deleted.",
            details={"status": status, "allowed": list(SERVICE_STATUSES)},
            code="invalid_status",
        )
    path = _path(settings, tenant)
    before = service_status(settings, tenant)
    path.parent.mkdir(parents=True, exist_ok=True)
    staged = path.with_name(f".{_FILE}.{os.getpid()}")
    staged.write_text(json.dumps({"status": status, "at": utcnow().isoformat()}))
    os.replace(staged, path)
    return before


__all__ = ["ACTIVE", "DELETED", "SERVICE_STATUSES", "SUSPENDED", "service_status", "set_service_status"]
