"""The example tenant ``pressroom up`` creates and seeds on its first run, through the public APIs."""

from __future__ import annotations

import base64
import time
from collections.abc import Callable

import httpx

from control_plane.local.errors import LocalServerError
from tenant_runtime.operation_states import DEAD, SUCCEEDED, SUPERSEDED

__all__ = ["EXAMPLE_TENANT", "ensure_example_tenant"]

EXAMPLE_TENANT = "example"
_SEED_WAIT_S = 120.0


def ensure_example_tenant(
    api: str,
    operator_token: str,
    tenant_token: str | None,
    *,
    say: Callable[[str], None],
    pause: Callable[[float], None],
) -> str:
    """Create tenant ``example`` (seeding it on creation) and return a working owner token for it.

    ``pause`` waits while the caller keeps supervising; it raises when the stack must stop.
    """
    ops = {"Authorization": f"Bearer {operator_token}"}
    with httpx.Client(base_url=api, timeout=30) as http:
        created = http.post("/ops/tenants", json={"slug": EXAMPLE_TENANT, "name": "Example site"}, headers=ops)
        if created.status_code not in (201, 409):
            raise LocalServerError(f"could not create the example tenant: {created.status_code} {created.text}")
        if tenant_token is not None:
            check = http.get(
                f"/api/tenants/{EXAMPLE_TENANT}/documents", headers={"Authorization": f"Bearer {tenant_token}"}
            )
            if check.status_code != 200:
                tenant_token = None
        if tenant_token is None:
            issued = http.post(f"/ops/tenants/{EXAMPLE_TENANT}/tokens", json={"role": "owner"}, headers=ops)
            issued.raise_for_status()
            tenant_token = str(issued.json()["token"])
        if created.status_code == 201:
            say("seeding the example site through the seed_example_site flow…")
            http.post(f"/ops/tenants/{EXAMPLE_TENANT}/seed", headers=ops).raise_for_status()
            _install_example_theme(http, tenant_token, say)
            _wait_operations(http, tenant_token, say, pause)
        else:
            say("example tenant exists: reusing its data")
    return tenant_token


def _install_example_theme(http: httpx.Client, token: str, say: Callable[[str], None]) -> None:
    """Trust the example publisher and install its signed second theme (selectable; a release switches to it)."""
    from tenant_runtime.example_packages import EXAMPLE_PUBLISHER_KEY, EXAMPLE_THEME

    owner = {"Authorization": f"Bearer {token}"}
    base = f"/api/tenants/{EXAMPLE_TENANT}"
    key = {"public_key": EXAMPLE_PUBLISHER_KEY, "name": "Pressroom example publisher"}
    http.post(f"{base}/package-keys", json=key, headers=owner).raise_for_status()
    archive = base64.b64encode(EXAMPLE_THEME.read_bytes()).decode()
    installed = http.post(f"{base}/packages", json={"archive": archive, "confirm": True}, headers=owner)
    if installed.status_code != 202:
        raise LocalServerError(f"could not install the example theme: {installed.status_code} {installed.text}")
    say('installing the signed \'magazine\' theme (switch to it with a release: "theme": "magazine")…')


def _wait_operations(
    http: httpx.Client, token: str, say: Callable[[str], None], pause: Callable[[float], None]
) -> None:
    deadline = time.monotonic() + _SEED_WAIT_S
    last = ""
    while time.monotonic() < deadline:
        operations = http.get(
            f"/api/tenants/{EXAMPLE_TENANT}/operations", headers={"Authorization": f"Bearer {token}"}
        ).json()
        counts: dict[str, int] = {}
        for op in operations:
            counts[op["status"]] = counts.get(op["status"], 0) + 1
        line = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
        if line != last:
            say(f"  operations: {line}")
            last = line
        if len(operations) > 1 and all(op["status"] in (SUCCEEDED, SUPERSEDED) for op in operations):
            return
        if any(op["status"] == DEAD for op in operations):
            raise LocalServerError("seeding failed: an operation is dead; see data/logs/worker.log")
        pause(0.5)
    say("  seeding is still running; the site fills in as it finishes")
